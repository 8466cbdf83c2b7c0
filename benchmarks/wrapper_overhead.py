"""Compile-time overhead of `enzyme-build cc -c` (a fat object) against plain `clang -c`.

Usage: python benchmarks/wrapper_overhead.py [--repeats N] [--sources DIR | --generated]
                                             [--cflags "..."] [--limit N]

Compiles the same C files both ways, one process at a time, interleaving the compilers
so that machine noise hits all alike; prints per-file medians, the total and the ratio
(goal: <= 1.3x), and writes benchmarks/results/wrapper_overhead.{svg,json}. A third
column, clang with -fembed-bitcode=all alone, splits the overhead into the cost of
carrying bitcode and the cost of the wrapper process itself.
Sources: Lua 5.4's src/*.c when ./bootstrap test has fetched them, else generated files.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA_SRC = os.path.join(ROOT, ".cache", "lua5.4", "lua", "src")
RESULTS = os.path.join(ROOT, "benchmarks", "results")
GOAL_RATIO = 1.3
LLVM_MAJOR = 22


def find_clang() -> str:
    for candidate in (f"clang-{LLVM_MAJOR}", f"/usr/lib/llvm-{LLVM_MAJOR}/bin/clang"):
        found = shutil.which(candidate)
        if found:
            return found
    sys.exit(f"wrapper_overhead: clang-{LLVM_MAJOR} not found (run ./bootstrap setup)")


def find_wrapper() -> str:
    for candidate in (os.path.join(ROOT, ".venv", "bin", "enzyme-build"),
                      os.path.join(os.path.dirname(sys.executable), "enzyme-build")):
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("enzyme-build")
    if found:
        return found
    sys.exit("wrapper_overhead: enzyme-build not found (run ./bootstrap setup)")


def generated_sources(directory: str, count: int = 16) -> list[str]:
    """Deterministic C files of varied size, for machines without the Lua sources."""
    paths = []
    for k in range(count):
        functions = []
        for j in range(4 + 3 * (k % 5)):
            functions.append(
                f"double f{k}_{j}(const double *x, int n) {{\n"
                f"  double s = {j}.0;\n"
                f"  for (int i = 0; i < n; i++) s += x[i] * x[i] * {j + 1} + sin(x[i] * {k + 1});\n"
                f"  for (int i = 1; i < n; i++) s -= x[i - 1] / (1.0 + x[i] * x[i]);\n"
                f"  return s;\n}}\n")
        path = os.path.join(directory, f"gen{k:02d}.c")
        with open(path, "w") as handle:
            handle.write("#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n\n")
            handle.write("\n".join(functions))
        paths.append(path)
    return paths


def compile_once(command: list[str], env: dict[str, str]) -> float:
    """Wall time in milliseconds of one compile; a failed compile aborts the benchmark."""
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    elapsed = (time.perf_counter() - start) * 1000.0
    if proc.returncode != 0:
        sys.exit(f"wrapper_overhead: compile failed ({proc.returncode}): "
                 f"{shlex.join(command)}\n{proc.stdout[-3000:]}")
    return elapsed


def measure(sources, compilers, cflags, repeats, workdir):
    """{compiler name: {source: [ms, …]}}, reversing the compilers' order every repeat."""
    env = dict(os.environ)
    env.pop("ENZYME_BUILD_VERBOSE", None)
    times = {name: {src: [] for src in sources} for name in compilers}
    names = list(compilers)
    for rep in range(repeats):
        order = names if rep % 2 == 0 else names[::-1]
        for src in sources:
            for name in order:
                obj = os.path.join(workdir, f"{name.replace(' ', '_')}-{os.path.basename(src)}.o")
                command = compilers[name] + cflags + ["-c", src, "-o", obj]
                times[name][src].append(compile_once(command, env))
        print(f"  repeat {rep + 1}/{repeats} done", file=sys.stderr)
    return times


BASE, BITCODE, WRAPPER = "clang", "clang+bitcode", "enzyme-build cc"


def summarize(times, sources):
    """Rows of (file, clang ms, clang+bitcode ms, wrapper ms, ratio) from medians, and a total."""
    rows = []
    for src in sources:
        base, bitcode, wrapped = (statistics.median(times[name][src]) for name in (BASE, BITCODE, WRAPPER))
        rows.append((os.path.basename(src), base, bitcode, wrapped, wrapped / base))
    totals = [sum(r[k] for r in rows) for k in (1, 2, 3)]
    return rows, ("TOTAL", *totals, totals[2] / totals[0])


def print_table(rows, total) -> None:
    width = max(len(r[0]) for r in rows + [total])
    header = f"{'file':<{width}}  {'clang ms':>9}  {'+bitcode ms':>11}  {'enzyme-build ms':>15}  {'ratio':>6}"
    rule = "-" * len(header)
    print(header)
    print(rule)
    for row in rows:
        print(_table_row(row, width))
    print(rule)
    print(_table_row(total, width))
    _name, base, bitcode, wrapped, ratio = total
    verdict = "meets" if ratio <= GOAL_RATIO else "misses"
    files = len(rows)
    print(f"\noverhead {ratio:.2f}x total ({(wrapped - base) / files:.1f} ms per file: "
          f"{(bitcode - base) / files:.1f} ms embedding bitcode, "
          f"{(wrapped - bitcode) / files:.1f} ms the wrapper process); "
          f"{verdict} the {GOAL_RATIO}x goal")


