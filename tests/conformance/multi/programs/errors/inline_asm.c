/* Inline assembly on an active value. */
#include <stdio.h>
double __enzyme_fwddiff(void *, ...);
double f(double a) { double r; __asm__("movsd %1, %0" : "=x"(r) : "x"(a)); return r * a; }
int main(void) { printf("%g\n", __enzyme_fwddiff((void *)f, 1.0, 1.0)); return 0; }
