#!/usr/bin/env python3
"""The AD benchmark suite: builds each kernel with AD after optimization and with AD before
it (the paper's ablation), runs both, and reports gradient/primal ratios, speedups and AD cost.

    .venv/bin/python benchmarks/run.py [--quick] [--kernels gmm,gmm_adbench,…] [--families gmm,heat]
                                       [--peers] [--markdown docs/benchmarks.md]

Every kernel program times its primal, gradient, forward-mode tangent, split-mode gradient
(as is, and with the inputs promised unchanged between the two calls)
and a width-4 vector forward call against 4 scalar sweeps side by side in one process,
checks the gradient against central finite differences, the other modes against the
gradient and the vector lanes against the scalar sweeps; see docs/benchmarks.md.
Each family (gmm, lstm, ba, nbody, norm, heat) comes in several code styles (variants
`<family>_<style>.c`, or `.cpp` for the C++ styles, sharing the family's harness in
kernels/harness/); GMM and n-body also
time a hand-written adjoint (the expert line), and `--peers` adds JAX and PyTorch.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import svg  # noqa: E402  (the sibling helper module)

KERNEL_DIR = HERE / "kernels"
BASE_CFLAGS = ("-O2", "-fno-math-errno")  # errno-free libm lets LLVM treat sqrt/exp as pure
CFLAGS = list(BASE_CFLAGS)                # plus -fveclib=LIB with --veclib LIB
CLANG_CANDIDATES = ("clang-22", "/usr/lib/llvm-22/bin/clang")


@dataclass(frozen=True)
class Kernel:
    name: str                 # the source is kernels/<name>.c (or .cpp, for a C++ kernel)
    title: str
    asymptotic: bool = False  # AD before opt changes the complexity: kept out of the second geomean
    family: str = ""          # the harness it shares (kernels/harness/<family>.h); default: name
    flags: tuple = ()         # extra compile flags (an include path), the same for every build of it

    @property
    def family_name(self) -> str:
        return self.family or self.name

    @property
    def source(self) -> Path:
        c = KERNEL_DIR / f"{self.name}.c"
        return c if c.is_file() or not (KERNEL_DIR / f"{self.name}.cpp").is_file() else KERNEL_DIR / f"{self.name}.cpp"

    @property
    def cxx(self) -> bool:
        return self.source.suffix == ".cpp"

    def driver(self) -> str:
        """The enzyme-build driver that compiles the kernel: cc, or c++ for a C++ kernel."""
        return "c++" if self.cxx else "cc"

    def missing(self) -> str | None:
        """Why the kernel cannot be built here (an include directory of its flags is absent)."""
        for flag in self.flags:
            if flag.startswith("-I") and not Path(flag[2:]).is_dir():
                return f"{flag[2:]} not found (Eigen: apt-get install libeigen3-dev; ./bootstrap test installs it)"
        return None


EIGEN = ("-I/usr/include/eigen3",)   # Debian's libeigen3-dev (./bootstrap installs it)

# The families' reference kernels first, then every code-style variant (docs/benchmarks.md).
KERNELS = {k.name: k for k in (
    Kernel("gmm", "ADBench GMM objective"),
    Kernel("lstm", "ADBench LSTM objective"),
    Kernel("ba", "ADBench bundle adjustment"),
    Kernel("nbody", "n-body final energy"),
    Kernel("norm", "vector normalization", asymptotic=True),
    Kernel("heat", "1-D reaction-diffusion stepper, ping-pong buffers"),
    Kernel("gmm_adbench", "GMM, ADBench's original C (extern helpers, reused scratch)", family="gmm"),
    Kernel("gmm_inlined", "GMM in one function, no scratch vectors", family="gmm"),
    Kernel("gmm_fresh", "GMM, scratch malloc'd per (point, component)", family="gmm"),
    Kernel("gmm_restrict", "GMM, restrict pointers and a dense Q per component", family="gmm"),
    Kernel("gmm_stl", "GMM in C++: std::vector scratch, <algorithm>/<numeric>, range-for", family="gmm"),
    Kernel("gmm_eigen", "GMM in C++ with Eigen: VectorXd scratch, a triangular view per component", family="gmm",
           flags=EIGEN),
    Kernel("lstm_adbench", "LSTM, ADBench's original C (fresh gates per step)", family="lstm"),
    Kernel("lstm_inlined", "LSTM in one function", family="lstm"),
    Kernel("lstm_restrict", "LSTM, restrict, predictions kept for a second loss pass", family="lstm"),
    Kernel("lstm_stl", "LSTM in C++: std::vector layer state, lambdas, <algorithm>/<numeric>", family="lstm"),
    Kernel("ba_inlined", "BA, the projection written out in scalars", family="ba"),
    Kernel("ba_struct", "BA, structs passed and returned by value", family="ba"),
    Kernel("ba_residuals", "BA, ADBench's residual vector reduced in a second pass", family="ba"),
    Kernel("ba_eigen", "BA in C++ with Eigen: fixed-size vectors, Maps over the inputs", family="ba", flags=EIGEN),
    Kernel("nbody_step", "n-body, step() per time step on an in-place state struct", family="nbody"),
    Kernel("nbody_soa", "n-body, struct of arrays", family="nbody"),
    Kernel("nbody_aos", "n-body, array of structs with pairwise forces", family="nbody"),
    Kernel("nbody_restrict", "n-body, restrict pointers", family="nbody"),
    Kernel("nbody_vec3", "n-body in C++: a Vec3 class with operators, std::vector state in a class", family="nbody"),
    Kernel("nbody_eigen", "n-body in C++ with Eigen::Vector3d state in std::vector, pairwise", family="nbody",
           flags=EIGEN),
    Kernel("norm_hoisted", "normalization, mag() hoisted by hand", family="norm"),
    Kernel("norm_inline", "normalization in one function, no restrict", family="norm"),
    Kernel("heat_copy", "heat stepper, scratch copied back every step", family="heat"),
    Kernel("heat_step", "heat stepper, in-place step() per time step", family="heat"),
    Kernel("heat_csr", "heat stepper as a CSR matrix-vector product per step", family="heat"),
    Kernel("heat_vector", "heat stepper in C++: std::vector buffers swapped by std::swap", family="heat"),
)}
FAMILIES = tuple(dict.fromkeys(k.family_name for k in KERNELS.values()))

# Targets are reported next to the numbers, never asserted.
TARGET_GRAD_RATIO = 3.0        # gradient time / primal time, per kernel
TARGET_ABLATION_GEOMEAN = 4.2  # AD-before-opt gradient time / AD-after-opt gradient time
TARGET_AD_S_PER_10K = 1.0      # seconds of AD synthesis per 10k IR instructions
TARGET_FWD_RATIO = 2.0         # forward tangent time / primal time, per kernel
TARGET_SPLIT_OVERHEAD = 1.1    # split-mode gradient time / combined gradient time, per kernel
TARGET_VEC_RATIO = 1.0         # width-4 vector call / 4 scalar sweeps, per kernel (below it)
TARGET_GRAD_GEOMEAN = 2.5      # geometric mean of gradient/primal over every kernel
TARGET_EXPERT_RATIO = 1.2      # our gradient / the hand-written adjoint, where there is one

# Variants each kernel is built in: plain clang (primal only, validates the kernel),
# enzyme-build (AD after optimization) and enzyme-build with the ablation switch.
VARIANTS = ("clang", "after", "before")


@dataclass
class Step:
    """Outcome of one build or run: ok, seconds, the first error line, parsed fields."""

    ok: bool
    seconds: float = 0.0
    error: str = ""
    fields: dict = field(default_factory=dict)


# ---------------------------------------------------------------- tools

def enzyme_build_exe() -> str:
    exe = Path(sys.executable).parent / "enzyme-build"
    return str(exe) if exe.exists() else (shutil.which("enzyme-build") or str(exe))


def clang_exe() -> str:
    for name in CLANG_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    sys.exit("benchmarks: clang-22 not found (tried " + ", ".join(CLANG_CANDIDATES) +
             "); install it: apt-get install -y clang-22")


def cxx_of(clang: str) -> str:
    """clang's C++ driver beside it: /usr/bin/clang-22 -> /usr/bin/clang++-22."""
    head, _, tail = clang.rpartition("/")
    return (head + "/" if head else "") + tail.replace("clang", "clang++", 1)


