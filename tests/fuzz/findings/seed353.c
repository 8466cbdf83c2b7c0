#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
struct S { double u; double v; int k; };

__attribute__((noinline)) double h0_scalar(double u, double v) {
  return (u / (1.5 + (log(1.0 + (pow(1.25 + (u) * (u), 0.5 + 0.25 * tanh(u))) * (pow(1.25 + (u) * (u), 0.5 + 0.25 * tanh(u))))) * (log(1.0 + (pow(1.25 + (u) * (u), 0.5 + 0.25 * tanh(u))) * (pow(1.25 + (u) * (u), 0.5 + 0.25 * tanh(u)))))));
}

__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  double s = tanh((exp(0.5 * tanh((x[0] / (1.5 + (1.25) * (1.25))))) + (sin(x[1]) - log(1.0 + (x[0]) * (x[0]))))), t = tanh((pow(1.25 + ((x[3] + x[3])) * ((x[3] + x[3])), 0.5 + 0.25 * tanh(x[2])) / (1.5 + ((tanh(x[2]) * pow(1.25 + (x[3]) * (x[3]), 0.5 + 0.25 * tanh(x[2])))) * ((tanh(x[2]) * pow(1.25 + (x[3]) * (x[3]), 0.5 + 0.25 * tanh(x[2])))))));
  struct S st = { x[1] * 0.5, tanh((sqrt(1.0 + (sin(x[3])) * (sin(x[3]))) - (exp(0.5 * tanh(x[0])) + x[3]))), 0 };
  for (int i = 0; i < 6; i++) { a[i] = (pow(1.25 + (x[(i + 1) % 4]) * (x[(i + 1) % 4]), 0.5 + 0.25 * tanh(x[i % 4])) * pow(1.25 + (x[(i + 1) % 4]) * (x[(i + 1) % 4]), 0.5 + 0.25 * tanh(x[i % 4]))) + 0.1 * i; b[i] = sin(sin(a[i])); }
  if (((sin(b[2]) * sqrt(1.0 + (a[0]) * (a[0]))) * (sin(b[2]) * sqrt(1.0 + (a[0]) * (a[0])))) > 0.1) {
    { double *p1 = a + 0;
      for (int i2 = 0; i2 < 3; i2++) { *p1 = tanh(tanh((sqrt(1.0 + (*p1) * (*p1)) - (t * t)))); p1++; }
      t = t + 0.5 * p1[-1]; }
  } else {
    a[5] = sin(exp(0.5 * tanh(cos((s * s)))));
  }
  t = tanh(h0_scalar(log(1.0 + ((x[2] * x[2])) * ((x[2] * x[2]))), b[4]));
  { uint64_t w3; memcpy(&w3, &a[0], sizeof w3); memcpy(&b[0], &w3, sizeof w3); }
  { double *p4 = a + 0;
    for (int i5 = 0; i5 < 3; i5++) { *p4 = tanh(log(1.0 + (-0.3) * (-0.3))); p4++; }
    t = t + 0.5 * p4[-1]; }
  { int m6 = 1 + (int)(2.0 * (1.0 + tanh(cos(b[4]))));
    for (int i7 = 0; i7 < m6; i7++) s = 0.5 * s + 0.5 * sin(tanh((cos(-0.3) + s))); }
  static const double wa[6] = {0.806, 0.697, -0.152, 0.931, 0.003, -0.922}, wb[6] = {0.236, -0.295, 0.288, -0.930, 0.294, 0.954};
  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;
  for (int i = 0; i < 6; i++) out += wa[i] * a[i] + wb[i] * b[i];
  free(b);
  return out;
}

int main(void) {
  double x[4] = {-0.1364, 0.6744, 0.4125, -0.4740};
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
