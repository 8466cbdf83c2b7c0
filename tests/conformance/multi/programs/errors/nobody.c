/* Differentiates through blackbox(), whose body is not in the program. */
#include <stdio.h>
double blackbox(double x);
double __enzyme_autodiff(void *, ...);
static double inner(double x) { return blackbox(x * x) + 1.0; }
__attribute__((noinline)) double middle(double x) { return inner(x) * 2.0; }
double outer(double x) { return middle(x) + x; }
int main(void) { printf("%g\n", __enzyme_autodiff((void *)outer, 0.5)); return 0; }
