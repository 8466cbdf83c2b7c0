/* Split mode with enzyme_not_overwritten: the caller promises the inputs do not change
 * between __enzyme_augmentfwd and __enzyme_reverse, so the reverse pass re-reads them
 * instead of keeping their values on the tape. Gradients must be the same and the tape
 * smaller; the other modes accept the marker. */
#include "adcheck.h"
extern int enzyme_dup, enzyme_const, enzyme_out, enzyme_allocated, enzyme_tape, enzyme_not_overwritten;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
double __enzyme_reverse_d(void *, ...);
long __enzyme_augmentsize(void *, ...);
double __enzyme_fwddiff(void *, ...);
void __enzyme_autodiff(void *, ...);

enum { N = 6 };

/* a triangular loop (the inner trip count varies) reading its input only */
__attribute__((noinline)) double tri(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) s += sin(x[i] * x[j]) * x[j];
  return s;
}

/* a noinline callee reached from a vouched argument */
__attribute__((noinline)) double pair(const double *a, const double *b) { return a[0] * exp(b[1]) + a[1] * b[0]; }
__attribute__((noinline)) double calls(const double *x, const double *y, int n) {
  double s = 0;
  for (int i = 0; i + 1 < n; i++) s += pair(x + i, y + i) * pair(y + i, x + i);
  return s;
}

/* writes through the argument it reads: the promise cannot hold inside the function, so
 * its values are taped anyway */
__attribute__((noinline)) double inplace(double *x, int n) {
  for (int i = 1; i < n; i++) x[i] = x[i] * x[i - 1] + cos(x[i]);
  return x[n - 1] * x[0];
}

/* the result written through an argument at the end, as ADBench's objectives do: the
 * store must not stop x from being re-read */
__attribute__((noinline)) void objective(const double *x, int n, double *err) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i] * cos(x[(i + 1) % n]);
  *err = s;
}

/* local float arrays handed to derived callees (one of them nested): their shadows live in
 * the reverse pieces only; `stash` also returns its pointer, so that array's cannot */
__attribute__((noinline)) void rotate(const double *a, double *out) {
  out[0] = cos(a[0]) * a[1] - sin(a[0]) * a[2];
  out[1] = sin(a[0]) * a[1] + cos(a[0]) * a[2];
}
__attribute__((noinline)) void scale(const double *a, double *out) {
  rotate(a, out);
  out[0] *= a[1];
  out[1] *= exp(a[2]);
}
__attribute__((noinline)) double *stash(double *out, double v) { out[0] = v * v; return out; }
__attribute__((noinline)) double locals(const double *x, int n) {
  double s = 0;
  for (int i = 0; i + 2 < n; i++) {
    double p[2], q[2], r[1];
    rotate(x + i, p);
    scale(x + i, q);
    double *rr = stash(r, x[i] * p[1]);
    s += p[0] * q[1] + p[1] * q[0] * q[0] + rr[0];
  }
  return s;
}

/* inner loops counting from i + 1 (a static tape record of n - i - 1 cells per row) */
__attribute__((noinline)) double upper(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) s += sin(x[i] - x[j]) * x[j] * x[i];
  return s;
}

static double tri_f(const double *x, int n) { return tri(x, n); }
static double upper_f(const double *x, int n) { return upper(x, n); }
static double locals_f(const double *x, int n) { return locals(x, n); }
static double objective_f(const double *x, int n) { double e; objective(x, n, &e); return e; }
static double Y[N] = {0.3, -0.2, 0.5, 0.1, 0.4, -0.6};
static double calls_f(const double *x, int n) { return calls(x, Y, n); }
static double inplace_f(const double *x, int n) {
  double c[N];
  memcpy(c, x, sizeof c);
  return inplace(c, n);
}

/* bytes of tape the augmented pass used, read from a caller-owned tape object
 * ({data, size, capacity}: the size is the second word) */
static long used(const void *buf) { return ((const long *)buf)[1]; }

