/* Bundle adjustment written with Eigen: Vector3d/Vector2d values, Maps over the camera,
 * point and feature arrays, Rodrigues' rotation through dot and cross products, the
 * projection returned by value. */
#include <Eigen/Dense>
#include "bench.h"
#include "harness/ba_layout.h"
namespace {
using V3 = Eigen::Vector3d;
using V2 = Eigen::Vector2d;
V3 rotate(const V3 &rot, const V3 &x) {
  double sq = rot.squaredNorm();
  if (sq != 0) {
    double theta = std::sqrt(sq), c = std::cos(theta), s = std::sin(theta);
    V3 w = rot / theta;
    return x * c + w.cross(x) * s + w * (w.dot(x) * (1 - c));
  }
  return x + rot.cross(x);
}
V2 project(const double *cam, const double *pt) {
  Eigen::Map<const V3> rot(cam + CAM_ROT), centre(cam + CAM_CENTER), X(pt);
  V3 xc = rotate(rot, X - centre);
  V2 p = xc.head<2>() / xc(2);
  double rsq = p.squaredNorm();
  p *= 1 + cam[CAM_RADIAL] * rsq + cam[CAM_RADIAL + 1] * rsq * rsq;
  return p * cam[CAM_FOCAL] + Eigen::Map<const V2>(cam + CAM_PRINCIPAL);
}
}
double ba_objective(int p, const double *cams, const double *pts, const double *w, const int *obs, const double *feats) {
  double total = 0;
  for (int i = 0; i < p; i++) {
    V2 r = w[i] * (project(cams + CAM_SIZE * obs[2 * i], pts + 3 * obs[2 * i + 1]) - Eigen::Map<const V2>(feats + 2 * i));
    double werr = 1 - w[i] * w[i];
    total += r.squaredNorm() + werr * werr;
  }
  return total;
}
#define BENCH_KERNEL "ba_eigen"
#include "harness/ba.h"
