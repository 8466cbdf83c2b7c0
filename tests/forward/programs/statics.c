/* Forward mode through statics that keep state between calls: a warm start read before it
 * is written (a constant of each call) and a running history buffer, in scalar and vector
 * mode. Repeated tangent calls at the same point must agree with the closed form: the
 * tangent a static got in the previous call must not carry over. */
#include "fwdcheck.h"
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[2]; } lanes2;
lanes2 __enzyme_fwddiff_lanes2(void *, ...) __asm__("__enzyme_fwddiff");

double warm(double x) {
  static double prev = 0.0;
  double y = 0.5 * prev + x * x; /* prev from the last call: constant here */
  prev = y;
  return y * x;
}

static double history[8];
double smooth(double x) {
  double s = 0;
  for (int i = 7; i > 0; i--) history[i] = history[i - 1];
  history[0] = x * x;
  for (int i = 0; i < 8; i++) s += history[i] * x;
  return s;
}

int main(void) {
  double x = 1.5, prev_model = 0.0;
  for (int k = 0; k < 3; k++) {
    double y = 0.5 * prev_model + x * x;
    /* d(y x)/dx with prev constant: 2x^2 + y */
    fc_near("warm tangent", __enzyme_fwddiff((void *)warm, x, 1.0), 2 * x * x + y, 1e-12);
    prev_model = y;
  }
  for (int k = 0; k < 2; k++) {
    double y = 0.5 * prev_model + x * x;
    lanes2 t = __enzyme_fwddiff_lanes2((void *)warm, enzyme_width, 2, x, 1.0, -2.0);
    fc_near("warm lane 0", t.d[0], 2 * x * x + y, 1e-12);
    fc_near("warm lane 1", t.d[1], -2 * (2 * x * x + y), 1e-12);
    prev_model = y;
  }
  /* history: entries written in earlier calls are constants; only history[0] = x^2 is new */
  double hist_model[8] = {0};
  for (int k = 0; k < 4; k++) {
    for (int i = 7; i > 0; i--) hist_model[i] = hist_model[i - 1];
    hist_model[0] = x * x;
    double sum = 0;
    for (int i = 0; i < 8; i++) sum += hist_model[i];
    /* d/dx sum_i h_i x = sum_i h_i + x * d(h_0)/dx = sum + 2 x^2 */
    fc_near("history tangent", __enzyme_fwddiff((void *)smooth, x, 1.0), sum + 2 * x * x, 1e-12);
  }
  return fc_done();
}
