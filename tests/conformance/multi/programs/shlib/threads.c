/* Gradients from several threads at once through the shared library. */
#include <pthread.h>
#include "hcheck.h"
double energy(const double *x, int n);
void energy_grad(const double *x, double *g, int n);
#define N 6
#define T 4
static double ref[N];
static int bad[T];
static void *work(void *arg) {
  int t = (int)(long)arg;
  double x[N] = {0.1, -0.6, 0.9, 1.4, -1.2, 0.35}, g[N];
  for (int it = 0; it < 20000; it++) {
    energy_grad(x, g, N);
    for (int i = 0; i < N; i++) if (g[i] != ref[i]) bad[t]++;
  }
  return 0;
}
int main(void) {
  double x[N] = {0.1, -0.6, 0.9, 1.4, -1.2, 0.35};
  energy_grad(x, ref, N);
  pthread_t th[T];
  for (long t = 0; t < T; t++) pthread_create(&th[t], 0, work, (void *)t);
  for (int t = 0; t < T; t++) pthread_join(th[t], 0);
  for (int t = 0; t < T; t++) hc_near("thread gradients identical", bad[t], 0, 0);
  return hc_done();
}