def first_error_line(text: str) -> str:
    """The most telling line of a failed command's output (our errors start 'enzyme-build:')."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln[:300]
    return (lines[0] if lines else "no output")[:300]


# ---------------------------------------------------------------- build and run

def build_once(kernel: Kernel, variant: str, out_dir: Path, clang: str, defines: list[str]) -> Step:
    if (why := kernel.missing()) is not None:
        return Step(False, 0.0, why)
    source = kernel.source
    binary = out_dir / f"{kernel.name}_{variant}"
    env = dict(os.environ)
    for var in ("ENZYME_BUILD_AD_BEFORE_OPT", "ENZYME_BUILD_KEEP", "ENZYME_BUILD_CONFIGURE_ONLY"):
        env.pop(var, None)
    if variant == "clang":
        cmd = [cxx_of(clang) if kernel.cxx else clang, *CFLAGS, *kernel.flags, "-DBENCH_NO_AD", str(source), "-o",
               str(binary), "-lm"]
    else:
        cmd = [enzyme_build_exe(), kernel.driver(), *CFLAGS, *kernel.flags, *defines, str(source), "-o", str(binary),
               "-lm"]
        keep = out_dir / f"keep_{kernel.name}_{variant}"
        shutil.rmtree(keep, ignore_errors=True)
        keep.mkdir(parents=True)
        env["ENZYME_BUILD_KEEP"] = str(keep)
        if variant == "before":
            env["ENZYME_BUILD_AD_BEFORE_OPT"] = "1"
    binary.unlink(missing_ok=True)
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as err:
        return Step(False, time.perf_counter() - start, f"{type(err).__name__}: {err}")
    seconds = time.perf_counter() - start
    if proc.returncode != 0 or not binary.exists():
        return Step(False, seconds, first_error_line(proc.stderr + proc.stdout))
    return Step(True, seconds, fields={"binary": str(binary), "defines": defines})


# Optional modes, each with the define that leaves it out of a kernel build.
OPTIONAL_MODES = {"fwd": "-DBENCH_NO_FWD", "split": "-DBENCH_NO_SPLIT", "vec": "-DBENCH_NO_VEC"}


def without(modes) -> list[str]:
    """The defines that leave every optional mode outside `modes` out of a build."""
    return [define for mode, define in OPTIONAL_MODES.items() if mode not in modes]


def build(kernel: Kernel, variant: str, out_dir: Path, clang: str) -> Step:
    """Builds one variant with every mode; if the engine rejects one, builds reverse mode with
    each optional mode alone (which isolates the culprits, their errors go into
    fields["mode_errors"]), then the binary with the modes that built."""
    if variant == "clang":
        return build_once(kernel, variant, out_dir, clang, [])
    step = build_once(kernel, variant, out_dir, clang, [])
    attempts = 1
    mode_errors: dict[str, str] = {}
    if not step.ok:
        working = []
        for mode in OPTIONAL_MODES:
            alone = build_once(kernel, variant, out_dir, clang, without([mode]))
            attempts += 1
            if alone.ok:
                working.append(mode)
            else:
                mode_errors[mode] = alone.error
        step = build_once(kernel, variant, out_dir, clang, without(working))
        attempts += 1
        if not step.ok and working:  # the modes build alone but not together
            together = step.error
            step = build_once(kernel, variant, out_dir, clang, without([]))
            attempts += 1
            mode_errors.update({m: f"builds alone, not with the other modes: {together}" for m in working})
        if not step.ok:  # reverse mode alone failed: that is the kernel's error
            return Step(False, step.seconds, step.error)
    step.fields["mode_errors"] = mode_errors
    step.fields["build_attempts"] = attempts
    return step  # its seconds: the build that produced the binary


RESULT_RE = re.compile(r"^RESULT (\S+)((?: \S+=\S+)*)\s*$", re.M)


def parse_result(stdout: str) -> dict | None:
    """Fields of the kernel's RESULT line: numbers as floats, the rest as strings."""
    match = RESULT_RE.search(stdout)
    if not match:
        return None
    fields = {"name": match.group(1)}
    for pair in match.group(2).split():
        key, value = pair.split("=", 1)
        try:
            fields[key] = float(value) if key != "size" else value
        except ValueError:
            fields[key] = value
    return fields


# Extra timing arguments for every kernel binary (--min-time / --repeats of run.py), set by main.
TIMING_ARGS: list[str] = []


def run(binary: str, quick: bool, timeout: float) -> Step:
    """Runs a kernel. A wrong gradient fails the run; a wrong forward/split result only
    marks that mode (its MISMATCH lines are kept in fields["mismatches"])."""
    cmd = [binary] + (["--quick"] if quick else []) + TIMING_ARGS
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Step(False, time.perf_counter() - start, f"timed out after {timeout:.0f} s")
    seconds = time.perf_counter() - start
    fields = parse_result(proc.stdout)
    if proc.returncode < 0:
        return Step(False, seconds, f"crashed (signal {-proc.returncode})"
                    + (f": {first_error_line(proc.stderr)}" if proc.stderr.strip() else ""))
    if fields is None:
        return Step(False, seconds, "no RESULT line: " + first_error_line(proc.stderr + proc.stdout))
    fields["mismatches"] = [ln[len("MISMATCH "):] for ln in proc.stderr.splitlines()
                            if ln.startswith("MISMATCH ")]
    if fields.get("check") == "FAIL":
        wrong = [m for m in fields["mismatches"] if m.startswith("check ")]
        return Step(False, seconds, "gradient wrong: " + (wrong or ["?"])[0][len("check "):], fields)
    mode_failures = any(fields.get(f"{mode}_check") == "FAIL" for mode in OPTIONAL_MODES)
    ok = proc.returncode == 0 or (proc.returncode == 1 and mode_failures)
    return Step(ok, seconds, "" if ok else f"exit {proc.returncode}: {first_error_line(proc.stderr)}", fields)


