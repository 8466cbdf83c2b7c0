#!/usr/bin/env python3
"""Build cost against program size: enzyme-build vs plain clang on generated programs of ~1k, 10k,
50k and 100k differentiated IR instructions — CPU time, wall time and peak memory.

    .venv/bin/python benchmarks/build_scaling.py [--sizes 1000,10000,50000,100000] [--shapes callees]
                                                 [--markdown docs/benchmarks.md]

The programs are benchmarks/ad_scaling.py's (imported, not copied), with a main() added: each is
built with `enzyme-build cc -O2` (AD applied at the link), and the same program without the AD
call (its primal; the gradient wrapper left out) with `clang-22 -O2`. The CPU time is the
build's whole process tree (user + sys of the child and every descendant it waited for, from
wait4), the peak memory the largest resident set of any one process of the tree (ru_maxrss).
Builds are started by a tiny compiled launcher, not forked from Python: Linux carries a
process's resident high-water mark across exec, so a build forked from this (llvmlite-sized)
interpreter would report the interpreter's memory as its own.
Targets (issue 15, reported, never asserted) for 10k instructions and up: the enzyme-build link
within 3x the CPU time and 2x the peak memory of plain clang.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import ad_scaling  # noqa: E402  (the generator and calibration of the AD scaling benchmark)
import svg  # noqa: E402

RUN = ad_scaling.RUN          # benchmarks/run.py as a module (machine description, atomic writes)
DEFAULT_SIZES = (1_000, 10_000, 50_000, 100_000)
DEFAULT_SHAPES = ("callees",)
TARGET_CPU_RATIO = 3.0        # enzyme-build CPU seconds / clang CPU seconds
TARGET_RSS_RATIO = 2.0        # enzyme-build peak memory / clang peak memory
TARGET_FROM = 10_000          # the targets apply from this size up
CFLAGS = ["-O2", "-fno-math-errno"]
INCLUDE = ["-I", str(ROOT / "enzyme_build" / "include")]

MAIN_AD = """
#include <stdio.h>
int main(void) {
  double x[64], dx[64] = {0}, y[64] = {0}, dy[64];
  for (int i = 0; i < 64; i++) { x[i] = 0.5 + i / 128.0; dy[i] = 1.0; }
  grad_big(x, dx, y, dy, 64);
  printf("%g\\n", dx[0]);
  return 0;
}
"""
MAIN_PRIMAL = """
#include <stdio.h>
int main(void) {
  double x[64], y[64] = {0};
  for (int i = 0; i < 64; i++) x[i] = 0.5 + i / 128.0;
  printf("%g\\n", big(x, y, 64));
  return 0;
}
"""


def sources(shape: str, segments: int) -> tuple[str, str]:
    """(the AD program, its primal): ad_scaling's program with a main, and the same without
    the gradient wrapper (so without any __enzyme_autodiff call)."""
    program = ad_scaling.program(shape, segments)
    cut = program.index("void grad_big(")
    return program + MAIN_AD, program[:cut] + MAIN_PRIMAL


# fork, exec, wait4: prints the child's rusage (it includes every descendant the child reaped)
LAUNCHER_C = r"""
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  pid_t pid = fork();
  if (pid == 0) { execvp(argv[2], argv + 2); _exit(127); }
  int status; struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) return 2;
  FILE *out = fopen(argv[1], "w");
  fprintf(out, "%d %.6f %ld\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
          ru.ru_utime.tv_sec + 1e-6 * ru.ru_utime.tv_usec + ru.ru_stime.tv_sec + 1e-6 * ru.ru_stime.tv_usec,
          ru.ru_maxrss);
  fclose(out);
  return 0;
}
"""


def build_launcher(clang: str, work: Path) -> str:
    (work / "launcher.c").write_text(LAUNCHER_C)
    subprocess.run([clang, "-O1", str(work / "launcher.c"), "-o", str(work / "launcher")], check=True,
                   capture_output=True, text=True)
    return str(work / "launcher")


@dataclass
class Build:
    ok: bool
    cpu_s: float
    wall_s: float
    peak_rss_kb: int
    error: str = ""


def timed_build(launcher: str, cmd: list[str], work: Path, env: dict | None = None) -> Build:
    """Runs a build through the launcher: CPU of the whole (reaped) tree, its peak RSS, wall time."""
    usage_file = work / "build.rusage"
    usage_file.unlink(missing_ok=True)
    with open(work / "build.out", "w") as out, open(work / "build.err", "w") as err:
        start = time.perf_counter()
        subprocess.run([launcher, str(usage_file), *cmd], stdout=out, stderr=err, env=env, cwd=work)
        wall = time.perf_counter() - start
    try:
        code, cpu, rss = usage_file.read_text().split()
    except (OSError, ValueError):
        return Build(False, 0.0, wall, 0, "the launcher reported nothing")
    ok = int(code) == 0
    error = "" if ok else RUN.first_error_line((work / "build.err").read_text() + (work / "build.out").read_text())
    return Build(ok, float(cpu), wall, int(rss), error)


def clean_env() -> dict:
    env = dict(os.environ)
    for var in ("ENZYME_BUILD_AD_BEFORE_OPT", "ENZYME_BUILD_KEEP", "ENZYME_BUILD_CONFIGURE_ONLY",
                "ENZYME_BUILD_VERBOSE"):
        env.pop(var, None)
    return env


@dataclass
class Row:
    shape: str
    target: int
    instructions: int           # differentiated instructions, from the calibration (per segment)
    segments: int
    enzyme: Build
    clang: Build
    runs: bool                  # the AD binary ran and exited 0

    def ratio(self, field: str) -> float | None:
        a, b = getattr(self.enzyme, field), getattr(self.clang, field)
        return a / b if self.enzyme.ok and self.clang.ok and b else None

    @property
    def verdict(self) -> str:
        if not self.enzyme.ok:
            return "build failed"
        if self.target < TARGET_FROM:
            return f"n/a (< {TARGET_FROM // 1000}k)"
        missed = [name for name, ratio, limit in (("CPU", self.ratio("cpu_s"), TARGET_CPU_RATIO),
                                                  ("memory", self.ratio("peak_rss_kb"), TARGET_RSS_RATIO))
                  if ratio is None or ratio > limit]
        return "met" if not missed else "missed: " + ", ".join(missed)


def measure(shape: str, target: int, per_segment: dict[str, float], work: Path, enzyme: str, clang: str,
            launcher: str) -> Row:
    segments = max(ad_scaling.SEGMENTS_PER_CALLEE, round(target / per_segment[shape]))
    ad_source, primal_source = sources(shape, segments)
    (work / "ad.c").write_text(ad_source)
    (work / "primal.c").write_text(primal_source)
    env = clean_env()
    ours = timed_build(launcher, [enzyme, "cc", *CFLAGS, *INCLUDE, "ad.c", "-o", "ad", "-lm"], work, env)
    plain = timed_build(launcher, [clang, *CFLAGS, *INCLUDE, "primal.c", "-o", "primal", "-lm"], work, env)
    runs = ours.ok and subprocess.run([str(work / "ad")], capture_output=True, timeout=120).returncode == 0
    return Row(shape, target, round(segments * per_segment[shape]), segments, ours, plain, runs)


# ---------------------------------------------------------------- reporting

def fmt_mb(kb: int) -> str:
    return f"{kb / 1024:.0f} MB"


HEADERS = ["shape", "size", "instructions", "enzyme-build CPU", "clang CPU", "CPU ratio", "enzyme-build wall",
           "clang wall", "wall ratio", "enzyme-build peak RSS", "clang peak RSS", "memory ratio",
           f"target (≤ {TARGET_CPU_RATIO:g}x CPU, ≤ {TARGET_RSS_RATIO:g}x memory)"]


def cells(row: Row) -> list[str]:
    def x(value):
        return "—" if value is None else f"{value:.1f}x"
    e, c = row.enzyme, row.clang
    return [row.shape, f"{row.target / 1000:g}k", f"≈{row.instructions}",
            f"{e.cpu_s:.2f} s" if e.ok else "failed", f"{c.cpu_s:.2f} s", x(row.ratio("cpu_s")),
            f"{e.wall_s:.2f} s" if e.ok else "—", f"{c.wall_s:.2f} s", x(row.ratio("wall_s")),
            fmt_mb(e.peak_rss_kb) if e.ok else "—", fmt_mb(c.peak_rss_kb), x(row.ratio("peak_rss_kb")),
            row.verdict]


def markdown(rows: list[Row], meta: dict) -> str:
    out = [f"Generated by `benchmarks/build_scaling.py{meta['argv']}` on {meta['date']} — {meta['machine']}; "
           f"1-minute load average {meta['load_average'][0]} before, {meta['load_average'][1]} after.",
           "", "| " + " | ".join(HEADERS) + " |", "|" + "|".join("---" for _ in HEADERS) + "|"]
    out += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    notes = [f"{r.shape} {r.target / 1000:g}k: enzyme-build failed: {r.enzyme.error}" for r in rows if not r.enzyme.ok]
    notes += [f"{r.shape} {r.target / 1000:g}k: the AD binary did not run cleanly" for r in rows
              if r.enzyme.ok and not r.runs]
    if notes:
        out += [""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def print_table(rows: list[Row], meta: dict) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(markdown(rows, meta))
        return
    table = Table(title=f"build cost vs program size ({meta['machine']}; load average "
                        f"{meta['load_average'][0]} → {meta['load_average'][1]})")
    for header in HEADERS:
        table.add_column(header, overflow="fold", justify="left" if header in ("shape", "size") else "right")
    for row in rows:
        table.add_row(*cells(row))
    console = Console(width=None if sys.stdout.isatty() else 240)
    console.print(table)
    for row in rows:
        if not row.enzyme.ok:
            console.print(f"{row.shape} {row.target}: enzyme-build failed: {row.enzyme.error}",
                          highlight=False, markup=False)


def plot(rows: list[Row], meta: dict) -> str:
    sizes = sorted({r.target for r in rows})
    groups = [f"{s / 1000:g}k" for s in sizes]

    def series(field):
        return {shape: [next((r.ratio(field) for r in rows if r.shape == shape and r.target == s), None)
                        for s in sizes] for shape in dict.fromkeys(r.shape for r in rows)}
    panels = [svg.Panel("CPU time: enzyme-build / clang", groups, series("cpu_s"), target=TARGET_CPU_RATIO,
                        target_label=f"target ≤ {TARGET_CPU_RATIO:g}x"),
              svg.Panel("peak memory: enzyme-build / clang", groups, series("peak_rss_kb"),
                        target=TARGET_RSS_RATIO, target_label=f"target ≤ {TARGET_RSS_RATIO:g}x")]
    return svg.bar_chart(panels, title="enzyme-build build cost vs program size",
                         subtitle=f"{meta['date']}, {meta['machine']}, load average {meta['load_average'][0]}",
                         panel_width=480)


MARK_START, MARK_END = "<!-- build-scaling:start -->", "<!-- build-scaling:end -->"


def write_markdown(path: Path, table: str) -> None:
    """Replaces the marked region of an existing document, or writes the table alone."""
    text = path.read_text() if path.exists() else ""
    region = re.compile(f"^{re.escape(MARK_START)}$.*?^{re.escape(MARK_END)}$", re.M | re.S)
    text = region.sub(lambda _: f"{MARK_START}\n{table}{MARK_END}", text, count=1) if region.search(text) else table
    RUN.atomic_write(path, text)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES),
                        help="comma-separated differentiated-instruction counts to generate")
    parser.add_argument("--shapes", default=",".join(DEFAULT_SHAPES),
                        help=f"comma-separated subset of: {', '.join(ad_scaling.SHAPES)}")
    parser.add_argument("--results", type=Path, default=HERE / "results",
                        help="directory for build_scaling.json and build_scaling.svg")
    parser.add_argument("--markdown", type=Path, help="write the table as markdown here (into the region "
                        f"between {MARK_START} and {MARK_END} if present)")
    args = parser.parse_args(argv)
    args.shapes = [s for s in args.shapes.split(",") if s]
    unknown = [s for s in args.shapes if s not in ad_scaling.SHAPES]
    if unknown:
        parser.error(f"unknown shape(s) {', '.join(unknown)}; choose from {', '.join(ad_scaling.SHAPES)}")
    try:
        args.sizes = [int(s) for s in args.sizes.split(",") if s]
    except ValueError:
        parser.error(f"--sizes takes comma-separated integers, not {args.sizes!r}")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    enzyme, clang = RUN.enzyme_build_exe(), ad_scaling.clang_exe()
    load_before = os.getloadavg()[0]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="build-scaling-") as tmp:
        work = Path(tmp)
        per_segment = ad_scaling.calibrate(work)
        launcher = build_launcher(clang, work)
        for shape in args.shapes:
            for size in args.sizes:
                print(f"{shape} {size} ...", file=sys.stderr, flush=True)
                row = measure(shape, size, per_segment, work, enzyme, clang, launcher)
                rows.append(row)
                print(f"  enzyme-build {row.enzyme.cpu_s:.2f} s CPU, clang {row.clang.cpu_s:.2f} s CPU",
                      file=sys.stderr, flush=True)
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": RUN.machine_description(),
            "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "argv": "".join(f" {a}" for a in argv)}
    print_table(rows, meta)
    RUN.atomic_write(args.results / "build_scaling.json", json.dumps(
        {"meta": meta, "rows": [dict(asdict(r), cpu_ratio=r.ratio("cpu_s"), wall_ratio=r.ratio("wall_s"),
                                     memory_ratio=r.ratio("peak_rss_kb"), verdict=r.verdict) for r in rows]},
        indent=2) + "\n")
    RUN.atomic_write(args.results / "build_scaling.svg", plot(rows, meta))
    if args.markdown:
        write_markdown(args.markdown, markdown(rows, meta))
    return 0 if all(r.enzyme.ok and r.clang.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
