// System's methods, compiled separately from their callers.
#include "system.hpp"

System::System(const double *pos, int n) {
  p_.reserve(n);
  for (int i = 0; i < n; i++) p_.push_back({pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]});
}

double System::energy() const {
  double e = 0;
  for (size_t i = 0; i < p_.size(); i++)
    for (size_t j = i + 1; j < p_.size(); j++) {
      Vec3<double> d = p_[i] - p_[j];
      double r2 = d.dot(d);
      e += 1.0 / std::sqrt(r2 + 0.1) + 0.01 * smoothabs(p_[i].z - p_[j].z);
    }
  return e;
}

double System::kinetic(const double *vel) const {
  double k = 0;
  for (size_t i = 0; i < p_.size(); i++) k += 0.5 * (vel[i] * vel[i]) * (1.0 + 0.1 * i);
  return k;
}

extern "C" double system_energy(const double *pos, int n) { return System(pos, n).energy(); }
extern "C" double total(const double *pos, const double *vel, int n) {
  System s(pos, n);
  return s.energy() + s.kinetic(vel);
}
