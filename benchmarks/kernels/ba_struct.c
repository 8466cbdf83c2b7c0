/* Bundle adjustment in a C++-like style: the flat arrays viewed as arrays of structs (camera,
 * point), small vector helpers that take and return structs by value. */
#include "bench.h"
#include "harness/ba_layout.h"

typedef struct { double x, y, z; } vec3;
typedef struct { double x, y; } vec2;
typedef struct { vec3 rot, center; double focal; vec2 principal, radial; } camera;
_Static_assert(sizeof(camera) == CAM_SIZE * sizeof(double), "camera layout is 11 doubles");

static vec3 sub(vec3 a, vec3 b) { return (vec3){a.x - b.x, a.y - b.y, a.z - b.z}; }
static vec3 add(vec3 a, vec3 b) { return (vec3){a.x + b.x, a.y + b.y, a.z + b.z}; }
static vec3 scale(vec3 a, double s) { return (vec3){a.x * s, a.y * s, a.z * s}; }
static double dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static vec3 cross(vec3 a, vec3 b) { return (vec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }

static vec3 rotate(vec3 rot, vec3 v) {
  double sqtheta = dot(rot, rot);
  if (sqtheta == 0) return add(v, cross(rot, v));
  double theta = sqrt(sqtheta);
  vec3 w = scale(rot, 1 / theta);
  return add(add(scale(v, cos(theta)), scale(cross(w, v), sin(theta))), scale(w, dot(w, v) * (1 - cos(theta))));
}

static vec2 project(const camera *cam, vec3 x) {
  vec3 c = rotate(cam->rot, sub(x, cam->center));
  vec2 p = {c.x / c.z, c.y / c.z};
  double rsq = p.x * p.x + p.y * p.y;
  double l = 1 + cam->radial.x * rsq + cam->radial.y * rsq * rsq;
  return (vec2){p.x * l * cam->focal + cam->principal.x, p.y * l * cam->focal + cam->principal.y};
}

double ba_objective(int p, const double *cams, const double *pts, const double *w,
                    const int *obs, const double *feats) {
  const camera *cameras = (const camera *)cams;
  const vec3 *points = (const vec3 *)pts;
  const vec2 *features = (const vec2 *)feats;
  double total = 0;
  for (int i = 0; i < p; i++) {
    vec2 proj = project(&cameras[obs[2 * i]], points[obs[2 * i + 1]]);
    vec2 r = {w[i] * (proj.x - features[i].x), w[i] * (proj.y - features[i].y)};
    double werr = 1 - w[i] * w[i];
    total += r.x * r.x + r.y * r.y + werr * werr;
  }
  return total;
}

#define BENCH_KERNEL "ba_struct"
#include "harness/ba.h"
