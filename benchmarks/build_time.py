#!/usr/bin/env python3
"""Build-time benchmark: `enzyme-build build -j2` vs `make -j2 CC="enzyme-build cc"` vs plain clang.

    .venv/bin/python benchmarks/build_time.py [--sources auto|lua|generated] [--jobs 2] [--repeat 3]

Times a clean build and a no-op rebuild of the same sources with each configuration,
prints a table and writes benchmarks/results/build_time.svg. Sources: the Lua 5.4
interpreter (.cache/lua5.4, fetched by ./bootstrap) when present, else 30 generated files.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LUA_SRC = ROOT / ".cache" / "lua5.4" / "lua" / "src"
RESULTS = HERE / "results"
BIN_DIR = Path(sys.executable).parent
CFLAGS = ["-O2"]


@dataclass(frozen=True)
class SourceSet:
    """The files to build and how: copied into each configuration's own tree."""

    name: str
    files: dict[str, bytes]  # every file of the tree (sources and headers)
    sources: tuple[str, ...]  # the .c files compiled into the program
    defines: tuple[str, ...]
    libs: tuple[str, ...]


@dataclass(frozen=True)
class Timing:
    config: str
    clean_s: float
    noop_s: float


def lua_sources() -> SourceSet | None:
    """The Lua interpreter (every .c but the standalone compiler luac.c)."""
    if not (LUA_SRC / "lua.c").is_file():
        return None
    files = {p.name: p.read_bytes() for p in LUA_SRC.iterdir() if p.suffix in (".c", ".h")}
    sources = tuple(sorted(n for n in files if n.endswith(".c") and n != "luac.c"))
    return SourceSet("lua 5.4 interpreter", files, sources, ("LUA_USE_LINUX",), ("m", "dl"))


def generated_sources(count: int = 30) -> SourceSet:
    """`count` small numeric files plus a main that calls each."""
    files: dict[str, bytes] = {}
    for i in range(count):
        files[f"unit{i:02d}.c"] = (
            f"#include <math.h>\n"
            f"double unit{i:02d}(const double *x, int n) {{\n"
            f"  double s = 0.0;\n"
            f"  for (int k = 0; k < n; k++) s += sin(x[k] * {i + 1}.0) * exp(-x[k] / {i + 2}.0);\n"
            f"  return s + sqrt(fabs(s) + {i}.0);\n"
            f"}}\n").encode()
    decls = "".join(f"double unit{i:02d}(const double *, int);\n" for i in range(count))
    calls = "".join(f"  s += unit{i:02d}(x, 64);\n" for i in range(count))
    files["main.c"] = (
        "#include <stdio.h>\n" + decls +
        "int main(void) {\n  double x[64], s = 0.0;\n"
        "  for (int k = 0; k < 64; k++) x[k] = k / 64.0;\n" + calls +
        '  printf("%g\\n", s);\n  return 0;\n}\n').encode()
    sources = tuple(sorted(files))
    return SourceSet(f"{count + 1} generated C files", files, sources, (), ("m",))


def makefile(sources: SourceSet) -> str:
    """A conventional Makefile: one object per source, one link."""
    objects = " ".join(s[:-2] + ".o" for s in sources.sources)
    defines = " ".join(f"-D{d}" for d in sources.defines)
    libs = " ".join(f"-l{lib}" for lib in sources.libs)
    return (f"CFLAGS = {' '.join(CFLAGS)} {defines}\n"
            f"OBJS = {objects}\n"
            f"prog: $(OBJS)\n\t$(CC) $(CFLAGS) -o $@ $(OBJS) {libs}\n"
            f"%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n")


def write_tree(directory: Path, sources: SourceSet) -> None:
    directory.mkdir(parents=True)
    for name, data in sources.files.items():
        (directory / name).write_bytes(data)
    (directory / "Makefile").write_text(makefile(sources))


def commands(sources: SourceSet, jobs: int, clang: str) -> dict[str, list[str]]:
    enzyme_build = str(BIN_DIR / "enzyme-build")
    build = [enzyme_build, "build", *sources.sources, "-o", "prog", f"-j{jobs}", *CFLAGS,
             *(f"-D{d}" for d in sources.defines), *(f"-l{lib}" for lib in sources.libs)]
    return {
        f"enzyme-build build -j{jobs}": build,
        f'make -j{jobs} CC="enzyme-build cc"': ["make", f"-j{jobs}", f"CC={enzyme_build} cc"],
        f"make -j{jobs} CC=clang-22": ["make", f"-j{jobs}", f"CC={clang}"],
    }


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"build failed: {' '.join(command)}\n{result.stdout}{result.stderr}")
    return elapsed


