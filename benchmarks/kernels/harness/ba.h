/* The bundle adjustment harness every ba variant shares: problem instance, timed calls of each mode,
 * checks and main(). Included at the end of a variant file, after the objective it defines;
 * BENCH_KERNEL names the variant in the RESULT line. */
#ifndef BENCH_KERNEL
#error define BENCH_KERNEL (the variant's name) before including this harness
#endif

/* The projection the data is generated with (features = projection + noise), written out
 * here so that every variant, whatever its helpers, sees the same problem. */
static void ba_reference_project(const double *cam, const double *x, double *proj) {
  double v[3] = {x[0] - cam[CAM_CENTER], x[1] - cam[CAM_CENTER + 1], x[2] - cam[CAM_CENTER + 2]}, xc[3];
  const double *rot = cam + CAM_ROT;
  double sqtheta = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2];
  if (sqtheta != 0) {
    double theta = sqrt(sqtheta), c = cos(theta), s = sin(theta);
    double w[3] = {rot[0] / theta, rot[1] / theta, rot[2] / theta};
    double wx[3] = {w[1] * v[2] - w[2] * v[1], w[2] * v[0] - w[0] * v[2], w[0] * v[1] - w[1] * v[0]};
    double tmp = (w[0] * v[0] + w[1] * v[1] + w[2] * v[2]) * (1 - c);
    for (int i = 0; i < 3; i++) xc[i] = v[i] * c + wx[i] * s + w[i] * tmp;
  } else {
    double rx[3] = {rot[1] * v[2] - rot[2] * v[1], rot[2] * v[0] - rot[0] * v[2], rot[0] * v[1] - rot[1] * v[0]};
    for (int i = 0; i < 3; i++) xc[i] = v[i] + rx[i];
  }
  double p0 = xc[0] / xc[2], p1 = xc[1] / xc[2], rsq = p0 * p0 + p1 * p1;
  double l = 1 + cam[CAM_RADIAL] * rsq + cam[CAM_RADIAL + 1] * rsq * rsq;
  proj[0] = p0 * l * cam[CAM_FOCAL] + cam[CAM_PRINCIPAL];
  proj[1] = p1 * l * cam[CAM_FOCAL] + cam[CAM_PRINCIPAL + 1];
}

static int NCAM = 49, NPT = 5000, NOBS = 20000;
static double *cams, *pts, *ws, *feats, *d_cams, *d_pts, *d_ws;
static double *t_cams, *t_pts, *t_ws; /* forward mode: one direction for everything */
static double *s_cams, *s_pts, *s_ws; /* split mode shadows */
static int *obs;
static double *v_cams[BENCH_WIDTH], *v_pts[BENCH_WIDTH], *v_ws[BENCH_WIDTH]; /* vector mode directions */
static double value, tangent;
static bench_lanes v_tangent;          /* lane tangents of the vector call */
static double f_tangent[BENCH_WIDTH];  /* the same from scalar sweeps */

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

static void fwd_call(void) {
#if BENCH_HAVE_FWD
  tangent = __enzyme_fwddiff((void *)ba_objective, enzyme_const, NOBS, enzyme_dup, cams, t_cams,
                             enzyme_dup, pts, t_pts, enzyme_dup, ws, t_ws, enzyme_const, obs, enzyme_const, feats);
#endif
  bench_sink = tangent;
}

/* KEPT is empty or BENCH_KEPT */
#define BA_SPLIT(KEPT)                                                                                         \
  void *tape = __enzyme_augmentfwd((void *)ba_objective, enzyme_const, NOBS, KEPT enzyme_dup, cams, s_cams,    \
                                   KEPT enzyme_dup, pts, s_pts, KEPT enzyme_dup, ws, s_ws,                     \
                                   KEPT enzyme_const, obs, KEPT enzyme_const, feats);                          \
  __enzyme_reverse((void *)ba_objective, enzyme_const, NOBS, KEPT enzyme_dup, cams, s_cams,                    \
                   KEPT enzyme_dup, pts, s_pts, KEPT enzyme_dup, ws, s_ws,                                     \
                   KEPT enzyme_const, obs, KEPT enzyme_const, feats, 1.0, tape)

static void split_zero(void) {
  memset(s_cams, 0, sizeof(double) * CAM_SIZE * NCAM);
  memset(s_pts, 0, sizeof(double) * 3 * NPT);
  memset(s_ws, 0, sizeof(double) * NOBS);
}

static void split_call(void) {
  split_zero();
#if BENCH_HAVE_SPLIT
  BA_SPLIT();
#endif
  bench_sink = s_cams[0] + s_pts[0] + s_ws[0];
}

static void split_kept_call(void) {
  split_zero();
#if BENCH_HAVE_SPLIT
  BA_SPLIT(BENCH_KEPT);
#endif
  bench_sink = s_cams[0] + s_pts[0] + s_ws[0];
}

/* Vector forward mode: four directions in one call, against four scalar sweeps. */
static void vec4_call(void) {
#if BENCH_HAVE_VEC
  v_tangent = __enzyme_fwddiff_lanes((void *)ba_objective, enzyme_width, BENCH_WIDTH, enzyme_const, NOBS,
                                     enzyme_dup, cams, v_cams[0], v_cams[1], v_cams[2], v_cams[3],
                                     enzyme_dup, pts, v_pts[0], v_pts[1], v_pts[2], v_pts[3],
                                     enzyme_dup, ws, v_ws[0], v_ws[1], v_ws[2], v_ws[3],
                                     enzyme_const, obs, enzyme_const, feats);
#endif
  bench_sink = v_tangent.d[BENCH_WIDTH - 1];
}

