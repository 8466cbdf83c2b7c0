#!/usr/bin/env python3
"""How the AD stage scales with program size: generated programs of ~1k to ~100k IR
instructions, AD synthesis seconds per 10k instructions (the target: flat, ≤ 0.5 s).

    .venv/bin/python benchmarks/ad_scaling.py [--sizes 1000,10000,50000,100000]
                                              [--shapes single,callees] [--markdown docs/benchmarks.md]

Two shapes per size: `single` is one function of that many instructions (straight-line
math, branches and counted loops, the kind the cache planner keeps on static tape records)
and `callees` spreads the same code over many small functions called in turn (derived
callees, split pieces, the memo). Each program goes through the AD stage's front half
(marker canonicalization, pre-AD O2) once; only derivative synthesis
(`differentiate_module` on the kept `ad-input.ll`, as `benchmarks/run.py` times it) is
timed, best of `--repeats` runs (one for the largest sizes).
"""
from __future__ import annotations

import argparse
import datetime
import gc
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import svg  # noqa: E402  (the sibling helper module)

DEFAULT_SIZES = (1_000, 10_000, 50_000, 100_000)
SHAPES = ("single", "callees")
TARGET_S_PER_10K = 0.5      # AD seconds per 10k instructions, every size
TARGET_SPREAD = 1.5         # largest size's s/10k within this factor of the smallest's
CLANG_CANDIDATES = ("clang-22", "/usr/lib/llvm-22/bin/clang")
SEGMENTS_PER_CALLEE = 4     # segments of code per function in the `callees` shape


