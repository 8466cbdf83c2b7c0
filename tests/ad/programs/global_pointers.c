/* Memory reached through pointers held in globals (read-only coefficient tables), float
 * statics, and shadow globals across repeated combined and split gradient calls. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
enum { N = 4 };
static double coef_data[N] = {1.0, 2.0, -0.5, 3.0};
static double *g_coef; /* set by main: a pointer held in a global, read only here */
__attribute__((noinline)) static double wdot(const double *a, const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * x[i] * x[i];
  return s;
}
double f(const double *x, int n) { return wdot(g_coef, x, n) + wdot(x, x, n); }

static float fstate;   /* a float static read before it is written: the previous call's value */
float fs(float x) {
  float y = 0.25f * fstate + x * x;
  fstate = y;
  return y * x;
}
static double hist[64];  /* a larger history buffer: zeroed by memset after each call */
double h(double x) {
  double s = 0;
  for (int i = 0; i < 64; i++) { s += hist[i] * x; hist[i] = x * (i + 1); }
  return s;
}

int main(void) {
  g_coef = coef_data;
  double x[N] = {0.5, -1.5, 1.0, 0.25};
  for (int rep = 0; rep < 3; rep++) {
    double d[N] = {0};
    if (rep == 1) {
      void *t = __enzyme_augmentfwd((void *)f, enzyme_dup, x, d, enzyme_const, N);
      __enzyme_reverse((void *)f, enzyme_dup, x, d, enzyme_const, N, 1.0, t);
    } else {
      __enzyme_autodiff((void *)f, enzyme_dup, x, d, enzyme_const, N);
    }
    for (int i = 0; i < N; i++) ac_near("through a global pointer", d[i], 2 * coef_data[i] * x[i] + 3 * x[i] * x[i], 1e-12);
  }
  /* the table the global points to is untouched by the gradients */
  ac_near("table intact", coef_data[0] + coef_data[1] + coef_data[2] + coef_data[3], 5.5, 0);
  float xf = 1.5f, prev = 0.0f;
  for (int rep = 0; rep < 3; rep++) {
    float y = 0.25f * prev + xf * xf;
    double g = __enzyme_autodiff((void *)fs, xf);
    ac_near("float static", g, 2 * xf * xf + y, 1e-5);
    prev = y;
  }
  for (int rep = 0; rep < 3; rep++) {
    /* hist holds the previous call's values: constants of this call */
    double old = 0;
    for (int i = 0; i < 64; i++) old += hist[i];
    ac_near("history buffer", __enzyme_autodiff((void *)h, 0.75), old, 1e-12);
  }
  return ac_done();
}