static void fwd4_call(void) {
#if BENCH_HAVE_VEC
  for (int k = 0; k < BENCH_WIDTH; k++)
    f_tangent[k] = __enzyme_fwddiff((void *)ba_objective, enzyme_const, NOBS, enzyme_dup, cams, v_cams[k],
                                    enzyme_dup, pts, v_pts[k], enzyme_dup, ws, v_ws[k],
                                    enzyme_const, obs, enzyme_const, feats);
#endif
  bench_sink = f_tangent[BENCH_WIDTH - 1];
}

static double objective(void) { primal_call(); return value; }

int main(int argc, char **argv) {
  struct bench_opts o = bench_parse(argc, argv);
  if (o.quick) { NCAM = 7; NPT = 200; NOBS = 800; }
  long ncam = (long)CAM_SIZE * NCAM, npt = 3L * NPT;
  cams = malloc(sizeof(double) * ncam); d_cams = malloc(sizeof(double) * ncam);
  pts = malloc(sizeof(double) * npt); d_pts = malloc(sizeof(double) * npt);
  ws = malloc(sizeof(double) * NOBS); d_ws = malloc(sizeof(double) * NOBS);
  t_cams = malloc(sizeof(double) * ncam); s_cams = malloc(sizeof(double) * ncam);
  t_pts = malloc(sizeof(double) * npt); s_pts = malloc(sizeof(double) * npt);
  t_ws = malloc(sizeof(double) * NOBS); s_ws = malloc(sizeof(double) * NOBS);
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
  bench_fill(pts, npt, -1, 1);
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
    ba_reference_project(cams + CAM_SIZE * obs[2 * i], pts + 3 * obs[2 * i + 1], feats + 2 * i);
    feats[2 * i] += bench_range(-2, 2);
    feats[2 * i + 1] += bench_range(-2, 2);
  }
  /* the direction scales each parameter by its own magnitude (focal lengths are ~500) */
  for (long j = 0; j < ncam; j++) t_cams[j] = bench_range(-1, 1) * (j % CAM_SIZE == CAM_FOCAL ? 100 : 1) * 0.01;
  bench_fill(t_pts, npt, -0.01, 0.01);
  bench_fill(t_ws, NOBS, -0.01, 0.01);
  bench_alloc_lanes(v_cams, ncam, -0.01, 0.01);
  for (int k = 0; k < BENCH_WIDTH; k++)
    for (long j = CAM_FOCAL; j < ncam; j += CAM_SIZE) v_cams[k][j] *= 100;
  bench_alloc_lanes(v_pts, npt, -0.01, 0.01);
  bench_alloc_lanes(v_ws, NOBS, -0.01, 0.01);

  if (BENCH_HAVE_AD) {
    grad_call();
    double *gc = bench_copy(d_cams, ncam), *gp = bench_copy(d_pts, npt), *gw = bench_copy(d_ws, NOBS);
    /* cameras 0 (unrotated) and 1 entry by entry, then spread samples of points and weights */
    for (int j = 0; j < 2 * CAM_SIZE; j++)
      bench_check("cams", j, gc[j], bench_central_diff(objective, cams, j), 1e-5);
    bench_check_spread("pts", objective, pts, gp, npt, 4, 1e-5);
    bench_check_spread("w", objective, ws, gw, NOBS, 3, 1e-5);
    /* forward mode: the tangent must equal the gradient along the direction */
    bench_mode = BENCH_FORWARD;
    if (BENCH_HAVE_FWD) {
      fwd_call();
      double want = bench_dot(gc, t_cams, ncam) + bench_dot(gp, t_pts, npt) + bench_dot(gw, t_ws, NOBS);
      bench_check("tangent", 0, tangent, want, 1e-8);
    }
    bench_mode = BENCH_SPLIT;
    if (BENCH_HAVE_SPLIT) {
      for (int kept = 0; kept < 2; kept++) {
        if (kept) split_kept_call(); else split_call();
        bench_check_all("cams", s_cams, gc, ncam, 1e-10);
        bench_check_all("pts", s_pts, gp, npt, 1e-10);
        bench_check_all("w", s_ws, gw, NOBS, 1e-10);
      }
    }
    /* vector mode: lanes equal the scalar sweeps, and each sweep the gradient along its direction */
    bench_mode = BENCH_VECTOR;
    if (BENCH_HAVE_VEC) {
      fwd4_call();
      vec4_call();
      for (int k = 0; k < BENCH_WIDTH; k++) {
        bench_check("tangent.lane", k, v_tangent.d[k], f_tangent[k], BENCH_LANE_RTOL);
        double want = bench_dot(gc, v_cams[k], ncam) + bench_dot(gp, v_pts[k], npt) + bench_dot(gw, v_ws[k], NOBS);
        bench_check("sweep", k, f_tangent[k], want, 1e-8);
      }
    }
    free(gc); free(gp); free(gw);
  }
  struct bench_case cases[7];
  int ncases = 0;
  bench_add(cases, &ncases, 1, "primal", primal_call);
  bench_add(cases, &ncases, BENCH_HAVE_AD, "grad", grad_call);
  bench_add(cases, &ncases, BENCH_HAVE_FWD, "fwd", fwd_call);
  bench_add(cases, &ncases, BENCH_HAVE_SPLIT, "split", split_call);
  bench_add(cases, &ncases, BENCH_HAVE_SPLIT, "split_kept", split_kept_call);
  bench_add(cases, &ncases, BENCH_HAVE_VEC, "vec4", vec4_call);
  bench_add(cases, &ncases, BENCH_HAVE_VEC, "fwd4", fwd4_call);
  bench_measure(cases, ncases, o);
  char size[64];
  snprintf(size, sizeof size, "n%d_m%d_p%d", NCAM, NPT, NOBS);
  return bench_report(BENCH_KERNEL, size, objective(), cases, ncases);
}
