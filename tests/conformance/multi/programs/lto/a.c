/* A TU with a file-static global written with active values. */
#include <math.h>
static double state;   /* same name as in b.c */
double fa(double x) { state = sin(x); return state * x; }
