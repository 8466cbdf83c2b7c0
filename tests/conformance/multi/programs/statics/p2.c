/* A plain object with a global function of the same name as p1.c's static helper. */
double helper(double x) { return 5.0 * x; }   /* a global of the same name in another, plain object */
double other(double x) { return helper(x); }
