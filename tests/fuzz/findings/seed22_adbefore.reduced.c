#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
struct S { double u; double v; int k; };
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = tanh((pow(1.25 + (1.25) * (1.25), 0.5 + 0.25 * tanh((x[0] + x[0]))) * x[1])), t = tanh(log(1.0 + ((sin(x[3]) * tanh(x[3]))) * ((sin(x[3]) * tanh(x[3])))));
  struct S st = { x[1] * 0.5, sin(sin(sqrt(1.0 + (x[0]) * (x[0])))), 2 };
  for (int i = 0; i < 6; i++) { a[i] = sqrt(1.0 + ((x[i % 4] + x[(i + 1) % 4])) * ((x[i % 4] + x[(i + 1) % 4]))) + 0.1 * i; b[i] = tanh((exp(0.5 * tanh((x[(i + 2) % 4] * x[(i + 2) % 4]))) * exp(0.5 * tanh((x[(i + 2) % 4] * x[(i + 2) % 4]))))); }
  { double *p1 = b + 2;
    for (int i2 = 0; i2 < 3; i2++) { *p1 = sin((sin(pow(1.25 + (s) * (s), 0.5 + 0.25 * tanh(t))) * exp(0.5 * tanh(*p1)))); p1++; }
    t = t + 0.5 * p1[-1]; }
  for (int i5 = 0; i5 < 5; i5++) a[i5] = tanh(sqrt(1.0 + (s) * (s)));
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  free(b);
  return out;
}
int main(void) {
  double x[4] = {-0.0541, -0.5261, -0.2806, 0.4228};
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