int main(void) {
  double x[N] = {0.1, 0.5, -0.3, 0.9, 0.2, -0.7}, fd[N];

  /* the promise before the activity marker, the seed written between the two calls */
  double dx[N] = {0};
  void *t = __enzyme_augmentfwd((void *)tri, enzyme_not_overwritten, enzyme_dup, x, dx, enzyme_const, N);
  double seed = 0;
  for (int i = 0; i < N; i++) seed += 0.5;   /* 3.0, computed after the forward pass */
  __enzyme_reverse((void *)tri, enzyme_not_overwritten, enzyme_dup, x, dx, enzyme_const, N, seed, t);
  ac_fd_grad(tri_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("tri kept", dx[i], 3.0 * fd[i], 1e-6);

  /* ... and after it, with caller-owned tapes to compare the tape sizes */
  long size = __enzyme_augmentsize((void *)tri, enzyme_dup, enzyme_not_overwritten, x, dx, enzyme_const, N);
  long kept_buf[8] = {0}, plain_buf[8] = {0};
  if (size > (long)sizeof kept_buf) { fprintf(stderr, "augmentsize %ld\n", size); return 1; }
  double dk[N] = {0}, dp[N] = {0};
  __enzyme_augmentfwd((void *)tri, enzyme_allocated, size, enzyme_tape, kept_buf,
                      enzyme_dup, enzyme_not_overwritten, x, dk, enzyme_const, N);
  __enzyme_augmentfwd((void *)tri, enzyme_allocated, size, enzyme_tape, plain_buf, enzyme_dup, x, dp, enzyme_const, N);
  long kept_bytes = used(kept_buf), plain_bytes = used(plain_buf);
  /* with the promise only sin(x[i]*x[j]) is kept (one cell per inner iteration); without
   * it the load of x[j] is kept as well (x[i] once per row, x[i]*x[j] rebuilt from both) */
  if (!(kept_bytes > 0 && kept_bytes + 8 * (N * (N + 1) / 2) <= plain_bytes))
    fprintf(stderr, "tri tape bytes: kept %ld plain %ld\n", kept_bytes, plain_bytes);
  ac_near("tri taped less with the promise", kept_bytes > 0 && kept_bytes + 8 * (N * (N + 1) / 2) <= plain_bytes, 1, 0);
  __enzyme_reverse((void *)tri, enzyme_dup, enzyme_not_overwritten, x, dk, enzyme_const, N, 1.0,
                   enzyme_allocated, size, enzyme_tape, kept_buf);
  __enzyme_reverse((void *)tri, enzyme_dup, x, dp, enzyme_const, N, 1.0, enzyme_allocated, size, enzyme_tape, plain_buf);
  for (int i = 0; i < N; i++) {
    ac_near("tri caller-owned kept", dk[i], fd[i], 1e-6);
    ac_near("tri caller-owned plain", dp[i], fd[i], 1e-6);
  }

  /* the promise reaches a noinline callee; y is constant, x is kept */
  double dc[N] = {0};
  void *tc = __enzyme_augmentfwd((void *)calls, enzyme_not_overwritten, enzyme_dup, x, dc,
                                 enzyme_not_overwritten, enzyme_const, Y, enzyme_const, N);
  __enzyme_reverse((void *)calls, enzyme_not_overwritten, enzyme_dup, x, dc,
                   enzyme_not_overwritten, enzyme_const, Y, enzyme_const, N, 1.0, tc);
  ac_fd_grad(calls_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("calls kept", dc[i], fd[i], 1e-6);

  /* a result stored through an argument; the caller changes it between the two calls (it
   * made no promise for err) and finds its own value there afterwards */
  double err = 0, derr = 0, dob[N] = {0}, dob_plain[N] = {0};
  long ob_kept[8] = {0}, ob_plain[8] = {0};
  __enzyme_augmentfwd((void *)objective, enzyme_allocated, size, enzyme_tape, ob_kept,
                      enzyme_not_overwritten, enzyme_dup, x, dob, enzyme_const, N, enzyme_dup, &err, &derr);
  long ob_kept_bytes = used(ob_kept);
  ac_fd_grad(objective_f, x, N, fd);
  ac_near("objective primal", err, objective_f(x, N), 1e-12);
  err = 42.0;
  derr = 2.0;
  __enzyme_reverse((void *)objective, enzyme_not_overwritten, enzyme_dup, x, dob, enzyme_const, N,
                   enzyme_dup, &err, &derr, enzyme_tape, ob_kept);
  for (int i = 0; i < N; i++) ac_near("objective kept", dob[i], 2.0 * fd[i], 1e-6);
  ac_near("objective leaves the caller's value", err, 42.0, 0);
  ac_near("objective consumed the seed", derr, 0.0, 0);
  double err2 = 0, derr2 = 0;
  __enzyme_augmentfwd((void *)objective, enzyme_allocated, size, enzyme_tape, ob_plain,
                      enzyme_dup, x, dob_plain, enzyme_const, N, enzyme_dup, &err2, &derr2);
  ac_near("objective tapes less with the promise", ob_kept_bytes > 0 && ob_kept_bytes < used(ob_plain), 1, 0);
  derr2 = 1.0;
  __enzyme_reverse((void *)objective, enzyme_dup, x, dob_plain, enzyme_const, N, enzyme_dup, &err2, &derr2,
                   enzyme_tape, ob_plain);
  for (int i = 0; i < N; i++) ac_near("objective plain", dob_plain[i], fd[i], 1e-6);

  /* a function that overwrites its input still gets the right gradient */
  double z[N], dz[N] = {0};
  memcpy(z, x, sizeof z);
  void *ti = __enzyme_augmentfwd((void *)inplace, enzyme_not_overwritten, enzyme_dup, z, dz, enzyme_const, N);
  __enzyme_reverse((void *)inplace, enzyme_not_overwritten, enzyme_dup, z, dz, enzyme_const, N, 1.0, ti);
  ac_fd_grad(inplace_f, x, N, fd);
  for (int i = 0; i < N; i++) ac_near("inplace kept", dz[i], fd[i], 1e-6);
  /* loops counting from i + 1: split (with and without the promise) and combined */
  double du[3][N] = {{0}};
  void *tu = __enzyme_augmentfwd((void *)upper, enzyme_dup, x, du[0], enzyme_const, N);
  __enzyme_reverse((void *)upper, enzyme_dup, x, du[0], enzyme_const, N, 1.0, tu);
  tu = __enzyme_augmentfwd((void *)upper, enzyme_not_overwritten, enzyme_dup, x, du[1], enzyme_const, N);
  __enzyme_reverse((void *)upper, enzyme_not_overwritten, enzyme_dup, x, du[1], enzyme_const, N, 1.0, tu);
  __enzyme_autodiff((void *)upper, enzyme_dup, x, du[2], enzyme_const, N);
  ac_fd_grad(upper_f, x, N, fd);
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < N; i++) ac_near(k == 0 ? "upper split" : k == 1 ? "upper kept" : "upper combined", du[k][i], fd[i], 1e-6);

  /* local arrays through derived callees, with and without the promise */
  for (int kept = 0; kept < 2; kept++) {
    double dl[N] = {0};
    if (kept) {
      void *tl = __enzyme_augmentfwd((void *)locals, enzyme_not_overwritten, enzyme_dup, x, dl, enzyme_const, N);
      __enzyme_reverse((void *)locals, enzyme_not_overwritten, enzyme_dup, x, dl, enzyme_const, N, 1.0, tl);
    } else {
      void *tl = __enzyme_augmentfwd((void *)locals, enzyme_dup, x, dl, enzyme_const, N);
      __enzyme_reverse((void *)locals, enzyme_dup, x, dl, enzyme_const, N, 1.0, tl);
    }
    ac_fd_grad(locals_f, x, N, fd);
    for (int i = 0; i < N; i++) ac_near(kept ? "locals kept" : "locals", dl[i], fd[i], 1e-6);
  }

  /* combined and forward mode accept the promise (they re-read nothing later) */
  double dcomb[N] = {0}, tx[N] = {1, -1, 0.5, 2, 0, -0.25};
  __enzyme_autodiff((void *)tri, enzyme_not_overwritten, enzyme_dup, x, dcomb, enzyme_const, N);
  double tangent = __enzyme_fwddiff((void *)tri, enzyme_dup, enzyme_not_overwritten, x, tx, enzyme_const, N);
  ac_fd_grad(tri_f, x, N, fd);
  double want = 0;
  for (int i = 0; i < N; i++) {
    ac_near("tri combined", dcomb[i], fd[i], 1e-6);
    want += fd[i] * tx[i];
  }
  ac_near("tri forward", tangent, want, 1e-6);
  return ac_done();
}
