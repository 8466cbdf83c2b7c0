"""Overhead of the generated bindings: one wrapped call (NumPy, PyTorch, JAX under jit) against
the same entry point called directly from C, on a small input where the overhead dominates.

    .venv/bin/python benchmarks/package_overhead.py [--n 16] [--repeat 5] [--quick]

Prints a table (µs per call; overhead = wrapped - C) with the targets of docs/packaging.md:
≤ 5 µs for NumPy, ≤ 20 µs for PyTorch and JAX under jit; writes
benchmarks/results/package_overhead.svg.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from svg import Panel, bar_chart  # noqa: E402
ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")

SOURCE = """\
#include <math.h>
double energy(const double *x, int n, double k) {
  double e = 0.0;
  for (int i = 0; i + 1 < n; i++) { double d = x[i + 1] - x[i] - 1.0; e += 0.5 * k * d * d; }
  for (int i = 0; i < n; i++) e += cos(x[i]);
  return e;
}
"""

DRIVER = """\
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "bench.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv) {
  int n = atoi(argv[1]), calls = atoi(argv[2]);
  double *x = malloc(n * sizeof *x), *dx = malloc(n * sizeof *dx), k = 1.5, dk, e, de, sink = 0;
  for (int i = 0; i < n; i++) x[i] = 0.1 * i;
  double best_primal = 1e9, best_reverse = 1e9;
  for (int round = 0; round < 5; round++) {
    double start = now();
    for (int c = 0; c < calls; c++) { bench_energy_primal(x, n, &k, &e); sink += e; }
    double primal = (now() - start) / calls;
    start = now();
    for (int c = 0; c < calls; c++) {
      for (int i = 0; i < n; i++) dx[i] = 0;
      dk = 0; de = 1.0;
      bench_energy_reverse(x, dx, n, &k, &dk, &e, &de); sink += dx[0];
    }
    double reverse = (now() - start) / calls;
    if (primal < best_primal) best_primal = primal;
    if (reverse < best_reverse) best_reverse = reverse;
  }
  printf("%.6f %.6f %g\\n", best_primal * 1e6, best_reverse * 1e6, sink > 0 ? 0.0 : 1.0);
  return 0;
}
"""

MEASURE = """\
import sys, timeit, json
import numpy as np
n, repeat, scale = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
import bench
def best(statement, number):
    number = max(1, int(number * scale))
    return min(timeit.repeat(statement, number=number, repeat=repeat)) / number * 1e6
x = np.linspace(0, 1, n)
results = {}
results["numpy primal"] = best(lambda: bench.energy(x, 1.5), 20000)
results["numpy vjp"] = best(lambda: bench.energy.vjp(x, 1.5, cotangents=[1.0]), 20000)
import torch
xt = torch.from_numpy(x.copy()).requires_grad_()
kt = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
with torch.no_grad():
    results["torch forward (no grad)"] = best(lambda: bench.torch.energy(xt, kt), 20000)
results["torch forward (graph)"] = best(lambda: bench.torch.energy(xt, kt), 20000)
def forward_backward():
    bench.torch.energy(xt, kt).backward()
results["torch forward+backward"] = best(forward_backward, 5000)
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
xj = jnp.asarray(x)
f = jax.jit(bench.jax.energy)
g = jax.jit(jax.grad(bench.jax.energy))
f(xj, 1.5).block_until_ready(); g(xj, 1.5).block_until_ready()
results["jax jit forward"] = best(lambda: f(xj, 1.5).block_until_ready(), 5000)
results["jax jit grad"] = best(lambda: g(xj, 1.5).block_until_ready(), 5000)

