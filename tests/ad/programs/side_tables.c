/* Side tables: values that every iteration of a top-level loop computes alike (loads of
 * weights the loop never writes, addressed by inner counters only) are kept once instead
 * of once per iteration. Gradients must match finite differences in combined and split
 * mode, in split mode also when the caller overwrites the inputs between the two calls;
 * loops whose iterations differ (a branch on the counter, memory written in the loop, an
 * inner trip count that depends on the outer counter, a buffer refilled by fread) must
 * still be right. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_allocated, enzyme_tape;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
long __enzyme_augmentsize(void *, ...);
void __enzyme_autodiff(void *, ...);

enum { N = 4, M = 5, W = N * N + N };

/* w is read the same way in every t iteration: its values go into the side table */
__attribute__((noinline)) double sweeps(const double *w, const double *x, int n, int m) {
  double s = 0;
  for (int t = 0; t < m; t++)
    for (int i = 0; i < n; i++) {
      double a = 0;
      for (int j = 0; j < n; j++) a += sin(w[i * n + j] * x[t]) * w[n * n + j];
      s += a * a * w[n * n + i];
    }
  return s;
}

/* the loop leaves in the middle of an iteration: the last one is a prefix of the others */
__attribute__((noinline)) double early(const double *w, const double *x, int m, double lim) {
  double s = 0;
  for (int t = 0; t < m; t++) {
    s += exp(w[0] * x[t]) * w[3];
    if (s > lim) break;
    for (int j = 0; j < 3; j++) s += cos(x[t] * w[j + 1]) * w[j];
  }
  return s;
}

/* a branch on the counter: iterations differ, nothing goes into a side table */
__attribute__((noinline)) double varying(const double *w, const double *x, int m) {
  double s = 0;
  for (int t = 0; t < m; t++) {
    if (t % 2) s += sin(w[0] * x[t]) * w[1];
    else for (int j = 0; j < 3; j++) s += w[j] * w[j + 1] * cos(x[t]);
  }
  return s;
}

/* the first loop writes what it reads (no table); the second only reads, and a local
 * buffer filled before it (like GMM's exp(q) diagonals) is read there as well */
__attribute__((noinline)) double updated(double *w, const double *x, int n, int m) {
  for (int t = 0; t < m; t++)
    for (int i = 0; i < n; i++) w[i] = w[i] * 0.9 + sin(w[i] * x[t]);
  double *q = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) q[i] = exp(w[i]);
  double s = 0;
  for (int t = 0; t < m; t++)
    for (int i = 0; i < n; i++) s += q[i] * w[i] * sin(w[(i + 1) % n] * x[t]);
  free(q);
  return s;
}

/* the inner trip count depends on the outer counter: iterations differ */
__attribute__((noinline)) double widening(const double *w, const double *x, int m) {
  double s = 0;
  for (int t = 0; t < m; t++)
    for (int j = 0; j <= t % 4; j++) s += sin(w[j] * x[t]) * w[j];
  return s;
}

/* fread refills buf in every iteration (an inactive call that writes): not invariant */
__attribute__((noinline)) double streamed(const double *w, FILE *f, int m) {
  double s = 0, buf[2];
  rewind(f);
  for (int t = 0; t < m; t++) {
    if (fread(buf, sizeof(double), 2, f) != 2) break;
    for (int j = 0; j < 3; j++) s += sin(buf[j % 2] * w[j]) * w[j + 1];
  }
  return s;
}

static double X[M] = {0.3, -0.4, 0.8, 0.1, -0.6};
static int cur_m = M;
static double sweeps_f(const double *w, int n) { (void)n; return sweeps(w, X, N, cur_m); }
static double early_f(const double *w, int n) { (void)n; return early(w, X, M, 1.2); }
static double varying_f(const double *w, int n) { (void)n; return varying(w, X, M); }
static double widening_f(const double *w, int n) { (void)n; return widening(w, X, M); }
static FILE *stream;
static double streamed_f(const double *w, int n) { (void)n; return streamed(w, stream, M); }
static double updated_f(const double *w, int n) {
  double c[N];
  memcpy(c, w, sizeof c);
  (void)n;
  return updated(c, X, N, M);
}

/* combined gradient, and split with w overwritten between the two calls (the caller
 * reuses its buffer); the trailing arguments are the constant ones */
static void compare(const char *what, const double *fd, const double *d_comb, const double *d_split, int n) {
  char label[64];
  for (int i = 0; i < n; i++) {
    snprintf(label, sizeof label, "%s combined [%d]", what, i);
    ac_near(label, d_comb[i], fd[i], 1e-6);
    snprintf(label, sizeof label, "%s split [%d]", what, i);
    ac_near(label, d_split[i], fd[i], 1e-6);
  }
}
#define CHECK(what, fn, f, w, n, ...)                                                       \
  do {                                                                                     \
    double fd_[W], dc_[W] = {0}, ds_[W] = {0}, keep_[W];                                   \
    ac_fd_grad(f, w, n, fd_);                                                              \
    memcpy(keep_, w, sizeof(double) * (n));                                                \
    __enzyme_autodiff((void *)fn, enzyme_dup, w, dc_, __VA_ARGS__);                        \
    void *tape_ = __enzyme_augmentfwd((void *)fn, enzyme_dup, w, ds_, __VA_ARGS__);        \
    for (int i_ = 0; i_ < (n); i_++) w[i_] = 100.0 + i_;                                   \
    __enzyme_reverse((void *)fn, enzyme_dup, w, ds_, __VA_ARGS__, 1.0, tape_);             \
    memcpy(w, keep_, sizeof(double) * (n));                                                \
    compare(what, fd_, dc_, ds_, n);                                                       \
  } while (0)

