/* Shared harness for the AD benchmark kernels: seeded data, side-by-side timing of
 * primal and derivative in one process, finite-difference checks and RESULT lines. */
#ifndef BENCH_H
#define BENCH_H
#define _DEFAULT_SOURCE 1 /* M_PI, clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifdef __cplusplus
/* C++ kernels (gmm_stl.cpp) include the same C harness: its `T *p = malloc(...)` converts
 * the block as C does */
struct bench_block {
  void *p;
  template <class T> operator T *() const { return (T *)p; }
};
static inline bench_block bench_malloc(size_t n) { return bench_block{malloc(n)}; }
#define malloc bench_malloc
#endif

/* -DBENCH_NO_AD builds the primal only (plain clang), to validate kernels without the engine;
 * -DBENCH_NO_FWD / -DBENCH_NO_SPLIT / -DBENCH_NO_VEC leave out forward mode / split mode /
 * vector forward mode, so a mode the engine cannot handle yet does not cost the other
 * measurements. */
#ifdef BENCH_NO_AD
#define BENCH_HAVE_AD 0
#else
#define BENCH_HAVE_AD 1
#endif
#if BENCH_HAVE_AD && !defined(BENCH_NO_FWD)
#define BENCH_HAVE_FWD 1
#else
#define BENCH_HAVE_FWD 0
#endif
#if BENCH_HAVE_AD && !defined(BENCH_NO_SPLIT)
#define BENCH_HAVE_SPLIT 1
#else
#define BENCH_HAVE_SPLIT 0
#endif
#if BENCH_HAVE_AD && !defined(BENCH_NO_VEC)
#define BENCH_HAVE_VEC 1
#else
#define BENCH_HAVE_VEC 0
#endif

extern int enzyme_dup, enzyme_const, enzyme_out, enzyme_dupnoneed, enzyme_width;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);      /* for functions returning double */
void __enzyme_fwddiff_void(void *, ...);   /* for functions returning void (any width) */

/* Vector forward mode: `enzyme_width, BENCH_WIDTH` right after the function, then each dup
 * pointer followed by BENCH_WIDTH shadows. A double result comes back as BENCH_WIDTH
 * tangents in one struct (returned through memory under the x86-64 ABI). */