def _run_py():
    """benchmarks/run.py as a module (its instruction counting and markdown region writer)."""
    spec = importlib.util.spec_from_file_location("benchmarks_run", HERE / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


RUN = _run_py()


# ---------------------------------------------------------------- program generator

def segment(k: int) -> str:
    """The k-th piece of code: reads `x`, accumulates into `s`, writes `y` (C statements)."""
    c = 1.0 + (k % 7) / 8
    kind = k % 4
    if kind == 0:    # a counted loop: one static tape record for all its iterations
        return (f"  for (int i = 0; i < n; i++) {{ double t = x[i] * {c} + sin(s); "
                f"s += t * t * {c / 4}; y[i] += exp(-t * t) * s; }}\n")
    if kind == 1:    # straight-line math
        return (f"  s = s * {c / 2} + cos(s * x[{k % 5}]) + sqrt(s * s + {c});\n"
                f"  y[{k % 5}] += s * x[{(k + 2) % 5}];\n")
    if kind == 2:    # a branch
        return (f"  if (s > {c}) s = log(1.0 + s * s) * {c}; else s = s * x[{k % 5}] + {c / 3};\n")
    return (f"  for (int i = 1; i < n; i++) {{ s = s * {c / 8} + x[i] * x[i - 1]; "   # a recurrence
            f"y[i - 1] += s * {c / 5}; }}\n")


def program(shape: str, segments: int) -> str:
    """C source of a program with `segments` pieces of code in the given shape, plus one
    __enzyme_autodiff call of its root function `big`."""
    head = "#include <math.h>\n#include <enzyme/enzyme.h>\n\n"
    if shape == "single":
        body = "".join(segment(k) for k in range(segments))
        root = f"double big(const double *x, double *y, int n) {{\n  double s = x[0];\n{body}  return s;\n}}\n"
        callees = ""
    else:
        funcs = max(1, round(segments / SEGMENTS_PER_CALLEE))
        callees = "".join(
            f"__attribute__((noinline)) double part{f}(const double *x, double *y, int n, double s) {{\n"
            + "".join(segment(f * SEGMENTS_PER_CALLEE + j) for j in range(SEGMENTS_PER_CALLEE))
            + "  return s;\n}\n" for f in range(funcs))
        calls = "".join(f"  s = part{f}(x, y, n, s);\n" for f in range(funcs))
        root = f"double big(const double *x, double *y, int n) {{\n  double s = x[0];\n{calls}  return s;\n}}\n"
    grad = ("void grad_big(const double *x, double *dx, double *y, double *dy, int n) {\n"
            "  __enzyme_autodiff((void *)big, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, n);\n}\n")
    return head + callees + root + grad


def clang_exe() -> str:
    for candidate in (os.environ.get("ENZYME_BUILD_CLANG"),) + CLANG_CANDIDATES:
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    raise SystemExit("clang-22 not found (install clang-22, or set ENZYME_BUILD_CLANG)")


def ad_input(source: str, work: Path) -> str:
    """The module the synthesizer sees: the AD stage's front half on the program's IR."""
    from enzyme_build import llvm
    from enzyme_build.ad.stage import run_ad_stage
    c_file, ll_file, keep = work / "prog.c", work / "prog.ll", work / "keep"
    c_file.write_text(source)
    subprocess.run([clang_exe(), "-O2", "-fno-math-errno", "-Xclang", "-disable-llvm-passes", "-S",
                    "-emit-llvm", "-I", str(ROOT / "enzyme_build" / "include"), str(c_file), "-o", str(ll_file)],
                   check=True, capture_output=True, text=True)
    module = llvm.parse_assembly(ll_file.read_text(), "prog")
    run_ad_stage(module, keep_dir=str(keep))   # also checks the result passes the verifier
    return (keep / "ad-input.ll").read_text()


def differentiated_instructions(text: str) -> int:
    """Instructions of the functions the AD call differentiates (all but the caller)."""
    bodies = RUN.function_bodies(text)
    return sum(RUN.count_instructions(lines) for name, lines in bodies.items() if name != "grad_big")


@dataclass
class Row:
    shape: str
    target: int
    instructions: int
    functions: int
    seconds: float

    @property
    def per_10k(self) -> float:
        return self.seconds / self.instructions * 10_000


def measure(shape: str, target: int, repeats: int, work: Path, per_segment: dict[str, float]) -> Row:
    from enzyme_build.ad.driver import differentiate_module
    from enzyme_build.ad.stage import _collect_registry
    segments = max(SEGMENTS_PER_CALLEE, round(target / per_segment[shape]))
    text = ad_input(program(shape, segments), work)
    count = differentiated_instructions(text)
    times = []
    for _ in range(repeats if target < 50_000 else 1):
        gc.collect()
        start = time.perf_counter()
        differentiate_module(text, _collect_registry(text))
        gc.collect()   # what the stage leaves to the cyclic collector is part of its cost
        times.append(time.perf_counter() - start)
    functions = len(RUN.function_bodies(text)) - 1
    return Row(shape, target, count, functions, min(times))


def calibrate(work: Path) -> dict[str, float]:
    """Instructions per generated segment, per shape (from a small program)."""
    out = {}
    for shape in SHAPES:
        n = 8 * SEGMENTS_PER_CALLEE
        out[shape] = differentiated_instructions(ad_input(program(shape, n), work)) / n
    return out


# ---------------------------------------------------------------- reporting

def verdict(rows: list[Row]) -> list[str]:
    lines = []
    for shape in sorted({r.shape for r in rows}, key=SHAPES.index):
        mine = sorted((r for r in rows if r.shape == shape), key=lambda r: r.instructions)
        worst = max(r.per_10k for r in mine)
        spread = mine[-1].per_10k / mine[0].per_10k
        ok = worst <= TARGET_S_PER_10K and spread <= TARGET_SPREAD
        lines.append(f"{shape}: worst {worst:.2f} s per 10k (target ≤ {TARGET_S_PER_10K}), largest / smallest "
                     f"{spread:.2f}x (target ≤ {TARGET_SPREAD}x): {'met' if ok else 'NOT met'}")
    return lines


def markdown(rows: list[Row], meta: dict) -> str:
    out = [f"Generated by `benchmarks/ad_scaling.py{meta['argv']}` on {meta['date']} — {meta['machine']}; "
           f"1-minute load average {meta['load_average'][0]} before, {meta['load_average'][1]} after.",
           "", "| shape | size | instructions | functions | AD seconds | s per 10k |", "|---|---|---|---|---|---|"]
    out += [f"| {r.shape} | {r.target / 1000:g}k | {r.instructions} | {r.functions} | {r.seconds:.2f} | "
            f"{r.per_10k:.2f} |" for r in rows]
    out += [""] + [f"- {line}" for line in verdict(rows)]
    return "\n".join(out) + "\n"


def plot(rows: list[Row], meta: dict) -> str:
    sizes = sorted({r.target for r in rows})
    groups = [f"{s / 1000:g}k" for s in sizes]
    series = {shape: [next((r.per_10k for r in rows if r.shape == shape and r.target == s), None) for s in sizes]
              for shape in SHAPES if any(r.shape == shape for r in rows)}
    panel = svg.Panel("AD seconds per 10k instructions", groups, series, target=TARGET_S_PER_10K,
                      target_label=f"target ≤ {TARGET_S_PER_10K} s", unit=" s")
    return svg.bar_chart([panel], title="enzyme-build AD stage scaling",
                         subtitle=f"{meta['date']}, {meta['machine']}, load average {meta['load_average'][0]}",
                         panel_width=520)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES),
                        help="comma-separated instruction counts to generate")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated subset of: {', '.join(SHAPES)}")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per program below 50k (best counts)")
    parser.add_argument("--results", type=Path, default=HERE / "results",
                        help="directory for ad_scaling.json and ad_scaling.svg")
    parser.add_argument("--markdown", type=Path, help="write the table as markdown here (into the region "
                        "between <!-- scaling:start --> and <!-- scaling:end --> if present)")
    args = parser.parse_args(argv)
    shapes = [s for s in args.shapes.split(",") if s]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        parser.error(f"unknown shape(s) {', '.join(unknown)}; choose from {', '.join(SHAPES)}")
    args.shapes = shapes
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    return args