def mode_status(rec: dict, variant: str, mode: str) -> str:
    """'ok', 'AD failed: …' (the build needed -DBENCH_NO_<MODE>), 'wrong: …', or 'n/a'."""
    info = rec[variant]
    if not info["ran"]:
        return "n/a"
    if mode in info.get("mode_errors", {}):
        return f"AD failed: {info['mode_errors'][mode]}"
    check = info["result"].get(f"{mode}_check")
    if check == "FAIL":
        wrong = [m for m in info["result"].get("mismatches", []) if m.startswith(f"{mode}_check ")]
        return "wrong: " + (wrong or ["?"])[0][len(mode) + 7:]
    return "ok" if check == "ok" else "n/a"


# ---------------------------------------------------------------- AD pass cost

AD_INPUT_NAME = "ad-input.ll"   # the AD stage keeps the module it differentiates under this name
AD_TIMING_REPEATS = 3
DERIVED_RE = re.compile(r"^define [^@]*@\"?(?:diffe|augmented|reverse|fwddiffe)_([-\w$.]+?)(?:\.[-\w$]+)?\"?\(",
                        re.M)


def measure_ad_pass(keep_dir: Path, timeout: float = 900) -> Step:
    """Times derivative synthesis alone, in a child process (this file with --measure-ad).

    The build's AD stage keeps the module it hands to the synthesizer (after marker
    canonicalization and the pre-AD pipeline) as ad-input.ll; the child re-runs
    enzyme_build.ad.driver.differentiate_module on that text, best of a few runs.
    """
    # the link step keeps the AD stage's files in <KEEP>/<output>.ad/ (directly in KEEP before)
    found = [keep_dir / AD_INPUT_NAME] + sorted(keep_dir.glob(f"*.ad/{AD_INPUT_NAME}"))
    module = next((m for m in found if m.exists()), found[0])
    if not module.exists():
        return Step(False, error=f"the build kept no {AD_INPUT_NAME} in {keep_dir}")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure-ad", str(module)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Step(False, error=f"AD synthesis timed out after {timeout:.0f} s")
    try:
        fields = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Step(False, error=first_error_line(proc.stderr + proc.stdout))
    if not fields.get("ok"):
        return Step(False, error=fields.get("error", "AD synthesis failed"))
    return Step(True, fields["ad_seconds"], fields=fields)


INSTRUCTION_RE = re.compile(r"^\s+(?:%[-\w.$\"]+ = |call |store |br |ret |switch |unreachable|"
                            r"tail call |musttail call |notail call |fence |resume |invoke |indirectbr )")


def function_bodies(ir_text: str) -> dict[str, list[str]]:
    """Function name -> the lines of its body, for every `define` in textual IR."""
    bodies: dict[str, list[str]] = {}
    current = None
    for line in ir_text.splitlines():
        if line.startswith("define "):
            match = re.search(r'@("[^"]+"|[-\w$.]+)\(', line)
            current = match.group(1).strip('"') if match else f"<anonymous {len(bodies)}>"
            bodies[current] = []
        elif current is not None and line.startswith("}"):
            current = None
        elif current is not None:
            bodies[current].append(line)
    return bodies


def count_instructions(lines: list[str]) -> int:
    """Instructions among IR body lines (labels, comments and metadata lines excluded)."""
    return sum(1 for line in lines if INSTRUCTION_RE.match(line))


def differentiated_functions(output_text: str, input_names) -> list[str]:
    """Primal functions the synthesizer derived (diffe_f, augmented_f, reverse_f -> f)."""
    names = set(input_names)
    found = set()
    for match in DERIVED_RE.finditer(output_text):
        base = match.group(1)
        while base not in names and "." in base:  # strip activity-code suffixes
            base = base.rsplit(".", 1)[0]
        if base in names:
            found.add(base)
    return sorted(found)


def measure_ad_child(module_path: str) -> int:
    """Entry point of the --measure-ad child: prints one JSON line."""
    try:
        from enzyme_build.ad.driver import differentiate_module
        try:
            from enzyme_build.custom.collect import collect_registry
        except ImportError:
            collect_registry = None
        text = Path(module_path).read_text()
        times, output = [], ""
        for _ in range(AD_TIMING_REPEATS):
            start = time.perf_counter()
            registry = collect_registry(text) if collect_registry else None
            output = differentiate_module(text, registry)
            times.append(time.perf_counter() - start)
        bodies = function_bodies(text)
        derived = differentiated_functions(output, bodies)
        print(json.dumps({
            "ok": True, "ad_seconds": min(times), "ad_seconds_all": times,
            "module_instructions": sum(count_instructions(b) for b in bodies.values()),
            "instructions": sum(count_instructions(bodies[f]) for f in derived),
            "differentiated": derived,
            "output_instructions": sum(count_instructions(b) for b in function_bodies(output).values()),
            "module": module_path}))
    except BaseException as err:  # report any failure as data; the parent prints it in the table
        message = getattr(err, "message", None) or str(err)
        print(json.dumps({"ok": False, "error": f"{type(err).__name__}: {message}".splitlines()[0]}))
    return 0


# ---------------------------------------------------------------- one kernel

