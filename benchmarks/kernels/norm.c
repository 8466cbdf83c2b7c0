/* Vector normalization, the Enzyme paper's example: out[i] = in[i] / mag(in), with mag()
 * called inside the loop. Optimization hoists it (restrict pointers), so AD after
 * optimization gives an O(n) gradient while AD before optimization gives O(n^2). */
#include "bench.h"

/* noinline: once inlined, mag is an inner loop, and LLVM hoists loop-invariant calls but
 * not whole inner loops; kept as a call (built with -fno-math-errno so sqrt has no side
 * effect) it is readonly and LICM moves it out of normalize's loop. */
__attribute__((noinline)) double mag(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

void normalize(double *restrict out, const double *restrict in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] / mag(in, n);
}

/* ---- problem instance and timed calls ---- */
static int N = 20000;
static double *in, *out, *d_in, *d_out, *weights;

static void primal_call(void) {
  normalize(out, in, N);
  bench_sink = out[N - 1];
}

/* The output adjoint (weights) is consumed by the reverse pass, so it is re-seeded. */
static void grad_call(void) {
  memset(d_in, 0, sizeof(double) * N);
  memcpy(d_out, weights, sizeof(double) * N);
#if BENCH_HAVE_AD
  __enzyme_autodiff((void *)normalize, enzyme_dup, out, d_out, enzyme_dup, in, d_in, enzyme_const, N);
#endif
  bench_sink = d_in[N - 1];
}

/* the scalar the gradient is of: sum_i w_i out_i */
static double objective(void) {
  primal_call();
  double s = 0;
  for (int i = 0; i < N; i++) s += weights[i] * out[i];
  return s;
}

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) N = 1000;
  in = malloc(sizeof(double) * N); out = malloc(sizeof(double) * N);
  d_in = malloc(sizeof(double) * N); d_out = malloc(sizeof(double) * N);
  weights = malloc(sizeof(double) * N);
  bench_seed(5);
  bench_fill(in, N, -1, 1);
  bench_fill(weights, N, -1, 1);

  if (BENCH_HAVE_AD) {
    grad_call();
    double *g = malloc(sizeof(double) * N);
    memcpy(g, d_in, sizeof(double) * N);
    bench_check_spread("in", objective, in, g, N, 6, 1e-5);
    for (int i = 0; i < N; i++)
      if (d_out[i] != 0) { bench_check("d_out consumed", i, d_out[i], 0.0, 0.0); break; }
    free(g);
  }
  struct bench_case cases[] = {{.label = "primal", .fn = primal_call}, {.label = "grad", .fn = grad_call}};
  bench_measure(cases, BENCH_HAVE_AD ? 2 : 1, o);
  char size[64];
  snprintf(size, sizeof size, "n%d", N);
  return bench_report("norm", size, objective(), cases, BENCH_HAVE_AD ? 2 : 1);
}
