"""OpenMP parallel loops through the real CLI: `enzyme-build cc -fopenmp`.

kernels.c holds thirteen parallel kernels: static, chunked static, dynamic, guided and runtime
schedules; num_threads (larger than OMP_NUM_THREADS); reduction(+:…) of a double, and of a
double and an int; firstprivate/private/lastprivate/shared data; `omp atomic`; two
worksharing loops and a barrier in one region; single/master/sections; stencils whose
threads meet at block edges; a region whose `if(…)` clause is false. Each gradient is checked
against central finite differences and each forward tangent against the gradient, at -O0 and
-O2 (with -g), on 1, 2 and 3 threads (more threads than cores). Separate programs: vector
forward mode through a fork, a firstprivate float. Constructs the engine does not
differentiate must be refused naming the construct and the line, never with the advice to
mark the runtime inactive.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
KERNELS = ["static_reduction", "dynamic_chunks", "stencil", "stencil_blocks", "private_data", "atomic_sum",
           "two_phases", "guided_runtime", "serialized_if", "mixed_reduction",
           "team_of_four", "last_private", "single_master_sections"]


def _libomp() -> bool:
    clang = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
    if not os.path.exists(clang):
        return False
    found = subprocess.run([clang, "-print-file-name=libomp.so"], capture_output=True, text=True).stdout.strip()
    return os.path.isabs(found) and os.path.exists(found)


pytestmark = pytest.mark.skipif(not _libomp(), reason="needs libomp-22-dev (./bootstrap setup installs it)")


def build(directory: Path, source: Path, *flags: str, out: str = "prog", env=None) -> subprocess.CompletedProcess:
    return subprocess.run([ENZYME_BUILD, "cc", *flags, "-fopenmp", str(source), "-o", out, "-lm"],
                          cwd=directory, capture_output=True, text=True, timeout=600, env=env)


# libomp's own dynamic-schedule dispatch sometimes fails this assertion under load, with
# nothing of the program involved (llvm/llvm-project#86995, #132164, #54422: reproduced with
# libomp's own tests); a run that dies of exactly it is run again, anything else fails
_LIBOMP_DISPATCH_RACE = "kmp_dispatch.cpp"


def run(binary: Path, threads: int, schedule: str = "static") -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_SCHEDULE=schedule)
    for _ in range(3):
        proc = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120, env=env)
        if not (proc.returncode == -6 and _LIBOMP_DISPATCH_RACE in proc.stderr
                and "vnew.p.ub * (UT)chunk <= trip" in proc.stderr):
            break
    return proc


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    out = {}
    for opt in ("-O0", "-O2"):
        work = tmp_path_factory.mktemp(f"omp{opt}")
        env = dict(os.environ, ENZYME_BUILD_KEEP=str(work / "keep"))
        # -O2 with debug information: its records sit among the instructions the OpenMP passes read
        proc = build(work, HERE / "kernels.c", opt, *(["-g"] if opt == "-O2" else []), env=env)
        out[opt] = (work / "prog", proc, work / "keep")
    return out


def _check_output(proc: subprocess.CompletedProcess, threads: int) -> None:
    assert f"threads {threads}" in proc.stdout, proc.stdout + proc.stderr
    failing = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    assert not failing, "\n".join(failing)
    ok = set(re.findall(r"^OK (\w+) (reverse|forward)$", proc.stdout, re.M))
    assert ok == {(k, m) for k in KERNELS for m in ("reverse", "forward")}, proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_gradients_match_finite_differences(kernels, opt, threads):
    binary, proc, _ = kernels[opt]
    assert proc.returncode == 0, proc.stderr
    _check_output(run(binary, threads), threads)


def test_two_threads_repeatedly(kernels):
    """Adjoints that several threads add to one element must not be lost to races."""
    binary, proc, _ = kernels["-O2"]
    assert proc.returncode == 0, proc.stderr
    for k in range(16):
        _check_output(run(binary, 2, ("static", "dynamic,2")[k % 2]), 2)


def _function(text: str, name: str) -> str:
    m = re.search(r"^define [^@]*@" + re.escape(name) + r"\(.*?^}", text, re.M | re.S)
    assert m, f"@{name} not in the AD output"
    return m.group(0)


def test_reverse_loop_is_forked_and_accumulates_without_needless_atomics(kernels):
    """The reverse of a fork is a fork (the reverse loop runs on the team); adjoints of
    elements only the iteration's own thread touches (x[i], y[i]) are plain adds, the read-
    only shared coefficient is summed per thread and added once; the stencils' neighbours
    (x[i-1], x[i+1]) go through the range check (plain inside the thread's private address
    range, atomic outside it)."""
    _, proc, keep = kernels["-O2"]
    assert proc.returncode == 0, proc.stderr
    text = (next(keep.glob("*.ad")) / "ad-output.ll").read_text()
    diffe = _function(text, "diffe_static_reduction")
    assert re.search(r"@__kmpc_fork_call\(ptr [^,]+, i32 \d+, ptr @augmented_static_reduction\.omp_outlined\.omp_task", diffe)
    assert re.search(r"@__kmpc_fork_call\(ptr [^,]+, i32 \d+, ptr @reverse_static_reduction\.omp_outlined\.omp_task", diffe)
    reverse = _function(text, "reverse_static_reduction.omp_outlined")
    assert reverse.count("atomicrmw fadd") == 1, reverse       # the flush of c's per-thread sum
    assert "__enzyme_build_omp_add_double" not in reverse
    for name in ("stencil", "stencil_blocks"):
        body = _function(text, f"reverse_{name}.omp_outlined")
        assert body.count("call void @__enzyme_build_omp_add_double(") >= 2, body
    helper = _function(text, "__enzyme_build_omp_add_double")
    assert "atomicrmw fadd" in helper


REFUSED = {
    "critical": ("""
