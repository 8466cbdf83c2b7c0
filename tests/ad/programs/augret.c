/* __enzyme_augmentfwd declared as returning struct { void *tape; T primal; } (Enzyme's shape for a
 * function returning T) gets the tape and the primal; declared as void * it gets the tape. */
#include "adcheck.h"
typedef struct { void *tape; double primal; } aug_d;
typedef struct { void *tape; float primal; } aug_f;
aug_d __enzyme_augmentfwd(void *, ...);
aug_f __enzyme_augmentfwd_f(void *, ...);
void *__enzyme_augmentfwd_p(void *, ...);
double __enzyme_reverse(void *, ...);
float __enzyme_reverse_f(void *, ...);
extern int enzyme_dup, enzyme_const;
__attribute__((noinline)) double f(double x, const double *w, int n) {
  double s = 0; for (int i = 0; i < n; i++) s += sin(x * w[i]); return s; }
__attribute__((noinline)) float g(float x) { return sinf(x) * x; }
static double W[3] = {0.5, -1.2, 2.0};
static double f1(double x) { return f(x, W, 3); }
int main(void) {
  double dw[3] = {0};
  aug_d a = __enzyme_augmentfwd((void *)f, 0.7, enzyme_dup, W, dw, enzyme_const, 3);
  ac_near("augmentfwd returns the primal", a.primal, f1(0.7), 1e-12);
  double dx = __enzyme_reverse((void *)f, 0.7, enzyme_dup, W, dw, enzyme_const, 3, 1.0, a.tape);
  ac_near("reverse with that tape", dx, AC_FD(f1, 0.7), 1e-6);
  aug_f b = __enzyme_augmentfwd_f((void *)g, 0.5f);
  ac_near("float primal", b.primal, g(0.5f), 1e-6);
  float dg = __enzyme_reverse_f((void *)g, 0.5f, 1.0f, b.tape);
  ac_near("float reverse", dg, sinf(0.5f) + 0.5f * cosf(0.5f), 1e-5);
  void *t = __enzyme_augmentfwd_p((void *)f, 0.7, enzyme_dup, W, dw, enzyme_const, 3);
  dw[0] = dw[1] = dw[2] = 0;
  dx = __enzyme_reverse((void *)f, 0.7, enzyme_dup, W, dw, enzyme_const, 3, 1.0, t);
  ac_near("void* tape still works", dx, AC_FD(f1, 0.7), 1e-6);
  return ac_done();
}
