"""BLAS derivatives through the real CLI: `enzyme-build cc ... -lblas` / `-lopenblas`.

The group programs (level 1, 2, 3, LAPACK) each cover every family of their level in both
precisions, CBLAS and Fortran forms, both layouts, every trans/uplo/side/diag combination,
padded leading dimensions and positive/negative strides; reverse mode is checked against
finite differences, forward mode against the gradient. Each is built once (against
reference BLAS/LAPACK) and run against them and against OpenBLAS (same sonames). LAPACK:
potrf, potrs, gesv (both uplo; gesv's LU factors are part of the loss, so the adjoint of
the factors it leaves in A is checked too).
"""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from blas_harness import GROUPS, LINK, VARIANT_PRECISIONS, program_source
from blas_helpers import ENZYME_BUILD, OPENBLAS_DIR, REFERENCE_DIR, REFERENCE_LAPACK_DIR, build, run, write

pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(REFERENCE_DIR, "libblas.so.3"))
                                or not os.path.exists("/usr/include/x86_64-linux-gnu/cblas.h")
                                and not os.path.exists("/usr/include/cblas.h"),
                                reason="needs libblas-dev and libopenblas-dev (./bootstrap test installs them)")


@pytest.fixture(scope="module")
def group_binaries(tmp_path_factory):
    out = {}
    work = tmp_path_factory.mktemp("blas_groups")
    for group in GROUPS:
        write(work, f"{group}.c", program_source(group))
        proc = build(work, [f"{group}.c", "-o", group, f"-L{REFERENCE_DIR}", f"-L{REFERENCE_LAPACK_DIR}",
                            *LINK.get(group, []), "-lblas", "-lm"])
        out[group] = (work / group, proc)
    return out


@pytest.mark.parametrize("library", ["reference", "openblas"])
@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_family_matches_finite_differences(group_binaries, group, library):
    binary, proc = group_binaries[group]
    assert proc.returncode == 0, proc.stderr
    env = dict(os.environ, LD_LIBRARY_PATH=f"{REFERENCE_DIR}:{REFERENCE_LAPACK_DIR}" if library == "reference"
               else OPENBLAS_DIR)
    result = subprocess.run([str(binary)], capture_output=True, text=True, env=env, timeout=120)
    summaries = re.findall(r"^SUMMARY (\w+) (\d+) (\d+)$", result.stdout, re.M)
    expected = {p + f.name for p in "ds" for f in GROUPS[group]} | \
        {p + f.name + "_variants" for p in VARIANT_PRECISIONS for f in GROUPS[group]}
    assert {name for name, _, _ in summaries} == expected, result.stdout[-2000:]
    assert all(int(cases) > 0 for _, cases, _ in summaries)
    failing = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert not failing and result.returncode == 0, "\n".join(failing[:20])


MLP = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <cblas.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* one dense layer Y = tanh(W X + b 1^T) through gemm, then a squared loss; the weight
   matrix is overwritten after the gemm (the reverse sweep must use the old W) */
