/* Forward mode through user rules: the enzyme("forward", ...) attribute, derivative
 * registration globals (scalar, float and pointer rules), __enzyme_inactivefn and
 * __enzyme_function_like, used deep inside realistic callers and in vector mode. Every rule
 * differs from the true derivative, so a rule that is ignored fails its check. */
#include <string.h>
#include "hcheck.h"
extern int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_width;
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddifff(void *, ...);
typedef struct { double a, b; } d2;
typedef struct { double d[4]; } d4;
d2 __enzyme_fwddiff2(void *, ...);
d4 __enzyme_fwddiff4(void *, ...);

typedef struct { double primal, tangent; } dual;
typedef struct { float primal, tangent; } fdual;

/* attribute on the declaration, rule defined after: "activation'(x) = 5", primal unchanged */
dual act_fwd(double x, double dx);
__attribute__((noinline)) double act(double x) __attribute__((enzyme("forward", act_fwd)));
double act(double x) { return tanh(x); }
dual act_fwd(double x, double dx) { dual r = {tanh(x), 5.0 * dx}; return r; }

static int mix_fwd_calls;
/* attribute on a definition with a two-argument rule: "d(a*b) = 2 da + 3 db" */
dual mix_fwd(double a, double da, double b, double db) { mix_fwd_calls++; dual r = {a * b, 2.0 * da + 3.0 * db}; return r; }
__attribute__((noinline, enzyme("forward", mix_fwd))) double mix(double a, double b) { return a * b; }

/* registration global, float: "d sinf = -4" */
__attribute__((noinline)) float fwave(float x) { return sinf(x); }
fdual fwave_fwd(float x, float dx) { fdual r = {sinf(x), -4.0f * dx}; return r; }
void *__enzyme_register_derivative_fwave[] = {(void *)fwave, (void *)fwave_fwd};

/* registration global, pointer rule on an in-place kernel: "dv[i] = 10 dv[i]" for the true 2 v dv */
__attribute__((noinline)) void square_all(double *v, int n) { for (int i = 0; i < n; i++) v[i] *= v[i]; }
void square_all_fwd(double *v, double *dv, int n) {
  for (int i = 0; i < n; i++) { v[i] *= v[i]; dv[i] *= 10.0; }
}
void *__enzyme_register_derivative_square_all[] = {(void *)square_all, (void *)square_all_fwd};

/* inactive: a random-ish perturbation that must not contribute */
__attribute__((noinline)) double jitter(double x) { return 1e-3 * sin(1e4 * x); }
__attribute__((noinline)) static void count_log(const char *msg, double v) { if (v != v) fprintf(stderr, "%s %g\n", msg, v); }
void *__enzyme_inactivefn[] = {(void *)jitter, (void *)count_log};

/* my_log1p treated like log1p (its loop would otherwise give a zero derivative) */
__attribute__((noinline)) double my_log1p(double x) {
  double r = 0, t = 1.0 + x;
  while (t > 1.000001) { t = sqrt(t); r += 1; }
  return ldexp(t - 1.0, (int)r);
}
void *__enzyme_function_like[2] = {(void *)my_log1p, "log1p"};

/* only reverse rules: forward mode differentiates the body, reverse mode uses the rule */
typedef struct { void *tape; double primal; } aug_t;
double __enzyme_autodiff(void *, ...);
aug_t cube_aug(double x);
double cube_grad(double x, double dret, void *tape);
__attribute__((noinline)) double cube(double x) __attribute__((enzyme("augment", cube_aug), enzyme("gradient", cube_grad)));
double cube(double x) { return x * x * x; }
aug_t cube_aug(double x) { aug_t r = {0, x * x * x}; return r; }
double cube_grad(double x, double dret, void *tape) { (void)x; (void)tape; return 100.0 * dret; }
double uses_cube(double x) { return cube(x) + x; }

