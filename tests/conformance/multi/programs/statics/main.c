/* Loads both libraries: each must call its own static helper. */
#include <stdio.h>
double grad_a(double), grad_b(double), f_a(double), f_b(double);
int main(void) {
  int bad = 0;
  bad += f_a(1.0) != 3.0;
  bad += f_b(1.0) != 4.0;
  bad += grad_a(1.0) != 21.0;
  bad += grad_b(1.0) != 31.0;
  if (bad) { printf("FAIL %d/4 (f_a %g f_b %g grad_a %g grad_b %g)\n", bad, f_a(1.0), f_b(1.0), grad_a(1.0), grad_b(1.0)); return 1; }
  printf("ok 4\n");
  return 0;
}
