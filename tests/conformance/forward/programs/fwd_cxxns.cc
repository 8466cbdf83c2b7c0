// An enzyme("forward", rule) attribute written inside a C++ namespace with the rule unqualified.
#include "hcheck.h"
extern "C" double __enzyme_fwddiff(void *, ...);
struct dual { double primal, tangent; };
namespace phys {
dual drag_fwd(double v, double dv);
double drag(double v) __attribute__((enzyme("forward", drag_fwd)));
double drag(double v) { return v * v; }
dual drag_fwd(double v, double dv) { return {v * v, 5.0 * dv}; }
}  // namespace phys
int main() {
  hc_near("rule in namespace", __enzyme_fwddiff((void *)phys::drag, 0.7, 1.0), 5.0, 1e-12);
  return hc_done();
}