def collect(kernel: Kernel, builds: dict[str, Step], quick: bool, measure_ad: bool,
            out_dir: Path) -> dict:
    """Runs the built variants of one kernel and distils them into a result record."""
    timeout = 120 if quick else 900
    runs = {v: (run(builds[v].fields["binary"], quick, timeout) if builds[v].ok else None)
            for v in VARIANTS}
    rec: dict = {"kernel": kernel.name, "title": kernel.title, "asymptotic": kernel.asymptotic,
                 "build_s": {v: round(builds[v].seconds, 3) for v in VARIANTS}}
    for v in VARIANTS:
        step = runs[v]
        rec[v] = {"built": builds[v].ok, "build_error": builds[v].error,
                  "mode_errors": builds[v].fields.get("mode_errors", {}),
                  "ran": bool(step and step.ok), "run_error": step.error if step else "",
                  "result": step.fields if step else {}}
    after, before, clang = (rec[v]["result"] for v in ("after", "before", "clang"))
    rec["size"] = after.get("size") or clang.get("size") or ""
    rec["clang_primal_s"] = clang.get("primal_s")
    rec["primal_s"] = after.get("primal_s")
    rec["status"] = status_text(rec, "after")
    rec["before_status"] = status_text(rec, "before")
    grad_ok = rec["status"] == "ok" and after.get("check") == "ok"
    rec["grad_s"] = after.get("grad_s") if grad_ok else None
    rec["grad_ratio"] = rec["grad_s"] / rec["primal_s"] if rec["grad_s"] and rec["primal_s"] else None
    before_ok = rec["before_status"] == "ok" and before.get("check") == "ok"
    rec["before_grad_s"] = before.get("grad_s") if before_ok else None
    rec["speedup"] = (rec["before_grad_s"] / rec["grad_s"]
                      if rec["before_grad_s"] and rec["grad_s"] else None)
    # forward mode (tangent/primal) and split mode (augmented forward + reverse vs combined)
    rec["fwd_status"] = mode_status(rec, "after", "fwd")
    rec["split_status"] = mode_status(rec, "after", "split")
    rec["fwd_s"] = after.get("fwd_s") if rec["fwd_status"] == "ok" else None
    rec["fwd_ratio"] = rec["fwd_s"] / rec["primal_s"] if rec["fwd_s"] and rec["primal_s"] else None
    rec["split_s"] = after.get("split_s") if rec["split_status"] == "ok" else None
    rec["split_overhead"] = rec["split_s"] / rec["grad_s"] if rec["split_s"] and rec["grad_s"] else None
    # ... and with enzyme_not_overwritten: the caller promises the inputs stay as they are
    rec["split_kept_s"] = after.get("split_kept_s") if rec["split_status"] == "ok" else None
    rec["split_kept_overhead"] = (rec["split_kept_s"] / rec["grad_s"]
                                  if rec["split_kept_s"] and rec["grad_s"] else None)
    # vector forward mode: one width-4 call over 4 scalar sweeps along the same directions
    rec["vec_status"] = mode_status(rec, "after", "vec")
    vec_ok = rec["vec_status"] == "ok"
    rec["vec4_s"] = after.get("vec4_s") if vec_ok else None
    rec["fwd4_s"] = after.get("fwd4_s") if vec_ok else None
    rec["vec_ratio"] = rec["vec4_s"] / rec["fwd4_s"] if rec["vec4_s"] and rec["fwd4_s"] else None
    # the hand-written adjoint in the same binary (checked against our gradient by the kernel)
    rec["family"] = kernel.family_name
    rec["expert_s"] = after.get("expert_s") if grad_ok else None
    rec["expert_ratio"] = rec["grad_s"] / rec["expert_s"] if rec["grad_s"] and rec["expert_s"] else None
    rec["ad_seconds"] = rec["ad_instructions"] = rec["ad_s_per_10k"] = None
    rec["ad_differentiated_instructions"] = rec["ad_s_per_10k_differentiated"] = None
    rec["ad_error"] = ""
    if measure_ad and builds["after"].ok:
        step = measure_ad_pass(out_dir / f"keep_{kernel.name}_after")
        if step.ok and step.fields.get("instructions"):
            # The pass reads and rewrites the whole module, so its size is the denominator;
            # the differentiated functions' own size is kept as well (stricter, small kernels).
            rec["ad_seconds"] = step.seconds
            rec["ad_instructions"] = step.fields["module_instructions"]
            rec["ad_s_per_10k"] = step.seconds / (step.fields["module_instructions"] / 10_000)
            rec["ad_differentiated_instructions"] = step.fields["instructions"]
            rec["ad_s_per_10k_differentiated"] = step.seconds / (step.fields["instructions"] / 10_000)
            rec["ad_detail"] = {k: step.fields[k] for k in ("differentiated", "output_instructions",
                                                             "ad_seconds_all")}
        else:
            rec["ad_error"] = step.error or "no instructions counted"
    return rec


def status_text(rec: dict, variant: str) -> str:
    """Full status of one variant: 'ok', or what failed with the first error line."""
    info = rec[variant]
    if not info["built"]:
        skipped = info["build_error"].startswith("not built")
        return info["build_error"] if skipped else f"AD failed: {info['build_error']}"
    if not info["ran"]:
        return info["run_error"] or "run failed"
    value, reference = info["result"].get("value"), rec["clang"]["result"].get("value")
    if isinstance(value, float) and isinstance(reference, float) and \
            abs(value - reference) > 1e-9 * max(1.0, abs(reference)):
        return f"primal differs: objective {value!r} vs {reference!r} from plain clang"
    return "ok"


# How a status reads in a table cell: the engine refusing the code, or computing a wrong result.
STATUS_CELLS = {"AD failed": "refused", "gradient wrong": "wrong", "wrong": "wrong"}


def short_status(full: str) -> str:
    """The table cell for a status; the full text goes into the notes under the table."""
    for prefix in ("AD failed", "gradient wrong", "wrong", "primal differs", "crashed", "timed out",
                   "not built", "n/a"):
        if full.startswith(prefix):
            return STATUS_CELLS.get(prefix, prefix)
    return full if full == "ok" else "run failed"


def targets_cell(rec: dict) -> str:
    """Which per-kernel targets the row meets: 'met', or 'missed: …' naming them."""
    checks = [("grad", rec["grad_ratio"], TARGET_GRAD_RATIO), ("fwd", rec["fwd_ratio"], TARGET_FWD_RATIO),
              ("expert", rec.get("expert_ratio"), TARGET_EXPERT_RATIO)]
    if rec["grad_ratio"] is None:
        return short_status(rec["status"]) if rec["status"] != "ok" else "—"
    missed = [name for name, value, target in checks if value is not None and value > target]
    return "met" if not missed else "missed: " + ", ".join(missed)


def failure_notes(records: list[dict]) -> list[str]:
    notes = []
    for rec in records:
        for variant, label in (("after", "AD after opt"), ("before", "AD before opt")):
            status = rec["status" if variant == "after" else "before_status"]
            if status != "ok" and not status.startswith("not built"):
                notes.append(f"{rec['kernel']} ({label}): {status}")
        for mode, label in (("fwd", "forward mode"), ("split", "split mode"), ("vec", "vector forward mode")):
            status = rec[f"{mode}_status"]
            if status not in ("ok", "n/a"):
                notes.append(f"{rec['kernel']} ({label}): {status}")
        if rec["ad_error"]:
            notes.append(f"{rec['kernel']} (AD stage timing): {rec['ad_error']}")
    return notes


# ---------------------------------------------------------------- summary and output

