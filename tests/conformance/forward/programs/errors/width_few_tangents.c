/* enzyme_width 4 with only one tangent given for the second argument. */
#include <stdio.h>
extern int enzyme_dup, enzyme_const, enzyme_width;
typedef struct { double d[4]; } d4;
typedef struct { double d[2]; } d2;
d4 __enzyme_fwddiff4(void *, ...);
d2 __enzyme_fwddiff2(void *, ...);
double f(double a, double b) { return a * b; }
int main(void) {
  d4 r = __enzyme_fwddiff4((void *)f, enzyme_width, 4, 1.0, 1.0, 0.0, 2.0, 0.0, 1.0);
  printf("%g\n", r.d[0]);
  return 0;
}
