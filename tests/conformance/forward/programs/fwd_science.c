/* Forward mode on the kind of C numerical code scientists write: loops of every shape,
 * math.h, structs of arrays, malloc'd workspaces, helpers at several depths, globals,
 * static locals, in-place updates; each tangent is checked against central differences. */
#include <string.h>
#include "hcheck.h"
extern int enzyme_dup, enzyme_dupnoneed, enzyme_const;
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddifff(void *, ...);
void __enzyme_fwddiffv(void *, ...);

#define N 6
typedef double (*vecfn)(double *x, int n);

/* --- helpers of several depths, some inlined by O2 and some not --- */
static inline double sq(double v) { return v * v; }
__attribute__((noinline)) static double softplus(double v) { return v > 20 ? v : log1p(exp(v)); }
__attribute__((noinline)) double level3(double a, double b) { return atan2(a, b) + hypot(a, b); }
__attribute__((noinline)) double level2(double a, double b) { return level3(a * b, b + 1.5) * cosh(0.1 * a); }
double level1(double a, double b) { return level2(a, b) + sq(sin(a)) * level2(b, a); }

/* polynomial via Horner with a const table */
static const double coef[] = {0.5, -1.25, 0.75, 0.1, -0.02};
double horner(double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double p = 0;
    for (int k = (int)(sizeof coef / sizeof coef[0]) - 1; k >= 0; k--) p = p * x[i] + coef[k];
    s += p;
  }
  return s;
}

/* size_t countdown loop, pointer arithmetic, strided access */
double strided(double *x, int n) {
  double s = 1.0;
  for (size_t i = (size_t)n; i-- > 0;) s += x[i] * (double)(i + 1) / (1.0 + fabs(s));
  const double *p = x;
  for (const double *e = x + n; p < e; p += 2) s *= 1.0 + 0.1 * tanh(*p);
  return s;
}

/* while / do-while, break / continue, early return */
double control(double *x, int n) {
  double acc = 0;
  int i = 0;
  while (i < n) {
    if (x[i] < -0.8) { i++; continue; }
    acc += exp(-x[i] * x[i]);
    if (acc > 100.0) break;
    i++;
  }
  int k = 0;
  do { acc += sqrt(1.0 + sq(x[k])); k += 2; } while (k < n);
  if (acc < 0) return 0.0;
  return acc * pow(fabs(x[0]) + 1.0, 1.5);
}

/* switch on an integer from a table */
static const int kind[N] = {0, 1, 2, 1, 0, 3};
double switched(double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    switch (kind[i]) {
      case 0: s += sin(x[i]); break;
      case 1: s += cbrt(2.0 + x[i]); break;
      case 2: s += erf(x[i]); break;
      default: s += softplus(x[i]) * fmax(x[i], 0.1); break;
    }
  }
  return s;
}

/* struct of arrays and array of structs, a malloc'd workspace, memcpy of structs */
typedef struct { double pos[N], vel[N]; int n; } soa;
typedef struct { double m, q; } particle;
__attribute__((noinline)) static double energy(const soa *s, const particle *p) {
  double e = 0;
  for (int i = 0; i < s->n; i++) e += 0.5 * p[i].m * sq(s->vel[i]) + p[i].q * s->pos[i] * s->pos[(i + 1) % s->n];
  return e;
}
double structs(double *x, int n) {
  soa s; s.n = n;
  particle *p = malloc(n * sizeof *p);
  for (int i = 0; i < n; i++) { s.pos[i] = x[i]; s.vel[i] = x[(i + 2) % n] * 0.5; p[i].m = 1.0 + 0.1 * i; p[i].q = x[i]; }
  particle q0; memcpy(&q0, &p[0], sizeof q0); p[n - 1].q += q0.q * 0.25;
  double e = energy(&s, p);
  free(p);
  return e;
}

/* in-place updates x[i] = f(x[i]) on a copy, 2-D array, VLA */
double inplace(double *x, int n) {
  double w[n];
  for (int i = 0; i < n; i++) w[i] = x[i];
  for (int i = 0; i < n; i++) w[i] = sin(w[i]) + 0.5 * w[i];
  double m[3][N];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < n; c++) m[r][c] = w[c] * (r + 1) - w[(c + r) % n];
  double s = 0;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < n; c++) s += m[r][c] * m[r][c] / (1.0 + r);
  return s;
}

/* accumulation into a global, a static local counter, float and double mixed */
double g_sum;
int g_calls;
double globals(double *x, int n) {
  static int visits = 0;
  visits++;
  g_calls++;
  g_sum = 0;
  for (int i = 0; i < n; i++) {
    float f = (float)x[i];
    g_sum += (double)(f * f) * 0.5 + x[i] * expf(0.1f * f);
  }
  return g_sum * (visits > 0 ? 1.0 : 2.0);
}

