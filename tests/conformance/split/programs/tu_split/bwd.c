/* Requests the reverse pass, consuming a tape produced in another translation unit. */
extern int enzyme_dup, enzyme_const;
void __enzyme_reverse(void *, ...);
double model(const double *w, const double *x, int n);
void run_backward(const double *w, double *dw, const double *x, int n, double seed, void *tape) {
  __enzyme_reverse((void *)model, enzyme_dup, w, dw, enzyme_const, x, enzyme_const, n, seed, tape);
}