#include <math.h>
extern double __enzyme_autodiff(void *, ...);
double f(double *x, int n) {
    double s = 0;
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
#pragma omp critical
        s += sin(x[i]);
    }
    return s;
}
int main(void) { double x[4] = {1, 2, 3, 4}, dx[4] = {0}; __enzyme_autodiff((void *)f, x, dx, 4); return 0; }
""", "`#pragma omp critical`", 7),
    "task": ("""
extern double __enzyme_autodiff(void *, ...);
void f(double *x, double *y, int n) {
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
#pragma omp task
        y[i] = x[i] * x[i];
    }
}
int main(void) {
    double x[4] = {1, 2, 3, 4}, dx[4] = {0}, y[4], dy[4] = {1, 1, 1, 1};
    __enzyme_autodiff((void *)f, x, dx, y, dy, 4);
    return 0;
}
""", "`#pragma omp task`", 5),
    "nested": ("""
extern double __enzyme_autodiff(void *, ...);
void f(double *x, double *y, int n) {
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
#pragma omp parallel for
        for (int j = 0; j < n; j++) y[i * n + j] = x[i] * x[j];
    }
}
int main(void) {
    double x[4] = {1, 2, 3, 4}, dx[4] = {0}, y[16], dy[16] = {1};
    __enzyme_autodiff((void *)f, x, dx, y, dy, 4);
    return 0;
}
""", "nested parallelism", 5),
    "lock": ("""
#include <omp.h>
extern double __enzyme_autodiff(void *, ...);
omp_lock_t lock;
double f(double *x, int n) {
    double s = 0;
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
        omp_set_lock(&lock);
        s += x[i] * x[i];
        omp_unset_lock(&lock);
    }
    return s;
}
int main(void) {
    double x[4] = {1, 2, 3, 4}, dx[4] = {0};
    omp_init_lock(&lock);
    __enzyme_autodiff((void *)f, x, dx, 4);
    return 0;
}
""", "OpenMP lock (omp_set_lock)", 8),
    "max_reduction": ("""
extern double __enzyme_autodiff(void *, ...);
double f(double *x, int n) {
    double m = 0;
#pragma omp parallel for reduction(max:m)
    for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}
