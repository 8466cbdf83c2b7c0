#include <stdio.h>
static volatile int len = 7;
static const double tab[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
__attribute__((noinline)) double f(const double *x) {
  int n = len;
  double row[8], t = 0;
  for (int j = 1; j < n; j++) row[j] = tab[j % 16] * x[j % 4];
  for (int i = 1; i < n; i++) t = 0.5 * t + row[i];
  return t;
}
int main(void) {
  double x[8] = {1, 10, 100, 1000, -1, -1, -1, -1};
  printf("%g\n", f(x));
}
