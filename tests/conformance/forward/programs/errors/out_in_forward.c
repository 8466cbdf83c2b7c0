/* enzyme_out (a reverse-mode marker) in a forward-mode call. */
#include <stdio.h>
extern int enzyme_out;
double __enzyme_fwddiff(void *, ...);
double f(double a) { return a * a; }
int main(void) { printf("%g\n", __enzyme_fwddiff((void *)f, enzyme_out, 0.5)); return 0; }
