"""The rules treat a null shadow as "this array is constant": no work for it, the same
results for the others. (The engine passes null for an array without a shadow: enzyme_const,
a constant global, memory that never becomes active; tests/blas/test_constant_arrays.py
checks that end to end.) The rule functions are called directly here, from a C program compiled with plain clang against the generated
library, for every family in double precision: each array's shadow replaced by null must
leave every other adjoint (reverse) and tangent (forward) exactly as with a zero shadow
(a constant input has no tangent; a constant output has no adjoint).
"""
from __future__ import annotations

import os
import subprocess

import pytest

from blas_helpers import OPENBLAS_DIR
from enzyme_build.blas.generate import _params, library_source
from enzyme_build.blas.table import ROUTINES

CLANG = "clang-22"
VALUES = {"layout": "102", "trans": "111", "uplo": "121", "side": "141", "diag": "131"}
SIZE = 64   # every array: enough for 3 x 3 problems with leading dimension 4


def _int_value(name: str) -> str:
    if name.startswith("ld"):
        return "4"
    if name.startswith("inc"):
        return "1"
    return "3"


def _case(r) -> str:
    """C: run augment+gradient and forward with all shadows, then with each array's null."""
    params = _params(r)
    arrays = [n for n, role in params if role in ("array", "result")]
    core = f"__enzyme_blas_d{r.family}"
    lines = [f"static void check_{r.family}(void) {{"]
    # call argument list builder: primal pointers from P[k], shadows from S[k] (or NULL)
    def call_args(null: str | None) -> str:
        out, k = [], 0
        for name, role in params:
            if role in VALUES:
                out.append(VALUES[role])
            elif role == "int":
                out.append(_int_value(name))
            elif role == "scalar":
                slot = 0 if name == "alpha" else 1
                out += [f"&sc[{slot}]", f"&dsc[{slot}]"]
            elif role in ("info",):
                out += ["&info", "&dinfo"]
            elif role == "iarray":
                out += ["ipiv", "dipiv"]
            else:
                out += [f"P[{k}]", "NULL" if name == null else f"S[{k}]"]
                k += 1
        return ", ".join(out)
    def masks(null: str | None) -> str:
        """The cache masks (generate.py): every input may be overwritten (all copies taken);
        every pointer has a shadow but the null one."""
        bit = [n for n, _ in params].index(null) if null else None
        return "-1LL, " + ("-1LL" if bit is None else f"~(1LL << {bit})")
    n = len(arrays)
    lines.append(f"    enum {{ NA = {n} }};")
    lines.append("    double *P[NA], *S[NA], *P0[NA], *S0[NA], *Sref[NA], sc[2], dsc[2], scref[2];")
    lines.append("    int info = 0, dinfo = 0, ipiv[64], dipiv[64];")
    lines.append("    for (int a = 0; a < NA; a++) { P[a] = malloc(64 * sizeof(double)); S[a] = malloc(64 * sizeof(double));"
                 " P0[a] = malloc(64 * sizeof(double)); S0[a] = malloc(64 * sizeof(double));"
                 " Sref[a] = malloc(64 * sizeof(double));"
                 " for (int i = 0; i < 64; i++) { P0[a][i] = 0.1 * cos(i + a); S0[a][i] = 0.3 * sin(2 * i + a); }"
                 " for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) P0[a][i + 4 * j] = P0[a][j + 4 * i];"
                 " for (int i = 0; i < 4; i++) P0[a][i + 4 * i] += 8; }")
    reset = ("for (int a = 0; a < NA; a++) { memcpy(P[a], P0[a], 64 * sizeof(double)); "
             "memcpy(S[a], S0[a], 64 * sizeof(double)); } sc[0] = 0.7; sc[1] = -0.4; dsc[0] = 0.2; dsc[1] = 0.3;")
    for mode in ("rev", "fwd"):
        for k, name in enumerate(arrays):
            lines.append("    {")
            # reference: the array's shadow is zero (no tangent in, no adjoint to pass on)
            lines.append(f"        {reset}")
            lines.append(f"        memset(S[{k}], 0, 64 * sizeof(double));")
            if mode == "fwd":
                lines.append(f"        {core}_fwd({call_args(None)});")
            else:
                lines.append(f"        void *t = {core}_aug({call_args(None)}, {masks(None)});")
                lines.append(f"        {core}_grad({call_args(None)}, {masks(None)}, t);")
            lines.append("        for (int a = 0; a < NA; a++) memcpy(Sref[a], S[a], 64 * sizeof(double));"
                         " memcpy(scref, dsc, sizeof dsc);")
            lines.append(f"        {reset}")
            if mode == "fwd":
                lines.append(f"        {core}_fwd({call_args(name)});")
            else:
                lines.append(f"        void *u = {core}_aug({call_args(name)}, {masks(name)});")
                lines.append(f"        {core}_grad({call_args(name)}, {masks(name)}, u);")
            lines.append(f"        for (int a = 0; a < NA; a++) if (a != {k} && memcmp(Sref[a], S[a], 64 * sizeof(double))) "
                         f"{{ printf(\"FAIL {r.family} {mode} null {name}: shadow %d differs\\n\", a); failures++; }}")
            lines.append(f"        if (memcmp(scref, dsc, sizeof dsc)) {{ printf(\"FAIL {r.family} {mode} null {name}: "
                         f"alpha/beta\\n\"); failures++; }}")
            lines.append("        checks++;")
            lines.append("    }")
    lines.append("    for (int a = 0; a < NA; a++) { free(P[a]); free(S[a]); free(P0[a]); free(S0[a]); free(Sref[a]); }")
    lines.append("}")
    return "\n".join(lines)


def program() -> str:
    families = list(ROUTINES)
    out = [library_source([(r.family, "d") for r in families]),
           "#include <math.h>\n#include <stdio.h>\nstatic int checks, failures;"]
    out += [_case(r) for r in families]
    out.append("int main(void) {")
    out += [f"    check_{r.family}();" for r in families]
    out.append('    printf("checks %d failures %d\\n", checks, failures);\n    return failures != 0;\n}')
    return "\n".join(out)


@pytest.mark.skipif(not os.path.exists(os.path.join(OPENBLAS_DIR, "libopenblas.so")), reason="needs libopenblas-dev")
def test_null_shadow_means_constant_array(tmp_path):
    (tmp_path / "null.c").write_text(program())
    proc = subprocess.run([CLANG, "-O1", "-w", "null.c", "-o", "null", "-lopenblas", "-lm"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = subprocess.run([str(tmp_path / "null")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "failures 0" in run.stdout
