/* Forward mode through blackbox(), whose body is not in the program. */
#include <stdio.h>
double blackbox(double x);
double __enzyme_fwddiff(void *, ...);
double outer(double x) { return blackbox(x * x) + x; }
int main(void) { printf("%g\n", __enzyme_fwddiff((void *)outer, 0.5, 1.0)); return 0; }
