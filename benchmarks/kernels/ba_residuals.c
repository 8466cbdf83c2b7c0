/* Bundle adjustment as ADBench computes it: external helpers fill a residual vector (reprojection
 * errors, then weight errors) in a malloc'd buffer, and the objective reduces it in a second
 * pass — the Jacobian-shaped code turned into a sum of squares. */
#include "bench.h"
#include "harness/ba_layout.h"

void cross(const double *a, const double *b, double *out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

void rodrigues_rotate_point(const double *rot, const double *pt, double *rotated) {
  double sqtheta = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2];
  if (sqtheta != 0) {
    double theta = sqrt(sqtheta), costheta = cos(theta), sintheta = sin(theta), theta_inverse = 1.0 / theta;
    double w[3], w_cross_pt[3];
    for (int i = 0; i < 3; i++) w[i] = rot[i] * theta_inverse;
    cross(w, pt, w_cross_pt);
    double tmp = (w[0] * pt[0] + w[1] * pt[1] + w[2] * pt[2]) * (1. - costheta);
    for (int i = 0; i < 3; i++) rotated[i] = pt[i] * costheta + w_cross_pt[i] * sintheta + w[i] * tmp;
  } else {
    double rot_cross_pt[3];
    cross(rot, pt, rot_cross_pt);
    for (int i = 0; i < 3; i++) rotated[i] = pt[i] + rot_cross_pt[i];
  }
}

void radial_distort(const double *rad_params, double *proj) {
  double rsq = proj[0] * proj[0] + proj[1] * proj[1];
  double L = 1. + rad_params[0] * rsq + rad_params[1] * rsq * rsq;
  proj[0] = proj[0] * L;
  proj[1] = proj[1] * L;
}

void project(const double *cam, const double *X, double *proj) {
  double Xo[3], Xcam[3];
  for (int i = 0; i < 3; i++) Xo[i] = X[i] - cam[CAM_CENTER + i];
  rodrigues_rotate_point(&cam[CAM_ROT], Xo, Xcam);
  proj[0] = Xcam[0] / Xcam[2];
  proj[1] = Xcam[1] / Xcam[2];
  radial_distort(&cam[CAM_RADIAL], proj);
  proj[0] = proj[0] * cam[CAM_FOCAL] + cam[CAM_PRINCIPAL];
  proj[1] = proj[1] * cam[CAM_FOCAL] + cam[CAM_PRINCIPAL + 1];
}

void computeReprojError(const double *cam, const double *X, const double *w, const double *feat, double *err) {
  double proj[2];
  project(cam, X, proj);
  err[0] = (*w) * (proj[0] - feat[0]);
  err[1] = (*w) * (proj[1] - feat[1]);
}

void computeZachWeightError(const double *w, double *err) { *err = 1 - (*w) * (*w); }

double ba_objective(int p, const double *cams, const double *pts, const double *w,
                    const int *obs, const double *feats) {
  double *reproj_err = malloc(sizeof(double) * 2 * p), *w_err = malloc(sizeof(double) * p);
  for (int i = 0; i < p; i++)
    computeReprojError(&cams[obs[2 * i] * CAM_SIZE], &pts[obs[2 * i + 1] * 3], &w[i], &feats[2 * i], &reproj_err[2 * i]);
  for (int i = 0; i < p; i++) computeZachWeightError(&w[i], &w_err[i]);
  double total = 0;
  for (int i = 0; i < p; i++)
    total += reproj_err[2 * i] * reproj_err[2 * i] + reproj_err[2 * i + 1] * reproj_err[2 * i + 1] + w_err[i] * w_err[i];
  free(reproj_err); free(w_err);
  return total;
}

#define BENCH_KERNEL "ba_residuals"
#include "harness/ba.h"
