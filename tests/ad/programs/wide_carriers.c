/* Arrays read or written 16 bytes at a time (SSE loads and stores, 16-byte vector types) and
 * also element by element in small loops the pre-AD pipeline unrolls. SROA then gives the
 * overlapping slice a 128-bit integer type: the floats travel in one i128 that is cut into
 * doubles/floats (trunc, lshr) or put together from them (zext, shl, or). Each function is
 * one member of that class; gradients against central differences, forward against reverse. */
#include "adcheck.h"
#include <emmintrin.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef double v2d __attribute__((vector_size(16)));
typedef float v4f __attribute__((vector_size(16)));

/* an SSE load of a heap array's two last doubles, read back as scalars (fuzz seed 7926) */
__attribute__((noinline)) double sse_load_heap(const double *x, int n) {
  double *b = malloc(6 * sizeof(double)), a[6], out = 0;
  for (int i = 0; i < 6; i++) { a[i] = sqrt(1 + x[i % n] * x[i % n]); b[i] = sin(x[(i + 2) % n] * a[i]); }
  __m128d m = _mm_loadu_pd(&b[4]);
  _mm_storeu_pd(&a[1], _mm_mul_pd(m, _mm_set1_pd(0.5)));
  double *rows[2] = {a, b};
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < 3; c++) rows[p][c + 1] = tanh(rows[1 - p][c] * 0.5 + x[0]);
  for (int i = 0; i < 6; i++) out += (0.1 * i - 0.3) * a[i] + (0.2 - 0.05 * i) * b[i];
  free(b);
  return out;
}

/* an SSE store into a stack array that a small loop then reads element by element */
__attribute__((noinline)) double sse_store_stack(const double *x, int n) {
  double a[4], out = 0;
  for (int i = 0; i < 4; i++) a[i] = x[i % n] * x[(i + 1) % n];
  _mm_storeu_pd(&a[1], _mm_add_pd(_mm_loadu_pd(&x[0]), _mm_set1_pd(x[2])));
  for (int i = 0; i < 4; i++) out += cos(a[i]) * (1 + i);
  return out;
}

/* four floats loaded as one SSE value, taken apart as scalars */
__attribute__((noinline)) double sse_floats(const double *x, int n) {
  float f[8], out = 0;
  for (int i = 0; i < 8; i++) f[i] = (float)(x[i % n] * (1 + 0.1 * i));
  __m128 v = _mm_loadu_ps(&f[2]);
  _mm_storeu_ps(&f[0], _mm_mul_ps(v, v));
  for (int i = 0; i < 8; i++) out += f[i] * (float)(0.5 + 0.25 * i);
  return out;
}

/* a 16-byte vector type copied into and out of a scalar array */
__attribute__((noinline)) double vector_type_copy(const double *x, int n) {
  double a[4];
  for (int i = 0; i < 4; i++) a[i] = exp(0.3 * x[(3 * i) % n]);
  v2d v;
  __builtin_memcpy(&v, &a[1], sizeof v);
  v = v * v + (v2d){x[0], x[1]};
  __builtin_memcpy(&a[2], &v, sizeof v);
  double out = 0;
  for (int i = 0; i < 4; i++) out += a[i] * (i + 1);
  return out;
}

/* a pair of doubles in a struct copied whole (16 bytes) between elements of an array */
struct pair { double re, im; };
__attribute__((noinline)) double pair_copies(const double *x, int n) {
  struct pair p[3];
  for (int i = 0; i < 3; i++) { p[i].re = x[i % n]; p[i].im = x[(i + 1) % n] * 2; }
  p[2] = p[0];
  _mm_storeu_pd(&p[1].re, _mm_mul_pd(_mm_loadu_pd(&p[2].re), _mm_loadu_pd(&p[0].re)));
  double out = 0;
  for (int i = 0; i < 3; i++) out += p[i].re * p[i].im + p[i].re;
  return out;
}

/* single precision inside: central differences with a step float rounding cannot drown */
static void fd_coarse(double (*f)(const double *, int), double *x, int n, double *g) {
  for (int i = 0; i < n; i++) {
    double s = x[i];
    x[i] = s + 1e-3; double fp = f(x, n);
    x[i] = s - 1e-3; double fm = f(x, n);
    x[i] = s;
    g[i] = (fp - fm) / 2e-3;
  }
}

#define CHECK(what, f, x, n, rtol)                                                       \
  do {                                                                                   \
    double g[8] = {0}, fd[8];                                                            \
    __enzyme_autodiff((void *)f, enzyme_dup, x, g, enzyme_const, n);                     \
    if (rtol > 1e-5) fd_coarse(f, x, n, fd); else ac_fd_grad_n(f, x, n, n, fd);          \
    for (int i = 0; i < n; i++) ac_near(what, g[i], fd[i], rtol);                        \
    for (int i = 0; i < n; i++) {                                                        \
      double e[8] = {0};                                                                 \
      e[i] = 1;                                                                          \
      ac_near(what, __enzyme_fwddiff((void *)f, enzyme_dup, x, e, enzyme_const, n), g[i], 1e-6); \
    }                                                                                    \
  } while (0)

int main(void) {
  double x[8];
  for (int i = 0; i < 8; i++) x[i] = 0.3 * sin(1.7 * i + 0.4) + 0.05 * i;
  CHECK("sse_load_heap", sse_load_heap, x, 4, 1e-6);
  CHECK("sse_store_stack", sse_store_stack, x, 3, 1e-6);
  CHECK("sse_floats", sse_floats, x, 5, 2e-3);
  CHECK("vector_type_copy", vector_type_copy, x, 4, 1e-6);
  CHECK("pair_copies", pair_copies, x, 3, 1e-6);
  return ac_done();
}
