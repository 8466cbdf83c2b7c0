/* Forward mode call missing the tangent of the second double. */
#include <stdio.h>
extern int enzyme_dup, enzyme_out, enzyme_const;
double __enzyme_fwddiff(void *, ...);
double f(double a, double b) { return a * b; }
int main(void) { printf("%g\n", __enzyme_fwddiff((void *)f, 1.0, 1.0, 2.0)); return 0; }
