/* cube's definition, the external definition of sq, and a caller of both. */
#include <math.h>
#include "rule.h"
extern inline double sq(double x);
double cube(double x) { return x * x * x; }
double g1(double x) { return cube(x) * 2.0 + sq(sin(x)); }
