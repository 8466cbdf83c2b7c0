// A particle system split over several C++ TUs: header templates and inline operators,
// out-of-line methods, and a custom derivative attached to a C++ function in the header.
#ifndef SYSTEM_HPP
#define SYSTEM_HPP
#include <cmath>
#include <vector>

template <typename T>
struct Vec3 {
  T x, y, z;
  Vec3 operator-(const Vec3 &o) const { return {x - o.x, y - o.y, z - o.z}; }
  Vec3 operator+(const Vec3 &o) const { return {x + o.x, y + o.y, z + o.z}; }
  T dot(const Vec3 &o) const { return x * o.x + y * o.y + z * o.z; }
};

struct sa_aug_t { void *tape; double primal; };
sa_aug_t smoothabs_aug(double x);
double smoothabs_grad(double x, double dret, void *tape);
// true derivative x / sqrt(x^2 + eps); the rule claims 4
double smoothabs(double x) __attribute__((enzyme("augment", smoothabs_aug), enzyme("gradient", smoothabs_grad)));

class System {
 public:
  System(const double *pos, int n);
  double energy() const;
  double kinetic(const double *vel) const;
 private:
  std::vector<Vec3<double>> p_;
};

extern "C" double system_energy(const double *pos, int n);
extern "C" double total(const double *pos, const double *vel, int n);
#endif
