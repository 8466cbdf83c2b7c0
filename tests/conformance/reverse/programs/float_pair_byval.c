/* A struct of two floats passed and returned by value: the x86-64 ABI coerces it to
 * <2 x float>, so the IR packs/unpacks it with insertelement/extractelement. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
float __enzyme_autodiff(void *, ...);
typedef struct { float x, y; } vec2f;
__attribute__((noinline)) static vec2f scale(vec2f v, float s) { vec2f r = {v.x * s, v.y * s * s}; return r; }
float f(float a, float b) {
  vec2f v = scale((vec2f){a, b}, a);
  return v.x + v.y;
}
typedef struct { float da, db; } g2;
g2 __enzyme_autodiff_g2(void *, ...);
int main(void) {
  float a = 1.5f, b = 0.5f; /* f = a^2 + b a^2 */
  g2 g = __enzyme_autodiff_g2((void *)f, a, b);
  hc_near("da", g.da, 2 * a + 2 * a * b, 1e-6);
  hc_near("db", g.db, a * a, 1e-6);
  return hc_done();
}
