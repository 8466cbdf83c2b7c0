/* Bundle adjustment with the whole projection written out in the observation loop: no
 * helpers, no small arrays, scalars only (Rodrigues, distortion and residual inline). */
#include "bench.h"
#include "harness/ba_layout.h"

double ba_objective(int p, const double *cams, const double *pts, const double *w,
                    const int *obs, const double *feats) {
  double total = 0;
  for (int i = 0; i < p; i++) {
    const double *cam = cams + CAM_SIZE * obs[2 * i], *X = pts + 3 * obs[2 * i + 1];
    double vx = X[0] - cam[CAM_CENTER], vy = X[1] - cam[CAM_CENTER + 1], vz = X[2] - cam[CAM_CENTER + 2];
    double rx = cam[CAM_ROT], ry = cam[CAM_ROT + 1], rz = cam[CAM_ROT + 2];
    double sqtheta = rx * rx + ry * ry + rz * rz, cx, cy, cz;
    if (sqtheta != 0) {
      double theta = sqrt(sqtheta), ct = cos(theta), st = sin(theta);
      double wx = rx / theta, wy = ry / theta, wz = rz / theta;
      double tmp = (wx * vx + wy * vy + wz * vz) * (1 - ct);
      cx = vx * ct + (wy * vz - wz * vy) * st + wx * tmp;
      cy = vy * ct + (wz * vx - wx * vz) * st + wy * tmp;
      cz = vz * ct + (wx * vy - wy * vx) * st + wz * tmp;
    } else {
      cx = vx + (ry * vz - rz * vy);
      cy = vy + (rz * vx - rx * vz);
      cz = vz + (rx * vy - ry * vx);
    }
    double px = cx / cz, py = cy / cz, rsq = px * px + py * py;
    double l = 1 + cam[CAM_RADIAL] * rsq + cam[CAM_RADIAL + 1] * rsq * rsq;
    double ux = px * l * cam[CAM_FOCAL] + cam[CAM_PRINCIPAL], uy = py * l * cam[CAM_FOCAL] + cam[CAM_PRINCIPAL + 1];
    double r0 = w[i] * (ux - feats[2 * i]), r1 = w[i] * (uy - feats[2 * i + 1]);
    double werr = 1 - w[i] * w[i];
    total += r0 * r0 + r1 * r1 + werr * werr;
  }
  return total;
}

#define BENCH_KERNEL "ba_inlined"
#include "harness/ba.h"
