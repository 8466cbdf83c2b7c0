#!/usr/bin/env python3
"""BLAS-backed kernels through enzyme-build: gradient / primal time ratios.

    .venv/bin/python benchmarks/blas_mlp.py [--size 256] [--reps 20] [--lib openblas]

Kernels (C, built with `enzyme-build cc -O2 ... -lopenblas`, OpenBLAS on one thread):

* mlp  — one dense layer and a squared loss: Y = tanh(W X + b 1^T) via cblas_dgemm (beta=1
  after copying b into every column), loss = sum Y^2; gradient w.r.t. W, X and b.
* lsq  — least squares through gemv: r = A x - b, loss = r.r (cblas_dgemv + cblas_ddot);
  gradient w.r.t. x, with A passed enzyme_const (its adjoint gemv is not computed).

Each program checks three gradient entries against central differences, then reports the
median of `--reps` timed calls (process CPU time: the ratio stays meaningful on a busy
machine) of the primal and of __enzyme_autodiff. Target: mlp <= 3x.
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
ENZYME_BUILD = Path(sys.executable).with_name("enzyme-build")

COMMON = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cblas.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
static double now(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(double *v, int n) { qsort(v, n, sizeof *v, cmp); return v[n / 2]; }
"""

MLP = COMMON + r"""
double layer(const double *W, const double *X, const double *b, double *Y, int m, int n, int k) {
  for (int j = 0; j < n; j++) cblas_dcopy(m, b, 1, Y + (size_t)j * m, 1);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, W, m, X, k, 1.0, Y, m);
  double s = 0;
  for (size_t i = 0; i < (size_t)m * n; i++) { double t = tanh(Y[i]); s += t * t; }
  return s;
}
int main(int argc, char **argv) {
  int N = atoi(argv[1]), reps = atoi(argv[2]), m = N, n = N, k = N;
  double *W = malloc(sizeof(double) * m * k), *X = malloc(sizeof(double) * k * n), *b = malloc(sizeof(double) * m);
  double *Y = malloc(sizeof(double) * m * n), *dW = calloc(m * k, sizeof(double)), *dX = calloc(k * n, sizeof(double));
  double *db = calloc(m, sizeof(double)), *dY = calloc((size_t)m * n, sizeof(double));
  for (int i = 0; i < m * k; i++) W[i] = 0.05 * sin(i + 1.0);
  for (int i = 0; i < k * n; i++) X[i] = 0.5 * cos(0.7 * i);
  for (int i = 0; i < m; i++) b[i] = 0.01 * i - 0.1;
  __enzyme_autodiff((void *)layer, enzyme_dup, W, dW, enzyme_dup, X, dX, enzyme_dup, b, db, enzyme_dup, Y, dY, m, n, k);
  int idx[3] = {0, m * k / 2 + 3, m * k - 1}, bad = 0;
  for (int q = 0; q < 3; q++) {
    double h = 1e-5, w = W[idx[q]];
    W[idx[q]] = w + h; double fp = layer(W, X, b, Y, m, n, k);
    W[idx[q]] = w - h; double fm = layer(W, X, b, Y, m, n, k); W[idx[q]] = w;
    double fd = (fp - fm) / (2 * h);
    if (fabs(fd - dW[idx[q]]) > 1e-4 * (1 + fabs(fd))) bad = 1;
  }
  double *tp = malloc(sizeof(double) * reps), *tg = malloc(sizeof(double) * reps), sink = 0;
  for (int r = 0; r < reps; r++) {
    double t0 = now(); sink += layer(W, X, b, Y, m, n, k); tp[r] = now() - t0;
    memset(dW, 0, sizeof(double) * m * k); memset(dX, 0, sizeof(double) * k * n); memset(db, 0, sizeof(double) * m);
    t0 = now();
    __enzyme_autodiff((void *)layer, enzyme_dup, W, dW, enzyme_dup, X, dX, enzyme_dup, b, db, enzyme_dup, Y, dY, m, n, k);
    tg[r] = now() - t0;
  }
  printf("check %s\nprimal %.6f\ngradient %.6f\nsink %g\n", bad ? "FAIL" : "ok", median(tp, reps), median(tg, reps), sink);
  return bad;
}
"""

