/* Defined in a plain (non-fat) object: no bitcode, so no body for the AD stage. */
#include <math.h>
double blackbox(double x) { return sin(x) * x; }
