// Over-aligned operator new/delete (`new` of an alignas(64) type takes (size, align), `delete`
// is _ZdlPvSt11align_val_t): the shadow block has the object's size, not its alignment, and
// the delete is no function without a rule. Combined, split and forward mode.
#include <new>
#include "adcheck.h"

extern "C" {
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
double __enzyme_fwddiff(void *, ...);
}

struct alignas(64) Block { double v[32]; };   // 256 bytes, aligned to 64

__attribute__((noinline)) double sumsq(const double *x, int n) {
  Block *b = new Block;
  for (int i = 0; i < 32; i++) b->v[i] = x[i % n] * x[i % n];
  double s = 0;
  for (int i = 0; i < 32; i++) s += b->v[i] * (1.0 + 0.01 * i);
  delete b;
  return s;
}

static double weight(int k, int n) {   // sum of (1 + 0.01 i) over i = k mod n
  double w = 0;
  for (int i = 0; i < 32; i++) if (i % n == k) w += 1.0 + 0.01 * i;
  return w;
}

int main() {
  const int n = 3;
  double x[n] = {1.5, -2.0, 0.5};
  double dx[n] = {0, 0, 0};
  __enzyme_autodiff((void *)sumsq, enzyme_dup, x, dx, enzyme_const, n);
  for (int k = 0; k < n; k++) ac_near("combined", dx[k], 2 * x[k] * weight(k, n), 1e-12);

  double sx[n] = {0, 0, 0};
  void *tape = __enzyme_augmentfwd((void *)sumsq, enzyme_dup, x, sx, enzyme_const, n);
  __enzyme_reverse((void *)sumsq, enzyme_dup, x, sx, enzyme_const, n, 1.0, tape);
  for (int k = 0; k < n; k++) ac_near("split", sx[k], 2 * x[k] * weight(k, n), 1e-12);

  double tx[n] = {1.0, 0.0, 2.0};
  double t = __enzyme_fwddiff((void *)sumsq, enzyme_dup, x, tx, enzyme_const, n);
  double want = 0;
  for (int k = 0; k < n; k++) want += 2 * x[k] * weight(k, n) * tx[k];
  ac_near("forward", t, want, 1e-12);
  return ac_done();
}
