/* ADBench bundle adjustment: reprojection error of 3-D points seen by cameras with a
 * Rodrigues rotation, centre, focal length, principal point and 2-term radial distortion.
 * Scalar objective: sum of squared weighted residuals plus the weight penalties (1 - w^2)^2,
 * so one reverse pass gives the gradient w.r.t. all cameras, points and weights. */
#include "bench.h"

enum { CAM_ROT = 0, CAM_CENTER = 3, CAM_FOCAL = 6, CAM_PRINCIPAL = 7, CAM_RADIAL = 9, CAM_SIZE = 11 };

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

/* ---- problem instance and timed calls ---- */
static int NCAM = 49, NPT = 5000, NOBS = 20000;
static double *cams, *pts, *ws, *feats, *d_cams, *d_pts, *d_ws;
static int *obs;
static double value;

static void primal_call(void) {
  value = ba_objective(NOBS, cams, pts, ws, obs, feats);
  bench_sink = value;
}

static void grad_call(void) {
  memset(d_cams, 0, sizeof(double) * CAM_SIZE * NCAM);
  memset(d_pts, 0, sizeof(double) * 3 * NPT);
  memset(d_ws, 0, sizeof(double) * NOBS);
#if BENCH_HAVE_AD
  __enzyme_autodiff((void *)ba_objective, enzyme_const, NOBS, enzyme_dup, cams, d_cams,
                    enzyme_dup, pts, d_pts, enzyme_dup, ws, d_ws, enzyme_const, obs, enzyme_const, feats);
#endif
  bench_sink = d_cams[0] + d_pts[0] + d_ws[0];
}

static double objective(void) { primal_call(); return value; }

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) { NCAM = 7; NPT = 200; NOBS = 800; }
  cams = malloc(sizeof(double) * CAM_SIZE * NCAM); d_cams = malloc(sizeof(double) * CAM_SIZE * NCAM);
  pts = malloc(sizeof(double) * 3 * NPT); d_pts = malloc(sizeof(double) * 3 * NPT);
  ws = malloc(sizeof(double) * NOBS); d_ws = malloc(sizeof(double) * NOBS);
  feats = malloc(sizeof(double) * 2 * NOBS);
  obs = malloc(sizeof(int) * 2 * NOBS);
  bench_seed(3);
  for (int c = 0; c < NCAM; c++) {
    double *cam = cams + CAM_SIZE * c;
    bench_fill(cam + CAM_ROT, 3, -0.3, 0.3);
    bench_fill(cam + CAM_CENTER, 3, -1, 1);
    cam[CAM_CENTER + 2] -= 10; /* cameras sit in front of the points: depth stays well away from 0 */
    cam[CAM_FOCAL] = bench_range(400, 600);
    bench_fill(cam + CAM_PRINCIPAL, 2, -5, 5);
    bench_fill(cam + CAM_RADIAL, 2, -0.1, 0.1);
  }
  bench_fill(pts, 3 * NPT, -1, 1);
  for (int i = 0; i < NOBS; i++) {
    obs[2 * i] = i % NCAM;                          /* every camera sees many points */
    obs[2 * i + 1] = (int)(bench_uniform() * NPT);
    ws[i] = bench_range(0.5, 1.5);
  }
  /* camera 0 has no rotation, so the small-angle branch of Rodrigues is exercised too */
  cams[CAM_ROT] = cams[CAM_ROT + 1] = cams[CAM_ROT + 2] = 0;
  /* features are the true projections plus a few pixels of noise, as in a real problem:
   * small residuals also keep the finite differences of the objective accurate */
  for (int i = 0; i < NOBS; i++) {
    project(cams + CAM_SIZE * obs[2 * i], pts + 3 * obs[2 * i + 1], feats + 2 * i);
    feats[2 * i] += bench_range(-2, 2);
    feats[2 * i + 1] += bench_range(-2, 2);
  }

  if (BENCH_HAVE_AD) {
    grad_call();
    double *gc = malloc(sizeof(double) * CAM_SIZE * NCAM), *gp = malloc(sizeof(double) * 3 * NPT), *gw = malloc(sizeof(double) * NOBS);
    memcpy(gc, d_cams, sizeof(double) * CAM_SIZE * NCAM);
    memcpy(gp, d_pts, sizeof(double) * 3 * NPT);
    memcpy(gw, d_ws, sizeof(double) * NOBS);
    /* cameras 0 (unrotated) and 1 entry by entry, then spread samples of points and weights */
    for (int j = 0; j < 2 * CAM_SIZE; j++)
      bench_check("cams", j, gc[j], bench_central_diff(objective, cams, j), 1e-5);
    bench_check_spread("pts", objective, pts, gp, 3 * NPT, 4, 1e-5);
    bench_check_spread("w", objective, ws, gw, NOBS, 3, 1e-5);
    free(gc); free(gp); free(gw);
  }
  struct bench_case cases[] = {{.label = "primal", .fn = primal_call}, {.label = "grad", .fn = grad_call}};
  bench_measure(cases, BENCH_HAVE_AD ? 2 : 1, o);
  char size[64];
  snprintf(size, sizeof size, "n%d_m%d_p%d", NCAM, NPT, NOBS);
  return bench_report("ba", size, objective(), cases, BENCH_HAVE_AD ? 2 : 1);
}
