#!/usr/bin/env python3
"""Times one framework's peer gradients and prints one JSON line (run by benchmarks/run.py --peers).

    .venv/bin/python benchmarks/peers/run_peers.py --framework jax|torch [--quick] [--problems gmm,norm_1e4]
                                                   [--min-time S] [--repeats N] [--gradients]

One thread, float64: the thread settings are environment variables the frameworks read when
they load, so they are set here before the import. A framework that is not installed gives
{"ok": false, "error": "... not importable ..."}, which run.py prints as a skipped line.
--gradients also returns the gradient arrays flattened in the C layout (for the harness tests).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

SINGLE_THREAD_ENV = {
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    "JAX_PLATFORMS": "cpu", "JAX_ENABLE_X64": "1",
}
MODULES = {"jax": "jax_peers", "torch": "torch_peers"}


def time_call(fn, block, min_time: float, repeats: int) -> tuple[float, float]:
    """Median and best seconds per call: calibrated batches, as bench.h's bench_measure."""
    block(fn())  # compile (jit) and warm up
    per_batch, iters = min_time / repeats, 1
    while True:
        start = time.perf_counter()
        for _ in range(iters):
            block(fn())
        elapsed = time.perf_counter() - start
        if elapsed >= per_batch or iters >= 1 << 30:
            break
        iters = max(iters + 1, min(iters * 100, int(iters * 1.2 * per_batch / max(elapsed, 1e-9)) + 1))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iters):
            block(fn())
        samples.append((time.perf_counter() - start) / iters)
    return statistics.median(samples), min(samples)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=sorted(MODULES), required=True)
    parser.add_argument("--problems", default="", help="comma-separated problem keys (default: all)")
    parser.add_argument("--quick", action="store_true", help="the C harnesses' --quick sizes")
    parser.add_argument("--min-time", type=float, default=0.25)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--gradients", action="store_true", help="include the gradients (C layout) in the JSON")
    parser.add_argument("--no-timing", action="store_true", help="compute the gradients only")
    args = parser.parse_args(argv)
    for key, value in SINGLE_THREAD_ENV.items():
        os.environ[key] = value
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import numpy as np
    import problems
    try:
        module = __import__(MODULES[args.framework])
    except ImportError as err:
        print(json.dumps({"ok": False, "framework": args.framework,
                          "error": f"{args.framework} not importable ({err})"}))
        return 0
    selected = [problems.BY_KEY[k] for k in args.problems.split(",") if k] or list(problems.PROBLEMS)
    results = []
    for problem in selected:
        sizes = problem.sizes(args.quick)
        data = module.to_device(problems.data(problem, args.quick))
        gradient = module.gradient_fn(problem, sizes)
        entry = {"problem": problem.key, "kernel": problem.kernel, "size": problem.size_text(args.quick)}
        try:
            if not args.no_timing:
                entry["grad_s"], entry["grad_best_s"] = time_call(lambda: gradient(data), module.block,
                                                                  args.min_time, args.repeats)
            if args.gradients:
                arrays = [np.asarray(a.detach() if hasattr(a, "detach") else a).ravel() for a in gradient(data)]
                entry["gradients"] = {name: a.tolist() for name, a in zip(problems.C_GRADIENTS[problem.kernel], arrays)}
        except Exception as err:  # a failing peer is reported in the table, not fatal
            entry["error"] = f"{type(err).__name__}: {err}".splitlines()[0]
        results.append(entry)
    print(json.dumps({"ok": True, "framework": args.framework, "name": module.NAME, "version": module.VERSION,
                      "threads": 1, "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