def measure_once(command: list[str], sources: SourceSet, tree: Path) -> tuple[float, float]:
    """(clean build, no-op rebuild) seconds in a fresh tree."""
    write_tree(tree, sources)
    clean = timed(command, tree)
    noop = timed(command, tree)
    if not (tree / "prog").is_file():
        sys.exit(f"{' '.join(command)}: no program was built")
    shutil.rmtree(tree)
    return clean, noop


def measure_all(configs: dict[str, list[str]], sources: SourceSet, workdir: Path,
                repeat: int) -> list[Timing]:
    """Median times per configuration; rounds interleave configurations so background load
    and warm caches do not favor whichever runs last."""
    samples: dict[str, list[tuple[float, float]]] = {config: [] for config in configs}
    for round_index in range(repeat):
        for config, command in configs.items():
            clean, noop = measure_once(command, sources, workdir / f"{round_index}-{len(samples[config])}-{abs(hash(config))}")
            samples[config].append((clean, noop))
            print(f"  round {round_index + 1}: {config}: clean {clean:.2f}s, no-op {noop:.2f}s", flush=True)
    return [Timing(config, statistics.median(c for c, _ in runs), statistics.median(n for _, n in runs))
            for config, runs in samples.items()]


def table(timings: list[Timing]) -> str:
    base = timings[-1]  # plain clang is the last configuration
    rows = [f"{'configuration':<36} {'clean (s)':>10} {'x clang':>8} {'no-op (s)':>10}"]
    for t in timings:
        rows.append(f"{t.config:<36} {t.clean_s:>10.2f} {t.clean_s / base.clean_s:>8.2f} "
                    f"{t.noop_s:>10.2f}")
    return "\n".join(rows)


def svg_chart(timings: list[Timing], title: str) -> str:
    """A grouped horizontal bar chart (clean build and no-op rebuild per configuration)."""
    width, left, bar, gap = 760, 260, 16, 14
    top = 50
    height = top + len(timings) * (2 * bar + gap) + 16
    longest = max(max(t.clean_s, t.noop_s) for t in timings) or 1.0
    scale = (width - left - 80) / longest
    colors = {"clean": "#4c72b0", "no-op": "#dd8452"}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15">{_xml(title)}</text>']
    for index, (label, color) in enumerate(colors.items()):
        x = left + index * 110
        parts.append(f'<rect x="{x}" y="32" width="12" height="12" fill="{color}"/>'
                     f'<text x="{x + 16}" y="42">{label} (s)</text>')
    y = top
    for t in timings:
        parts.append(f'<text x="{left - 8}" y="{y + bar + 4}" text-anchor="end">{_xml(t.config)}</text>')
        for value, color in ((t.clean_s, colors["clean"]), (t.noop_s, colors["no-op"])):
            length = max(value * scale, 1.0)
            parts.append(f'<rect x="{left}" y="{y}" width="{length:.1f}" height="{bar}" fill="{color}"/>'
                         f'<text x="{left + length + 4:.1f}" y="{y + bar - 4}">{value:.2f}</text>')
            y += bar
        y += gap
    parts.append(f'<line x1="{left}" y1="{top - 4}" x2="{left}" y2="{y}" stroke="black"/>')
    parts.append("</svg>\n")
    return "\n".join(parts)


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", choices=("auto", "lua", "generated"), default="auto")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="rounds; each configuration reports its median")
    parser.add_argument("--svg", default=str(RESULTS / "build_time.svg"))
    args = parser.parse_args()

    sources = None if args.sources == "generated" else lua_sources()
    if sources is None:
        if args.sources == "lua":
            sys.exit(f"no Lua sources at {LUA_SRC}; run ./bootstrap or use --sources generated")
        sources = generated_sources()
    clang = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
    if not shutil.which("make"):
        sys.exit("make is not installed (apt-get install -y make)")

    print(f"sources: {sources.name} ({len(sources.sources)} .c files), flags {' '.join(CFLAGS)}, "
          f"-j{args.jobs}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="enzyme-build-bench-") as work:
        # One untimed warm-up build so the first timed configuration does not pay for cold
        # page caches and Python bytecode compilation.
        configs = commands(sources, args.jobs, clang)
        measure_once(next(iter(configs.values())), sources, Path(work) / "warm-up")
        timings = measure_all(configs, sources, Path(work), args.repeat)
    print()
    print(table(timings))
    svg_path = Path(args.svg)
    svg_path.parent.mkdir(parents=True, exist_ok=True)
    svg_path.write_text(svg_chart(timings, f"Build time: {sources.name}, -j{args.jobs}"))
    print(f"\nchart: {svg_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
