#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
struct S { double u; double v; int k; };

static void h0_u64copy(void *dst, const void *src, int n) {
  uint64_t *d = dst; const uint64_t *s = src;
  for (int i = 0; i < n; i++) d[i] = s[i];
}

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = sin(sin(cos(cos(0.5)))), t = tanh(exp(0.5 * tanh((pow(1.25 + (x[3]) * (x[3]), 0.5 + 0.25 * tanh(0.75)) - x[3]))));
  struct S st = { x[1] * 0.5, tanh(log(1.0 + (log(1.0 + ((x[3] + x[0])) * ((x[3] + x[0])))) * (log(1.0 + ((x[3] + x[0])) * ((x[3] + x[0])))))), 1 };
  for (int i = 0; i < 6; i++) { a[i] = sin((exp(0.5 * tanh(0.5)) * x[(i + 1) % 4])) + 0.1 * i; b[i] = sin(((x[(i + 2) % 4] - a[i]) * tanh(sqrt(1.0 + (a[i]) * (a[i]))))); }
  for (int i1 = 0; i1 < 6; i1++)
    for (int j2 = 0; j2 <= i1; j2++) s = 0.75 * s + 0.25 * sin(sin(exp(0.5 * tanh((a[j2] - a[j2])))));
  if (sqrt(1.0 + (sin(s)) * (sin(s))) > -0.2) {
    b[1] = sin(tanh(log(1.0 + ((s - a[4])) * ((s - a[4])))));
  } else {
    st.u = tanh(sin((sin(s) * a[1]))); st.v = st.v * 0.5 + sin((s - tanh(t)));
    s = s + 0.25 * st.u * st.v;
  }
  for (int i3 = 0; i3 < 5; i3++) b[i3] = sin(exp(0.5 * tanh((b[i3 + 1] - log(1.0 + (1.25) * (1.25))))));
  memmove(a + 1, a + 2, 4 * sizeof(double));
  { double *p4 = b + 1;
    for (int i5 = 0; i5 < 3; i5++) { *p4 = sin(sin((log(1.0 + (*p4) * (*p4)) + (*p4 + t)))); p4++; }
    t = t + 0.5 * p4[-1]; }
  for (int i6 = 0; i6 < 6; i6++)
    for (int j7 = 0; j7 <= i6; j7++) s = 0.75 * s + 0.25 * tanh(((a[j7] + a[j7]) * a[j7]));
  memcpy(a + 0, b + 0, 6 * sizeof(double));
  static const double wa[6] = {-0.232, 0.920, 0.092, 0.547, -0.371, 0.831}, wb[6] = {0.225, -0.505, 0.867, -0.062, -0.321, -0.474};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {-0.7142, -0.5388, 0.3460, -0.6468};
  double g[4] = {0};
  printf("VAL %.17g\n", f(x));
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  for (int i = 0; i < 4; i++) printf("REV %d %.17g\n", i, g[i]);
  for (int i = 0; i < 4; i++) {
    double e[4] = {0};
    e[i] = 1.0;
    printf("FWD %d %.17g\n", i, __enzyme_fwddiff((void *)f, enzyme_dup, x, e));
  }
  static const double steps[3] = {1e-4, 1e-5, 1e-6};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 4; i++) {
      double xp[4], xm[4];
      memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);
      xp[i] += steps[k]; xm[i] -= steps[k];
      printf("FD %g %d %.17g\n", steps[k], i, (f(xp) - f(xm)) / (xp[i] - xm[i]));
    }
  return 0;
}