#define BENCH_WIDTH 4
typedef struct { double d[BENCH_WIDTH]; } bench_lanes;
bench_lanes __enzyme_fwddiff_lanes(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

/* Split mode is timed twice. As is ("split"), the caller may change the inputs between
 * __enzyme_augmentfwd and __enzyme_reverse, so the tape keeps every value the reverse pass
 * reads. With the promise that it does not ("split_kept"), as a framework that saves its
 * inputs for backward can give, the reverse pass re-reads them like combined mode.
 * BENCH_KEPT is that promise, written before the marker of each pointer argument. */
extern int enzyme_not_overwritten;
#define BENCH_KEPT enzyme_not_overwritten,

struct bench_opts {
  int quick;       /* smaller problem sizes, shorter timing (for smoke runs) */
  double min_time; /* total seconds spent timing each case */
  int repeats;     /* batches per case; the median batch gives the per-call time */
  long size;       /* --size=N: the kernel's main problem size (0: its default) */
  int dump;        /* --dump: print the checked gradient (GRAD lines) for comparisons with peers */
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
  struct bench_opts o = {0, 0.25, 5, 0, 0};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) { o.quick = 1; o.min_time = 0.02; o.repeats = 3; }
    else if (strncmp(argv[i], "--min-time=", 11) == 0) o.min_time = atof(argv[i] + 11);
    else if (strncmp(argv[i], "--repeats=", 10) == 0) o.repeats = atoi(argv[i] + 10);
    else if (strncmp(argv[i], "--size=", 7) == 0) o.size = atol(argv[i] + 7);
    else if (strcmp(argv[i], "--dump") == 0) o.dump = 1;
    else {
      fprintf(stderr, "usage: %s [--quick] [--min-time=S] [--repeats=N] [--size=N] [--dump]\n", argv[0]);
      exit(2);
    }
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

/* ---- checks: gradients against finite differences, other modes against the gradient ---- */
enum bench_mode { BENCH_REVERSE, BENCH_FORWARD, BENCH_SPLIT, BENCH_VECTOR, BENCH_MODES };
static const char *const bench_mode_key[BENCH_MODES] = {"check", "fwd_check", "split_check", "vec_check"};
static int bench_mode = BENCH_REVERSE; /* which mode the following checks belong to */
static int bench_checks[BENCH_MODES], bench_failures[BENCH_MODES];
static double bench_max_err[BENCH_MODES];

/* Compares a derivative with a reference; error is relative to max(1, |reference|). */
static void bench_check(const char *what, long index, double got, double want, double rtol) {
  double err = fabs(got - want) / (fabs(want) > 1.0 ? fabs(want) : 1.0);
  bench_checks[bench_mode]++;
  if (!(err <= rtol)) {
    bench_failures[bench_mode]++;
    fprintf(stderr, "MISMATCH %s %s[%ld]: got %.12g, want %.12g\n", bench_mode_key[bench_mode], what,
            index, got, want);
  }
  if (err > bench_max_err[bench_mode] || err != err) bench_max_err[bench_mode] = err;
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

/* Checks every entry of got against want (split-mode gradient against the combined one). */
static void bench_check_all(const char *what, const double *got, const double *want, long n, double rtol) {
  long worst = 0;
  double worst_err = -1;
  for (long i = 0; i < n; i++) {
    double err = fabs(got[i] - want[i]) / (fabs(want[i]) > 1.0 ? fabs(want[i]) : 1.0);
    if (err > worst_err || err != err) { worst_err = err; worst = i; }
  }
  if (n > 0) bench_check(what, worst, got[worst], want[worst], rtol);
}

/* Vector mode: each lane must equal the scalar sweep along the same direction; the
 * arithmetic is the same, so the tolerance is tight. */
#define BENCH_LANE_RTOL 1e-10
static inline void bench_check_lanes(const char *what, double *const got[BENCH_WIDTH], double *const want[BENCH_WIDTH],
                                     long n) {
  char name[96];
  for (int k = 0; k < BENCH_WIDTH; k++) {
    snprintf(name, sizeof name, "%s.lane%d", what, k);
    bench_check_all(name, got[k], want[k], n, BENCH_LANE_RTOL);
  }
}

static double bench_dot(const double *a, const double *b, long n) {
  double s = 0;
  for (long i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static double *bench_copy(const double *x, long n) {
  double *out = malloc(sizeof(double) * (size_t)n);
  memcpy(out, x, sizeof(double) * (size_t)n);
  return out;
}

/* BENCH_WIDTH arrays of n doubles (one per lane of vector mode), filled from [lo, hi). */
static void bench_alloc_lanes(double *lanes[BENCH_WIDTH], long n, double lo, double hi) {
  for (int k = 0; k < BENCH_WIDTH; k++) {
    lanes[k] = malloc(sizeof(double) * (size_t)n);
    bench_fill(lanes[k], n, lo, hi);
  }
}

static inline void bench_zero_lanes(double *lanes[BENCH_WIDTH], long n) {
  for (int k = 0; k < BENCH_WIDTH; k++) memset(lanes[k], 0, sizeof(double) * (size_t)n);
}

/* --dump: one `GRAD <name> <index> <value>` line per entry, so a peer implementation's
 * gradient can be compared with ours on the same seeded data. */
static inline void bench_dump(const struct bench_opts *o, const char *name, const double *g, long n) {
  if (!o->dump) return;
  for (long i = 0; i < n; i++) printf("GRAD %s %ld %.17g\n", name, i, g[i]);
}

/* Adds a timed case to the list when its mode is compiled in. */
static void bench_add(struct bench_case *cases, int *ncases, int enabled, const char *label, void (*fn)(void)) {
  if (!enabled) return;
  cases[*ncases].label = label;
  cases[*ncases].fn = fn;
  (*ncases)++;
}

/* Peak resident memory of this program: VmHWM, since ru_maxrss keeps the high-water mark
 * of the process that exec'd us (a Python harness would dominate it). */
static long bench_peak_rss_kb(long fallback) {
  FILE *status = fopen("/proc/self/status", "r");
  char line[256];
  long kb = fallback;
  if (!status) return fallback;
  while (fgets(line, sizeof line, status))
    if (strncmp(line, "VmHWM:", 6) == 0) { kb = atol(line + 6); break; }
  fclose(status);
  return kb;
}

/* Prints the one machine-readable line run.py parses; returns the exit code. `value` is the
 * objective at the unperturbed input, so builds of the same kernel can be compared. */
static int bench_report(const char *name, const char *size, double value, struct bench_case *cases, int ncases) {
  static const int enabled[BENCH_MODES] = {BENCH_HAVE_AD, BENCH_HAVE_FWD, BENCH_HAVE_SPLIT, BENCH_HAVE_VEC};
  int bad = 0;
  printf("RESULT %s size=%s value=%.17g", name, size, value);
  for (int c = 0; c < ncases; c++)
    printf(" %s_s=%.6e %s_best_s=%.6e %s_iters=%ld", cases[c].label, cases[c].seconds,
           cases[c].label, cases[c].best, cases[c].label, cases[c].iters);
  for (int m = 0; m < BENCH_MODES; m++) {
    const char *status = !enabled[m] ? "skipped" : bench_checks[m] == 0 ? "none" : bench_failures[m] ? "FAIL" : "ok";
    if (m == BENCH_REVERSE)
      printf(" check=%s checks=%d max_err=%.3e", status, bench_checks[m], bench_max_err[m]);
    else if (enabled[m])
      printf(" %s=%s %s_max_err=%.3e", bench_mode_key[m], status, bench_mode_key[m], bench_max_err[m]);
    bad |= enabled[m] && (bench_failures[m] || bench_checks[m] == 0);
  }
  /* peak memory and kernel-mode time show tape traffic (page faults of a growing tape) */
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  printf(" maxrss_kb=%ld user_s=%.3f sys_s=%.3f\n", bench_peak_rss_kb(usage.ru_maxrss),
         usage.ru_utime.tv_sec + 1e-6 * usage.ru_utime.tv_usec, usage.ru_stime.tv_sec + 1e-6 * usage.ru_stime.tv_usec);
  fflush(stdout);
  return bad;
}
#endif