def _table_row(row, width: int) -> str:
    name, base, bitcode, wrapped, ratio = row
    return f"{name:<{width}}  {base:9.1f}  {bitcode:11.1f}  {wrapped:15.1f}  {ratio:5.2f}x"


def svg_chart(rows, total, title: str) -> str:
    """Horizontal grouped bars (ms per compiler) per file, the wrapper's ratio on the right."""
    bar, gap, left, right, top = 7, 8, 110, 90, 64
    plot_width = 460
    colors = {BASE: "#4e79a7", BITCODE: "#76b7b2", WRAPPER: "#f28e2b"}
    height = top + len(rows) * (len(colors) * bar + gap) + 40
    width = left + plot_width + right
    longest = max(max(r[1:4]) for r in rows) or 1.0
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14" '
           f'font-weight="bold">{escape(title)}</text>',
           f'<text x="{width / 2}" y="38" text-anchor="middle">total: clang {total[1]:.0f} ms, '
           f'enzyme-build cc {total[3]:.0f} ms, {total[4]:.2f}x (goal &lt;= {GOAL_RATIO}x)</text>']
    for k, (label, color) in enumerate(colors.items()):
        out.append(f'<rect x="{left + 150 * k}" y="46" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{left + 150 * k + 14}" y="55">{escape(label)} (ms)</text>')
    y = top
    for name, base, bitcode, wrapped, ratio in rows:
        out.append(f'<text x="{left - 6}" y="{y + 2 * bar}" text-anchor="end">{escape(name)}</text>')
        for value, color in zip((base, bitcode, wrapped), colors.values()):
            length = plot_width * value / longest
            out.append(f'<rect x="{left}" y="{y}" width="{length:.1f}" height="{bar}" fill="{color}">'
                       f'<title>{value:.1f} ms</title></rect>')
            y += bar
        shade = "#b00" if ratio > GOAL_RATIO else "#070"
        out.append(f'<text x="{left + plot_width + 8}" y="{y - bar + 2}" fill="{shade}">'
                   f'{ratio:.2f}x</text>')
        y += gap
    out.append(f'<line x1="{left}" y1="{top - 2}" x2="{left}" y2="{y}" stroke="#333"/>')
    out.append(f'<text x="{left + plot_width}" y="{y + 16}" text-anchor="end">'
               f'median of the repeats; longest bar {longest:.0f} ms</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_atomically(path: str, text: str) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w") as handle:
        handle.write(text)
    os.replace(tmp, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sources", help="directory of .c files (default: Lua 5.4 src/)")
    parser.add_argument("--generated", action="store_true",
                        help="use generated sources even when Lua's are present")
    parser.add_argument("--cflags", default="-O2", help="flags for both compilers (default -O2)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N files")
    args = parser.parse_args(argv)

    clang, wrapper = find_clang(), find_wrapper()
    cflags = shlex.split(args.cflags)
    with tempfile.TemporaryDirectory(prefix="wrapper-overhead-") as workdir:
        source_dir = args.sources or (LUA_SRC if os.path.isdir(LUA_SRC) and not args.generated else None)
        if source_dir and not os.path.isdir(source_dir):
            sys.exit(f"wrapper_overhead: {source_dir} is not a directory")
        if source_dir:
            sources = sorted(os.path.join(source_dir, f) for f in os.listdir(source_dir)
                             if f.endswith(".c"))
            label = "Lua 5.4 src" if source_dir == LUA_SRC else source_dir
            if source_dir == LUA_SRC:
                cflags += ["-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX"]
        else:
            sources = generated_sources(workdir)
            label = "generated sources"
        if args.limit:
            sources = sources[:args.limit]
        if not sources:
            sys.exit(f"wrapper_overhead: no .c files in {source_dir}")
        compilers = {BASE: [clang], BITCODE: [clang, "-Xclang", "-fembed-bitcode=all"],
                     WRAPPER: [wrapper, "cc"]}
        print(f"{len(sources)} files ({label}), {args.repeats} repeats, flags {shlex.join(cflags)}",
              file=sys.stderr)
        times = measure(sources, compilers, cflags, args.repeats, workdir)

    rows, total = summarize(times, sources)
    print_table(rows, total)
    os.makedirs(RESULTS, exist_ok=True)
    svg_path = os.path.join(RESULTS, "wrapper_overhead.svg")
    write_atomically(svg_path, svg_chart(rows, total, f"enzyme-build cc vs clang-{LLVM_MAJOR}: {label}"))
    write_atomically(os.path.join(RESULTS, "wrapper_overhead.json"), json.dumps({
        "sources": label, "repeats": args.repeats, "cflags": cflags, "goal_ratio": GOAL_RATIO,
        "files": [{"file": r[0], "clang_ms": r[1], "clang_bitcode_ms": r[2],
                   "enzyme_build_ms": r[3], "ratio": r[4]} for r in rows],
        "total": {"clang_ms": total[1], "clang_bitcode_ms": total[2],
                  "enzyme_build_ms": total[3], "ratio": total[4]},
    }, indent=2) + "\n")
    print(f"wrote {os.path.relpath(svg_path, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