static long used(const void *buf) { return ((const long *)buf)[1]; }

int main(void) {
  double w[W];
  for (int i = 0; i < W; i++) w[i] = 0.2 + 0.15 * sin(1.7 * i);
  for (int m = 0; m <= M; m += (m == 2 ? 3 : 1)) {   /* no, one, two and five iterations */
    char what[32];
    snprintf(what, sizeof what, "sweeps m=%d", m);
    cur_m = m;
    CHECK(what, sweeps, sweeps_f, w, W, enzyme_const, X, enzyme_const, N, enzyme_const, m);
  }
  cur_m = M;
  CHECK("early", early, early_f, w, 4, enzyme_const, X, enzyme_const, M, enzyme_const, 1.2);
  CHECK("varying", varying, varying_f, w, 4, enzyme_const, X, enzyme_const, M);
  CHECK("widening", widening, widening_f, w, 4, enzyme_const, X, enzyme_const, M);
  stream = tmpfile();
  if (!stream) { fprintf(stderr, "tmpfile failed\n"); return 2; }
  for (int i = 0; i < 2 * M; i++) {
    double v = 0.7 * cos(1.3 * i);
    fwrite(&v, sizeof v, 1, stream);
  }
  CHECK("streamed", streamed, streamed_f, w, 4, enzyme_const, stream, enzyme_const, M);
  fclose(stream);

  /* updated: w is written by the function, so it is passed as a private copy each time */
  double fd[N], c[N], dc[N] = {0}, ds[N] = {0};
  ac_fd_grad(updated_f, w, N, fd);
  memcpy(c, w, sizeof c);
  __enzyme_autodiff((void *)updated, enzyme_dup, c, dc, enzyme_const, X, enzyme_const, N, enzyme_const, M);
  memcpy(c, w, sizeof c);
  void *t = __enzyme_augmentfwd((void *)updated, enzyme_dup, c, ds, enzyme_const, X, enzyme_const, N, enzyme_const, M);
  for (int i = 0; i < N; i++) c[i] = -5.0;
  __enzyme_reverse((void *)updated, enzyme_dup, c, ds, enzyme_const, X, enzyme_const, N, enzyme_const, M, 1.0, t);
  for (int i = 0; i < N; i++) {
    ac_near("updated combined", dc[i], fd[i], 1e-6);
    ac_near("updated split", ds[i], fd[i], 1e-6);
  }

  /* the tape of sweeps no longer grows with m * n * n: compare m = 5 with m = 1 on
   * caller-owned tape objects (the size is their second word) */
  long size = __enzyme_augmentsize((void *)sweeps, enzyme_dup, w, enzyme_const, X, enzyme_const, N, enzyme_const, M);
  long one[8] = {0}, five[8] = {0};
  double d1[W] = {0}, d5[W] = {0};
  __enzyme_augmentfwd((void *)sweeps, enzyme_allocated, size, enzyme_tape, one,
                      enzyme_dup, w, d1, enzyme_const, X, enzyme_const, N, enzyme_const, 1);
  __enzyme_augmentfwd((void *)sweeps, enzyme_allocated, size, enzyme_tape, five,
                      enzyme_dup, w, d5, enzyme_const, X, enzyme_const, N, enzyme_const, 5);
  /* (built with -DCHECK_TAPE: the count below is that of AD after optimization)
   * each extra t iteration keeps sin's argument and value per (i, j) and a few cells per
   * row (376 bytes here); keeping w's loads there as well would add N * N + N cells */
  long per_iteration = (used(five) - used(one)) / 4, bound = (2 * N * N + 4 * N) * sizeof(double);
#ifdef CHECK_TAPE
  if (per_iteration >= bound)
    fprintf(stderr, "sweeps keeps %ld bytes per iteration (want < %ld)\n", per_iteration, bound);
  ac_near("sweeps tape per iteration", per_iteration < bound, 1, 0);
#endif
  __enzyme_reverse((void *)sweeps, enzyme_dup, w, d1, enzyme_const, X, enzyme_const, N, enzyme_const, 1, 1.0,
                   enzyme_allocated, size, enzyme_tape, one);
  __enzyme_reverse((void *)sweeps, enzyme_dup, w, d5, enzyme_const, X, enzyme_const, N, enzyme_const, 5, 1.0,
                   enzyme_allocated, size, enzyme_tape, five);
  cur_m = 5;
  double fd5[W];
  ac_fd_grad(sweeps_f, w, W, fd5);
  for (int i = 0; i < W; i++) ac_near("sweeps caller-owned", d5[i], fd5[i], 1e-6);
  return ac_done();
}