LSQ = COMMON + r"""
double lsq(const double *A, const double *x, const double *b, double *r, int m, int n) {
  cblas_dcopy(m, b, 1, r, 1);
  cblas_dgemv(CblasRowMajor, CblasNoTrans, m, n, 1.0, A, n, x, 1, -1.0, r, 1);
  return cblas_ddot(m, r, 1, r, 1);
}
int main(int argc, char **argv) {
  int N = atoi(argv[1]), reps = atoi(argv[2]), m = 4 * N, n = N;
  double *A = malloc(sizeof(double) * m * n), *x = malloc(sizeof(double) * n);
  double *dx = calloc(n, sizeof(double)), *b = malloc(sizeof(double) * m), *db = calloc(m, sizeof(double));
  double *r = malloc(sizeof(double) * m), *dr = calloc(m, sizeof(double));
  for (int i = 0; i < m * n; i++) A[i] = 0.05 * sin(i + 1.0);
  for (int i = 0; i < n; i++) x[i] = cos(0.3 * i);
  for (int i = 0; i < m; i++) b[i] = sin(0.1 * i);
  __enzyme_autodiff((void *)lsq, enzyme_const, A, enzyme_dup, x, dx, enzyme_dup, b, db, enzyme_dup, r, dr, m, n);
  int bad = 0;
  for (int q = 0; q < 3; q++) {
    int i = q * (n - 1) / 2; double h = 1e-5, v = x[i];
    x[i] = v + h; double fp = lsq(A, x, b, r, m, n); x[i] = v - h; double fm = lsq(A, x, b, r, m, n); x[i] = v;
    double fd = (fp - fm) / (2 * h);
    if (fabs(fd - dx[i]) > 1e-4 * (1 + fabs(fd))) bad = 1;
  }
  double *tp = malloc(sizeof(double) * reps), *tg = malloc(sizeof(double) * reps), sink = 0;
  for (int q = 0; q < reps; q++) {
    double t0 = now(); sink += lsq(A, x, b, r, m, n); tp[q] = now() - t0;
    memset(dx, 0, sizeof(double) * n);
    t0 = now();
    __enzyme_autodiff((void *)lsq, enzyme_const, A, enzyme_dup, x, dx, enzyme_dup, b, db, enzyme_dup, r, dr, m, n);
    tg[q] = now() - t0;
  }
  printf("check %s\nprimal %.6f\ngradient %.6f\nsink %g\n", bad ? "FAIL" : "ok", median(tp, reps), median(tg, reps), sink);
  return bad;
}
"""

KERNELS = {"mlp": ("MLP layer, tanh(W X + b), gemm", MLP, 3.0),
           "lsq": ("least squares |A x - b|^2, gemv + dot", LSQ, None)}


def build_and_run(name: str, source: str, size: int, reps: int, lib: str, work: Path) -> dict:
    (work / f"{name}.c").write_text(source)
    proc = subprocess.run([str(ENZYME_BUILD), "cc", "-O2", f"{name}.c", "-o", name, f"-l{lib}", "-lm"],
                          cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"building {name} failed:\n{proc.stderr}")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    run = subprocess.run([str(work / name), str(size), str(reps)], cwd=work, capture_output=True, text=True, env=env)
    values = dict(re.findall(r"^(\w+) (\S+)$", run.stdout, re.M))
    if run.returncode != 0 or values.get("check") != "ok":
        raise SystemExit(f"{name}: gradient check failed:\n{run.stdout}{run.stderr}")
    return {"primal": float(values["primal"]), "gradient": float(values["gradient"])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256, help="N: mlp is N x N x N, lsq is 4N x N")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--lib", default="openblas", help="BLAS library to link (-l<lib>)")
    args = ap.parse_args(argv)
    failed = False
    print(f"| kernel | size | primal (ms) | gradient (ms) | gradient / primal | target |")
    print(f"| --- | --- | ---: | ---: | ---: | --- |")
    with tempfile.TemporaryDirectory(prefix="blas_bench_") as tmp:
        for name, (title, source, target) in KERNELS.items():
            r = build_and_run(name, source, args.size, args.reps, args.lib, Path(tmp))
            ratio = r["gradient"] / r["primal"]
            verdict = "-" if target is None else (f"<= {target:g}x " + ("met" if ratio <= target else "MISSED"))
            failed |= target is not None and ratio > target
            print(f"| {title} | {args.size} | {1e3 * r['primal']:.3f} | {1e3 * r['gradient']:.3f} | "
                  f"{ratio:.2f}x | {verdict} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
