/* Custom rules written for (w dup, x dup), used from a call where x is enzyme_const. */
#include <stdio.h>
#include <stdlib.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
typedef struct { void *tape; double primal; } aug_t;
__attribute__((noinline)) double dotw(const double *w, const double *x, int n) {
  double s = 0; for (int i = 0; i < n; i++) s += w[i] * x[i]; return s;
}
/* rules written for (w dup, x dup) */
aug_t dotw_aug(const double *w, double *dw, const double *x, double *dx, int n) {
  aug_t r = {malloc(8), dotw(w, x, n)}; return r;
}
void dotw_grad(const double *w, double *dw, const double *x, double *dx, int n, double dret, void *tape) {
  for (int i = 0; i < n; i++) { dw[i] += 2.0 * x[i] * dret; dx[i] += w[i] * dret; }
  free(tape);
}
void *__enzyme_register_gradient_dotw[] = {(void *)dotw, (void *)dotw_aug, (void *)dotw_grad};
double loss(const double *w, const double *x, int n) { return dotw(w, x, n) * 2.0; }
int main(void) {
  double w[2] = {1, 2}, dw[2] = {0}, x[2] = {3, 4};
  __enzyme_autodiff((void *)loss, enzyme_dup, w, dw, enzyme_const, x, enzyme_const, 2);  /* x const */
  printf("dw = %g %g (rule: 2*x*2 = 12 16)\n", dw[0], dw[1]);
  return 0;
}
