#!/usr/bin/env python3
"""An OpenMP stencil through enzyme-build: gradient / primal and the gradient's parallel speedup.

    .venv/bin/python benchmarks/openmp_stencil.py [--size 1000] [--reps 21] [--threads 1,2]

The kernel (C, built with `enzyme-build cc -O2 -fopenmp`): one explicit step of nonlinear
(Perona–Malik) diffusion on an n x n grid, v = u + dt * sum over the 4 neighbours of
exp(-d^2) d with d = u[neighbour] - u, rows split over the team by `parallel for
schedule(static)`; the loss is sum v^2 through a second parallel loop with reduction(+:s).
The gradient w.r.t. u scatters into the neighbours' adjoints, so the threads meet at the
edges of their row blocks (docs/openmp.md: plain adds inside a thread's private range,
atomics at the edges).

The program checks three gradient entries against central differences, then times `--reps`
calls of the primal and of __enzyme_autodiff in one process (wall clock: the point is the
parallel speedup) and reports the median and the best. It runs once per thread count
(OMP_NUM_THREADS). Targets: gradient / primal <= 3x; the gradient on 2 threads >= 1.6x
faster than on 1 (compared on the best times: the machine may be shared; the 1-minute load
average is printed with the table). Writes the table and benchmarks/results/openmp_stencil.svg.
"""
from __future__ import annotations

import argparse
import os
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
  int n = atoi(argv[1]), reps = atoi(argv[2]);
  size_t N = (size_t)n * n;
  double *u = malloc(N * 8), *du = calloc(N, 8), *v = calloc(N, 8), *dv = calloc(N, 8);
  for (size_t k = 0; k < N; k++) u[k] = sin(0.001 * k) + 0.3 * cos(0.07 * k);
  __enzyme_autodiff((void *)step, enzyme_dup, u, du, enzyme_dup, v, dv, enzyme_const, n, enzyme_const, 0.1);
  int bad = 0;
  size_t idx[3] = {(size_t)n + 1, N / 2 + 7, N - n - 2};
  for (int q = 0; q < 3; q++) {
    double h = 1e-6, w = u[idx[q]];
    u[idx[q]] = w + h; double fp = step(u, v, n, 0.1);
    u[idx[q]] = w - h; double fm = step(u, v, n, 0.1); u[idx[q]] = w;
    double fd = (fp - fm) / (2 * h);
    if (fabs(fd - du[idx[q]]) > 1e-4 * (1 + fabs(fd))) bad = 1;
  }
  double *tp = malloc(sizeof(double) * reps), *tg = malloc(sizeof(double) * reps), sink = 0;
  for (int r = 0; r < reps; r++) {
    double t0 = now(); sink += step(u, v, n, 0.1); tp[r] = now() - t0;
    memset(du, 0, N * 8);
    t0 = now();
    __enzyme_autodiff((void *)step, enzyme_dup, u, du, enzyme_dup, v, dv, enzyme_const, n, enzyme_const, 0.1);
    tg[r] = now() - t0;
  }
  qsort(tp, reps, sizeof *tp, cmp); qsort(tg, reps, sizeof *tg, cmp);
  printf("threads %d\ncheck %s\nprimal %.6f\nprimal_best %.6f\ngradient %.6f\ngradient_best %.6f\nsink %g\n",
         omp_get_max_threads(), bad ? "FAIL" : "ok", tp[reps / 2], tp[0], tg[reps / 2], tg[0], sink);
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


def run(binary: Path, size: int, reps: int, threads: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    proc = subprocess.run([str(binary), str(size), str(reps)], capture_output=True, text=True, env=env)
    values = dict(re.findall(r"^(\w+) (\S+)$", proc.stdout, re.M))
    if proc.returncode != 0 or values.get("check") != "ok":
        raise SystemExit(f"{threads} thread(s): gradient check failed:\n{proc.stdout}{proc.stderr}")
    return {k: float(values[k]) for k in ("primal", "primal_best", "gradient", "gradient_best")}


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
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--threads", default="1,2", help="comma-separated OMP_NUM_THREADS values")
    ap.add_argument("--results", type=Path, default=HERE / "results", help="directory for openmp_stencil.svg")
    args = ap.parse_args(argv)
    counts = [int(t) for t in args.threads.split(",")]
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="omp_bench_") as tmp:
        binary = build(Path(tmp))
        rows = {t: run(binary, args.size, args.reps, t) for t in counts}
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
    if 1 in rows and 2 in rows:
        speed = rows[1]["gradient_best"] / rows[2]["gradient_best"]
        speed_med = rows[1]["gradient"] / rows[2]["gradient"]
        primal = rows[1]["primal_best"] / rows[2]["primal_best"]
        ok = speed >= SPEEDUP_TARGET
        failed |= not ok
        print(f"\ngradient speedup 1 -> 2 threads: {speed:.2f}x best, {speed_med:.2f}x median "
              f"(primal: {primal:.2f}x); target >= {SPEEDUP_TARGET:g}x {'met' if ok else 'MISSED'}")
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "openmp_stencil.svg").write_text(plot(rows, args.size, load))
    print(f"plot: {args.results / 'openmp_stencil.svg'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