double layer(double *W, double *X, const double *b, double *Y, int m, int n, int k) {
  for (int j = 0; j < n; j++) cblas_dcopy(m, b, 1, Y + j * m, 1);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, W, m, X, k, 1.0, Y, m);
  for (int i = 0; i < m * k; i++) W[i] = -7.0;
  double s = 0;
  for (int i = 0; i < m * n; i++) { double t = tanh(Y[i]); s += t * t; }
  return s;
}
static double f(const double *W0, const double *X0, const double *b, int m, int n, int k) {
  double *W = malloc(m * k * sizeof(double)), *X = malloc(k * n * sizeof(double)), *Y = malloc(m * n * sizeof(double));
  for (int i = 0; i < m * k; i++) W[i] = W0[i];
  for (int i = 0; i < k * n; i++) X[i] = X0[i];
  double r = layer(W, X, b, Y, m, n, k);
  free(W); free(X); free(Y);
  return r;
}
int main(void) {
  enum { M = 4, N = 3, K = 5 };
  double W[M*K], X[K*N], b[M], Y[M*N], dW[M*K] = {0}, dX[K*N] = {0}, db[M] = {0}, dY[M*N] = {0};
  double W0[M*K], X0[K*N];
  for (int i = 0; i < M*K; i++) W0[i] = W[i] = 0.3 * sin(i + 1.0);
  for (int i = 0; i < K*N; i++) X0[i] = X[i] = 0.5 * cos(0.7 * i);
  for (int i = 0; i < M; i++) b[i] = 0.1 * i - 0.15;
  __enzyme_autodiff((void *)layer, enzyme_dup, W, dW, enzyme_dup, X, dX, enzyme_dup, b, db,
                    enzyme_dup, Y, dY, M, N, K);
  int bad = 0;
  double h = 1e-6;
  for (int i = 0; i < M*K; i++) {
    double w = W0[i]; W0[i] = w + h; double fp = f(W0, X0, b, M, N, K); W0[i] = w - h;
    double fm = f(W0, X0, b, M, N, K); W0[i] = w;
    if (fabs((fp - fm) / (2 * h) - dW[i]) > 1e-6) { bad++; printf("dW[%d] %g vs %g\n", i, dW[i], (fp - fm) / (2 * h)); }
  }
  for (int i = 0; i < K*N; i++) {
    double x = X0[i]; X0[i] = x + h; double fp = f(W0, X0, b, M, N, K); X0[i] = x - h;
    double fm = f(W0, X0, b, M, N, K); X0[i] = x;
    if (fabs((fp - fm) / (2 * h) - dX[i]) > 1e-6) { bad++; printf("dX[%d] %g vs %g\n", i, dX[i], (fp - fm) / (2 * h)); }
  }
  for (int i = 0; i < M; i++) {
    double v = b[i]; b[i] = v + h; double fp = f(W0, X0, b, M, N, K); b[i] = v - h;
    double fm = f(W0, X0, b, M, N, K); b[i] = v;
    if (fabs((fp - fm) / (2 * h) - db[i]) > 1e-6) { bad++; printf("db[%d] %g vs %g\n", i, db[i], (fp - fm) / (2 * h)); }
  }
  printf("%s\n", bad ? "MISMATCH" : "OK");
  return bad != 0;
}
"""


def test_overwritten_matrix_input_is_cached_openblas(tmp_path):
    """-lopenblas, CBLAS gemm + copy in one layer; W is overwritten after the gemm."""
    write(tmp_path, "mlp.c", MLP)
    proc = build(tmp_path, ["mlp.c", "-o", "mlp", "-lopenblas", "-lm"])
    assert proc.returncode == 0, proc.stderr
    result = run([tmp_path / "mlp"], tmp_path)
    assert result.stdout.strip().endswith("OK"), result.stdout


SPLIT = r"""
#include <stdio.h>
#include <cblas.h>
extern int enzyme_dup, enzyme_const;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
void layer(double *W, const double *x, double *y, double *out, int m, int n) {
  cblas_dgemv(CblasColMajor, CblasNoTrans, m, n, 1.0, W, m, x, 1, 0.0, y, 1);
  for (int i = 0; i < m * n; i++) W[i] = 0;
  *out = cblas_ddot(m, y, 1, y, 1);
}
int main(void) {
  enum { M = 3, N = 2 };
  double W[M*N], x[N] = {0.5, -1.5}, y[M], out = 0;
  double dW[M*N] = {0}, dx[N] = {0}, dy[M] = {0}, dout = 1.0;
  for (int i = 0; i < M*N; i++) W[i] = 0.1 * i + 0.2;
  void *tape = __enzyme_augmentfwd((void *)layer, enzyme_dup, W, dW, enzyme_dup, x, dx, enzyme_dup, y, dy,
                                   enzyme_dup, &out, &dout, M, N);
  __enzyme_reverse((void *)layer, enzyme_dup, W, dW, enzyme_dup, x, dx, enzyme_dup, y, dy,
                   enzyme_dup, &out, &dout, M, N, tape);
  for (int i = 0; i < M*N; i++) printf("%.10g\n", dW[i]);
  for (int i = 0; i < N; i++) printf("%.10g\n", dx[i]);
  return 0;
}
"""


def test_split_mode_through_gemv_and_dot(tmp_path):
    write(tmp_path, "split.c", SPLIT)
    proc = build(tmp_path, ["split.c", "-o", "split", "-lopenblas"])
    assert proc.returncode == 0, proc.stderr
    values = [float(v) for v in run([tmp_path / "split"], tmp_path).stdout.split()]
    W = [[0.2, 0.5], [0.3, 0.6], [0.4, 0.7]]          # column-major 3x2
    x = [0.5, -1.5]
    y = [W[i][0] * x[0] + W[i][1] * x[1] for i in range(3)]
    dW = [2 * y[i] * x[j] for j in range(2) for i in range(3)]
    dx = [sum(2 * y[i] * W[i][j] for i in range(3)) for j in range(2)]
    assert values == pytest.approx(dW + dx)


VECTOR = r"""
#include <stdio.h>
#include <cblas.h>
extern int enzyme_dup, enzyme_width;
typedef struct { double d[2]; } v2;
v2 __enzyme_fwddiff(void *, ...);
double f(double *x, int n) { cblas_dscal(n, 2.0, x, 1); return x[0] * x[1]; }
int main(void) {
  double x[2] = {1, 2}, dx[2] = {1, 0}, ex[2] = {0, 1};
  v2 r = __enzyme_fwddiff((void *)f, enzyme_width, 2, enzyme_dup, x, dx, ex, 2);
  printf("%g %g %g %g %g %g\n", r.d[0], r.d[1], x[0], x[1], dx[0], ex[1]);
  return 0;
}
"""


def test_vector_mode_through_in_place_routine_scales_once(tmp_path):
    """The batch rule runs dscal once, however many lanes: x = (2, 4), tangents of 4 x0 x1."""
    write(tmp_path, "vec.c", VECTOR)
    proc = build(tmp_path, ["vec.c", "-o", "vec", "-lopenblas"])
    assert proc.returncode == 0, proc.stderr
    assert [float(v) for v in run([tmp_path / "vec"], tmp_path).stdout.split()] == [8.0, 4.0, 2.0, 4.0, 2.0, 2.0]


VECTOR_DOT = r"""
#include <stdio.h>
#include <cblas.h>
extern int enzyme_dup, enzyme_width;
typedef struct { double d[2]; } v2;
v2 __enzyme_fwddiff(void *, ...);
double f(const double *x, const double *y) { return cblas_ddot(3, x, 1, y, 1); }
int main(void) {
  double x[3] = {1, 2, 3}, y[3] = {4, 5, 6}, e0[3] = {1, 0, 0}, e1[3] = {0, 1, 0}, z0[3] = {0}, z1[3] = {0};
  v2 r = __enzyme_fwddiff((void *)f, enzyme_width, 2, enzyme_dup, x, e0, e1, enzyme_dup, y, z0, z1);
  printf("%g %g\n", r.d[0], r.d[1]);
  return 0;
}
"""


def test_vector_mode_through_dot(tmp_path):
    write(tmp_path, "vdot.c", VECTOR_DOT)
    proc = build(tmp_path, ["vdot.c", "-o", "vdot", "-lopenblas"])
    assert proc.returncode == 0, proc.stderr
    assert [float(v) for v in run([tmp_path / "vdot"], tmp_path).stdout.split()] == [4.0, 5.0]


def test_program_without_blas_is_unchanged():
    from enzyme_build.blas import attach_blas_rules
    text = "declare double @ddot(ptr)\ndefine double @cblas_ddot(i32 %n) {\n  ret double 0.0\n}\n"
    assert attach_blas_rules(text) is text


AMAX = r"""
#include <stdio.h>
#include <cblas.h>
extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);
double f(const double *x, int n) { int i = (int)cblas_idamax(n, x, 1); return x[i] * x[i]; }
int main(void) {
  double x[3] = {1, -5, 2}, dx[3] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, 3);
  printf("%g %g %g\n", dx[0], dx[1], dx[2]);
  return 0;
}
"""


def test_index_search_is_inactive(tmp_path):
    """i?amax has no derivative: registered inactive, the gradient flows through x[i]."""
    write(tmp_path, "amax.c", AMAX)
    proc = build(tmp_path, ["amax.c", "-o", "amax", "-lopenblas"])
    assert proc.returncode == 0, proc.stderr
    assert [float(v) for v in run([tmp_path / "amax"], tmp_path).stdout.split()] == [0.0, -10.0, 0.0]


EIGEN = r"""
#define EIGEN_USE_BLAS
#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);
static double loss(const double *a, const double *b, int n) {
  Eigen::Map<const Eigen::MatrixXd> A(a, n, n), B(b, n, n);
  Eigen::MatrixXd C(n, n);
  C.noalias() = A * B.transpose();          /* Eigen calls dgemm_ (Fortran ABI) */
  return C.squaredNorm();
}
int main() {
  const int n = 24;
  static double a[n * n], b[n * n], da[n * n], db[n * n];
  for (int i = 0; i < n * n; i++) { a[i] = 0.01 * (i % 7) - 0.02; b[i] = 0.02 * (i % 5) + 0.01; }
  __enzyme_autodiff((void *)loss, enzyme_dup, a, da, enzyme_dup, b, db, n);
  int bad = 0;
  for (int i = 0; i < n * n; i += 37) {
    double h = 1e-6, v = a[i]; a[i] = v + h; double fp = loss(a, b, n); a[i] = v - h; double fm = loss(a, b, n); a[i] = v;
    if (std::fabs((fp - fm) / (2 * h) - da[i]) > 1e-6) bad++;
    v = b[i]; b[i] = v + h; fp = loss(a, b, n); b[i] = v - h; fm = loss(a, b, n); b[i] = v;
    if (std::fabs((fp - fm) / (2 * h) - db[i]) > 1e-6) bad++;
  }
  std::printf("%s\n", bad ? "MISMATCH" : "OK");
  return bad;
}
"""


@pytest.mark.skipif(not os.path.exists("/usr/include/eigen3/Eigen/Dense"), reason="needs libeigen3-dev")
def test_eigen_product_through_fortran_blas(tmp_path):
    """Eigen with EIGEN_USE_BLAS routes the product to dgemm_; its explicit SIMD packets are
    switched off (the engine refuses vector loads of active memory)."""
    write(tmp_path, "eig.cc", EIGEN)
    proc = subprocess.run([ENZYME_BUILD, "c++", "-O2", "-DEIGEN_DONT_VECTORIZE", "-I/usr/include/eigen3",
                           "eig.cc", "-o", "eig", "-lopenblas"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert run([tmp_path / "eig"], tmp_path).stdout.strip() == "OK"


def test_rule_cache_is_private_and_a_damaged_entry_is_rebuilt(tmp_path, monkeypatch):
    import enzyme_build.blas as blas
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(blas, "_memo", {})
    text = "declare double @cblas_ddot(i32, ptr, i32, ptr, i32)\n" \
           "define double @f(ptr %x) {\n  %r = call double @cblas_ddot(i32 2, ptr %x, i32 1, ptr %x, i32 1)\n" \
           "  ret double %r\n}\n"
    out = blas.attach_blas_rules(text)
    assert "@__enzyme_blas_cblas_ddot(" in out and "__enzyme_register_gradient___enzyme_blas_ddot" in out
    directory = tmp_path / "enzyme-build" / "blas"
    (entry,) = directory.iterdir()
    assert oct(directory.stat().st_mode & 0o777) == "0o700" and entry.suffix == ".bc"
    entry.write_bytes(b"BC\xc0\xde garbage")
    monkeypatch.setattr(blas, "_memo", {})
    assert blas.attach_blas_rules(text) == out
    assert entry.read_bytes()[:4] == b"BC\xc0\xde" and len(entry.read_bytes()) > 100
    assert [p.name for p in directory.iterdir()] == [entry.name]        # no temporary files left


UNCOVERED = r"""
#include <cblas.h>
extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);
double f(const double *A, const double *x, double *y) {
  cblas_dgbmv(CblasColMajor, CblasNoTrans, 3, 3, 1, 1, 1.0, A, 3, x, 1, 0.0, y, 1);
  return y[0] + cblas_ddot(3, y, 1, y, 1);
}
int main(void) {
  double A[9] = {0}, dA[9] = {0}, x[3] = {1, 2, 3}, dx[3] = {0}, y[3], dy[3] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, A, dA, enzyme_dup, x, dx, enzyme_dup, y, dy);
  return 0;
}
"""


def test_routine_outside_the_table_is_the_usual_clear_error(tmp_path):
    write(tmp_path, "gb.c", UNCOVERED)
    proc = build(tmp_path, ["gb.c", "-o", "gb", "-lopenblas"])
    assert proc.returncode == 1
    assert "cblas_dgbmv" in proc.stderr and "no body" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "gb").exists()
