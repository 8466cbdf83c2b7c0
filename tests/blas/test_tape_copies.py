"""What the BLAS augment rules copy to the tape, called directly (like test_null_shadows.py)
from a C program compiled with plain clang against the generated library, for every family
in both precisions, with positive and negative increments, and every combination of which
pointers (arrays, alpha, beta, a returned value) have a shadow:

* every input may be overwritten (`eb_over` all ones): the augment copies exactly the inputs
  an existing adjoint reads (`Cache.need`), the program scribbles over every primal array and
  scalar between augment and gradient, and the adjoints are still those of the reference run;
* nothing is overwritten (`eb_over` 0): only the old values of arrays the routine itself
  writes are copied, the gradient reads the arrays themselves, and the adjoints are again the
  reference's.

The number of copies is counted in the library's block allocator (`eb_get`), which the
augment rules use for their copies only. End-to-end programs (which masks the engine passes
at a call site, and the gradients they give) are in test_overwritten_inputs.py.
"""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from blas_helpers import OPENBLAS_DIR, REFERENCE_DIR, REFERENCE_LAPACK_DIR
from enzyme_build.blas.generate import _cache_letters, _params, library_source
from enzyme_build.blas.table import PRECISIONS, ROUTINES

CLANG = "clang-22"
VALUES = {"layout": "102", "trans": "111", "uplo": "121", "side": "141", "diag": "131"}
# the pointers whose shadow comes and goes (info and ipiv never carry derivatives)
SHADOWED_ROLES = ("scalar", "array", "result")

pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(OPENBLAS_DIR, "libopenblas.so"))
                                or not os.path.exists(os.path.join(REFERENCE_DIR, "libblas.so.3")),
                                reason="needs libopenblas-dev, libblas-dev and liblapack-dev")


def _int_value(name: str) -> str:
    if name.startswith("ld"):
        return "4"
    if name.startswith("inc"):
        return "inc"
    return "3"


def _need(expr: str, toggles: list[str]) -> str:
    """A Cache.need condition as C over the case's shadow bits (`mask`)."""
    return re.sub(r"\bd_(\w+)\b", lambda m: f"((mask >> {toggles.index(m.group(1))}) & 1)", expr)


def _case(r, p: str) -> str:
    T = PRECISIONS[p]
    params = _params(r)
    letters = _cache_letters(r)
    arrays = [n for n, role in params if role in ("array", "result")]
    toggles = [n for n, role in params if role in SHADOWED_ROLES]
    bit = {n: k for k, (n, _) in enumerate(params)}
    core = f"__enzyme_blas_{p}{r.family}"
    name = f"{p}{r.family}"

    def call_args() -> str:
        out, k = [], 0
        for n, role in params:
            on = f"((mask >> {toggles.index(n)}) & 1)" if n in toggles else None
            if role in VALUES:
                out.append(VALUES[role])
            elif role == "int":
                out.append(n)
            elif role == "scalar":
                slot = 0 if n == "alpha" else 1
                out += [f"&sc[{slot}]", f"{on} ? &dsc[{slot}] : NULL"]
            elif role == "info":
                out += ["&info", "NULL"]
            elif role == "iarray":
                out += ["ipiv", "NULL"]
            else:
                out += [f"P[{k}]", f"{on} ? S[{k}] : NULL"]
                k += 1
        return ", ".join(out)

    shad = " | ".join(f"(((mask >> {j}) & 1) ? (1LL << {bit[n]}) : 0)" for j, n in enumerate(toggles))
    written = {n for n, c in zip((n for n, _ in params), letters) if c == "w"}

    def expected(over_all: bool) -> str:
        terms = []
        for c in r.caches:
            copies = over_all or (c.when == "before" and c.array in written)
            if copies:
                terms.append(f"(({c.cond}) && ({_need(c.need, toggles)}))")
        return " + ".join(terms) or "0"

    ints = "".join(f"    int {n} = {_int_value(n)}; (void){n};\n" for n, role in params if role == "int")
    args = call_args()
    tol = "1e-10" if p == "d" else "2e-4"
    return f"""
static void check_{name}(int inc) {{
    enum {{ NA = {len(arrays)}, NT = {len(toggles)} }};
    {T} *P[NA], *S[NA], *P0[NA], *S0[NA], *Sref[NA], sc[2], dsc[2], scref[2];
    int info = 0, ipiv[64];
{ints}    const {T} al = ({T})0.7, be = ({T})-0.4; (void)al; (void)be;
    for (int a = 0; a < NA; a++) {{
        P[a] = malloc(64 * sizeof({T})); S[a] = malloc(64 * sizeof({T})); P0[a] = malloc(64 * sizeof({T}));
        S0[a] = malloc(64 * sizeof({T})); Sref[a] = malloc(64 * sizeof({T}));
        for (int i = 0; i < 64; i++) {{ P0[a][i] = ({T})(0.1 * cos(i + a)); S0[a][i] = ({T})(0.3 * sin(2 * i + a)); }}
        for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) P0[a][i + 4 * j] = P0[a][j + 4 * i];
        for (int i = 0; i < 4; i++) P0[a][i + 4 * i] += 8;
    }}
#define RESET() do {{ for (int a = 0; a < NA; a++) {{ memcpy(P[a], P0[a], 64 * sizeof({T})); \\
        memcpy(S[a], S0[a], 64 * sizeof({T})); }} sc[0] = al; sc[1] = be; dsc[0] = ({T})0.2; dsc[1] = ({T})0.3; \\
        info = 0; memset(ipiv, 0, sizeof ipiv); }} while (0)
    for (int mask = 0; mask < (1 << NT); mask++) {{
        long long shad = {shad or "0"};
        /* reference: every input copied, nothing overwritten */
        RESET();
        void *t = {core}_aug({args}, -1LL, shad);
        {core}_grad({args}, -1LL, shad, t);
        for (int a = 0; a < NA; a++) memcpy(Sref[a], S[a], 64 * sizeof({T}));
        memcpy(scref, dsc, sizeof dsc);
        for (int over = 0; over < 2; over++) {{
            RESET();
            eb_gets = 0;
            t = {core}_aug({args}, over ? -1LL : 0LL, shad);
            int want = over ? ({expected(True)}) : ({expected(False)});
            if (eb_gets != want) {{
                printf("FAIL {name} inc %d shadows %#x over %d: %ld copies, expected %d\\n", inc, mask, over, eb_gets, want);
                failures++;
            }}
            if (over) {{   /* the program overwrites every input before the reverse sweep */
                for (int a = 0; a < NA; a++) for (int i = 0; i < 64; i++) P[a][i] = ({T})(1e3 + i);
                sc[0] = sc[1] = ({T})99;
                for (int i = 0; i < 64; i++) ipiv[i] = 1;
            }}
            {core}_grad({args}, over ? -1LL : 0LL, shad, t);
            for (int a = 0; a < NA; a++)
                for (int i = 0; i < 64; i++)
                    if (fabs((double)S[a][i] - (double)Sref[a][i]) > {tol} * (1 + fabs((double)Sref[a][i]))) {{
                        printf("FAIL {name} inc %d shadows %#x over %d: shadow %d[%d] %g, reference %g\\n",
                               inc, mask, over, a, i, (double)S[a][i], (double)Sref[a][i]);
                        failures++;
                        a = NA;
                        break;
                    }}
            for (int s = 0; s < 2; s++)
                if (fabs((double)dsc[s] - (double)scref[s]) > {tol} * (1 + fabs((double)scref[s]))) {{
                    printf("FAIL {name} inc %d shadows %#x over %d: scalar adjoint %d %g, reference %g\\n",
                           inc, mask, over, s, (double)dsc[s], (double)scref[s]);
                    failures++;
                }}
            checks++;
        }}
    }}
#undef RESET
    for (int a = 0; a < NA; a++) {{ free(P[a]); free(S[a]); free(P0[a]); free(S0[a]); free(Sref[a]); }}
}}
"""


