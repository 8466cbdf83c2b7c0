#!/usr/bin/env python3
"""An OpenMP stencil through enzyme-build: gradient / primal and the gradient's parallel speedup.

    .venv/bin/python benchmarks/openmp_stencil.py [--size 1000] [--reps 41] [--threads 1,2]

The kernel (C, built with `enzyme-build cc -O2 -fopenmp`): one explicit step of nonlinear
(Perona–Malik) diffusion on an n x n grid, v = u + dt * sum over the 4 neighbours of
exp(-d^2) d with d = u[neighbour] - u, rows split over the team by `parallel for
schedule(static)`; the loss is sum v^2 through a second parallel loop with reduction(+:s).
The gradient w.r.t. u scatters into the neighbours' adjoints, so the threads meet at the
edges of their row blocks (docs/openmp.md: plain adds inside a thread's private range,
atomics at the edges).

The program checks three gradient entries against central differences on every team size,
then times `--reps` rounds in one process (wall clock: the point is the parallel speedup);
in each round every team size (omp_set_num_threads) runs the primal and __enzyme_autodiff
once, so the sizes are measured side by side under the same machine conditions. It reports
the median and the best time per size, and the speedup as the median over the rounds of the
paired ratio (time on 1 thread / time on k in the same round). Targets: gradient / primal
<= 3x; the gradient on 2 threads >= 1.6x faster than on 1, compared on the best times (on a
shared or virtual machine a 2-thread call waits at each barrier for a descheduled core, which
the medians show and the best times do not; the 1-minute load average is printed with the
table). Writes the table and benchmarks/results/openmp_stencil.svg.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import svg  # noqa: E402  (the sibling helper module)

ENZYME_BUILD = Path(sys.executable).with_name("enzyme-build")
RATIO_TARGET, SPEEDUP_TARGET = 3.0, 1.6

SOURCE = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <omp.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

double step(const double *u, double *v, int n, double dt) {
#pragma omp parallel for schedule(static)
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++) {
      double c = u[i * n + j];
      double dn = u[(i - 1) * n + j] - c, ds = u[(i + 1) * n + j] - c;
      double dw = u[i * n + j - 1] - c, de = u[i * n + j + 1] - c;
      v[i * n + j] = c + dt * (exp(-dn * dn) * dn + exp(-ds * ds) * ds + exp(-dw * dw) * dw + exp(-de * de) * de);
    }
  double s = 0;
#pragma omp parallel for schedule(static) reduction(+:s)
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++) s += v[i * n + j] * v[i * n + j];
  return s;
}

int main(int argc, char **argv) {
  int n = atoi(argv[1]), reps = atoi(argv[2]), nt = argc - 3, th[8];
  if (nt < 1 || nt > 8) return 2;
  for (int k = 0; k < nt; k++) th[k] = atoi(argv[3 + k]);
  size_t N = (size_t)n * n;
  double *u = malloc(N * 8), *du = calloc(N, 8), *v = calloc(N, 8), *dv = calloc(N, 8);
  for (size_t k = 0; k < N; k++) u[k] = sin(0.001 * k) + 0.3 * cos(0.07 * k);
  int bad = 0;
  size_t idx[3] = {(size_t)n + 1, N / 2 + 7, N - n - 2};
  for (int k = 0; k < nt; k++) {  /* the gradient checked on every team size */
    omp_set_num_threads(th[k]);
    memset(du, 0, N * 8);
    __enzyme_autodiff((void *)step, enzyme_dup, u, du, enzyme_dup, v, dv, enzyme_const, n, enzyme_const, 0.1);
    for (int q = 0; q < 3; q++) {
      double h = 1e-6, w = u[idx[q]];
      u[idx[q]] = w + h; double fp = step(u, v, n, 0.1);
      u[idx[q]] = w - h; double fm = step(u, v, n, 0.1); u[idx[q]] = w;
      double fd = (fp - fm) / (2 * h);
      if (fabs(fd - du[idx[q]]) > 1e-4 * (1 + fabs(fd))) bad = 1;
    }
  }
  /* Rounds: in each round every team size runs the primal and the gradient once, so the
     sizes see the same machine conditions; the speedup is the median of the per-round ratios. */
  double *tp = malloc(sizeof(double) * reps * nt), *tg = malloc(sizeof(double) * reps * nt), sink = 0;
  for (int r = 0; r < reps; r++)
    for (int k = 0; k < nt; k++) {
      omp_set_num_threads(th[k]);
      double t0 = now(); sink += step(u, v, n, 0.1); tp[k * reps + r] = now() - t0;
      memset(du, 0, N * 8);
      t0 = now();
      __enzyme_autodiff((void *)step, enzyme_dup, u, du, enzyme_dup, v, dv, enzyme_const, n, enzyme_const, 0.1);
      tg[k * reps + r] = now() - t0;
    }
  double *sp = malloc(sizeof(double) * reps), *sg = malloc(sizeof(double) * reps);
  printf("check %s\nsink %g\n", bad ? "FAIL" : "ok", sink);
  for (int k = 0; k < nt; k++) {
    for (int r = 0; r < reps; r++) {
      sp[r] = tp[r] / tp[k * reps + r];
      sg[r] = tg[r] / tg[k * reps + r];
    }
    qsort(sp, reps, sizeof *sp, cmp); qsort(sg, reps, sizeof *sg, cmp);
    qsort(tp + k * reps, reps, sizeof *tp, cmp); qsort(tg + k * reps, reps, sizeof *tg, cmp);
    printf("row %d %.6f %.6f %.6f %.6f %.4f %.4f\n", th[k], tp[k * reps + reps / 2], tp[k * reps],
           tg[k * reps + reps / 2], tg[k * reps], sp[reps / 2], sg[reps / 2]);
  }
  return bad;
}
"""