/* realistic callers */
double net(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += act(x[i]) * (1.0 + jitter(x[i]));
  count_log("net", s);
  return s;
}
double pairs(const double *x, int n) { double s = 0; for (int i = 0; i + 1 < n; i++) s += mix(x[i], x[i + 1]); return s; }
float fcall(float x) { return fwave(x) * x; }
double sumsq_inplace(double *v, int n) { square_all(v, n); double s = 0; for (int i = 0; i < n; i++) s += v[i]; return s; }
double uses_log(double x) { return 2.0 * my_log1p(x * x); }

int main(void) {
  double x[4] = {0.3, -0.7, 1.2, 0.05}, dx[4] = {1.0, 2.0, -1.0, 0.5}, h = 1e-6;
  /* net' = sum 5 dx_i (1 + jitter) */
  double want = 0;
  for (int i = 0; i < 4; i++) want += 5.0 * dx[i] * (1.0 + jitter(x[i]));
  hc_near("attribute decl rule", __enzyme_fwddiff((void *)net, enzyme_dup, x, dx, enzyme_const, 4), want, 1e-12);
  hc_near("attribute rule direct", __enzyme_fwddiff((void *)act, 0.4, 2.0), 10.0, 1e-12);
  /* pairs' = sum 2 dx_i + 3 dx_{i+1} */
  want = 0;
  for (int i = 0; i < 3; i++) want += 2.0 * dx[i] + 3.0 * dx[i + 1];
  mix_fwd_calls = 0;
  hc_near("attribute def rule", __enzyme_fwddiff((void *)pairs, enzyme_dup, x, dx, enzyme_const, 4), want, 1e-12);
  hc_near("rule called per use", mix_fwd_calls, 3, 0);
  hc_near("float registration", __enzyme_fwddifff((void *)fcall, 0.5f, 1.0f), -4.0 * 0.5 + sin(0.5), 1e-5);
  /* in place: v = x^2 (primal), dv = 10 dv, sum */
  double v[4], dv[4];
  memcpy(v, x, sizeof v); memcpy(dv, dx, sizeof dv);
  double t = __enzyme_fwddiff((void *)sumsq_inplace, enzyme_dup, v, dv, enzyme_const, 4);
  hc_near("pointer rule ret", t, 10.0 * (1.0 + 2.0 - 1.0 + 0.5), 1e-12);
  for (int i = 0; i < 4; i++) { hc_near("pointer rule primal", v[i], x[i] * x[i], 1e-15); hc_near("pointer rule shadow", dv[i], 10.0 * dx[i], 1e-15); }
  hc_near("function_like", __enzyme_fwddiff((void *)uses_log, 0.8, 1.0), 2.0 * 1.6 / (1.0 + 0.64), 1e-9);
  (void)h;
  hc_near("reverse-only rule, forward mode", __enzyme_fwddiff((void *)uses_cube, 0.7, 1.0), 3 * 0.49 + 1.0, 1e-12);
  hc_near("reverse-only rule, reverse mode", __enzyme_autodiff((void *)uses_cube, 0.7), 101.0, 1e-12);

  /* vector mode: each lane sees the rules */
  d2 n2 = __enzyme_fwddiff2((void *)pairs, enzyme_width, 2, enzyme_dup, x, dx, x, enzyme_const, 4);
  double want_x = 0;
  for (int i = 0; i < 3; i++) want_x += 2.0 * x[i] + 3.0 * x[i + 1];
  hc_near("vector rule lane 0", n2.a, want, 1e-12);
  hc_near("vector rule lane 1", n2.b, want_x, 1e-12);
  d4 l4 = __enzyme_fwddiff4((void *)uses_log, enzyme_width, 4, 0.8, 1.0, -1.0, 0.5, 0.0);
  double dl = 2.0 * 1.6 / 1.64;
  hc_near("vector function_like 0", l4.d[0], dl, 1e-9);
  hc_near("vector function_like 1", l4.d[1], -dl, 1e-9);
  hc_near("vector function_like 2", l4.d[2], 0.5 * dl, 1e-9);
  hc_near("vector function_like 3", l4.d[3], 0.0, 0.0);
  return hc_done();
}
