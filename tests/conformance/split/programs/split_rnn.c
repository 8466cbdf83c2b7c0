/* Split mode through time: a recurrent step augmented T times (tapes kept in an array,
 * one set caller-owned), reversed backwards with seeds produced by the later step's
 * reverse; float steps with {tape, float} returns; recursion and helpers inside. */
#include "hcheck.h"
#include <string.h>
extern int enzyme_dup, enzyme_const, enzyme_out, enzyme_dupnoneed, enzyme_allocated, enzyme_tape;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
long __enzyme_augmentsize(void *, ...);
typedef struct { void *tape; float primal; } aug_f;
aug_f __enzyme_augmentfwd_f(void *, ...);
float __enzyme_reverse_f(void *, ...);
typedef struct { void *tape; double primal; } aug_d;
aug_d __enzyme_augmentfwd_d(void *, ...);
double __enzyme_reverse_d(void *, ...);
enum { H = 5, T = 7 };

__attribute__((noinline)) static double act(double v) { return v > 0 ? v * tanh(v) : 0.1 * v; }

/* h_out = act(W h_in + u); W shared by all steps */
void step(const double *W, const double *h_in, double *h_out, double u) {
  for (int i = 0; i < H; i++) {
    double s = u * (1 + 0.1 * i);
    for (int j = 0; j < H; j++) s += W[i * H + j] * h_in[j];
    h_out[i] = act(s);
  }
}
static double run(const double *W, const double *h0, const double *us) {
  double h[T + 1][H];
  memcpy(h[0], h0, sizeof h[0]);
  for (int t = 0; t < T; t++) step(W, h[t], h[t + 1], us[t]);
  double s = 0;
  for (int i = 0; i < H; i++) s += h[T][i] * (i + 1);
  return s;
}

double rsum(const double *x, int n) { return n == 0 ? 0 : x[n - 1] * x[n - 1] + 0.5 * rsum(x, n - 1); }
float fnorm(const float *x, int n) { float s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return sqrtf(s); }

int main(void) {
  double W[H * H], h0[H], us[T];
  for (int k = 0; k < H * H; k++) W[k] = 0.4 * sin(0.9 * k + 0.3);
  for (int i = 0; i < H; i++) h0[i] = 0.2 * i - 0.3;
  for (int t = 0; t < T; t++) us[t] = 0.3 * cos(t);

  for (int owned = 0; owned < 2; owned++) {
    double h[T + 1][H], dh[T + 1][H], dW[H * H] = {0}, dus[T] = {0};
    void *tapes[T];
    void *bufs = NULL;
    long size = 0;
    memset(dh, 0, sizeof dh);
    memcpy(h[0], h0, sizeof h[0]);
    if (owned) {
      size = __enzyme_augmentsize((void *)step, enzyme_dup, W, dW, enzyme_dup, h[0], dh[0], enzyme_dup, h[1], dh[1], 0.0);
      bufs = malloc(size * T);
    }
    for (int t = 0; t < T; t++) {
      if (owned)
        __enzyme_augmentfwd((void *)step, enzyme_allocated, size, enzyme_tape, (char *)bufs + t * size,
                            enzyme_dup, W, dW, enzyme_dup, h[t], dh[t], enzyme_dup, h[t + 1], dh[t + 1], us[t]);
      else
        tapes[t] = __enzyme_augmentfwd((void *)step, enzyme_dup, W, dW, enzyme_dup, h[t], dh[t],
                                       enzyme_dup, h[t + 1], dh[t + 1], us[t]);
    }
    for (int i = 0; i < H; i++) dh[T][i] = i + 1; /* seed at the end */
    for (int t = T - 1; t >= 0; t--) {
      if (owned)
        dus[t] = __enzyme_reverse_d((void *)step, enzyme_allocated, size, enzyme_tape, (char *)bufs + t * size,
                                    enzyme_dup, W, dW, enzyme_dup, h[t], dh[t], enzyme_dup, h[t + 1], dh[t + 1], us[t]);
      else
        dus[t] = __enzyme_reverse_d((void *)step, enzyme_dup, W, dW, enzyme_dup, h[t], dh[t],
                                    enzyme_dup, h[t + 1], dh[t + 1], us[t], tapes[t]);
    }
    free(bufs);
    const char *tag = owned ? "owned" : "returned";
    for (int t = 1; t <= T; t++)
      for (int i = 0; i < H; i++) hc_near(tag, dh[t][i], 0.0, 0.0); /* consumed */
    for (int k = 0; k < H * H; k++) {
      double s = W[k], e = hc_h(s);
      W[k] = s + e; double fp = run(W, h0, us);
      W[k] = s - e; double fm = run(W, h0, us);
      W[k] = s;
      hc_near(tag, dW[k], (fp - fm) / (2 * e), 1e-6);
    }
    for (int i = 0; i < H; i++) {
      double s = h0[i], e = hc_h(s);
      h0[i] = s + e; double fp = run(W, h0, us);
      h0[i] = s - e; double fm = run(W, h0, us);
      h0[i] = s;
      hc_near(tag, dh[0][i], (fp - fm) / (2 * e), 1e-6);
    }
    for (int t = 0; t < T; t++) {
      double s = us[t], e = hc_h(s);
      us[t] = s + e; double fp = run(W, h0, us);
      us[t] = s - e; double fm = run(W, h0, us);
      us[t] = s;
      hc_near(tag, dus[t], (fp - fm) / (2 * e), 1e-6);
    }
  }
  /* recursion in split mode, {tape, double} */
  {
    double x[6] = {0.5, -0.2, 0.3, 0.9, -0.4, 0.1}, dx[6] = {0};
    aug_d a = __enzyme_augmentfwd_d((void *)rsum, enzyme_dup, x, dx, enzyme_const, 6);
    hc_near("rsum primal", a.primal, rsum(x, 6), 1e-15);
    __enzyme_reverse_d((void *)rsum, enzyme_dup, x, dx, enzyme_const, 6, 2.0, a.tape);
    for (int i = 0; i < 6; i++) hc_near("rsum dx", dx[i], 2.0 * 2 * x[i] * pow(0.5, 5 - i), 1e-12);
  }
  /* float function: {tape, float} */
  {
    float x[3] = {3, 4, 12}, dx[3] = {0};
    aug_f a = __enzyme_augmentfwd_f((void *)fnorm, enzyme_dup, x, dx, enzyme_const, 3);
    hc_near("fnorm primal", a.primal, 13.0, 1e-6);
    __enzyme_reverse_f((void *)fnorm, enzyme_dup, x, dx, enzyme_const, 3, 1.0f, a.tape);
    for (int i = 0; i < 3; i++) hc_near("fnorm dx", dx[i], x[i] / 13.0, 1e-6);
  }
  return hc_done();
}
