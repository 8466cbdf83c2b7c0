/* ADBench bundle adjustment: reprojection error of 3-D points seen by cameras with a
 * Rodrigues rotation, centre, focal length, principal point and 2-term radial distortion.
 * Scalar objective: sum of squared weighted residuals plus the weight penalties (1 - w^2)^2,
 * so one reverse pass gives the gradient w.r.t. all cameras, points and weights. */
#include "bench.h"

#include "harness/ba_layout.h"

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const double *a, const double *b, double *out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

/* Rotates x by the axis-angle vector rot (Rodrigues' formula; first order near zero). */
static void rodrigues_rotate_point(const double *rot, const double *x, double *out) {
  double sqtheta = dot3(rot, rot);
  if (sqtheta != 0) {
    double theta = sqrt(sqtheta), costheta = cos(theta), sintheta = sin(theta);
    double w[3] = {rot[0] / theta, rot[1] / theta, rot[2] / theta}, w_cross_x[3];
    cross3(w, x, w_cross_x);
    double tmp = dot3(w, x) * (1 - costheta);
    for (int i = 0; i < 3; i++) out[i] = x[i] * costheta + w_cross_x[i] * sintheta + w[i] * tmp;
  } else {
    double rot_cross_x[3];
    cross3(rot, x, rot_cross_x);
    for (int i = 0; i < 3; i++) out[i] = x[i] + rot_cross_x[i];
  }
}

static void radial_distort(const double *rad, double *proj) {
  double rsq = proj[0] * proj[0] + proj[1] * proj[1];
  double l = 1 + rad[0] * rsq + rad[1] * rsq * rsq;
  proj[0] *= l;
  proj[1] *= l;
}

static void project(const double *cam, const double *x, double *proj) {
  double shifted[3] = {x[0] - cam[CAM_CENTER], x[1] - cam[CAM_CENTER + 1], x[2] - cam[CAM_CENTER + 2]};
  double xcam[3];
  rodrigues_rotate_point(cam + CAM_ROT, shifted, xcam);
  proj[0] = xcam[0] / xcam[2];
  proj[1] = xcam[1] / xcam[2];
  radial_distort(cam + CAM_RADIAL, proj);
  proj[0] = proj[0] * cam[CAM_FOCAL] + cam[CAM_PRINCIPAL];
  proj[1] = proj[1] * cam[CAM_FOCAL] + cam[CAM_PRINCIPAL + 1];
}

double ba_objective(int p, const double *cams, const double *pts, const double *w,
                    const int *obs, const double *feats) {
  double total = 0;
  for (int i = 0; i < p; i++) {
    double proj[2];
    project(cams + CAM_SIZE * obs[2 * i], pts + 3 * obs[2 * i + 1], proj);
    double r0 = w[i] * (proj[0] - feats[2 * i]), r1 = w[i] * (proj[1] - feats[2 * i + 1]);
    double werr = 1 - w[i] * w[i];
    total += r0 * r0 + r1 * r1 + werr * werr;
  }
  return total;
}

#define BENCH_KERNEL "ba"
#include "harness/ba.h"