def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(records: list[dict]) -> dict:
    ratios = [r["grad_ratio"] for r in records if r["grad_ratio"]]
    speedups = [r["speedup"] for r in records if r["speedup"]]
    ad_rates = [r["ad_s_per_10k"] for r in records if r["ad_s_per_10k"] is not None]
    total_ad = sum(r["ad_seconds"] for r in records if r["ad_seconds"] is not None)
    total_inst = sum(r["ad_instructions"] for r in records if r["ad_instructions"])
    total_diff = sum(r.get("ad_differentiated_instructions") or 0 for r in records if r["ad_seconds"] is not None)
    geo = geomean(speedups)
    geo_constant = geomean([r["speedup"] for r in records if r["speedup"] and not r["asymptotic"]])
    return {
        "kernels": len(records),
        "gradients_ok": len(ratios),
        "grad_ratio_geomean": geomean(ratios),
        "grad_ratio_target": TARGET_GRAD_RATIO,
        "grad_ratio_geomean_target": TARGET_GRAD_GEOMEAN,
        "grad_ratio_families": {fam: geomean([r["grad_ratio"] for r in records
                                              if r.get("family") == fam and r["grad_ratio"]])
                                for fam in dict.fromkeys(r.get("family", r["kernel"]) for r in records)},
        "not_measured": [r["kernel"] for r in records if not r["grad_ratio"]],
        "grad_ratio_met": [r["kernel"] for r in records if r["grad_ratio"] and r["grad_ratio"] <= TARGET_GRAD_RATIO],
        "ablation_geomean": geo,
        "ablation_kernels": len(speedups),
        "ablation_geomean_same_complexity": geo_constant,
        "ablation_target": TARGET_ABLATION_GEOMEAN,
        "ablation_met": bool(geo and geo >= TARGET_ABLATION_GEOMEAN),
        "ad_s_per_10k_overall": total_ad / (total_inst / 10_000) if total_inst else None,
        "ad_s_per_10k_differentiated_overall": total_ad / (total_diff / 10_000) if total_diff else None,
        "ad_s_per_10k_worst": max(ad_rates) if ad_rates else None,
        "ad_target_s_per_10k": TARGET_AD_S_PER_10K,
        "ad_met": bool(ad_rates) and max(ad_rates) <= TARGET_AD_S_PER_10K,
        **mode_target("fwd_ratio", records, TARGET_FWD_RATIO, lambda v: v <= TARGET_FWD_RATIO),
        **mode_target("split_overhead", records, TARGET_SPLIT_OVERHEAD, lambda v: v <= TARGET_SPLIT_OVERHEAD),
        **mode_target("split_kept_overhead", records, TARGET_SPLIT_OVERHEAD,
                      lambda v: v <= TARGET_SPLIT_OVERHEAD),
        **mode_target("vec_ratio", records, TARGET_VEC_RATIO, lambda v: v < TARGET_VEC_RATIO),
        **mode_target("expert_ratio", records, TARGET_EXPERT_RATIO, lambda v: v <= TARGET_EXPERT_RATIO),
    }


