/* Gradients computed concurrently from several pthreads (independent data per thread),
 * combined and split mode, with dynamic tapes. */
#include "hcheck.h"
#include <pthread.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
enum { N = 8, T = 4, REPS = 300 };
double model(const double *x, int n) {
  double s = 0;
  int i = 0;
  while (i < n * 50) { s += tanh(x[i % n] * x[(i * 3 + 1) % n]) * 1e-2; i++; }
  return s;
}
struct job { double x[N], d[N]; int split; };
static void *work(void *arg) {
  struct job *j = arg;
  for (int r = 0; r < REPS; r++) {
    double d[N] = {0};
    if (j->split) {
      void *t = __enzyme_augmentfwd((void *)model, enzyme_dup, j->x, d, enzyme_const, N);
      __enzyme_reverse((void *)model, enzyme_dup, j->x, d, enzyme_const, N, 1.0, t);
    } else {
      __enzyme_autodiff((void *)model, enzyme_dup, j->x, d, enzyme_const, N);
    }
    if (r == 0) memcpy(j->d, d, sizeof d);
    else for (int i = 0; i < N; i++) if (d[i] != j->d[i]) j->d[i] = NAN;
  }
  return NULL;
}
int main(void) {
  struct job jobs[T];
  pthread_t th[T];
  for (int t = 0; t < T; t++) {
    for (int i = 0; i < N; i++) jobs[t].x[i] = sin(1.0 + i + 0.3 * t);
    jobs[t].split = t % 2;
    pthread_create(&th[t], NULL, work, &jobs[t]);
  }
  for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < T; t++)
    for (int i = 0; i < N; i++) {
      double xp[N], xm[N], h = hc_h(jobs[t].x[i]);
      memcpy(xp, jobs[t].x, sizeof xp); memcpy(xm, jobs[t].x, sizeof xm);
      xp[i] += h; xm[i] -= h;
      hc_near("threaded gradient", jobs[t].d[i], (model(xp, N) - model(xm, N)) / (2 * h), 1e-6);
    }
  return hc_done();
}
