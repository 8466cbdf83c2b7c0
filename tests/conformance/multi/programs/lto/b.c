/* Another TU with a file-static global of the same name. */
static double state;
double fb(double x) { state = x * x; return state * 3.0; }
