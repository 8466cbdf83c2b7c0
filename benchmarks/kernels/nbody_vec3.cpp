/* n-body in C++: a Vec3 class with overloaded operators, the bodies' state in
 * std::vector<Vec3> members of a System class whose step() advances it in place. */
#include <vector>
#include "bench.h"

namespace {

struct Vec3 {
  double x, y, z;
  Vec3 operator+(const Vec3 &o) const { return {x + o.x, y + o.y, z + o.z}; }
  Vec3 operator-(const Vec3 &o) const { return {x - o.x, y - o.y, z - o.z}; }
  Vec3 operator*(double s) const { return {x * s, y * s, z * s}; }
  Vec3 &operator+=(const Vec3 &o) { x += o.x; y += o.y; z += o.z; return *this; }
  double dot(const Vec3 &o) const { return x * o.x + y * o.y + z * o.z; }
};

const double SOFTENING2 = 0.01;

class System {
 public:
  System(int n, const double *mass, const double *pos, const double *vel)
      : mass_(mass, mass + n), pos_(n), vel_(n), acc_(n) {
    for (int i = 0; i < n; i++) {
      pos_[i] = {pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]};
      vel_[i] = {vel[3 * i], vel[3 * i + 1], vel[3 * i + 2]};
    }
  }

  void step(double dt) {
    for (size_t i = 0; i < pos_.size(); i++) {
      Vec3 a{0, 0, 0};
      for (size_t j = 0; j < pos_.size(); j++) {
        Vec3 d = pos_[j] - pos_[i];
        double r2 = d.dot(d) + SOFTENING2;
        a += d * (mass_[j] / (r2 * sqrt(r2)));
      }
      acc_[i] = a;
    }
    for (size_t i = 0; i < pos_.size(); i++) {
      vel_[i] += acc_[i] * dt;
      pos_[i] += vel_[i] * dt;
    }
  }

  double energy() const {
    double e = 0;
    for (size_t i = 0; i < pos_.size(); i++) {
      e += 0.5 * mass_[i] * vel_[i].dot(vel_[i]);
      for (size_t j = i + 1; j < pos_.size(); j++) {
        Vec3 d = pos_[j] - pos_[i];
        e -= mass_[i] * mass_[j] / sqrt(d.dot(d) + SOFTENING2);
      }
    }
    return e;
  }

 private:
  std::vector<double> mass_;
  std::vector<Vec3> pos_, vel_, acc_;
};

}  // namespace

double nbody_final_energy(int n, int steps, double dt, const double *mass, const double *pos0, const double *vel0) {
  System sys(n, mass, pos0, vel0);
  for (int s = 0; s < steps; s++) sys.step(dt);
  return sys.energy();
}

#define BENCH_KERNEL "nbody_vec3"
#include "harness/nbody.h"
