/* Forward mode with small structs passed by value in registers (the ABI splits them into
 * doubles): as an argument, and as argument and result. */
#include "hcheck.h"
typedef struct { double x, y; } vec2;
typedef struct { double d[2]; } lanes2;
extern int enzyme_width;
double __enzyme_fwddiff(void *, ...);
vec2 __enzyme_fwddiff_v2(void *, ...);
lanes2 __enzyme_fwddiff_l2(void *, ...);

double len2(vec2 v) { return sqrt(v.x * v.x + v.y * v.y) + sin(v.x); }
vec2 rot(vec2 v, double th) { vec2 r = {cos(th) * v.x - sin(th) * v.y, sin(th) * v.x + cos(th) * v.y}; return r; }

int main(void) {
  double h = 1e-6;
  vec2 v = {0.6, -0.8}, dv = {1.0, 0.5};
  vec2 vp = {v.x + h * dv.x, v.y + h * dv.y}, vm = {v.x - h * dv.x, v.y - h * dv.y};
  hc_near("struct in registers", __enzyme_fwddiff((void *)len2, v, dv), (len2(vp) - len2(vm)) / (2 * h), 1e-6);
  vec2 t = __enzyme_fwddiff_v2((void *)rot, v, dv, 0.4, 0.0);
  vec2 rp = rot(vp, 0.4), rm = rot(vm, 0.4);
  hc_near("struct result x", t.x, (rp.x - rm.x) / (2 * h), 1e-6);
  hc_near("struct result y", t.y, (rp.y - rm.y) / (2 * h), 1e-6);
  t = __enzyme_fwddiff_v2((void *)rot, v, (vec2){0, 0}, 0.4, 1.0);
  hc_near("struct result dth", t.x, -sin(0.4) * v.x - cos(0.4) * v.y, 1e-12);
  /* width 2: one struct tangent per lane */
  lanes2 l = __enzyme_fwddiff_l2((void *)len2, enzyme_width, 2, v, (vec2){1, 0}, (vec2){0, 1});
  hc_near("width 2 lane 0", l.d[0], v.x / sqrt(v.x * v.x + v.y * v.y) + cos(v.x), 1e-12);
  hc_near("width 2 lane 1", l.d[1], v.y / sqrt(v.x * v.x + v.y * v.y), 1e-12);
  return hc_done();
}