def mode_target(key: str, records: list[dict], target: float, within) -> dict:
    """Summary fields of a per-kernel ratio: its geometric mean, target, and which kernels
    measured it and met it (`<key>_met` is None when no kernel measured it)."""
    measured = [r for r in records if r[key]]
    return {f"{key}_geomean": geomean([r[key] for r in measured]), f"{key}_target": target,
            f"{key}_measured": [r["kernel"] for r in measured],
            f"{key}_within": [r["kernel"] for r in measured if within(r[key])],
            f"{key}_met": all(within(r[key]) for r in measured) if measured else None}


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def fmt_x(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else (f"{value:.0f}x" if value >= 100 else f"{value:.{digits}f}x")


def fmt_rss(rec: dict) -> str:
    """Peak memory of the primal-only binary and of the AD binary (its tape shows here)."""
    clang, after = (rec[v]["result"].get("maxrss_kb") for v in ("clang", "after"))
    if not clang or not after:
        return "—"
    return f"{clang / 1024:.1f} → {after / 1024:.1f} MB"


def met(flag: bool | None) -> str:
    return "n/a" if flag is None else ("met" if flag else "not met")


# Table columns: (header, cell function). Adding a measurement (e.g. forward mode's
# tangent/primal ratio from a fwd_s field) is one more line here.
COLUMNS = [
    ("kernel", lambda r: r["kernel"]),
    ("size", lambda r: r["size"]),
    ("primal (clang)", lambda r: fmt_time(r["clang_primal_s"])),
    ("primal", lambda r: fmt_time(r["primal_s"])),
    ("gradient", lambda r: fmt_time(r["grad_s"])),
    ("grad/primal", lambda r: fmt_x(r["grad_ratio"]) if r["grad_ratio"] else short_status(r["status"])),
    ("grad / expert", lambda r: fmt_x(r["expert_ratio"]) if r.get("expert_ratio") else "—"),
    ("gradient (AD before opt)", lambda r: fmt_time(r["before_grad_s"]) if r["before_grad_s"]
     else ("—" if r["before_status"] == "ok" else short_status(r["before_status"]))),
    ("speedup of AD after opt", lambda r: fmt_x(r["speedup"], 1)),
    ("tangent/primal (fwd)", lambda r: fmt_x(r["fwd_ratio"]) if r["fwd_ratio"] else short_status(r["fwd_status"])),
    ("split/combined", lambda r: fmt_x(r["split_overhead"]) if r["split_overhead"] else short_status(r["split_status"])),
    ("split kept/combined", lambda r: fmt_x(r["split_kept_overhead"]) if r["split_kept_overhead"]
     else short_status(r["split_status"])),
    ("vec4 / 4 scalar", lambda r: fmt_x(r["vec_ratio"]) if r["vec_ratio"] else short_status(r["vec_status"])),
    ("peak RSS clang → AD", lambda r: fmt_rss(r)),
    ("AD time", lambda r: fmt_time(r["ad_seconds"]) if r["ad_seconds"] is not None
     else ("—" if not r["ad_error"] else "n/a")),
    ("AD s / 10k inst (inst)", lambda r: f"{r['ad_s_per_10k']:.2f} ({r['ad_instructions']})"
     if r["ad_s_per_10k"] is not None else "—"),
    ("targets", targets_cell),
    ("status", lambda r: short_status(r["status"])),
]


def summary_lines(s: dict) -> list[str]:
    ratio_note = (f"{len(s['grad_ratio_met'])}/{s['kernels']} kernels within "
                  f"{s['grad_ratio_target']:.0f}x" + (f" ({', '.join(s['grad_ratio_met'])})" if s["grad_ratio_met"] else ""))
    geo = s["ablation_geomean"]
    grad_geo = s["grad_ratio_geomean"]
    families = ", ".join(f"{fam} {fmt_x(value)}" for fam, value in s.get("grad_ratio_families", {}).items() if value)
    lines = [
        f"gradient/primal: target ≤ {s['grad_ratio_target']:.0f}x per kernel — {ratio_note}"
        + (f"; geometric mean {grad_geo:.2f}x (target ≤ {s['grad_ratio_geomean_target']}x — "
           f"{met(grad_geo <= s['grad_ratio_geomean_target'])})" if grad_geo else "")
        + (f"; not measured (refused/wrong/failed): {', '.join(s['not_measured'])}" if s.get("not_measured") else ""),
        *([f"gradient/primal geometric mean per family: {families}"] if families and len(s["grad_ratio_families"]) > 1
          else []),
        mode_target_line(s, "expert_ratio", "our gradient / hand-written adjoint (same binary)", "≤"),
        mode_target_line(s, "fwd_ratio", "forward tangent/primal", "≤"),
        mode_target_line(s, "split_overhead", "split/combined gradient", "≤"),
        mode_target_line(s, "split_kept_overhead", "split/combined gradient, inputs kept (enzyme_not_overwritten)",
                         "≤"),
        mode_target_line(s, "vec_ratio", "vector forward width 4 / 4 scalar sweeps", "<"),
        f"AD after opt vs AD before opt: geometric mean speedup "
        f"{fmt_x(geo)} over {s['ablation_kernels']} kernel(s); target ≥ {s['ablation_target']}x — "
        + met(bool(geo and geo >= s["ablation_target"]) if geo else None)
        + (f" (without the asymptotic showcase: {fmt_x(s['ablation_geomean_same_complexity'])})"
           if s["ablation_geomean_same_complexity"] and s["ablation_geomean_same_complexity"] != geo else ""),
        "AD synthesis cost: "
        + (f"{s['ad_s_per_10k_overall']:.2f} s per 10k module instructions overall, worst kernel "
           f"{s['ad_s_per_10k_worst']:.2f} ({s['ad_s_per_10k_differentiated_overall']:.2f} s per 10k "
           f"instructions of the differentiated functions alone)"
           if s["ad_s_per_10k_overall"] is not None else "not measured")
        + f"; target ≤ {s['ad_target_s_per_10k']:.0f} s per 10k — "
        + met(s["ad_met"] if s["ad_s_per_10k_worst"] is not None else None),
    ]
    return lines


def mode_target_line(s: dict, key: str, label: str, relation: str) -> str:
    measured, within = s[f"{key}_measured"], s[f"{key}_within"]
    line = f"{label}: target {relation} {s[f'{key}_target']:g}x per kernel — "
    if not measured:
        return line + "n/a (no kernel measured it)"
    missed = [k for k in measured if k not in within]
    return (line + met(s[f"{key}_met"]) + f", {len(within)}/{len(measured)} kernels"
            + (f" (not: {', '.join(missed)})" if missed else "")
            + f"; geometric mean {s[f'{key}_geomean']:.2f}x")


def print_table(records: list[dict], summary: dict, meta: dict) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # plain text when rich is missing
        print(markdown_table(records, summary, meta))
        return
    table = Table(title=f"AD benchmarks ({meta['mode']}; {meta['machine']}; load average "
                        f"{meta['load_average'][0]} → {meta['load_average'][1]})", show_lines=False)
    for header, _ in COLUMNS:
        table.add_column(header, overflow="fold", justify="left" if header in ("kernel", "size", "status") else "right")
    for rec in records:
        table.add_row(*[cell(rec) for _, cell in COLUMNS])
    console = Console(width=None if sys.stdout.isatty() else 260)
    console.print(table)
    for line in summary_lines(summary):
        console.print(line, highlight=False, markup=False)
    notes = failure_notes(records)
    if notes:
        console.print("notes:", highlight=False)
        for note in notes:
            console.print(f"  {note}", highlight=False, markup=False)


def markdown_table(records: list[dict], summary: dict, meta: dict) -> str:
    def esc(text: str) -> str:
        return str(text).replace("|", "\\|")
    out = [f"Generated by `benchmarks/run.py{meta['argv']}` on {meta['date']} — {meta['machine']}; "
           f"1-minute load average {meta['load_average'][0]} before, {meta['load_average'][1]} after "
           "(other work on the machine inflates absolute times; ratios are measured side by side).",
           "", "| " + " | ".join(h for h, _ in COLUMNS) + " |",
           "|" + "|".join("---" for _ in COLUMNS) + "|"]
    out += ["| " + " | ".join(esc(cell(r)) for _, cell in COLUMNS) + " |" for r in records]
    out += [""] + [f"- {esc(line)}" for line in summary_lines(summary)]
    notes = failure_notes(records)
    if notes:
        out += ["", "Notes (first line of each failure):", ""] + [f"- `{n}`" for n in notes]
    return "\n".join(out) + "\n"


MARK_START, MARK_END = "<!-- results:start -->", "<!-- results:end -->"


def write_markdown(path: Path, table: str) -> None:
    """Replaces the marked results region of an existing document, or writes the table alone."""
    text = path.read_text() if path.exists() else ""
    # markers count only on lines of their own, so prose may mention them
    region = re.compile(f"^{re.escape(MARK_START)}$.*?^{re.escape(MARK_END)}$", re.M | re.S)
    if region.search(text):
        text = region.sub(lambda _: f"{MARK_START}\n{table}{MARK_END}", text, count=1)
    else:
        text = table
    atomic_write(path, text)


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(tmp, path)


def plot(records: list[dict], summary: dict, meta: dict, peers: dict | None = None) -> str:
    names = [r["kernel"] for r in records]
    geo = summary["ablation_geomean"]
    panels = [
        svg.Panel("cost of derivatives", names, {
            "gradient / primal": [r["grad_ratio"] for r in records],
            "tangent / primal (forward)": [r["fwd_ratio"] for r in records],
            "split / combined gradient": [r["split_overhead"] for r in records],
            "split, inputs kept / combined": [r["split_kept_overhead"] for r in records],
            **({"gradient / hand-written adjoint": [r.get("expert_ratio") for r in records]}
               if any(r.get("expert_ratio") for r in records) else {})},
            target=TARGET_GRAD_RATIO, target_label=f"gradient target {TARGET_GRAD_RATIO:.0f}x"),
        svg.Panel("speedup: AD after opt over AD before opt", names + ["geomean", "w/o " + "+".join(
                      r["kernel"] for r in records if r["asymptotic"])],
                  {"before-opt gradient / after-opt gradient": [r["speedup"] for r in records]
                   + [geo, summary["ablation_geomean_same_complexity"]]},
                  target=TARGET_ABLATION_GEOMEAN, target_label=f"target geomean {TARGET_ABLATION_GEOMEAN}x"),
        svg.Panel("vector forward mode, width 4", names,
                  {"one width-4 call / 4 scalar sweeps": [r["vec_ratio"] for r in records]},
                  target=TARGET_VEC_RATIO, target_label=f"target < {TARGET_VEC_RATIO:g}x"),
    ]
    if peers:
        rows = peers["rows"]
        panels.append(svg.Panel(
            "peers: their gradient time / ours (above 1: ours faster)", [r["problem"] for r in rows],
            {"JAX jit": [r.get("jax_ratio") for r in rows], "PyTorch": [r.get("torch_ratio") for r in rows],
             "hand-written C": [1 / r["expert_ratio"] if r.get("expert_ratio") else None for r in rows]},
            target=1.0, target_label="ours"))
    wide = len(names) > 6  # many variants: one panel per row, wide enough for every group
    return svg.bar_chart(panels, title="enzyme-build AD benchmarks",
                         subtitle=f"{meta['mode']} run, {meta['date']}, {meta['machine']}, "
                                  f"load average {meta['load_average'][0]}",
                         panel_width=max(520, 60 * len(names) + 80) if wide else 520,
                         columns=1 if wide else None)


def machine_description() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores"


# ---------------------------------------------------------------- peers (JAX, PyTorch)

PEER_FRAMEWORKS = ("jax", "torch")
# each side of the peer table is timed in this many processes and the fastest counts: one
# JAX process ran the GMM gradient at 1.56 ms and the next two at 0.81 and 0.88 ms on the
# same quiet machine (the mode holds for a whole process), so one process decides nothing
PEER_PROCESSES = 3
PEERS_SCRIPT = HERE / "peers" / "run_peers.py"


def peer_problems():
    """benchmarks/peers/problems.py's PROBLEMS (imported on demand: it needs numpy)."""
    sys.path.insert(0, str(HERE / "peers"))
    try:
        import problems
    finally:
        sys.path.remove(str(HERE / "peers"))
    return problems.PROBLEMS


def run_peer_framework(framework: str, quick: bool, timeout: float = 1800) -> dict:
    """One framework's timings, from a child process (its single-thread env is set before import)."""
    cmd = [sys.executable, str(PEERS_SCRIPT), "--framework", framework]
    if quick:
        cmd += ["--quick", "--min-time", "0.02", "--repeats", "3"]
    cmd += TIMING_ARGS  # the same --min-time= / --repeats= as the kernels (the last one wins)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"ok": False, "framework": framework, "error": f"timed out after {timeout:.0f} s"}
    except (ValueError, IndexError):
        return {"ok": False, "framework": framework, "error": first_error_line(proc.stderr + proc.stdout)}


def measure_peers(binaries: dict[str, Step], quick: bool) -> dict:
    """Our compiled gradient (and the hand-written adjoint) at each peer problem's size, then
    every framework's, all in this run: rows of seconds and ratios, and a line per framework
    that could not run. Each side runs in PEER_PROCESSES processes (one with --quick) and
    its fastest median counts, ours and the peers' alike."""
    processes = 1 if quick else PEER_PROCESSES
    rows = []
    for problem in peer_problems():
        step = binaries.get(problem.kernel)
        row = {"problem": problem.key, "label": problem.label, "kernel": problem.kernel,
               "size": problem.size_text(quick), "ours_s": None, "expert_s": None, "error": ""}
        if step is None or not step.ok:
            row["error"] = f"our {problem.kernel} binary was not built" + (f": {step.error}" if step else "")
        else:
            binary = step.fields["binary"]
            cmd = [binary, *problem.args(quick), *TIMING_ARGS]
            for _ in range(processes):
                try:
                    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
                    fields = parse_result(proc.stdout) or {}
                except subprocess.TimeoutExpired:
                    fields = {}
                if fields.get("check") != "ok":
                    row["error"] = "our gradient " + ("wrong" if fields.get("check") == "FAIL" else "did not run")
                    row["ours_s"] = row["expert_s"] = None
                    break
                if row["ours_s"] is None or fields["grad_s"] < row["ours_s"]:
                    row["ours_s"], row["primal_s"] = fields.get("grad_s"), fields.get("primal_s")
                if fields.get("expert_s") and (row["expert_s"] is None or fields["expert_s"] < row["expert_s"]):
                    row["expert_s"] = fields["expert_s"]
        rows.append(row)
    frameworks, skipped = {}, []
    for framework in PEER_FRAMEWORKS:
        print(f"peers: {framework} ...", file=sys.stderr)
        for _ in range(processes):
            result = run_peer_framework(framework, quick)
            if not result.get("ok"):
                if framework not in frameworks:
                    skipped.append(f"{framework}: {result.get('error', 'failed')}")
                break
            frameworks[framework] = f"{result['name']} {result['version']}"
            for entry in result["results"]:
                row = next(r for r in rows if r["problem"] == entry["problem"])
                seconds, best = entry.get("grad_s"), row.get(f"{framework}_s")
                if seconds and (best is None or seconds < best):
                    row[f"{framework}_s"] = seconds
                if entry.get("error") and not any(e.startswith(f"{framework}:") for e in row.get("peer_errors", [])):
                    row.setdefault("peer_errors", []).append(f"{framework}: {entry['error']}")
    for row in rows:
        for framework in PEER_FRAMEWORKS:
            peer = row.get(f"{framework}_s")
            row[f"{framework}_ratio"] = peer / row["ours_s"] if peer and row["ours_s"] else None
        row["expert_ratio"] = row["ours_s"] / row["expert_s"] if row["ours_s"] and row["expert_s"] else None
    return {"rows": rows, "frameworks": frameworks, "skipped": skipped, "processes": processes}


def peer_target_cell(row: dict) -> str:
    """The issue's targets: ours no slower than JAX jit, and than the hand-written adjoint × 1.2."""
    if row["ours_s"] is None:
        return row["error"] or "—"
    missed = []
    if row.get("jax_ratio") is not None and row["jax_ratio"] < 1:
        missed.append("JAX")
    if row.get("expert_ratio") is not None and row["expert_ratio"] > TARGET_EXPERT_RATIO:
        missed.append("expert")
    measured = row.get("jax_ratio") is not None or row.get("expert_ratio") is not None
    return ("met" if not missed else "missed: " + ", ".join(missed)) if measured else "—"


PEER_COLUMNS = [
    ("problem", lambda r: r["label"]),
    ("size", lambda r: r["size"]),
    ("ours (C, enzyme-build)", lambda r: fmt_time(r["ours_s"])),
    ("hand-written C", lambda r: fmt_time(r["expert_s"])),
    ("JAX jit", lambda r: fmt_time(r.get("jax_s"))),
    ("PyTorch", lambda r: fmt_time(r.get("torch_s"))),
    ("ours / hand-written", lambda r: fmt_x(r["expert_ratio"])),
    ("JAX / ours", lambda r: fmt_x(r["jax_ratio"])),
    ("PyTorch / ours", lambda r: fmt_x(r["torch_ratio"])),
    ("target (ours ≤ JAX, ≤ 1.2x hand-written)", peer_target_cell),
]


def peer_notes(peers: dict) -> list[str]:
    processes = peers.get("processes", 1)
    each = f"; each side the fastest of {processes} processes" if processes > 1 else ""
    notes = [f"{', '.join(peers['frameworks'].values()) or 'no framework'} at 1 thread, float64, "
             f"timed in this run beside our compiled C (the kernel binaries, same seeded data{each})"]
    notes += [f"skipped {line}" for line in peers["skipped"]]
    notes += [f"{r['label']}: {e}" for r in peers["rows"] for e in r.get("peer_errors", [])]
    return notes


def print_peers(peers: dict) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(peers_markdown(peers))
        return
    table = Table(title="gradients against peers (seconds per gradient; ratio > 1: ours faster)")
    for header, _ in PEER_COLUMNS:
        table.add_column(header, overflow="fold", justify="left" if header in ("problem", "size") else "right")
    for row in peers["rows"]:
        table.add_row(*[cell(row) for _, cell in PEER_COLUMNS])
    console = Console(width=None if sys.stdout.isatty() else 260)
    console.print(table)
    for note in peer_notes(peers):
        console.print(note, highlight=False, markup=False)


def peers_markdown(peers: dict) -> str:
    out = ["Gradients against peers (seconds per gradient; ratios above 1 mean ours is faster):", "",
           "| " + " | ".join(h for h, _ in PEER_COLUMNS) + " |", "|" + "|".join("---" for _ in PEER_COLUMNS) + "|"]
    out += ["| " + " | ".join(str(cell(r)).replace("|", "\\|") for _, cell in PEER_COLUMNS) + " |"
            for r in peers["rows"]]
    out += [""] + [f"- {note}" for note in peer_notes(peers)]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- main

def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes and short timing (smoke runs)")
    parser.add_argument("--kernels", default="",
                        help=f"comma-separated subset of: {', '.join(KERNELS)} (default: all)")
    parser.add_argument("--families", default="",
                        help=f"every variant of these families: {', '.join(FAMILIES)}")
    parser.add_argument("--peers", action="store_true",
                        help="also time JAX and PyTorch gradients (benchmarks/peers/) beside ours")
    parser.add_argument("--results", type=Path, default=HERE / "results",
                        help="directory for latest.json, the SVG plot and build products")
    parser.add_argument("--markdown", type=Path, help="write the results table as markdown here "
                        f"(into the region between {MARK_START} and {MARK_END} if present)")
    parser.add_argument("--min-time", type=float, help="seconds of timing per case in each kernel "
                        "(default 0.25, --quick 0.02)")
    parser.add_argument("--repeats", type=int, help="timed batches per case (default 5, --quick 3)")
    parser.add_argument("--no-ablation", action="store_true", help="skip the AD-before-opt builds")
    parser.add_argument("--no-ad-time", action="store_true", help="skip measuring the AD stage alone")
    parser.add_argument("--jobs", type=int, default=2, help="parallel builds (runs are always sequential)")
    parser.add_argument("--veclib", metavar="LIB",
                        help="build every kernel, with plain clang and with enzyme-build alike, with "
                        "-fveclib=LIB (libmvec: glibc's vector math in vectorized loops); default: none")
    parser.add_argument("--measure-ad", metavar="MODULE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    unknown = [k for k in args.kernels.split(",") if k and k not in KERNELS]
    if unknown:
        parser.error(f"unknown kernel(s) {', '.join(unknown)}; choose from {', '.join(KERNELS)}")
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown family(ies) {', '.join(unknown)}; choose from {', '.join(FAMILIES)}")
    names = [k for k in args.kernels.split(",") if k]
    names += [k.name for k in KERNELS.values() if k.family_name in families and k.name not in names]
    args.kernel_names = names or list(KERNELS)
    return args


def build_flags(veclib: str | None) -> list[str]:
    """The flags of every kernel build: BASE_CFLAGS, plus -fveclib=<veclib> when given."""
    return [*BASE_CFLAGS, *([f"-fveclib={veclib}"] if veclib else [])]


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.measure_ad:
        return measure_ad_child(args.measure_ad)
    kernels = [KERNELS[k] for k in args.kernel_names]
    TIMING_ARGS[:] = ([f"--min-time={args.min_time}"] if args.min_time else []) + \
        ([f"--repeats={args.repeats}"] if args.repeats else [])
    CFLAGS[:] = build_flags(args.veclib)
    out_dir = args.results / ("build-quick" if args.quick else "build")
    out_dir.mkdir(parents=True, exist_ok=True)
    clang = clang_exe()
    variants = [v for v in VARIANTS if not (args.no_ablation and v == "before")]
    jobs = [(k, v) for k in kernels for v in variants]
    if args.peers:  # the kernels that time our side of the peer problems, built even when not listed
        jobs += [(KERNELS[name], "after") for name in dict.fromkeys(p.kernel for p in peer_problems())
                 if KERNELS[name] not in kernels]
    load_before = os.getloadavg()[0]
    print(f"building {len(kernels)} kernel(s) × {len(variants)} variants ...", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        done = dict(zip(jobs, pool.map(lambda kv: build(kv[0], kv[1], out_dir, clang), jobs)))
    skipped = Step(False, error="not built (--no-ablation)")
    records = []
    for kernel in kernels:
        builds = {v: done.get((kernel, v), skipped) for v in VARIANTS}
        print(f"running {kernel.name} ...", file=sys.stderr)
        records.append(collect(kernel, builds, args.quick, not args.no_ad_time, out_dir))
    summary = summarize(records)
    peers = None
    if args.peers:
        peers = measure_peers({k.name: s for (k, v), s in done.items() if v == "after"}, args.quick)
    load_after = os.getloadavg()[0]
    meta = {"load_average": [round(load_before, 2), round(load_after, 2)],"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine_description(), "mode": "quick" if args.quick else "full",
            "argv": "".join(f" {a}" for a in argv), "cflags": list(CFLAGS),
            "python": platform.python_version()}
    print_table(records, summary, meta)
    if peers:
        print_peers(peers)
    atomic_write(args.results / "latest.json",
                 json.dumps({"meta": meta, "summary": summary, "kernels": records, "peers": peers}, indent=2) + "\n")
    atomic_write(args.results / "ad_benchmarks.svg",
                 plot(records, summary, meta, peers))
    if args.markdown:
        table = markdown_table(records, summary, meta)
        write_markdown(args.markdown, table + ("\n" + peers_markdown(peers) if peers else ""))
    # A wrong gradient is a failure of the run; missing AD support is reported, not fatal.
    wrong = [r["kernel"] for r in records
             for v in ("after", "before") if r[v]["result"].get("check") == "FAIL"]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