MARK_START, MARK_END = "<!-- scaling:start -->", "<!-- scaling:end -->"


def write_markdown(path: Path, table: str) -> None:
    """Replaces the marked region of an existing document, or writes the table alone."""
    import re
    text = path.read_text() if path.exists() else ""
    region = re.compile(f"^{re.escape(MARK_START)}$.*?^{re.escape(MARK_END)}$", re.M | re.S)
    text = region.sub(lambda _: f"{MARK_START}\n{table}{MARK_END}", text, count=1) if region.search(text) else table
    RUN.atomic_write(path, text)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    load_before = os.getloadavg()[0]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="ad-scaling-") as tmp:
        work = Path(tmp)
        per_segment = calibrate(work)
        for shape in args.shapes:
            for size in args.sizes:
                print(f"{shape} {size} ...", file=sys.stderr, flush=True)
                row = measure(shape, size, args.repeats, work, per_segment)
                rows.append(row)
                print(f"  {row.instructions} instructions, {row.seconds:.2f} s, {row.per_10k:.2f} s per 10k",
                      file=sys.stderr, flush=True)
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": RUN.machine_description(), "load_average": [round(load_before, 2),
                                                                   round(os.getloadavg()[0], 2)],
            "argv": "".join(f" {a}" for a in argv)}
    table = markdown(rows, meta)
    print(table)
    RUN.atomic_write(args.results / "ad_scaling.json", json.dumps(
        {"meta": meta, "rows": [dict(vars(r), per_10k=r.per_10k) for r in rows]}, indent=2) + "\n")
    RUN.atomic_write(args.results / "ad_scaling.svg", plot(rows, meta))
    if args.markdown:
        write_markdown(args.markdown, table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