# what the frameworks cost by themselves, for scale: an autograd.Function doing nothing, a
# jitted function returning its input's first element
class Empty(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        return torch.empty((), dtype=torch.float64)
    @staticmethod
    def backward(ctx, grad):
        return torch.zeros_like(xt), torch.zeros_like(kt)
results["floor: torch Function forward"] = best(lambda: Empty.apply(xt, kt), 20000)
results["floor: torch forward+backward"] = best(lambda: Empty.apply(xt, kt).backward(), 5000)
h = jax.jit(lambda x, k: x[0] * k)
h(xj, 1.5).block_until_ready()
results["floor: jax jit call"] = best(lambda: h(xj, 1.5).block_until_ready(), 5000)
print(json.dumps(results))
"""

# row → (which C time it is compared with, target overhead in µs; None: no target, e.g. the
# forward+backward pair, where PyTorch's own autograd machinery already costs ~20 µs)
ROWS = {
    "numpy primal": ("primal", 5.0),
    "numpy vjp": ("reverse", 5.0),
    "torch forward (no grad)": ("primal", 20.0),
    "torch forward (graph)": ("primal", 20.0),
    "torch forward+backward": ("primal+reverse", None),  # two calls; PyTorch alone ~20 µs
    "jax jit forward": ("primal", 20.0),
    "jax jit grad": ("reverse", 20.0),
}


def run(argv, **kwargs):
    proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, **kwargs)
    if proc.returncode != 0:
        sys.exit(f"package_overhead: {' '.join(argv[:3])}… failed:\n{proc.stderr}")
    return proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16, help="array length (default 16)")
    parser.add_argument("--repeat", type=int, default=5, help="timing rounds; the best is kept")
    parser.add_argument("--quick", action="store_true", help="a few calls per round (a smoke run)")
    parser.add_argument("--results", default=RESULTS, help="where the plot goes")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="package-overhead-")
    try:
        with open(os.path.join(work, "bench.c"), "w") as handle:
            handle.write(SOURCE)
        run([ENZYME_BUILD, "package", "bench.c", "-O2", "--name", "bench", "-o", "pkg",
             "--export", "energy(x[n], n, k)"], cwd=work)
        package = os.path.join(work, "pkg", "bench")
        with open(os.path.join(work, "driver.c"), "w") as handle:
            handle.write(DRIVER)
        run(["clang-22", "-O2", "driver.c", "-I", package, "-L", package, "-lbench",
             f"-Wl,-rpath,{package}", "-o", "driver"], cwd=work)
        calls = "2000" if args.quick else "200000"
        primal, reverse, _ = map(float, run([os.path.join(work, "driver"), str(args.n), calls]).split())
        c_times = {"primal": primal, "reverse": reverse, "primal+reverse": primal + reverse}
        import json
        scale = "0.01" if args.quick else "1"
        wrapped = json.loads(run([sys.executable, "-c", MEASURE, str(args.n), str(args.repeat), scale],
                                 cwd=os.path.join(work, "pkg"),
                                 env=dict(os.environ, JAX_PLATFORMS="cpu")))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"one call of energy(x[{args.n}], n, k), µs (best of {args.repeat} rounds)\n")
    header = f"{'binding':<26} {'wrapped':>9} {'C direct':>9} {'C call':<15} {'overhead':>9} {'target':>7}  ok"
    print(header)
    print("-" * len(header))
    for row, (c_name, target) in ROWS.items():
        overhead = wrapped[row] - c_times[c_name]
        mark = "-" if target is None else "yes" if overhead <= target else "NO"
        target_text = "-" if target is None else f"{target:.1f}"
        print(f"{row:<26} {wrapped[row]:9.2f} {c_times[c_name]:9.3f} {c_name:<15} {overhead:9.2f} "
              f"{target_text:>7}  {mark}")
    print("\nthe frameworks alone (no C call), for scale:")
    for row, value in wrapped.items():
        if row.startswith("floor: "):
            print(f"  {row[7:]:<30} {value:9.2f}")
    os.makedirs(args.results, exist_ok=True)
    plot = os.path.join(args.results, "package_overhead.svg")
    groups = list(ROWS)
    panel = Panel(title=f"one call, x[{args.n}] (µs, log scale)", groups=groups, unit=" µs",
                  series={"wrapped": [wrapped[g] for g in groups],
                          "C direct": [c_times[ROWS[g][0]] for g in groups]},
                  target=20.0, target_label="20 µs (torch/jax target)")
    with open(plot, "w") as handle:
        handle.write(bar_chart([panel], title="Overhead of the generated bindings",
                               subtitle="benchmarks/package_overhead.py", panel_width=760))
    print(f"\nplot: {os.path.relpath(plot)}")


if __name__ == "__main__":
    main()
