/* Differentiating through a function with no body and no rule must fail at build time. */
extern double mystery(double);
double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) double helper(double x) { return mystery(x) * x; }
__attribute__((noinline)) double top(double x) { return helper(x) + 1.0; }
int main(void) { return __enzyme_autodiff((void *)top, 1.0) > 0; }