int main(void) { double x[4] = {1, 2, 3, 4}, dx[4] = {0}; __enzyme_autodiff((void *)f, x, dx, 4); return 0; }
""", "a reduction other than `+`", 4),
    "critical_forward": ("""
#include <math.h>
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;
double f(double *x, int n) {
    double s = 0;
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
#pragma omp critical
        s += sin(x[i]);
    }
    return s;
}
int main(void) {
    double x[4] = {1, 2, 3, 4}, dx[4] = {1, 0, 0, 0};
    return __enzyme_fwddiff((void *)f, enzyme_dup, x, dx, enzyme_const, 4) > 0;
}
""", "`#pragma omp critical`", 8),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_unsupported_constructs_are_refused_by_name_and_line(tmp_path, case):
    source, construct, line = REFUSED[case]
    (tmp_path / f"{case}.c").write_text(source.lstrip("\n"))
    proc = build(tmp_path, tmp_path / f"{case}.c", "-O2", "-g")
    assert proc.returncode != 0, proc.stdout
    assert construct in proc.stderr, proc.stderr
    assert f"error: {case}.c:{line}: " in proc.stderr, proc.stderr   # the line of the pragma or call
    assert "Traceback" not in proc.stderr
    assert "inactive" not in proc.stderr, proc.stderr   # marking the runtime inactive is never the advice
    assert not (tmp_path / "prog").exists()


VECTOR_FORWARD = r"""
#include <math.h>
#include <stdio.h>
extern int enzyme_dup, enzyme_const, enzyme_width;
typedef struct { double d[2]; } d2;
extern d2 __enzyme_fwddiff2(void *, ...);
double f(double *x, int n) {
    double s = 0;
#pragma omp parallel for reduction(+:s)
    for (int i = 0; i < n; i++) s += sin(x[i]) * x[i];
    return s;
}
int main(void) {
    double x[30], dx[30], ex[30];
    for (int i = 0; i < 30; i++) { x[i] = 0.1 * i; dx[i] = 1.0; ex[i] = (i == 3); }
    d2 r = __enzyme_fwddiff2((void *)f, enzyme_width, 2, enzyme_dup, x, dx, ex, enzyme_const, 30);
    double all = 0;   /* d/dt f(x + t * (1, ..., 1)) */
    for (int i = 0; i < 30; i++) all += cos(x[i]) * x[i] + sin(x[i]);
    double one = cos(x[3]) * x[3] + sin(x[3]);
    int ok = fabs(r.d[0] - all) < 1e-10 && fabs(r.d[1] - one) < 1e-10;
    printf("%s %.12g %.12g %.12g %.12g\n", ok ? "OK" : "FAIL", r.d[0], all, r.d[1], one);
    return !ok;
}
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_vector_forward_mode_through_a_fork(tmp_path, threads):
    (tmp_path / "vec.c").write_text(VECTOR_FORWARD)
    proc = build(tmp_path, tmp_path / "vec.c", "-O2")
    assert proc.returncode == 0, proc.stderr
    out = run(tmp_path / "prog", threads)
    assert out.returncode == 0 and out.stdout.startswith("OK "), out.stdout + out.stderr


FLOAT_FIRSTPRIVATE = r"""
#include <math.h>
#include <stdio.h>
extern int enzyme_dup, enzyme_const, enzyme_out;
extern float __enzyme_autodiff(void *, ...);
extern float __enzyme_fwddiff(void *, ...);
/* a float captured by value: its bits travel as an i64 (bitcast to i32, zext) */
float f(float *x, float *y, int n, float c) {
    float s = 0;
#pragma omp parallel for firstprivate(c) reduction(+:s)
    for (int i = 0; i < n; i++) {
        y[i] = x[i] * c * c;
        s += y[i];
    }
    return s;
}
int main(void) {
    float x[25], dx[25] = {0}, y[25], dy[25] = {0}, tx[25], ty[25] = {0}, c = 1.5f, sx = 0;
    for (int i = 0; i < 25; i++) { x[i] = 0.1f * i; tx[i] = (i % 3) - 1.0f; sx += x[i]; }
    float dc = __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, 25, enzyme_out, c);
    int bad = fabsf(dc - 2 * c * sx) > 1e-4f * (1 + fabsf(2 * c * sx));
    float dir = 0.5f * dc;
    for (int i = 0; i < 25; i++) { bad |= fabsf(dx[i] - c * c) > 1e-6f; dir += tx[i] * dx[i]; }
    float t = __enzyme_fwddiff((void *)f, enzyme_dup, x, tx, enzyme_dup, y, ty, enzyme_const, 25, enzyme_dup, c, 0.5f);
    bad |= fabsf(t - dir) > 1e-4f * (1 + fabsf(dir));
    printf("%s dc=%g expected %g, tangent %g expected %g\n", bad ? "FAIL" : "OK", dc, 2 * c * sx, t, dir);
    return bad;
}
"""