/* closed form of globals' tangent: its float rounding defeats finite differences */
static double dglobals(const double *x, const double *dir) {
  double t = 0;
  for (int i = 0; i < N; i++) {
    float f = (float)x[i];
    t += ((double)f + (double)expf(0.1f * f) * (1.0 + 0.1 * x[i])) * dir[i];
  }
  return t;
}

/* bound loaded from memory; unsigned wraparound; bit tricks on integers */
typedef struct { int len; double *data; } view;
__attribute__((noinline)) static double sumview(const view *v) {
  double s = 0;
  for (int i = 0; i < v->len; i++) s += v->data[i] * v->data[i] * ((i & 1) ? 0.5 : 1.5);
  return s;
}
double loads(double *x, int n) {
  view v = {n, x};
  double s = sumview(&v);
  unsigned j = 0u;
  for (unsigned k = 0; k < (unsigned)n; k++) { j = (j * 5u + 3u) % (unsigned)n; s += x[j] * (double)(k ^ 3u); }
  return s;
}

/* recursion */
double rec(double x, int d) { return d == 0 ? x : sin(rec(x, d - 1)) + 0.5 * x; }
double recursive(double *x, int n) { return rec(x[0], 5) * rec(x[1], 3) + level1(x[2], x[3]); }

/* writes an output array (dupnoneed result pointer test) */
void normalize(const double *x, double *out, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  double m = sqrt(s);
  for (int i = 0; i < n; i++) out[i] = x[i] / m;
}

/* a macro, not a function: the differentiated function must be a constant at the call */
#define CHECK_FN(f, x0) do {                                                         \
    double x[N], dir[N], dx[N], xp[N], xm[N], h = 1e-6;                                \
    for (int i = 0; i < N; i++) { x[i] = x0[i]; dir[i] = 0.3 + 0.2 * i * (i % 2 ? -1 : 1); } \
    memcpy(dx, dir, sizeof dx);                                                        \
    int calls0 = g_calls;                                                              \
    double t = __enzyme_fwddiff((void *)f, enzyme_dup, x, dx, enzyme_const, N);        \
    if ((vecfn)f == globals) { hc_near("globals runs once", g_calls - calls0, 1, 0);    \
                               hc_near("globals closed form", t, dglobals(x, dir), 1e-6); break; } \
    for (int i = 0; i < N; i++) { xp[i] = x[i] + h * dir[i]; xm[i] = x[i] - h * dir[i]; } \
    hc_near(#f, t, (f(xp, N) - f(xm, N)) / (2 * h), 1e-6);                             \
  } while (0)

float ffun(float a, float b) { return sinf(a) * b + sqrtf(a * a + b * b) - logf(1.0f + b * b); }

int main(void) {
  static const double x0[N] = {0.4, -0.3, 0.9, 1.2, -0.6, 0.25};
  CHECK_FN(horner, x0);
  CHECK_FN(strided, x0);
  CHECK_FN(control, x0);
  CHECK_FN(switched, x0);
  CHECK_FN(structs, x0);
  CHECK_FN(inplace, x0);
  CHECK_FN(globals, x0);
  CHECK_FN(loads, x0);
  CHECK_FN(recursive, x0);
  /* scalar arguments, forward tangent pairs */
  double a = 0.7, b = -1.1, h = 1e-6;
  double t = __enzyme_fwddiff((void *)level1, a, 1.0, b, 0.0);
  hc_near("level1 da", t, (level1(a + h, b) - level1(a - h, b)) / (2 * h), 1e-6);
  t = __enzyme_fwddiff((void *)level1, a, 0.0, b, 1.0);
  hc_near("level1 db", t, (level1(a, b + h) - level1(a, b - h)) / (2 * h), 1e-6);
  t = __enzyme_fwddiff((void *)level1, enzyme_const, a, b, 2.0);
  hc_near("level1 const a", t, 2.0 * (level1(a, b + h) - level1(a, b - h)) / (2 * h), 1e-6);
  float ft = __enzyme_fwddifff((void *)ffun, 0.8f, 1.0f, 0.5f, 0.0f);
  float fh = 1e-3f;
  hc_near("float da", ft, (ffun(0.8f + fh, 0.5f) - ffun(0.8f - fh, 0.5f)) / (2 * fh), 2e-3);
  /* output array tangents (void function, dupnoneed out) */
  double x[N], dx[N], out[N], dout[N], op[N], om[N], xp[N], xm[N];
  for (int i = 0; i < N; i++) { x[i] = x0[i]; dx[i] = (i == 2) ? 1.0 : 0.0; dout[i] = 0; }
  __enzyme_fwddiffv((void *)normalize, enzyme_dup, x, dx, enzyme_dupnoneed, out, dout, enzyme_const, N);
  for (int i = 0; i < N; i++) { xp[i] = x[i] + h * dx[i]; xm[i] = x[i] - h * dx[i]; }
  normalize(xp, op, N); normalize(xm, om, N);
  for (int i = 0; i < N; i++) hc_near("normalize dout", dout[i], (op[i] - om[i]) / (2 * h), 1e-6);
  return hc_done();
}
