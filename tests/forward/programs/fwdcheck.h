/* Self-checking helpers for the forward-mode test programs: compare tangents with central
 * finite differences or closed forms; print "ok N" and exit 0 when all hold. */
#ifndef FWDCHECK_H
#define FWDCHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_width;

static int fc_failures = 0, fc_checks = 0;

static void fc_near(const char *what, double got, double want, double rtol) {
  double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
  fc_checks++;
  if (!(fabs(got - want) <= rtol * scale)) {
    fc_failures++;
    fprintf(stderr, "MISMATCH %s: got %.12g want %.12g\n", what, got, want);
  }
}

static int fc_done(void) {
  if (fc_checks == 0) { fprintf(stderr, "no checks ran\n"); return 2; }
  if (fc_failures) { printf("FAIL %d/%d\n", fc_failures, fc_checks); return 1; }
  printf("ok %d\n", fc_checks);
  return 0;
}

static double fc_h(double x) { return 1e-6 * (fabs(x) > 1.0 ? fabs(x) : 1.0); }

/* d f(x) / dx by central differences, for f: double -> double */
#define FC_FD(f, x) (((f)((x) + fc_h(x)) - (f)((x) - fc_h(x))) / (2 * fc_h(x)))
/* the same for float functions, with a step suited to single precision */
#define FC_FDF(f, x) (((double)(f)((float)(x) + 1e-2f) - (double)(f)((float)(x) - 1e-2f)) / (2e-2))
#endif
