/* Shared harness for the AD benchmark kernels: seeded data, side-by-side timing of
 * primal and derivative in one process, finite-difference checks and RESULT lines. */
#ifndef BENCH_H
#define BENCH_H
#define _DEFAULT_SOURCE 1 /* M_PI, clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* -DBENCH_NO_AD builds the primal only (plain clang), to validate kernels without the engine. */
#ifdef BENCH_NO_AD
#define BENCH_HAVE_AD 0
#else
#define BENCH_HAVE_AD 1
#endif

extern int enzyme_dup, enzyme_const, enzyme_out, enzyme_dupnoneed;
void __enzyme_autodiff(void *, ...);

struct bench_opts {
  int quick;       /* smaller problem sizes, shorter timing (for smoke runs) */
  double min_time; /* total seconds spent timing each case */
  int repeats;     /* batches per case; the median batch gives the per-call time */
};

/* One timed thing: a no-argument function working on the kernel's globals. */
struct bench_case {
  const char *label; /* field name in the RESULT line: <label>_s= */
  void (*fn)(void);
  long iters;        /* calls per batch, found by calibration */
  double seconds;    /* median seconds per call */
  double best;       /* fastest batch, seconds per call */
};

static struct bench_opts bench_parse(int argc, char **argv) {
  struct bench_opts o = {0, 0.25, 5};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) { o.quick = 1; o.min_time = 0.02; o.repeats = 3; }
    else if (strncmp(argv[i], "--min-time=", 11) == 0) o.min_time = atof(argv[i] + 11);
    else if (strncmp(argv[i], "--repeats=", 10) == 0) o.repeats = atoi(argv[i] + 10);
    else { fprintf(stderr, "usage: %s [--quick] [--min-time=S] [--repeats=N]\n", argv[0]); exit(2); }
  }
  if (o.repeats < 1) o.repeats = 1;
  return o;
}

static double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Timed calls store a result here: a value nobody reads could be optimized away, call and all. */
static volatile double bench_sink;

/* Calls go through a volatile pointer so whole-program optimization can neither inline
 * the timed function into the loop nor hoist or drop a call whose inputs never change. */
static double bench_batch(void (*fn)(void), long iters) {
  void (*volatile call)(void) = fn;
  double t0 = bench_now();
  for (long i = 0; i < iters; i++) call();
  return bench_now() - t0;
}

static int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Times every case: calibrate each so one batch lasts min_time/repeats, then run the
 * batches interleaved (primal, gradient, primal, ...) so drift hits all cases alike.
 * A case whose single call already takes over a second gets at most 3 batches. */
static void bench_measure(struct bench_case *cases, int ncases, struct bench_opts o) {
  double per_batch = o.min_time / o.repeats;
  int *repeats = malloc(sizeof(int) * (size_t)ncases);
  for (int c = 0; c < ncases; c++) {
    long iters = 1;
    double t = bench_batch(cases[c].fn, iters); /* also warms caches and page-faults */
    repeats[c] = t > 1.0 && o.repeats > 3 ? 3 : o.repeats;
    while (t < per_batch && iters < (1L << 40)) {
      long next = t > 0 ? (long)(iters * (1.2 * per_batch / t)) + 1 : iters * 10;
      iters = next > iters * 100 ? iters * 100 : next;
      t = bench_batch(cases[c].fn, iters);
    }
    cases[c].iters = iters;
  }
  double *samples = malloc(sizeof(double) * (size_t)ncases * (size_t)o.repeats);
  for (int r = 0; r < o.repeats; r++)
    for (int c = 0; c < ncases; c++)
      if (r < repeats[c])
        samples[c * o.repeats + r] = bench_batch(cases[c].fn, cases[c].iters) / cases[c].iters;
  for (int c = 0; c < ncases; c++) {
    double *s = samples + c * o.repeats;
    int n = repeats[c];
    qsort(s, (size_t)n, sizeof(double), bench_cmp_double);
    cases[c].seconds = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    cases[c].best = s[0];
  }
  free(samples);
  free(repeats);
}

/* ---- deterministic data ---- */
static unsigned long long bench_rng_state = 0x9E3779B97F4A7C15ULL;
static void bench_seed(unsigned long long s) { bench_rng_state = s * 0x9E3779B97F4A7C15ULL + 1; }
static double bench_uniform(void) { /* in [0, 1) */
  bench_rng_state ^= bench_rng_state << 13;
  bench_rng_state ^= bench_rng_state >> 7;
  bench_rng_state ^= bench_rng_state << 17;
  return (double)(bench_rng_state >> 11) * (1.0 / 9007199254740992.0);
}
static double bench_range(double lo, double hi) { return lo + (hi - lo) * bench_uniform(); }
static void bench_fill(double *x, long n, double lo, double hi) {
  for (long i = 0; i < n; i++) x[i] = bench_range(lo, hi);
}

/* ---- finite-difference checks ---- */
static int bench_checks = 0, bench_failures = 0;
static double bench_max_err = 0;

/* Compares a gradient entry with a central difference; error is relative to max(1, |fd|). */
static void bench_check(const char *what, long index, double grad, double fd, double rtol) {
  double err = fabs(grad - fd) / (fabs(fd) > 1.0 ? fabs(fd) : 1.0);
  bench_checks++;
  if (!(err <= rtol)) {
    bench_failures++;
    fprintf(stderr, "MISMATCH %s[%ld]: gradient %.12g, finite difference %.12g\n", what, index, grad, fd);
  }
  if (err > bench_max_err || err != err) bench_max_err = err;
}

/* Central difference of f() w.r.t. x[i]; f reads x through the kernel's globals. */
static double bench_central_diff(double (*f)(void), double *x, long i) {
  double save = x[i], h = 1e-6 * (fabs(save) > 1.0 ? fabs(save) : 1.0);
  x[i] = save + h; double fp = f();
  x[i] = save - h; double fm = f();
  x[i] = save;
  return (fp - fm) / (2 * h);
}

/* Checks grad[i] for a handful of indices spread over [0, n): ends and interior. */
static void bench_check_spread(const char *what, double (*f)(void), double *x, const double *grad,
                               long n, int count, double rtol) {
  for (int k = 0; k < count && k < n; k++) {
    long i = count > 1 ? (long)((double)k * (double)(n - 1) / (double)(count - 1)) : 0;
    bench_check(what, i, grad[i], bench_central_diff(f, x, i), rtol);
  }
}

/* Prints the one machine-readable line run.py parses; returns the exit code. `value` is the
 * objective at the unperturbed input, so builds of the same kernel can be compared. */
static int bench_report(const char *name, const char *size, double value, struct bench_case *cases, int ncases) {
  printf("RESULT %s size=%s value=%.17g", name, size, value);
  for (int c = 0; c < ncases; c++)
    printf(" %s_s=%.6e %s_best_s=%.6e %s_iters=%ld", cases[c].label, cases[c].seconds,
           cases[c].label, cases[c].best, cases[c].label, cases[c].iters);
  const char *status = !BENCH_HAVE_AD ? "skipped" : bench_checks == 0 ? "none" : bench_failures ? "FAIL" : "ok";
  printf(" check=%s checks=%d max_err=%.3e\n", status, bench_checks, bench_max_err);
  fflush(stdout);
  return BENCH_HAVE_AD && (bench_failures || bench_checks == 0) ? 1 : 0;
}
#endif
