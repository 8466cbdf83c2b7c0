/* A layer whose forward and backward passes are driven from different TUs (split mode),
 * with helpers that several TUs define under the same name. */
#ifndef LAYER_H
#define LAYER_H
extern int enzyme_dup, enzyme_const, enzyme_width;
static inline double sq(double v) { return v * v; }
void layer(const double *x, const double *w, double *out, int n);
void *run_forward(const double *x, double *dx, const double *w, double *out, double *dout, int n);
void run_backward(const double *x, double *dx, const double *w, double *out, double *dout, int n, void *tape);
extern int layer_calls;
#endif
