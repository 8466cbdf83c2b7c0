// A float Vec3 with operator overloads, returned by value from functions that are not
// inlined at -O0 ({float, float, float} travels as <2 x float> + float).
#include "hcheck.h"
#include <cmath>
extern "C" float __enzyme_autodiff(void *, ...);
extern "C" int enzyme_dup, enzyme_const;
struct Vec3f {
  float x, y, z;
  Vec3f operator+(const Vec3f &o) const { return {x + o.x, y + o.y, z + o.z}; }
  Vec3f operator*(float s) const { return {x * s, y * s, z * s}; }
  float dot(const Vec3f &o) const { return x * o.x + y * o.y + z * o.z; }
};
extern "C" float energy(const float *p, int n) {
  Vec3f acc{0, 0, 0};
  for (int i = 0; i < n; i++) acc = acc + Vec3f{p[3 * i], p[3 * i + 1], p[3 * i + 2]} * (1.0f + i);
  return acc.dot(acc);
}
int main() {
  const int n = 2;
  float p[3 * n] = {0.1f, 0.2f, -0.3f, 0.5f, -0.4f, 0.25f}, dp[3 * n] = {0};
  __enzyme_autodiff((void *)energy, enzyme_dup, p, dp, enzyme_const, n);
  float acc[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) for (int k = 0; k < 3; k++) acc[k] += p[3 * i + k] * (1.0f + i);
  for (int i = 0; i < n; i++) for (int k = 0; k < 3; k++) hc_near("dp", dp[3 * i + k], 2 * acc[k] * (1.0f + i), 1e-5);
  return hc_done();
}
