/* Forward mode with a struct of two floats passed by value (one <2 x float> register). */
#include "hcheck.h"
typedef struct { float x, y; } fvec2;
double __enzyme_fwddiff(void *, ...);
double flen(fvec2 v) { return v.x * v.x + 3.0f * v.y; }

int main(void) {
  fvec2 f = {0.6f, -0.8f}, dx = {1, 0}, dy = {0, 1};
  hc_near("float pair d/dx", __enzyme_fwddiff((void *)flen, f, dx), 1.2, 1e-6);
  hc_near("float pair d/dy", __enzyme_fwddiff((void *)flen, f, dy), 3.0, 1e-6);
  return hc_done();
}