def _builds_and_prints_ok(directory: Path, text: str, *flags: str) -> None:
    """`text` built with `flags` prints "OK ..." and exits 0 with one thread and with two."""
    (directory / "p.c").write_text(text)
    proc = build(directory, directory / "p.c", *flags)
    assert proc.returncode == 0, proc.stderr
    for threads in (1, 2):
        out = run(directory / "prog", threads)
        assert out.returncode == 0 and out.stdout.startswith("OK "), out.stdout + out.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_firstprivate_float(tmp_path, opt):
    _builds_and_prints_ok(tmp_path, FLOAT_FIRSTPRIVATE, opt, "-g")


# fuzz-17's class: one parallel region capturing a double (and one a float) by value, forked
# from two places after inlining, one of which passes a constant: the captured value is
# passed by address (pass_firstprivate_by_address) at every fork of the outlined function,
# the constant's too (it crashed: the constant's bits went where an address was read)
FIRSTPRIVATE_TWO_FORKS = r"""
#include <stdio.h>
#include <math.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
static inline __attribute__((always_inline)) void axpy(double *b, const double *a, double r, int n) {
  #pragma omp parallel for firstprivate(r)
  for (int k = 0; k < n; k++) b[k] = b[k] + r * a[k];
}
static inline __attribute__((always_inline)) void axpyf(float *b, const float *a, float r, int n) {
  #pragma omp parallel for firstprivate(r)
  for (int k = 0; k < n; k++) b[k] = b[k] + r * a[k];
}
__attribute__((noinline)) double f(const double *x) {
  double a[6], b[6];
  float af[4], bf[4];
  for (int i = 0; i < 6; i++) { a[i] = sin(x[i % 3]); b[i] = x[(i + 1) % 3]; }
  for (int i = 0; i < 4; i++) { af[i] = (float)x[i % 3]; bf[i] = 0.5f; }
  axpy(b, a, 0.5 * x[2], 6);
  axpyf(bf, af, (float)x[0], 4);
  double s = 0;
  for (int i = 0; i < 6; i++) s += b[i] * b[i];
  for (int i = 0; i < 4; i++) s += bf[i];
  return s;
}
int main(void) {
  double u[6] = {1, 2, 3, 4, 5, 6}, v[6] = {0};
  float uf[4] = {1, 2, 3, 4}, vf[4] = {0};
  axpy(v, u, 0.25, 6);      /* the same regions forked with constants */
  axpyf(vf, uf, 0.5f, 4);
  double x[3] = {0.3, -0.7, 1.1}, g[3] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  int bad = v[5] != 1.5 || vf[3] != 2.0f;
  for (int i = 0; i < 3; i++) {
    double h = 1e-3, xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]};
    xp[i] += h; xm[i] -= h;
    double fd = (f(xp) - f(xm)) / (2 * h);
    if (fabs(fd - g[i]) > 1e-3 * fmax(1, fabs(fd))) { bad = 1; printf("grad %d: %g against %g\n", i, g[i], fd); }
  }
  printf(bad ? "FAIL\n" : "OK %g %g %g\n", g[0], g[1], g[2]);
  return bad;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_firstprivate_region_forked_with_a_constant_too(tmp_path, opt):
    _builds_and_prints_ok(tmp_path, FIRSTPRIVATE_TWO_FORKS, opt)
