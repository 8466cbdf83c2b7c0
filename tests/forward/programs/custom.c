/* Registrations in forward mode: custom forward rules that deliberately differ from the true
 * derivative (so the checks see they are used), a pointer rule, inactive functions,
 * function_like, and rules inside vector mode. */
#include "fwdcheck.h"
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddifff(void *, ...);
typedef struct { double d[2]; } vec2;
vec2 __enzyme_fwddiff2(void *, ...);

/* true derivative cos(x) dx; the rule says 3 dx and doubles the primal */
__attribute__((noinline)) double wave(double x) { return sin(x); }
typedef struct { double primal, tangent; } dual;
dual wave_fwd(double x, double dx) { dual r = {2.0 * sin(x), 3.0 * dx}; return r; }
void *__enzyme_register_derivative_wave[] = {(void *)wave, (void *)wave_fwd};

/* float: the ABI returns {float, float} as <2 x float> */
__attribute__((noinline)) float fwave(float x) { return sinf(x); }
typedef struct { float primal, tangent; } fdual;
fdual fwave_fwd(float x, float dx) { fdual r = {sinf(x), -4.0f * dx}; return r; }
void *__enzyme_register_derivative_fwave[] = {(void *)fwave, (void *)fwave_fwd};

/* a pointer rule: y[0] = 3 x[0], the rule writes dy = 7 dx (and x's tangent pairs with k's) */
__attribute__((noinline)) void triple(const double *x, double *y, double k) { y[0] = 3.0 * x[0] * k; }
void triple_fwd(const double *x, const double *dx, double *y, double *dy, double k, double dk) {
  y[0] = 3.0 * x[0] * k; dy[0] = 7.0 * dx[0] + 100.0 * dk;
}
void *__enzyme_register_derivative_triple[] = {(void *)triple, (void *)triple_fwd};

__attribute__((noinline)) double noise(double x) { return sin(1000 * x); }
void *__enzyme_inactivefn[] = {(void *)noise};

__attribute__((noinline)) double my_log(double x) { double r = 0; for (double t = x; t > 1.0001; t /= 1.0001) r += 0.0001; return r; }
void *__enzyme_function_like[2] = {(void *)my_log, "log"};

double use_wave(double x) { return wave(x) * x; }
float use_fwave(float x) { return fwave(x) + x; }
double use_noise(double x) { return x * noise(x); }
double use_log(double x) { return 2.0 * my_log(x); }
double use_triple(const double *x, double k) { double y[1]; triple(x, y, k); return y[0] * y[0]; }

int main(void) {
  double x = 0.6;
  /* d(wave(x) x) = wave'(x) x + wave(x), with the rule's wave = 2 sin, wave' = 3 */
  fc_near("custom forward", __enzyme_fwddiff((void *)use_wave, x, 1.0), 3.0 * x + 2.0 * sin(x), 1e-12);
  fc_near("custom forward direct", __enzyme_fwddiff((void *)wave, x, 0.5), 1.5, 1e-12);
  fc_near("custom float", __enzyme_fwddifff((void *)use_fwave, 0.6f, 1.0f), -3.0, 1e-6);
  fc_near("inactive fn", __enzyme_fwddiff((void *)use_noise, 0.3, 1.0), noise(0.3), 1e-12);
  fc_near("function_like log", __enzyme_fwddiff((void *)use_log, 3.0, 1.0), 2.0 / 3.0, 1e-12);
  double xa[1] = {2.0}, dxa[1] = {1.0};
  /* y = 6 k... with y' = 7 dx + 100 dk; result y^2 -> 2 y y' */
  fc_near("custom pointer rule", __enzyme_fwddiff((void *)use_triple, xa, dxa, 0.5, 0.0),
          2 * 3.0 * 7.0, 1e-12);
  fc_near("custom pointer rule dk", __enzyme_fwddiff((void *)use_triple, xa, dxa, 0.5, 1.0),
          2 * 3.0 * 107.0, 1e-12);
  /* vector mode calls the rule once per lane */
  vec2 v = __enzyme_fwddiff2((void *)use_wave, enzyme_width, 2, x, 1.0, -2.0);
  fc_near("custom lane 0", v.d[0], 3.0 * x + 2.0 * sin(x), 1e-12);
  fc_near("custom lane 1", v.d[1], -2.0 * (3.0 * x + 2.0 * sin(x)), 1e-12);
  return fc_done();
}
