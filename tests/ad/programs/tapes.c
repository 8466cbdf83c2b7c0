/* Tape reuse across calls (a finished tape's block serves the next gradient, growing when
 * too small), split tapes alive together, and loops whose IV starts at an outer value
 * (triangular loops: the IV is replayed, not taped). */
#include "adcheck.h"
#include <stdlib.h>
double __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
extern int enzyme_dup, enzyme_const;

/* while loop: dynamic trip count, per-iteration tape records */
__attribute__((noinline)) double walk(const double *x, int n) {
  double s = 0;
  int i = 0;
  while (s < 1e300 && i < n) { s += sin(x[i % 7] * (1 + i % 5)) * x[(i + 3) % 7]; i++; }
  return s;
}

/* triangular loops: j starts at i + 1 */
__attribute__((noinline)) double tri(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) s += x[i] * sin(x[j]) / (1 + j - i);
  return s;
}
static int NT = 6;
static double tri_f(const double *x, int n) { (void)n; return tri(x, NT); }
static int NW;
static double walk_f(const double *x, int n) { (void)n; return walk(x, NW); }

int main(void) {
  double x[7] = {0.3, -0.2, 0.5, 0.1, 0.9, -0.7, 0.4}, fd[7];
  int sizes[] = {10, 200000, 50, 400000, 3};
  for (int k = 0; k < 5; k++) {
    double dx[7] = {0};
    NW = sizes[k];
    __enzyme_autodiff((void *)walk, enzyme_dup, x, dx, enzyme_const, NW);
    ac_fd_grad(walk_f, x, 7, fd);
    for (int i = 0; i < 7; i++) ac_near("reused tape", dx[i], fd[i], 1e-5);
  }
  /* two split tapes alive, then a combined call reusing memory in between */
  double d1[7] = {0}, d2[7] = {0}, d3[7] = {0};
  void *t1 = __enzyme_augmentfwd((void *)walk, enzyme_dup, x, d1, enzyme_const, 1000);
  void *t2 = __enzyme_augmentfwd((void *)walk, enzyme_dup, x, d2, enzyme_const, 300000);
  __enzyme_autodiff((void *)tri, enzyme_dup, x, d3, enzyme_const, NT);
  __enzyme_reverse((void *)walk, enzyme_dup, x, d2, enzyme_const, 300000, 1.0, t2);
  __enzyme_reverse((void *)walk, enzyme_dup, x, d1, enzyme_const, 1000, 1.0, t1);
  NW = 1000; ac_fd_grad(walk_f, x, 7, fd);
  for (int i = 0; i < 7; i++) ac_near("split tape 1", d1[i], fd[i], 1e-5);
  NW = 300000; ac_fd_grad(walk_f, x, 7, fd);
  for (int i = 0; i < 7; i++) ac_near("split tape 2", d2[i], fd[i], 1e-5);
  ac_fd_grad(tri_f, x, 7, fd);
  for (int i = 0; i < 7; i++) ac_near("triangular loop", d3[i], fd[i], 1e-6);
  return ac_done();
}