def load_average() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def build(work: Path) -> Path:
    (work / "stencil.c").write_text(SOURCE)
    proc = subprocess.run([str(ENZYME_BUILD), "cc", "-O2", "-fopenmp", "stencil.c", "-o", "stencil", "-lm"],
                          cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"building the stencil failed:\n{proc.stderr}")
    return work / "stencil"


def run(binary: Path, size: int, reps: int, counts: list[int]) -> dict[int, dict]:
    proc = subprocess.run([str(binary), str(size), str(reps), *map(str, counts)], capture_output=True, text=True)
    if proc.returncode != 0 or not re.search(r"^check ok$", proc.stdout, re.M):
        raise SystemExit(f"gradient check failed:\n{proc.stdout}{proc.stderr}")
    keys = ("primal", "primal_best", "gradient", "gradient_best", "primal_speedup", "gradient_speedup")
    rows = {}
    for line in re.findall(r"^row (.*)$", proc.stdout, re.M):
        t, *values = line.split()
        rows[int(t)] = dict(zip(keys, map(float, values)))
    return rows


def plot(rows: dict[int, dict], size: int, load: str) -> str:
    groups = [f"{t} thread{'s' if t > 1 else ''}" for t in rows]
    times = svg.Panel("time per call (best of the runs)", groups,
                      {"primal": [1e3 * r["primal_best"] for r in rows.values()],
                       "gradient": [1e3 * r["gradient_best"] for r in rows.values()]}, unit=" ms")
    ratios = svg.Panel("gradient / primal", groups,
                       {"best": [r["gradient_best"] / r["primal_best"] for r in rows.values()],
                        "median": [r["gradient"] / r["primal"] for r in rows.values()]},
                       target=RATIO_TARGET, target_label=f"target <= {RATIO_TARGET:g}x")
    return svg.bar_chart([times, ratios], title=f"OpenMP stencil {size}x{size}: enzyme-build gradient",
                         subtitle=f"1-minute load average {load} (2 cores)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1000, help="grid side n (n x n doubles)")
    ap.add_argument("--reps", type=int, default=41, help="rounds (each runs every team size once)")
    ap.add_argument("--threads", default="1,2", help="comma-separated team sizes, measured side by side (first is the baseline)")
    ap.add_argument("--results", type=Path, default=HERE / "results", help="directory for openmp_stencil.svg")
    args = ap.parse_args(argv)
    try:
        counts = [int(t) for t in args.threads.split(",")]
    except ValueError:
        ap.error(f"--threads: expected comma-separated thread counts, got {args.threads!r}")
    if not 1 <= len(counts) <= 8 or min(counts) < 1 or len(set(counts)) != len(counts):
        ap.error("--threads: 1 to 8 distinct positive thread counts, e.g. 1,2")
    if args.size < 8 or args.reps < 1:
        ap.error("--size must be at least 8 and --reps at least 1")
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="omp_bench_") as tmp:
        binary = build(Path(tmp))
        rows = run(binary, args.size, args.reps, counts)
    load = f"{load_before} before, {load_average()} after"
    failed = False
    print(f"OpenMP stencil {args.size}x{args.size}, {args.reps} runs, 1-minute load average {load}")
    print("| threads | primal median (ms) | primal best (ms) | gradient median (ms) | gradient best (ms) "
          "| gradient / primal (median, best) | target |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for t, r in rows.items():
        med, best = r["gradient"] / r["primal"], r["gradient_best"] / r["primal_best"]
        ok = min(med, best) <= RATIO_TARGET
        failed |= not ok
        print(f"| {t} | {1e3 * r['primal']:.2f} | {1e3 * r['primal_best']:.2f} | {1e3 * r['gradient']:.2f} | "
              f"{1e3 * r['gradient_best']:.2f} | {med:.2f}x, {best:.2f}x | <= {RATIO_TARGET:g}x "
              f"{'met' if ok else 'MISSED'} |")
    if counts[0] == 1 and 2 in rows:
        best = rows[1]["gradient_best"] / rows[2]["gradient_best"]
        primal = rows[1]["primal_best"] / rows[2]["primal_best"]
        ok = best >= SPEEDUP_TARGET
        failed |= not ok
        print(f"\ngradient speedup 1 -> 2 threads: {best:.2f}x best to best (primal {primal:.2f}x); "
              f"median over the rounds of the paired ratio {rows[2]['gradient_speedup']:.2f}x "
              f"(primal {rows[2]['primal_speedup']:.2f}x); target >= {SPEEDUP_TARGET:g}x on the best times "
              f"{'met' if ok else 'MISSED'}")
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "openmp_stencil.svg").write_text(plot(rows, args.size, load))
    print(f"plot: {args.results / 'openmp_stencil.svg'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
