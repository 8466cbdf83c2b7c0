/* enzyme_out on a pointer parameter. */
#include <stdio.h>
extern int enzyme_dup, enzyme_out, enzyme_const;
double __enzyme_autodiff(void *, ...);
double f(double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return s; }
int main(void) { double x[2] = {1, 2}; __enzyme_autodiff((void *)f, enzyme_out, x, enzyme_const, 2); return 0; }
