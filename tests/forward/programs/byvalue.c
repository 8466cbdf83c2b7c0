/* Small structs passed by value in registers (x86-64 splits {double, double} into two
 * doubles): forward mode pairs the whole value with the whole tangent, for arguments,
 * results, enzyme_const structs, mixed double/integer structs and enzyme_width. */
#include "fwdcheck.h"
typedef struct { double x, y; } vec2;
typedef struct { double w; long n; } weighted;
typedef struct { double d[2]; } pair2;
double __enzyme_fwddiff(void *, ...);
vec2 __enzyme_fwddiffv2(void *, ...);
pair2 __enzyme_fwddiffw(void *, ...);

double len2(vec2 v) { return v.x * v.x + 3.0 * sin(v.y); }
double mix(int k, weighted a, double s, vec2 w) { return a.w * (double)a.n * s + w.x * w.y * k; }
vec2 rot(vec2 v, double th) {
  vec2 r = {cos(th) * v.x - sin(th) * v.y, sin(th) * v.x + cos(th) * v.y};
  return r;
}
static vec2 g_v = {0.6, -0.8};
static double len2_y(double y) { vec2 v = {g_v.x, y}; return len2(v); }
static double mix_s(double s) { weighted a = {1.5, 3}; vec2 w = {0.6, -0.8}; return mix(2, a, s, w); }
static double rot_th_x(double th) { return rot(g_v, th).x; }

int main(void) {
  vec2 v = g_v, dv = {1.0, 0.5}, e1 = {1, 0}, e2 = {0, 1};
  weighted a = {1.5, 3}, da = {1.0, 0};
  fc_near("len2 along dv", __enzyme_fwddiff((void *)len2, v, dv), 2 * v.x * 1.0 + 3.0 * cos(v.y) * 0.5, 1e-12);
  fc_near("len2 d/dy", __enzyme_fwddiff((void *)len2, v, e2), FC_FD(len2_y, v.y), 1e-6);
  fc_near("mix along (da, dw)", __enzyme_fwddiff((void *)mix, 2, a, da, 0.5, 0.0, v, dv),
          3 * 0.5 + 2 * (1.0 * v.y + v.x * 0.5), 1e-12);
  fc_near("mix const a, d/ds", __enzyme_fwddiff((void *)mix, 2, enzyme_const, a, 0.5, 1.0, v, e1) - 2 * v.y,
          FC_FD(mix_s, 0.5), 1e-6);
  vec2 t = __enzyme_fwddiffv2((void *)rot, v, dv, 0.3, 0.0);
  fc_near("rot.x along dv", t.x, cos(0.3) * 1.0 - sin(0.3) * 0.5, 1e-12);
  fc_near("rot.y along dv", t.y, sin(0.3) * 1.0 + cos(0.3) * 0.5, 1e-12);
  vec2 zero = {0, 0};
  fc_near("rot.x d/dth", __enzyme_fwddiffv2((void *)rot, v, zero, 0.3, 1.0).x, FC_FD(rot_th_x, 0.3), 1e-6);
  pair2 g = __enzyme_fwddiffw((void *)len2, enzyme_width, 2, v, e1, e2);
  fc_near("len2 width 2 lane 0", g.d[0], 2 * v.x, 1e-12);
  fc_near("len2 width 2 lane 1", g.d[1], 3.0 * cos(v.y), 1e-12);
  return fc_done();
}