def program() -> str:
    selected = [(r.family, p) for r in ROUTINES for p in PRECISIONS]
    source = library_source(selected)
    # count the augment rules' copies: they are the only users of the block allocator there
    hook = "static void *eb_get(size_t bytes) {"
    assert source.count(hook) == 1
    source = source.replace(hook, "static long eb_gets;\n" + hook + " eb_gets++;")
    out = [source, "#include <math.h>\n#include <stdio.h>\nstatic int checks, failures;"]
    out += [_case(r, p) for r in ROUTINES for p in PRECISIONS]
    out.append("int main(void) {\n    setvbuf(stdout, NULL, _IOLBF, 0);   /* what ran before a crash */")
    out += [f"    check_{p}{r.family}(1); check_{p}{r.family}(-2);" for r in ROUTINES for p in PRECISIONS]
    out.append('    printf("checks %d failures %d\\n", checks, failures);\n    return failures != 0;\n}')
    return "\n".join(out)


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    work = tmp_path_factory.mktemp("tape_copies")
    (work / "copies.c").write_text(program())
    proc = subprocess.run([CLANG, "-O1", "-w", "copies.c", "-o", "copies", f"-L{REFERENCE_DIR}",
                           f"-L{REFERENCE_LAPACK_DIR}", "-llapack", "-lblas", "-lm"], cwd=work,
                          capture_output=True, text=True, timeout=600)
    return work, proc


@pytest.mark.parametrize("library", ["reference", "openblas"])
def test_augment_copies_only_what_an_adjoint_reads_and_may_be_overwritten(binary, library):
    work, proc = binary
    assert proc.returncode == 0, proc.stderr[-3000:]
    env = dict(os.environ, LD_LIBRARY_PATH=f"{REFERENCE_DIR}:{REFERENCE_LAPACK_DIR}" if library == "reference"
               else OPENBLAS_DIR)
    run = subprocess.run([str(work / "copies")], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0 and "failures 0" in run.stdout, run.stdout[-4000:] + run.stderr[-2000:]
    checks = int(re.search(r"checks (\d+)", run.stdout).group(1))
    assert checks > 1000


def test_cache_mask_letters_mark_what_the_routine_writes():
    """gemm writes C only; dot writes its result; gesv its factors, solution, pivots and info."""
    from enzyme_build.blas.table import BY_FAMILY
    assert _cache_letters(BY_FAMILY["gemm"]) == "......rr.r.rw."
    assert _cache_letters(BY_FAMILY["dot"]) == ".r.r.w"
    assert _cache_letters(BY_FAMILY["gesv"]) == "..w.ww.w"
