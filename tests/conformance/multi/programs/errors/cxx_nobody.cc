// Forward mode through a C++ chain ending in a function with no body.
#include <cstdio>
extern "C" double __enzyme_fwddiff(void *, ...);
namespace sim { double blackbox(double x); }
struct Model { static double eval(double x) { return sim::blackbox(x * x) + x; } };
double run(double x) { return Model::eval(x) * 2.0; }
int main() { printf("%g\n", __enzyme_fwddiff((void *)run, 0.5, 1.0)); return 0; }
