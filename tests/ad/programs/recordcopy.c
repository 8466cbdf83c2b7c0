/* memcpy of records mixing double, float and int fields: run-time and constant lengths,
 * struct assignment, and a global array of records. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
struct rec { double v; float w; int tag; double arr[2]; };
struct rec G[4];

static void fill(struct rec *a, const double *x, int n) {
  for (int i = 0; i < n; i++) {
    a[i].v = x[i]; a[i].w = (float)x[i]; a[i].tag = i;
    a[i].arr[0] = x[i] * x[i]; a[i].arr[1] = 2 * x[i];
  }
}
static double sum(const struct rec *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += b[i].v * b[i].v + b[i].w + b[i].tag * b[i].arr[0] + b[i].arr[1];
  return s;
}
double runtime_len(const double *x, int n) {
  struct rec a[8], b[8];
  fill(a, x, n);
  memcpy(b, a, sizeof(struct rec) * n);
  return sum(b, n);
}
double const_len(const double *x, int n) {
  struct rec a[4], b[4];
  fill(a, x, 4);
  memcpy(b, a, sizeof a);
  struct rec c = b[n - 1];
  b[0] = c;
  return sum(b, 4);
}
double global_copy(const double *x, int n) {
  struct rec a[4];
  fill(a, x, n);
  memcpy(G, a, sizeof(struct rec) * n);
  return sum(G, n);
}

/* d/dx_i of one record's contribution with tag t (float fields: exact here since
 * (float)x is differentiated as the identity) */
static double term(double x, int t) { return 2 * x + 1.0 + t * 2 * x + 2; }

#define CHECK(what, f, x, n, want) do { \
    double d_[4] = {0}, xx_[4]; \
    memcpy(xx_, x, sizeof xx_); \
    __enzyme_autodiff((void *)f, enzyme_dup, xx_, d_, enzyme_const, n); \
    for (int i = 0; i < n; i++) ac_near(what, d_[i], want, 1e-12); \
  } while (0)

int main(void) {
  double x[4] = {0.5, -1.0, 2.0, 0.25};
  CHECK("runtime length", runtime_len, x, 4, term(x[i], i));
  /* b[0] = b[3]: record 0's contribution now comes from x[3] (tag 3) */
  CHECK("constant length", const_len, x, 4, i == 0 ? 0.0 : i == 3 ? 2 * term(x[3], 3) : term(x[i], i));
  CHECK("global", global_copy, x, 4, term(x[i], i));
  return ac_done();
}
