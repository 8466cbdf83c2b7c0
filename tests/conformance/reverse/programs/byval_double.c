/* Small structs of doubles by value through noinline helpers (passed in registers and byval in
 * memory, returned in registers and through sret), at every -O level. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
typedef struct { double x, y; } v2;
typedef struct { double x, y, z; } v3;
typedef struct { double m[3][3]; } m33;
__attribute__((noinline)) static v2 rot2(v2 p, double t) { v2 r = {p.x * cos(t) - p.y * sin(t), p.x * sin(t) + p.y * cos(t)}; return r; }
__attribute__((noinline)) static v3 cross(v3 a, v3 b) { v3 r = {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; return r; }
__attribute__((noinline)) static v3 mul(m33 A, v3 v) { v3 r = {0, 0, 0}; double *o = &r.x; const double *i = &v.x; for (int a = 0; a < 3; a++) for (int b = 0; b < 3; b++) o[a] += A.m[a][b] * i[b]; return r; }
double f(const double *x, int n) {
  (void)n;
  v2 p = rot2((v2){x[0], x[1]}, x[2]);
  v3 c = cross((v3){x[0], x[1], x[2]}, (v3){x[3], x[4], x[5]});
  m33 A;
  for (int a = 0; a < 3; a++) for (int b = 0; b < 3; b++) A.m[a][b] = x[(a + b) % 6] * (a + 1);
  v3 q = mul(A, c);
  double m_c = x[2] * x[3] * x[1], m_ab = x[0] * x[3] * (x[1] + x[0]);
  return p.x * p.y + q.x + q.y * q.z + m_c + m_ab;
}
int main(void) {
  enum { N = 6 };
  double x[N] = {0.3, -0.55, 0.8, 0.1, -0.9, 0.45}, d[N] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N], h = hc_h(x[i]);
    memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
    xp[i] += h; xm[i] -= h;
    hc_near("byval", d[i], (f(xp, N) - f(xm, N)) / (2 * h), 1e-6);
  }
  return hc_done();
}
