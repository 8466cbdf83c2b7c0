/* Thread-local accumulators (a thread-safe static workspace) written with active values,
 * in forward and reverse mode, from two threads at once: each thread's derivative lives in
 * its own thread-local shadow. */
#include <pthread.h>
#include "fwdcheck.h"
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);

static _Thread_local double running;
static _Thread_local double history[4];
__attribute__((noinline)) static void add(double v) { running += v; }
double f(double x) {
  running = 0;
  add(sin(x));
  add(x * x);
  for (int i = 0; i < 4; i++) history[i] = running * (i + 1);
  return history[3] * 0.5 + running;
}

typedef struct { double x; int bad; } job;
static void *work(void *arg) {
  job *j = arg;
  for (int k = 0; k < 2000; k++) {
    double x = j->x + 1e-4 * k;
    double want = 3.0 * (cos(x) + 2 * x);
    if (fabs(__enzyme_fwddiff((void *)f, x, 1.0) - want) > 1e-12 * (1 + fabs(want))) j->bad++;
    if (fabs(__enzyme_autodiff((void *)f, x) - want) > 1e-12 * (1 + fabs(want))) j->bad++;
  }
  return NULL;
}

int main(void) {
  double x = 0.5;
  fc_near("forward", __enzyme_fwddiff((void *)f, x, 1.0), FC_FD(f, x), 1e-6);
  fc_near("reverse", __enzyme_autodiff((void *)f, x), FC_FD(f, x), 1e-6);
  job jobs[2] = {{0.3, 0}, {-1.1, 0}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, &jobs[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  fc_near("thread 1 mismatches", jobs[0].bad, 0, 0);
  fc_near("thread 2 mismatches", jobs[1].bad, 0, 0);
  return fc_done();
}
