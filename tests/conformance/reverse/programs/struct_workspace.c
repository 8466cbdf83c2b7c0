/* A global model struct whose pointer members a constructor sets: the weights and a scratch
 * buffer the differentiated function writes intermediates into. The scratch pointer is a
 * member, so no shadow can be declared for it as it is. */
#include "hcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
struct model { int n; const double *w; double *scratch; } M;
static volatile int count = 6;
__attribute__((constructor)) static void load_model(void) {
  static double w[6], scratch[6];
  M.n = count; M.w = w; M.scratch = scratch;
  for (int i = 0; i < 6; i++) w[i] = 0.2 * i - 0.4;
}
double f(const double *x) {
  for (int i = 0; i < M.n; i++) M.scratch[i] = M.w[i] * x[i % 4];
  double s = 0;
  for (int i = 0; i < M.n; i++) s += tanh(M.scratch[i]) * M.w[(i + 1) % M.n] * x[(i + 2) % 4];
  return s;
}
int main(void) {
  double x[4] = {0.5, -1.5, 1.0, 0.25}, d[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, d);
  hc_near("d0", d[0], d[0], 0);
  return hc_done();
}
