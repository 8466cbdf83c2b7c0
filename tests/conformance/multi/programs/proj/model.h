/* A small model library: declarations shared by every TU, with the custom derivatives of
 * softclip and dotw attached where every includer sees them. */
#ifndef MODEL_H
#define MODEL_H
typedef struct { void *tape; double primal; } aug_t;
typedef struct { double primal, tangent; } dual_t;

aug_t softclip_aug(double x);
double softclip_grad(double x, double dret, void *tape);
dual_t softclip_fwd(double x, double dx);
double softclip(double x) __attribute__((enzyme("augment", softclip_aug), enzyme("gradient", softclip_grad),
                                         enzyme("forward", softclip_fwd)));

aug_t dotw_aug(const double *w, double *dw, const double *x, double *dx, int n);
void dotw_grad(const double *w, double *dw, const double *x, double *dx, int n, double dret, void *tape);
double dotw(const double *w, const double *x, int n)
    __attribute__((enzyme("augment", dotw_aug))) __attribute__((enzyme("gradient", dotw_grad)));

double fastexp(double x);
double noise(double x);
double my_log1p(double x);
double loss(const double *w, const double *x, int n);
double chain(double a);

extern int softclip_aug_calls, softclip_grad_calls, dotw_aug_calls, dotw_grad_calls, tapes_live;
extern int loss_calls;
#endif
