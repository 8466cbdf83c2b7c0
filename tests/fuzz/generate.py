"""Seeded generator of random differentiable C programs for the differential fuzzer.

`gen(seed)` returns the source of one self-checking-free program: it defines
`double f(const double *x)` over N inputs and a `main` that prints

    VAL <f(x)>
    REV <i> <d f / d x_i from one __enzyme_autodiff call>
    FWD <i> <d f / d x_i from __enzyme_fwddiff along basis direction i>
    SPL <i> <d f / d x_i from __enzyme_augmentfwd then __enzyme_reverse (split mode)>
    FD <h> <i> <central finite difference with step h>

The oracle lives in run.py.  Programs are valid C without undefined behaviour: every
index is in range by construction, log/sqrt/pow only see arguments >= 1, divisions are by
1.5 + y*y, trip counts are clamped, recursion depth is a constant, and every malloc is freed.
The same seed always gives the same text (only `random.Random(seed)` is used).
"""
from __future__ import annotations

import random
import sys

N = 4          # inputs of f
M = 6          # length of the working arrays a (local) and b (malloc'd)
FD_STEPS = ("1e-4", "1e-5", "1e-6")
# a program computing partly in single precision: f(x) is only accurate to ~1e-7, so the
# differences take wider steps and the oracle looser tolerances, which the program prints
# (`TOL rev_fwd fd_agree fd`): reverse, forward and split mode still agree to ~1e-5 (both
# round in float), and a derivative path dropped entirely still shows against the differences
SINGLE_FD_STEPS = ("1e-2", "1e-3", "1e-4")
SINGLE_TOLERANCES = "1e-5 2e-2 2e-2"


class _Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)
        # vector statements draw from their own stream, so adding them kept every other
        # statement of a seed's program as it was
        self.rv = random.Random(seed * 1_000_003 + 17)
        # so do the ABI and memory idioms (values moved as words or bytes, structs by value,
        # records holding pointers): a third stream, added later the same way
        self.ri = random.Random(seed * 1_000_033 + 29)
        # and pointers returned inside structs by value (spans, pointer pairs): a fourth
        self.rp = random.Random(seed * 1_000_037 + 31)
        # and program structure (callbacks, large structs by value, scatters with repeated
        # indices, tables of row pointers, global state): a fifth
        self.rs = random.Random(seed * 1_000_039 + 37)
        # and loop shapes whose count LLVM may leave as `iv.next < bound` (do-while loops with
        # data-dependent counts that may be below the first iteration's, starts other than 0,
        # unsigned counters, `!=` tests, counting down, steps of 2): a sixth
        self.rl = random.Random(seed * 1_000_081 + 41)
        # and a double's bits handled as a uint64_t word beyond plain copies (a word picked by
        # a branch or a select and read back as a double, sign-bit arithmetic: negation,
        # fabs, copysign; the bits of the largest element kept across a loop): a seventh
        self.rw = random.Random(seed * 1_000_099 + 43)
        # and the rest of libm (hyperbolic and inverse trigonometric functions, erf, gamma,
        # cbrt, hypot, atan2, fmin/fmax, fmod, copysign, fdim, fma, ldexp, modf, rounding), on
        # arguments kept inside their domains: an eighth
        self.rm = random.Random(seed * 1_000_117 + 47)
        # and control flow and indexing the main stream lacks (switch with fallthrough,
        # break/continue, goto, indices computed from data, ternaries, a 2-D local array, a
        # helper with several returns, an integer count of data): a ninth
        self.rc = random.Random(seed * 1_000_121 + 53)
        # and single precision (float temporaries, arrays and libm calls, a float moved
        # through uint32_t): a tenth; such programs print looser tolerances for the oracle
        self.rf = random.Random(seed * 1_000_133 + 59)
        self.single = False
        # and heap idioms (calloc, realloc growing a buffer, an array of structs, rows of a
        # malloc'd double **, memset then accumulate, a buffer freed and allocated again): an
        # eleventh
        self.rh = random.Random(seed * 1_000_151 + 61)
        # and OpenMP parallel loops (parallel for with each schedule, reductions, atomics,
        # private/firstprivate/lastprivate, a region with two worksharing loops, num_threads;
        # race-free by construction); programs with one are built with -fopenmp: a twelfth
        self.ro = random.Random(seed * 1_000_171 + 71)
        # and data the program keeps in globals, filled at start-up and read by f: a table,
        # data behind a global pointer, a table f scales and restores itself or through a
        # helper, a global pointer into such a table (re-read by the reverse sweep only when
        # nothing can change it): a thirteenth
        self.rd = random.Random(seed * 1_000_193 + 73)
        # and time steppers over the function's own buffers (two buffers swapped every step, a
        # scratch buffer copied back, in-place updates reading ahead or behind, a gather through
        # an index array, three buffers rotated, a buffer read at neighbours then overwritten):
        # the loops the reverse sweep may read from snapshots of the buffers: a fourteenth
        self.rt = random.Random(seed * 1_000_211 + 79)
        # and scratch rows one loop fills and later loops of the same pass read back (GMM's
        # centred vector, a row of differences read with its left neighbour), sometimes changed
        # between, read one past what was written, filled on some passes only, filled from
        # memory f writes or updated in place by the reader: the loads the reverse sweep may
        # rebuild from the stores that wrote them: a fifteenth
        self.rr = random.Random(seed * 1_000_231 + 83)
        # and loops that walk pointers instead of counting (`p != end` up and down, `p < end`
        # with steps of 1 and 2, two pointers side by side, an array of structs, rows of a
        # matrix by a row pointer), with data-dependent starts: the loops ad/counters.py
        # counts before AD: a sixteenth
        self.rk = random.Random(seed * 1_000_249 + 89)
        # objects in global memory reached through accessors that return a reference (a table
        # of model pointers, a slot function, a struct member), handed to a helper with active
        # data: a seventeenth stream
        self.ra = random.Random(seed * 1_000_253 + 97)
        # scratch memory of other kinds: a variable-length array in a block whose scope ends
        # before a helper with a frame of its own runs, records sorted with qsort, a buffer
        # from memalign, a check that aborts on a way that never runs: an eighteenth
        self.rq = random.Random(seed * 1_000_273 + 101)
        self.globals: list[str] = []
        self.resets: list[str] = []
        self.idiom_helpers: list[str] = []
        self.helpers: list[str] = []
        self.helper_names: list[tuple[str, str]] = []  # (name, kind)
        self.tmp = 0

    # ---------------------------------------------------------------- expressions
    def expr(self, leaves: list[str], depth: int = 0) -> str:
        r = self.r
        if depth >= 3 or (depth > 0 and r.random() < 0.35):
            if r.random() < 0.15:
                return r.choice(["0.5", "1.25", "0.75", "-0.3"])
            return r.choice(leaves)
        op = r.choice(["+", "-", "*", "*", "sin", "cos", "exp", "log", "sqrt", "tanh", "pow", "div", "sq"])
        a = self.expr(leaves, depth + 1)
        if op in ("+", "-", "*"):
            return f"({a} {op} {self.expr(leaves, depth + 1)})"
        if op == "sq":
            return f"({a} * {a})"
        if op == "div":
            b = self.expr(leaves, depth + 1)
            return f"({a} / (1.5 + ({b}) * ({b})))"
        if op == "exp":
            return f"exp(0.5 * tanh({a}))"
        if op == "log":
            return f"log(1.0 + ({a}) * ({a}))"
        if op == "sqrt":
            return f"sqrt(1.0 + ({a}) * ({a}))"
        if op == "pow":
            b = self.expr(leaves, depth + 1)
            return f"pow(1.25 + ({a}) * ({a}), 0.5 + 0.25 * tanh({b}))"
        return f"{op}({a})"

    def bexpr(self, leaves: list[str]) -> str:
        """A bounded expression (result in (-1.5, 1.5)): safe to accumulate in loops."""
        return f"{self.r.choice(['tanh', 'sin'])}({self.expr(leaves)})"

    def name(self, p: str) -> str:
        self.tmp += 1
        return f"{p}{self.tmp}"

    # ---------------------------------------------------------------- helpers
    def make_helpers(self) -> None:
        r = self.r
        for k in range(r.randint(1, 3)):
            kind = r.choice(["scalar", "array", "struct", "rec", "u64copy"])
            attr = "__attribute__((noinline)) " if r.random() < 0.6 else "static "
            nm = f"h{k}_{kind}"
            if kind == "scalar":
                body = f"{attr}double {nm}(double u, double v) {{\n  return {self.expr(['u', 'v'])};\n}}"
            elif kind == "array":
                body = (f"{attr}double {nm}(double *p, int n, double v) {{\n"
                        f"  double acc = 0.0;\n"
                        f"  for (int i = 0; i < n; i++) {{ p[i] = {self.bexpr(['p[i]', 'v'])}; acc += p[i] * {r.choice(['0.5', '0.25', 'v'])}; }}\n"
                        f"  return acc;\n}}")
            elif kind == "struct":
                body = (f"{attr}void {nm}(struct S *s, double v) {{\n"
                        f"  double t = s->u;\n"
                        f"  s->u = {self.bexpr(['s->u', 's->v', 'v'])};\n"
                        f"  s->v = {self.bexpr(['t', 's->v', 'v'])} + s->k * 0.125;\n}}")
            elif kind == "rec":
                body = (f"{attr}double {nm}(double v, double w, int d) {{\n"
                        f"  if (d <= 0) return {self.expr(['v', 'w'])};\n"
                        f"  return {self.bexpr(['v', 'w'])} + 0.5 * {nm}({self.bexpr(['v', 'w'])}, w, d - 1);\n}}")
            else:  # u64copy: a generic copy of 8-byte words through uint64_t (memcpy: no
                # strict-aliasing violation, so -O2 may not miscompile the primal)
                body = (f"{attr}void {nm}(void *dst, const void *src, int n) {{\n"
                        f"  for (int i = 0; i < n; i++) {{ uint64_t w; memcpy(&w, (const char *)src + 8 * i, 8); "
                        f"memcpy((char *)dst + 8 * i, &w, 8); }}\n}}")
            self.helpers.append(body)
            self.helper_names.append((nm, kind))

    # ---------------------------------------------------------------- statements of f
    def idx(self) -> int:
        return self.r.randrange(M)

    def stmt(self, depth: int = 0) -> list[str]:
        r = self.r
        leaves = ["s", "t", f"a[{self.idx()}]", f"b[{self.idx()}]", f"x[{r.randrange(N)}]"]
        kinds = ["assign", "assign", "if", "loop", "triangular", "datatrip", "while", "overwrite",
                 "memcpy", "memmove", "u64", "ptr", "struct", "helper", "helper"]
        if depth > 0:
            kinds = [k for k in kinds if k not in ("if", "loop", "triangular", "datatrip")]
        kind = r.choice(kinds)
        if kind == "assign":
            tgt = r.choice(["s", "t", f"a[{self.idx()}]", f"b[{self.idx()}]"])
            return [f"{tgt} = {self.bexpr(leaves)};"]
        if kind == "if":
            cond = self.expr(leaves)
            th = self.stmt(depth + 1)
            el = self.stmt(depth + 1)
            return [f"if ({cond} > {r.choice(['0.1', '0.3', '-0.2'])}) {{"] + ["  " + l for l in th] + ["} else {"] + \
                   ["  " + l for l in el] + ["}"]
        if kind == "loop":
            i = self.name("i")
            lv = ["s", "t", f"a[{i}]", f"b[{i}]", f"a[({i} + {r.randint(1, M - 1)}) % {M}]", f"x[{i} % {N}]"]
            tgt = r.choice([f"a[{i}]", f"b[{i}]", "s", "t"])
            upd = f"{tgt} = 0.5 * {tgt} + 0.5 * {self.bexpr(lv)};"
            if r.random() < 0.4:
                j = self.name("j")
                lv2 = lv + [f"a[{j}]", f"b[({i} + {j}) % {M}]"]
                return [f"for (int {i} = 0; {i} < {M}; {i}++) {{",
                        f"  for (int {j} = 0; {j} < {r.randint(2, 4)}; {j}++) t = 0.5 * t + 0.25 * {self.bexpr(lv2)};",
                        f"  {upd}", "}"]
            return [f"for (int {i} = 0; {i} < {M}; {i}++) {{ {upd} }}"]
        if kind == "triangular":
            i, j = self.name("i"), self.name("j")
            lv = ["s", f"a[{i}]", f"a[{j}]", f"b[{j}]", f"x[{j} % {N}]"]
            tgt = r.choice(["s", "t", f"b[{i}]", f"a[{i}]"])
            return [f"for (int {i} = 0; {i} < {M}; {i}++)",
                    f"  for (int {j} = 0; {j} <= {i}; {j}++) {tgt} = 0.75 * {tgt} + 0.25 * {self.bexpr(lv)};"]
        if kind == "datatrip":
            m, i = self.name("m"), self.name("i")
            # (int) of a value in [0, M-1): a trip count in [1, M-1], constant near the point.
            lv = ["s", "t", f"a[{i}]", f"b[{i}]", f"x[{i} % {N}]"]
            tgt = r.choice([f"a[{i}]", f"b[{i}]", "s", "t"])
            return [f"{{ int {m} = 1 + (int)({(M - 2) / 2:.1f} * (1.0 + tanh({self.expr(leaves)})));",
                    f"  for (int {i} = 0; {i} < {m}; {i}++) {tgt} = 0.5 * {tgt} + 0.5 * {self.bexpr(lv)}; }}"]
        if kind == "while":
            k = self.name("k")
            return [f"{{ int {k} = 0; while ({k} < {M} && s < {r.choice(['1.5', '2.0', '2.5'])}) "
                    f"{{ s = s + 0.3 + 0.2 * {self.bexpr(['s', f'a[{k}]', f'b[{k}]'])}; {k}++; }} }}"]
        if kind == "overwrite":
            i = self.name("i")
            arr = r.choice(["a", "b"])
            return [f"for (int {i} = 0; {i} < {M - 1}; {i}++) {arr}[{i}] = {self.bexpr([f'{arr}[{i}]', f'{arr}[{i} + 1]', 's'])};"]
        if kind == "memcpy":
            n = r.randint(1, M)
            src_off, dst_off = r.randrange(M - n + 1), r.randrange(M - n + 1)
            src, dst = r.choice([("a", "b"), ("b", "a")])
            return [f"memcpy({dst} + {dst_off}, {src} + {src_off}, {n} * sizeof(double));"]
        if kind == "memmove":
            n = r.randint(1, M - 1)
            arr = r.choice(["a", "b"])
            src_off, dst_off = r.randrange(M - n + 1), r.randrange(M - n + 1)
            return [f"memmove({arr} + {dst_off}, {arr} + {src_off}, {n} * sizeof(double));"]
        if kind == "u64":
            w = self.name("w")
            src = r.choice(["a", "b"]) + f"[{self.idx()}]"
            dst = r.choice(["a", "b"]) + f"[{self.idx()}]"
            return [f"{{ uint64_t {w}; memcpy(&{w}, &{src}, sizeof {w}); memcpy(&{dst}, &{w}, sizeof {w}); }}"]
        if kind == "ptr":
            p, i = self.name("p"), self.name("i")
            arr = r.choice(["a", "b"])
            off = r.randint(0, 2)
            cnt = r.randint(1, M - off)
            return [f"{{ double *{p} = {arr} + {off};",
                    f"  for (int {i} = 0; {i} < {cnt}; {i}++) {{ *{p} = {self.bexpr([f'*{p}', 's', 't'])}; {p}++; }}",
                    f"  t = t + 0.5 * {p}[-1]; }}"]
        if kind == "struct":
            return [f"st.u = {self.bexpr(leaves)}; st.v = st.v * 0.5 + {self.bexpr(leaves)};",
                    f"s = s + 0.25 * st.u * st.v;"]
        # helper call
        nm, hk = r.choice(self.helper_names)
        if hk == "scalar":
            return [f"{r.choice(['s', 't'])} = tanh({nm}({self.expr(leaves)}, {r.choice(leaves)}));"]
        if hk == "array":
            arr, off = r.choice(["a", "b"]), r.randint(0, 2)
            return [f"t = 0.5 * t + 0.5 * tanh({nm}({arr} + {off}, {r.randint(1, M - off)}, {r.choice(leaves)}));"]
        if hk == "struct":
            return [f"{nm}(&st, {r.choice(leaves)}); s = s + 0.25 * st.u - 0.125 * st.v;"]
        if hk == "rec":
            return [f"t = tanh({nm}({r.choice(leaves)}, {r.choice(leaves)}, {r.randint(1, 4)}));"]
        n = r.randint(1, M)
        src, dst = r.choice([("a", "b"), ("b", "a")])
        so, do = r.randrange(M - n + 1), r.randrange(M - n + 1)
        return [f"{nm}({dst} + {do}, {src} + {so}, {n});"]

    def vector_stmt(self) -> list[str]:
        """Vector code on the arrays: GCC vector extensions with a shuffle, or SSE2
        intrinsics loading and storing two doubles."""
        rv = self.rv
        i, j, k = rv.randrange(M), rv.randrange(M), rv.randrange(M - 1)
        if rv.random() < 0.5:
            v = self.name("v")
            return [f"{{ v2d {v}p = {{a[{i}], b[{j}]}}, {v}q = {{s, a[{k}]}};",
                    f"  v2d {v}r = {v}p * {v}q + __builtin_shufflevector({v}p, {v}q, 1, 2);",
                    f"  a[{rv.randrange(M)}] = tanh({v}r[0]); b[{rv.randrange(M)}] = tanh({v}r[1]); }}"]
        v = self.name("m")
        src, dst = rv.choice([("a", "b"), ("b", "a"), ("a", "a"), ("b", "b")])
        d = rv.randrange(M - 1)
        return [f"{{ __m128d {v} = _mm_loadu_pd(&{src}[{k}]);",
                f"  {v} = _mm_add_pd(_mm_mul_pd({v}, {v}), _mm_set1_pd(0.25 * tanh(t)));",
                f"  _mm_storeu_pd(&{dst}[{d}], _mm_mul_pd({v}, _mm_set1_pd(0.5))); }}"]

    def idiom_stmt(self) -> list[str]:
        """One of: a double moved as a uint64_t through noinline helpers (an i64 argument and
        result), doubles copied byte by byte (a char loop), a record holding a pointer copied
        by assignment and memcpy and written through, a {double, long} struct passed and
        returned by value. Each keeps the program's invariants (in bounds, no overlap)."""
        ri = self.ri
        kind = ri.choice(["bits", "bytes", "view", "pair"])
        i, j, k = ri.randrange(M), ri.randrange(M), ri.randrange(M)
        attr = "__attribute__((noinline)) " if ri.random() < 0.7 else "static "
        if kind == "bits":
            self.idiom_helpers += [
                f"{attr}uint64_t ib_to(double v) {{ uint64_t w; memcpy(&w, &v, 8); return w; }}",
                f"{attr}double ib_from(uint64_t w) {{ double v; memcpy(&v, &w, 8); return v; }}"]
            return [f"a[{i}] = tanh(ib_from(ib_to(a[{j}] * b[{k}])) + 0.5 * ib_from(ib_to(s)));"]
        if kind == "bytes":
            self.idiom_helpers.append(
                f"{attr}void ic_bytes(void *d, const void *s, int n) {{\n"
                f"  char *dd = d; const char *ss = s;\n  for (int i = 0; i < n; i++) dd[i] = ss[i];\n}}")
            cnt = ri.randint(1, 3)
            src, dst = ri.choice([("a", "b"), ("b", "a")])
            so, do = ri.randrange(M - cnt + 1), ri.randrange(M - cnt + 1)
            return [f"ic_bytes(&{dst}[{do}], &{src}[{so}], {cnt * 8});"]
        if kind == "view":
            cnt = ri.randint(1, 3)
            off = ri.randrange(M - cnt + 1)
            v = self.name("w")
            return [f"{{ struct V {v}a = {{ b + {off}, {cnt}, t }}, {v}b, {v}c;",
                    f"  {v}b = {v}a; memcpy(&{v}c, &{v}b, sizeof {v}c);",
                    f"  for (int q = 0; q < {v}c.n; q++) {v}c.p[q] = tanh({v}c.p[q] * {v}c.w + a[q]); }}"]
        self.idiom_helpers.append(
            f"{attr}struct DL dl_mix(struct DL p, double w) {{ struct DL r = {{ tanh(p.d * w + 0.25), p.k + 1 }}; return r; }}")
        q = self.name("q")
        return [f"{{ struct DL {q} = {{ a[{i}], {ri.randint(0, 3)} }}; {q} = dl_mix({q}, b[{j}]); "
                f"a[{k}] = {q}.d + 0.01 * {q}.k; }}"]

    def pointer_aggregate_stmt(self) -> list[str]:
        """A pointer returned inside a struct by value from a helper: a span `{double *p; long
        n;}` (an aggregate `{ ptr, i64 }`) or a pair of pointers (`{ ptr, ptr }`), read and
        written through in the caller, possibly through a forwarding helper; or a pointer
        returned alone by a constructor that fills a fresh block from an active value."""
        rp = self.rp
        kind = rp.choice(["span", "pair", "forwarded", "factory"])
        attr = "__attribute__((noinline)) " if rp.random() < 0.75 else "static "
        v = self.name("sp")
        if kind == "factory":   # a constructor: a fresh block filled from an active value
            self.idiom_helpers.append(
                f"{attr}double *pf_make(double v, int n) {{ double *p = malloc(n * sizeof(double)); "
                f"for (int i = 0; i < n; i++) p[i] = v * (i + 1); return p; }}")
            cnt, k = rp.randint(1, 3), rp.randrange(M)
            return [f"{{ double *{v} = pf_make(tanh(a[{k}] + b[{rp.randrange(M)}]), {cnt});",
                    f"  a[{k}] = tanh({v}[{cnt - 1}] * s + {v}[0]); free({v}); }}"]
        arr = rp.choice(["a", "b"])
        if kind == "pair":
            self.idiom_helpers.append(
                f"{attr}struct PP pp_two(double *p, double *r, int i, int j) {{ struct PP o = {{ p + i, r + j }}; return o; }}")
            i, j = rp.randrange(M), rp.randrange(M)
            return [f"{{ struct PP {v} = pp_two(a, b, {i}, {j});",
                    f"  {v}.p[0] = tanh({v}.p[0] * {v}.q[0] + 0.5 * s); }}"]
        self.idiom_helpers.append(
            f"{attr}struct SP sp_from(double *p, long n, long k) {{ struct SP r = {{ p + k, n - k }}; return r; }}")
        off = rp.randrange(M - 1)
        call = f"sp_from({arr}, {M}, {off})"
        if kind == "forwarded":
            self.idiom_helpers.append(
                f"{attr}struct SP sp_next(struct SP q) {{ struct SP r = {{ q.p + 1, q.n - 1 }}; return r; }}")
            call = f"sp_next(sp_from({arr}, {M}, {min(off, M - 3)}))"
        cnt = rp.randint(1, 3)
        return [f"{{ struct SP {v} = {call};",
                f"  for (long q = 0; q < {v}.n && q < {cnt}; q++) {v}.p[q] = tanh({v}.p[q] * t + 0.25 * q); }}"]

    def structure_stmt(self) -> list[str]:
        """One of: a callback chosen from a table of function pointers by a data-independent
        index; a struct of three doubles returned by value (through memory, `sret`) from a
        helper; a scatter-add with repeated indices; a table of row pointers into `a` and
        `b`; a global array f resets, accumulates into and reads back."""
        rs = self.rs
        kind = rs.choice(["callback", "sret", "scatter", "rows", "global"])
        attr = "__attribute__((noinline)) " if rs.random() < 0.7 else "static "
        v = self.name("q")
        i, j, k = rs.randrange(M), rs.randrange(M), rs.randrange(M)
        if kind == "callback":
            if not any(h.startswith(("static double cb_", "__attribute__((noinline)) double cb_")) for h in self.idiom_helpers):
                self.idiom_helpers += [f"{attr}double cb_sq(double u) {{ return u * u; }}",
                                       f"{attr}double cb_sin(double u) {{ return sin(u) + 0.5 * u; }}",
                                       f"{attr}double cb_th(double u) {{ return tanh(1.5 * u); }}",
                                       "static double (*const cb_table[3])(double) = {cb_sq, cb_sin, cb_th};",
                                       f"{attr}double cb_apply(double (*g)(double), double u) {{ return g(u) - 0.25 * u; }}"]
            sel = rs.randrange(3)
            return [f"{{ double (*{v})(double) = cb_table[({sel} + (int)st.k) % 3];",
                    f"  a[{i}] = tanh(cb_apply({v}, b[{j}]) + {v}(a[{k}] * 0.5)); }}"]
        if kind == "sret":
            self.idiom_helpers.append(
                f"{attr}struct T3 t3_make(double u, double w) {{ struct T3 r = {{ u * w, tanh(u - w), u + 0.5 * w }}; return r; }}")
            return [f"{{ struct T3 {v} = t3_make(a[{i}], b[{j}]);",
                    f"  b[{k}] = tanh({v}.x * {v}.z + {v}.y); s = s + 0.125 * {v}.y; }}"]
        if kind == "scatter":
            idx = [rs.randrange(M) for _ in range(M)]
            if len(set(idx)) == M:
                idx[1] = idx[0]                       # at least one repeated index
            return [f"{{ static const int {v}i[{M}] = {{{', '.join(map(str, idx))}}};",
                    f"  for (int p = 0; p < {M}; p++) b[{v}i[p]] += 0.25 * tanh(a[p] * s); }}"]
        if kind == "rows":
            return [f"{{ double *{v}r[2] = {{ a, b }};",
                    f"  for (int p = 0; p < 2; p++) for (int c = 0; c < 3; c++) "
                    f"{v}r[p][c + {rs.randrange(M - 2)}] = tanh({v}r[1 - p][c] * 0.5 + t); }}"]
        g = f"g_state{len(self.globals)}"
        self.globals.append(f"static double {g}[3];")
        self.resets.append(f"  for (int i = 0; i < 3; i++) {g}[i] = 0.0;")
        return [f"for (int p = 0; p < 3; p++) {g}[p] += tanh(a[(p + {i}) % {M}] * b[{j}]);",
                f"s = s + 0.5 * {g}[{rs.randrange(3)}] * {g}[{rs.randrange(3)}];"]

    def loop_shape_stmt(self) -> list[str]:
        """A loop over the arrays whose count is computed from data, in one of the shapes a
        counting loop is written in: `do { } while (++k < n)` with n possibly 0 or negative
        (one iteration), the same from a data-dependent start or with an unsigned counter, a
        `k != n` test, counting down, a step of 2. Its expressions draw from the loop-shape
        stream too, so the statements after it in the main stream stay as they were."""
        return self._drawn_from(self.rl, self._loop_shape_stmt)

    def _drawn_from(self, stream: random.Random, make) -> list[str]:
        """make()'s statement with every draw (its expressions' too) from `stream`."""
        saved, self.r = self.r, stream
        try:
            return make()
        finally:
            self.r = saved

    def _loop_shape_stmt(self) -> list[str]:
        rl = self.rl
        kind = rl.choice(["dowhile", "dowhile_start", "dowhile_unsigned", "ne", "down", "step2"])
        k, n, m = self.name("k"), self.name("n"), self.name("m")
        leaves = ["s", "t", f"a[{rl.randrange(M)}]", f"x[{rl.randrange(N)}]"]
        # 0 .. M from the data; `signed` reaches below 0
        count = f"(int)({M / 2:.1f} * (1.0 + tanh({self.expr(leaves)})))"
        signed = f"(int)({M - 0.5:.1f} * tanh({self.expr(leaves)}))"
        tgt = rl.choice(["s", "t", f"b[{k}]", f"a[{k}]"])
        body = f"{tgt} = 0.5 * {tgt} + 0.5 * {self.bexpr(['s', 't', f'a[{k}]', f'b[{k}]', f'x[{k} % {N}]'])};"
        if kind == "dowhile":
            return [f"{{ int {k} = 0, {n} = {signed};", f"  do {{ {body} }} while (++{k} < {n}); }}"]
        if kind == "dowhile_start":
            return [f"{{ int {m} = {count} % {M}, {k} = {m}, {n} = {signed};",
                    f"  do {{ {body} }} while (++{k} < {n}); }}"]
        if kind == "dowhile_unsigned":
            return [f"{{ unsigned {k} = 0, {n} = (unsigned){count};", f"  do {{ {body} }} while (++{k} < {n}); }}"]
        if kind == "ne":
            return [f"{{ int {n} = 1 + {count} % {M};", f"  for (int {k} = 0; {k} != {n}; {k}++) {{ {body} }} }}"]
        if kind == "down":
            return [f"{{ int {n} = {count};", f"  for (int {k} = {n} - 1; {k} >= 0; {k}--) {{ {body} }} }}"]
        return [f"{{ int {n} = {count};", f"  for (int {k} = 0; {k} < {n}; {k} += 2) {{ {body} }} }}"]

    def word_stmt(self) -> list[str]:
        """A double's bits handled as a `uint64_t` word: moved by a conditional memmove and
        copied on, picked by a select, negated, masked to fabs, combined into copysign, or
        kept across a loop as the bits of the largest element; then stored or read back as a
        double. Its expressions draw from the word stream."""
        return self._drawn_from(self.rw, self._word_stmt)

    def _word_stmt(self) -> list[str]:
        rw = self.rw
        kind = rw.choice(["memmove_copy", "select", "negate", "fabs", "copysign", "argmax"])
        w, d, u, v = self.name("w"), self.name("d"), self.name("u"), self.name("v")
        i, j, k = rw.randrange(M), rw.randrange(M), rw.randrange(M)
        cond = self.expr(["s", "t", f"b[{rw.randrange(M)}]", f"x[{rw.randrange(N)}]"])
        acc = rw.choice(["s", "t"])
        read = f"double {d}; memcpy(&{d}, &{w}, 8); {acc} = {acc} + 0.25 * {d};"
        store = f"memcpy(&b[{k}], &{w}, 8);"
        if kind == "memmove_copy":
            return [f"if ({cond} > 0.3) memmove(b + {i}, b + {j}, 8);",
                    f"{{ uint64_t {w}; memcpy(&{w}, &b[{i}], 8); {store} }}"]
        if kind == "select":
            return [f"{{ uint64_t {u}, {v}; memcpy(&{u}, &b[{i}], 8); memcpy(&{v}, &a[{j}], 8);",
                    f"  uint64_t {w} = {cond} > 0 ? {u} : {v}; {store} {read} }}"]
        if kind in ("negate", "fabs"):
            src, op = {"negate": ("b", "^= 0x8000000000000000ull"), "fabs": ("a", "&= 0x7fffffffffffffffull")}[kind]
            return [f"{{ uint64_t {w}; memcpy(&{w}, &{src}[{i}], 8); {w} {op};",
                    f"  {rw.choice([store, read])} }}"]
        if kind == "copysign":
            return [f"{{ uint64_t {u}, {v}; memcpy(&{u}, &b[{i}], 8); memcpy(&{v}, &a[{j}], 8);",
                    f"  uint64_t {w} = ({u} & 0x7fffffffffffffffull) | ({v} & 0x8000000000000000ull); {read} }}"]
        return [f"{{ uint64_t {w} = 0; double {u} = -1e300;",
                f"  for (int q = 0; q < {M}; q++) {{ uint64_t {v}; memcpy(&{v}, &b[q], 8);",
                f"    if (b[q] > {u}) {{ {u} = b[q]; {w} = {v}; }} }}",
                f"  {rw.choice([store, read])} }}"]

    def math_stmt(self) -> list[str]:
        """One or two libm calls beyond the main stream's (sin, cos, exp, log, sqrt, tanh,
        pow) on bounded arguments, added to s or t or blended into an array element."""
        return self._drawn_from(self.rm, self._math_stmt)

    # name -> C text of the call on bounded arguments p, q, r (each in (-1.5, 1.5))
    MATH_CALLS = {
        "cbrt": "cbrt({p})", "expm1": "expm1({p})", "log1p": "log1p({p} * {p})", "erf": "erf({p})",
        "erfc": "erfc({p})", "sinh": "sinh({p})", "cosh": "cosh({p})", "asinh": "asinh({p})",
        "acosh": "acosh(1.5 + {p} * {p})", "atanh": "atanh(0.6 * {p})", "atan": "atan({p})",
        "asin": "asin(0.6 * {p})", "acos": "acos(0.6 * {p})", "tan": "tan(0.5 * {p})",
        "exp2": "exp2({p})", "log2": "log2(1.5 + {p} * {p})", "log10": "log10(1.5 + {p} * {p})",
        "lgamma": "lgamma(1.5 + {p} * {p})", "tgamma": "tgamma(1.5 + {p} * {p})",
        "hypot": "hypot({p}, {q})", "atan2": "atan2({p}, 2.0 + {q})", "fmin": "fmin({p}, {q})",
        "fmax": "fmax({p}, {q})", "copysign": "copysign({p}, {q})", "fdim": "fdim({p}, {q})",
        "fmod": "fmod({p}, 0.7 + {q} * {q})", "fma": "fma({p}, {q}, {r})", "fabs": "fabs({p})",
        "ldexp": "ldexp({p}, 3)", "floor": "floor(2.0 * {p}) * {q}", "round": "{q} * round(2.0 * {p})",
        "pow_int": "pow({p}, 3.0)", "pow_half": "pow(1.5 + {p} * {p}, 0.5 * {q})",
        "modf": "({{ double ip_; modf(2.0 * {p}, &ip_) + 0.25 * ip_; }})",
    }

    def _math_stmt(self) -> list[str]:
        rm = self.rm
        leaves = ["s", "t", f"a[{rm.randrange(M)}]", f"b[{rm.randrange(M)}]", f"x[{rm.randrange(N)}]"]
        calls = []
        for _ in range(rm.choice([1, 1, 2])):
            fmt = self.MATH_CALLS[rm.choice(sorted(self.MATH_CALLS))]
            calls.append(fmt.format(p=self.bexpr(leaves), q=self.bexpr(leaves), r=self.bexpr(leaves)))
        value = " * ".join(calls) if rm.random() < 0.5 else " + ".join(calls)
        k = rm.randrange(M)
        tgt = rm.choice(["s", "t", f"a[{k}]", f"b[{k}]"])
        if tgt in ("s", "t"):
            return [f"{tgt} = {tgt} + 0.25 * tanh({value});"]
        return [f"{tgt} = 0.5 * {tgt} + 0.25 * tanh({value});"]

    def control_stmt(self) -> list[str]:
        """Control flow or indexing from the ninth stream's list, on the arrays and s, t."""
        return self._drawn_from(self.rc, self._control_stmt)

    def _control_stmt(self) -> list[str]:
        rc = self.rc
        leaves = ["s", "t", f"a[{rc.randrange(M)}]", f"b[{rc.randrange(M)}]", f"x[{rc.randrange(N)}]"]
        kind = rc.choice(["switch", "break_continue", "goto", "data_index", "ternary", "matrix",
                          "returns", "count"])
        i, j, k = rc.randrange(M), rc.randrange(M), self.name("k")
        upd = lambda tgt: f"{tgt} = 0.5 * {tgt} + 0.5 * {self.bexpr(leaves)};"
        level = f"(int)(2.0 * (1.0 + {self.bexpr(leaves)}))"     # 0 .. 4
        if kind == "switch":
            return [f"switch ({level}) {{",
                    f"  case 0: {upd('s')} break;",
                    f"  case 1: {upd('t')}   /* falls through */",
                    f"  case 2: {upd(f'a[{i}]')} break;",
                    f"  default: {upd(f'b[{j}]')}", "}"]
        if kind == "break_continue":
            return [f"for (int {k} = 0; {k} < {M}; {k}++) {{",
                    f"  if (b[{k}] > {rc.choice(['0.5', '0.0', '-0.5'])}) continue;",
                    f"  s = s + 0.3 * {self.bexpr(['s', f'a[{k}]', f'b[{k}]'])};",
                    f"  if (s > {rc.choice(['1.0', '2.0'])}) break;", "}"]
        if kind == "goto":
            lbl = self.name("again")
            return [f"{{ int {k} = 0;", f"  {lbl}: t = t + 0.2 * {self.bexpr(['t', f'b[{k}]', f'a[{k}]'])};",
                    f"  if (++{k} < {rc.randint(2, M)} && t < 2.0) goto {lbl}; }}"]
        if kind == "data_index":
            return [f"{{ int {k} = {level} % {M};",
                    f"  b[{k}] = 0.5 * b[{k}] + 0.5 * {self.bexpr(['s', f'a[({k} + 1) % {M}]', f'b[{k}]'])}; }}"]
        if kind == "ternary":
            tgt = rc.choice(["s", "t", f"a[{i}]"])
            return [f"{tgt} = ({self.expr(leaves)} > {self.expr(leaves)}) ? {self.bexpr(leaves)} : {self.bexpr(leaves)};"]
        if kind == "matrix":
            m, r2 = self.name("m"), rc.randrange(3)
            return [f"{{ double {m}[3][{M}];",
                    f"  for (int r = 0; r < 3; r++) for (int c = 0; c < {M}; c++) "
                    f"{m}[r][c] = {self.bexpr(['a[c]', 'b[(c + r) % ' + str(M) + ']', 's'])} * (r + 1);",
                    f"  for (int c = 0; c < {M}; c++) t = t + 0.1 * {m}[{r2}][c] * {m}[(c + {r2}) % 3][c]; }}"]
        if kind == "returns":
            fn = f"ret{len(self.helpers)}"
            self.helpers.append(
                f"static double {fn}(double v, double w) {{\n"
                f"  if (v < -0.5) return w * v;\n"
                f"  if (v > 0.5) {{ double q = {self.bexpr(['v', 'w'])}; if (q > 0.0) return q; return q * q; }}\n"
                f"  return v + 0.5 * w;\n}}")
            return [f"s = s + 0.5 * {fn}({self.bexpr(leaves)}, {self.expr(leaves)});"]
        c = self.name("cnt")
        return [f"{{ int {c} = 0;", f"  for (int {k} = 0; {k} < {M}; {k}++) if (a[{k}] > b[{k}]) {c}++;",
                f"  t = t + 0.1 * {c} * {self.bexpr(leaves)}; }}"]

    def float_stmt(self) -> list[str]:
        """Single-precision arithmetic feeding s, t or an array element."""
        self.single = True
        return self._drawn_from(self.rf, self._float_stmt)

    def _float_stmt(self) -> list[str]:
        rf = self.rf
        leaves = ["s", "t", f"a[{rf.randrange(M)}]", f"b[{rf.randrange(M)}]", f"x[{rf.randrange(N)}]"]
        u, k = self.name("u"), self.name("k")
        fe = lambda: f"(float){self.bexpr(leaves)}"
        call = lambda v: rf.choice([f"sinf({v})", f"expf(-{v} * {v})", f"sqrtf(1.0f + {v} * {v})",
                                    f"logf(1.5f + {v} * {v})", f"tanhf({v})", f"powf(1.25f + {v} * {v}, 0.5f)",
                                    f"fabsf({v})", f"fmaxf({v}, 0.25f)", f"cosf({v})", f"atanf({v})"])
        kind = rf.choice(["scalar", "array", "round_trip", "bits"])
        acc = rf.choice(["s", "t"])
        if kind == "scalar":
            return [f"{{ float {u} = {fe()};", f"  {u} = {call(u)} * 0.5f + {call(u)} * {fe()};",
                    f"  {acc} = {acc} + 0.25 * {u}; }}"]
        if kind == "array":
            fa = self.name("fa")
            return [f"{{ float {fa}[{M}];",
                    f"  for (int {k} = 0; {k} < {M}; {k}++) {fa}[{k}] = (float)(a[{k}] * 0.5) + {call(f'(float)b[{k}]')};",
                    f"  for (int {k} = 0; {k} < {M}; {k}++) {acc} = {acc} + 0.1 * {fa}[{k}] * {fa}[({k} + 1) % {M}]; }}"]
        if kind == "round_trip":
            i = rf.randrange(M)
            return [f"b[{i}] = (double)((float)b[{i}] * {fe()});"]
        return [f"{{ float {u} = {fe()}; uint32_t w{u}; memcpy(&w{u}, &{u}, 4);",
                f"  w{u} ^= 0x80000000u; memcpy(&{u}, &w{u}, 4); {acc} = {acc} + 0.25 * {u}; }}"]

    def heap_stmt(self) -> list[str]:
        """A heap idiom on fresh memory, filled from the arrays and read back into s or t."""
        return self._drawn_from(self.rh, self._heap_stmt)

    def _heap_stmt(self) -> list[str]:
        rh = self.rh
        # three draws the stream's first version made for operands it never used, kept so
        # that each seed's program stays the one the recorded windows built
        rh.randrange(M), rh.randrange(M), rh.randrange(N)
        p, k, n = self.name("p"), self.name("k"), rh.randint(2, M)
        val = lambda i: self.bexpr(["s", f"a[{i}]", f"b[{i}]", f"x[{i} % {N}]"])
        acc = rh.choice(["s", "t"])
        kind = rh.choice(["calloc", "realloc", "aos", "rows", "memset", "again"])
        if kind == "calloc":
            return [f"{{ double *{p} = calloc({n}, sizeof(double));",
                    f"  for (int {k} = 0; {k} < {n}; {k}++) {p}[{k}] += {val(k)};",
                    f"  for (int {k} = 0; {k} < {n}; {k}++) {acc} = {acc} + 0.2 * {p}[{k}] * {p}[{n} - 1 - {k}];",
                    f"  free({p}); }}"]
        if kind == "realloc":
            return [f"{{ double *{p} = malloc(2 * sizeof(double)); {p}[0] = {val(0)}; {p}[1] = {val(1)};",
                    f"  {p} = realloc({p}, {M} * sizeof(double));",
                    f"  for (int {k} = 2; {k} < {M}; {k}++) {p}[{k}] = 0.5 * {p}[{k} - 1] + 0.5 * {val(k)};",
                    f"  for (int {k} = 0; {k} < {M}; {k}++) {acc} = {acc} + 0.1 * {p}[{k}];",
                    f"  free({p}); }}"]
        if kind == "aos":
            return [f"{{ struct S *{p} = malloc({n} * sizeof(struct S));",
                    f"  for (int {k} = 0; {k} < {n}; {k}++) {{ {p}[{k}].u = {val(k)}; {p}[{k}].v = a[{k}] * {p}[{k}].u; "
                    f"{p}[{k}].k = {k}; }}",
                    f"  for (int {k} = 0; {k} < {n}; {k}++) {acc} = {acc} + 0.1 * ({p}[{k}].u - {p}[{k}].v * {p}[{k}].k);",
                    f"  free({p}); }}"]
        if kind == "rows":
            return [f"{{ double **{p} = malloc(2 * sizeof(double *));",
                    f"  for (int r = 0; r < 2; r++) {{ {p}[r] = malloc({n} * sizeof(double));",
                    f"    for (int {k} = 0; {k} < {n}; {k}++) {p}[r][{k}] = {val(k)} * (r + 1); }}",
                    f"  for (int {k} = 0; {k} < {n}; {k}++) {acc} = {acc} + 0.1 * {p}[0][{k}] * {p}[1][{n} - 1 - {k}];",
                    f"  for (int r = 0; r < 2; r++) free({p}[r]);",
                    f"  free({p}); }}"]
        if kind == "memset":
            return [f"{{ double {p}[{M}]; memset({p}, 0, sizeof {p});",
                    f"  for (int {k} = 0; {k} < {M}; {k}++) {p}[({k} * {rh.choice([1, 5])}) % {M}] += {val(k)};",
                    f"  for (int {k} = 0; {k} < {M}; {k}++) {acc} = {acc} + 0.1 * {p}[{k}] * a[{k}]; }}"]
        return [f"{{ double *{p} = malloc({n} * sizeof(double));",
                f"  for (int {k} = 0; {k} < {n}; {k}++) {p}[{k}] = {val(k)};",
                f"  double keep = {p}[{n} - 1]; free({p});",
                f"  {p} = malloc({n} * sizeof(double));",
                f"  for (int {k} = 0; {k} < {n}; {k}++) {p}[{k}] = keep * a[{k}];",
                f"  for (int {k} = 0; {k} < {n}; {k}++) {acc} = {acc} + 0.1 * {p}[{k}];",
                f"  free({p}); }}"]

    def data_stmt(self) -> list[str]:
        """A loop of data-dependent length reading a global data table against the arrays."""
        return self._drawn_from(self.rd, self._data_stmt)

    def _data_stmt(self) -> list[str]:
        rd = self.rd
        kind = rd.choice(["table", "pointer", "scaled", "helper_scaled", "view"])
        n = len(self.globals)
        tab, cnt, seed = f"dtab{n}", f"dcount{n}", f"dseed{n}"
        self.globals += [f"static double {tab}[{M}];",
                         f"static volatile double {seed} = {rd.uniform(0.2, 0.9):.3f};",
                         f"static volatile int {cnt} = {M};",
                         f"__attribute__((constructor)) static void dfill{n}(void) {{ for (int i = 0; i < {M}; i++) "
                         f"{tab}[i] = {seed} * (i + 1) - 0.5; }}"]
        reader = tab
        if kind in ("pointer", "view"):
            reader = f"dptr{n}"
            if kind == "pointer":   # a malloc'd copy behind a global pointer
                self.globals += [f"static double *{reader};",
                                 f"__attribute__((constructor)) static void dcopy{n}(void) {{ {reader} = "
                                 f"malloc({M} * sizeof(double)); for (int i = 0; i < {M}; i++) "
                                 f"{reader}[i] = 0.5 * {seed} * i - 0.25; }}"]
            else:
                self.globals.append(f"static double *{reader} = {tab};")
        i, m = self.name("i"), self.name("m")
        tgt = rd.choice(["s", "t"])
        use = lambda: (f"for (int {i} = 0; {i} < {m}; {i}++) {tgt} = 0.5 * {tgt} + 0.25 * "
                       f"tanh({reader}[{i}] * {self.bexpr([f'a[{i}]', f'b[{i}]', 's', 't'])} + "
                       f"{reader}[({i} + {rd.randint(1, M - 1)}) % {M}]);")
        out = [f"{{ int {m} = {cnt};", "  " + use()]
        if kind in ("scaled", "view"):   # f changes the table and puts it back exactly (x2, /2)
            out += [f"  for (int {i} = 0; {i} < {m}; {i}++) {tab}[{i}] *= 2.0;", "  " + use(),
                    f"  for (int {i} = 0; {i} < {m}; {i}++) {tab}[{i}] *= 0.5;"]
        elif kind == "helper_scaled":
            helper = f"dscale{n}"
            self.idiom_helpers.append(f"__attribute__((noinline)) static void {helper}(double by) "
                                      f"{{ for (int i = 0; i < {M}; i++) {tab}[i] *= by; }}")
            out += [f"  {helper}(2.0);", "  " + use(), f"  {helper}(0.5);"]
        return out + ["}"]

    def stepper_stmt(self) -> list[str]:
        """A time stepper over malloc'd buffers of data-dependent length, reduced into s or t."""
        return self._drawn_from(self.rt, self._stepper_stmt)

    def _stepper_stmt(self) -> list[str]:
        rt = self.rt
        kind = rt.choice(["ping_pong", "scratch", "ahead", "behind", "gather", "rotation", "neighbours"])
        n = len(self.globals)
        cnt, steps = f"tlen{n}", f"tsteps{n}"
        self.globals += [f"static volatile int {cnt} = {rt.randint(5, 9)};",
                         f"static volatile int {steps} = {rt.randint(1, 4)};"]
        L, T, i, q = self.name("L"), self.name("T"), self.name("i"), self.name("q")
        u, v, w = self.name("u"), self.name("v"), self.name("w")
        tgt = rt.choice(["s", "t"])
        c = f"{rt.uniform(0.05, 0.3):.3f}"
        init = f"  for (int {i} = 0; {i} < {L}; {i}++) {u}[{i}] = {self.bexpr([f'a[{i} % {M}]', f'b[({i} + 1) % {M}]', 's'])};"
        lap = lambda src, k: f"({src}[{k} - 1] - 2 * {src}[{k}] + {src}[{k} + 1])"
        react = lambda e: self.r.choice([f"{e} * {e} * {e}", f"sin({e})", f"tanh({e}) * {e}"])
        out = [f"{{ int {L} = {cnt}, {T} = {steps};",
               f"  double *{u} = malloc({L} * sizeof(double)), *{v} = malloc({L} * sizeof(double));", init,
               f"  for (int {i} = 0; {i} < {L}; {i}++) {v}[{i}] = {u}[{i}];"]
        frees = [u, v]
        loop = f"  for (int {q} = 0; {q} < {T}; {q}++) {{"
        if kind == "ping_pong":
            out += [loop, f"    for (int {i} = 1; {i} + 1 < {L}; {i}++) {v}[{i}] = {u}[{i}] + {c} * {lap(u, i)} "
                          f"+ 0.1 * {react(f'{u}[{i}]')} * x[{i} % {N}];",
                    f"    double *{w} = {u}; {u} = {v}; {v} = {w}; }}"]
        elif kind == "scratch":
            out += [loop, f"    for (int {i} = 1; {i} + 1 < {L}; {i}++) {v}[{i}] = {u}[{i}] + {c} * {lap(u, i)} * "
                          f"{self.bexpr([f'{u}[{i}]', f'x[{i} % {N}]'])};",
                    f"    memcpy({u}, {v}, {L} * sizeof(double)); }}"]
        elif kind in ("ahead", "behind"):   # in place: the left neighbour kept in a scalar, or re-read
            if kind == "ahead":
                out += [loop, f"    double left = {u}[0];",
                        f"    for (int {i} = 1; {i} + 1 < {L}; {i}++) {{ double mid = {u}[{i}]; "
                        f"{u}[{i}] = mid + {c} * (left - 2 * mid + {u}[{i} + 1]) + 0.1 * {react('mid')}; left = mid; }} }}"]
            else:
                out += [loop, f"    for (int {i} = 2; {i} + 1 < {L}; {i}++) {u}[{i}] = 0.3 * {u}[{i} - 1] + 0.4 * {u}[{i}] "
                              f"+ 0.2 * {u}[{i} - 2] + 0.3 * {u}[{i} + 1] * {self.bexpr([f'x[{i} % {N}]', f'{u}[{i}]'])}; }}"]
        elif kind == "gather":   # through an index array built from the data's length
            idx = self.name("idx")
            stride = rt.choice([2, 3, 5])
            out += [f"  int *{idx} = malloc({L} * sizeof(int));",
                    f"  for (int {i} = 0; {i} < {L}; {i}++) {idx}[{i}] = ({i} * {stride} + 1) % {L};",
                    loop, f"    for (int {i} = 0; {i} < {L}; {i}++) {v}[{i}] = 0.5 * {u}[{idx}[{i}]] + 0.4 * "
                          f"{self.bexpr([f'{u}[{i}]', f'{u}[{idx}[({i} + 1) % {L}]]'])};",
                    f"    double *{w} = {u}; {u} = {v}; {v} = {w}; }}"]
            frees.append(idx)
        elif kind == "rotation":   # previous, current and next states, rotated every step
            p = self.name("p")
            out += [f"  double *{p} = malloc({L} * sizeof(double));",
                    f"  for (int {i} = 0; {i} < {L}; {i}++) {p}[{i}] = 0.5 * {u}[{i}];",
                    loop, f"    for (int {i} = 1; {i} + 1 < {L}; {i}++) {v}[{i}] = 2 * {u}[{i}] - {p}[{i}] + {c} * "
                          f"{lap(u, i)} * tanh({u}[{i}]);",
                    f"    {v}[0] = {u}[0]; {v}[{L} - 1] = {u}[{L} - 1];",
                    f"    double *{w} = {p}; {p} = {u}; {u} = {v}; {v} = {w}; }}"]
            frees.append(p)
        else:   # neighbours: read at i and i + 1, then overwritten
            out += [f"  for (int {i} = 0; {i} + 1 < {L}; {i}++) {tgt} = 0.5 * {tgt} + 0.25 * tanh({u}[{i}] * {u}[{i} + 1]);",
                    f"  for (int {i} = 0; {i} < {L}; {i}++) {u}[{i}] = 0.5 * {u}[{i}] + 0.1;"]
        out += [f"  for (int {i} = 0; {i} < {L}; {i}++) {tgt} = 0.5 * {tgt} + 0.25 * tanh({u}[{i}] + 0.5 * {v}[{i}]);",
                "  " + " ".join(f"free({x});" for x in frees), "}"]
        return out

    def row_stmt(self) -> list[str]:
        """A scratch row of data-dependent length filled and read back in each pass of a loop,
        reduced into s or t."""
        return self._drawn_from(self.rr, self._row_stmt)

    def _row_stmt(self) -> list[str]:
        rr = self.rr
        kind = rr.choice(["plain", "plain", "two_readers", "neighbour", "changed", "past", "some", "written",
                          "in_place"])
        n = len(self.globals)
        cnt, passes, tab = f"rlen{n}", f"rpasses{n}", f"rtab{n}"
        self.globals += [f"static volatile int {cnt} = {rr.randint(3, 7)};",
                         f"static volatile int {passes} = {rr.randint(1, 3)};",
                         f"static const double {tab}[16] = {{{', '.join(f'{rr.uniform(-1, 1):.3f}' for _ in range(16))}}};"]
        L, P, p, i, j, row = (self.name(v) for v in ("L", "P", "p", "i", "j", "row"))
        tgt = rr.choice(["s", "t"])
        src = f"a[{j} % {M}]" if kind == "written" else rr.choice([f"x[{j} % {N}]", f"x[({j} + {p}) % {N}]"])
        # mostly arithmetic the reverse sweep may redo, sometimes any expression
        fill = rr.choice([f"{src} - {tab}[({p} * 5 + {j}) % 16]", f"{tab}[{j} % 16] * {src} + 0.1 * {j}",
                          f"{src} * {src} - 0.5 * {tab}[({p} + {j}) % 16]",
                          self.bexpr([src, f"{tab}[({p} * 5 + {j}) % 16]", f"{tab}[{j} % 16] * {src}"])])
        on_stack = rr.random() < 0.3
        first = rr.choice(["0", "1"]) if kind == "neighbour" else "0"
        end = f"{L} - 1" if kind == "past" else L
        out = [f"{{ int {L} = {cnt}, {P} = {passes};",
               f"  double {row}[8];" if on_stack else f"  double *{row} = malloc({L} * sizeof(double));",
               f"  for (int {j} = 0; {j} < {L}; {j}++) {row}[{j}] = 0.25 * x[({j} + 1) % {N}];",
               f"  for (int {p} = 0; {p} < {P}; {p}++) {{"]
        fill_loop = f"for (int {j} = {first}; {j} < {end}; {j}++) {row}[{j}] = {fill};"
        out.append(f"    if ({p} % 2 == 0) {fill_loop}" if kind == "some" else f"    {fill_loop}")
        if kind == "changed":
            out.append(f"    {row}[{p} % {L}] = 0.5 * {tgt} + x[{p} % {N}];")
        if kind == "neighbour":
            read = f"({row}[{i}] - {row}[{i} - 1]) * sin({row}[{i}])"
            out.append(f"    for (int {i} = 1; {i} < {L}; {i}++) {tgt} = 0.5 * {tgt} + 0.25 * {read};")
        else:
            read = self.bexpr([f"{row}[{i}]", f"x[{i} % {N}]", f"{row}[{i}] * {row}[{i}]"])
            update = f" {row}[({i} + 1) % {L}] *= 0.5;" if kind == "in_place" else ""
            out.append(f"    for (int {i} = 0; {i} < {L}; {i}++) {{ {tgt} = 0.5 * {tgt} + 0.25 * tanh({read});{update} }}")
        if kind == "two_readers":
            out.append(f"    for (int {i} = 0; {i} < {L}; {i}++) for (int {j} = {i} + 1; {j} < {L}; {j}++) "
                       f"{tgt} += 0.05 * {row}[{i}] * {row}[{j}];")
        out += ["  }", "}" if on_stack else f"  free({row}); }}"]
        return out

    def walk_stmt(self) -> list[str]:
        """A loop walking a pointer over a or b (or a struct array, or rows of a matrix) from a
        data-dependent start, reduced into s or t or updating the array in place."""
        return self._drawn_from(self.rk, self._walk_stmt)

    def _walk_stmt(self) -> list[str]:
        rk = self.rk
        kind = rk.choice(["ne", "lt", "lt2", "down", "two", "structs", "rows"])
        p, q, lo, e = self.name("p"), self.name("q"), self.name("lo"), self.name("e")
        leaves = ["s", "t", f"a[{rk.randrange(M)}]", f"x[{rk.randrange(N)}]"]
        start = f"int {lo} = (int)({M / 2:.1f} * (1.0 + tanh({self.expr(leaves)}))) % {M};"
        tgt = rk.choice(["s", "t"])
        arr = rk.choice(["a", "b"])
        read = lambda v: self.bexpr([v, "s", "t", f"x[{rk.randrange(N)}]"])
        if kind == "ne":
            return [f"{{ {start}", f"  for (const double *{p} = {arr} + {lo}; {p} != {arr} + {M}; ++{p}) "
                    f"{tgt} = 0.5 * {tgt} + 0.5 * {read('*' + p)}; }}"]
        if kind in ("lt", "lt2"):
            step = "++" + p if kind == "lt" else f"{p} += 2"
            return [f"{{ {start}", f"  for (double *{p} = {arr} + {lo}; {p} < {arr} + {M}; {step}) "
                    f"*{p} = 0.5 * *{p} + 0.25 * {read('*' + p)}; }}"]
        if kind == "down":
            return [f"{{ {start}", f"  for (const double *{p} = {arr} + {M}; {p} != {arr} + {lo};) {{ --{p}; "
                    f"{tgt} = 0.5 * {tgt} + 0.5 * {read('*' + p)}; }} }}"]
        if kind == "two":
            return [f"{{ {start}", f"  double *{q} = b;",
                    f"  for (const double *{p} = a + {lo}; {p} != a + {M}; ++{p}, ++{q}) "
                    f"*{q} = 0.5 * *{q} + 0.5 * {self.bexpr([f'*{p}', f'*{q}', 's'])}; }}"]
        if kind == "structs":
            w, ty = self.name("w"), self.name("struct W")
            return [f"{{ {start}", f"  {ty} {{ double u, v; }} {w}[{M}];",
                    f"  for (int {e} = 0; {e} < {M}; {e}++) {{ {w}[{e}].u = a[{e}]; {w}[{e}].v = b[{e}] * {tgt}; }}",
                    f"  for ({ty} *{p} = {w} + {lo}; {p} != {w} + {M}; ++{p}) "
                    f"{tgt} = 0.5 * {tgt} + 0.25 * {read(f'{p}->u * {p}->v')}; }}"]
        m = self.name("m")
        return [f"{{ {start}", f"  double *{m} = malloc(3 * {M} * sizeof(double));",
                f"  for (int {e} = 0; {e} < 3 * {M}; {e}++) {m}[{e}] = {arr}[{e} % {M}] * (1 + 0.1 * {e});",
                f"  for (double *{p} = {m} + {lo}; {p} < {m} + 2 * {M}; {p} += {M})",
                f"    for (const double *{q} = {p}; {q} != {p} + {M}; {q}++) {tgt} = 0.5 * {tgt} + 0.25 * {read('*' + q)};",
                f"  free({m}); }}"]

    def accessor_stmt(self) -> list[str]:
        """Global objects (constant data) reached through noinline accessors returning a
        reference to the object pointer, evaluated with the arrays, reduced into s or t."""
        return self._drawn_from(self.ra, self._accessor_stmt)

    def _accessor_stmt(self) -> list[str]:
        ra = self.ra
        kind = ra.choice(["table", "slot", "member"])
        n = len(self.globals)
        ty, data = f"struct AM{n}", f"am{n}_data"
        w = lambda: ", ".join(f"{ra.uniform(-1, 1):.3f}" for _ in range(3))
        self.globals += [f"{ty} {{ double w[3]; int k; }};",
                         f"static {ty} {data}[3] = {{{{{{{w()}}}, 1}}, {{{{{w()}}}, 2}}, {{{{{w()}}}, 0}}}};"]
        get = f"am{n}_get"
        if kind == "table":
            self.globals.append(f"static {ty} *am{n}_tab[3] = {{&{data}[0], &{data}[1], &{data}[2]}};")
            self.idiom_helpers.append(f"__attribute__((noinline)) static {ty} **am{n}_entry(int i) "
                                      f"{{ return &am{n}_tab[i % 3]; }}")
            self.idiom_helpers.append(f"static {ty} *{get}(int i) {{ return *am{n}_entry(i); }}")
        elif kind == "slot":
            self.globals.append(f"static {ty} *am{n}_ptr = &{data}[1];")
            self.idiom_helpers.append(f"__attribute__((noinline)) static {ty} **am{n}_slot(void) "
                                      f"{{ return &am{n}_ptr; }}")
            self.idiom_helpers.append(f"static {ty} *{get}(int i) {{ (void)i; return *am{n}_slot(); }}")
        else:   # a global struct holding the object pointers
            self.globals.append(f"static struct {{ int n; {ty} *m[3]; }} am{n}_holder = "
                                f"{{3, {{&{data}[2], &{data}[0], &{data}[1]}}}};")
            self.idiom_helpers.append(f"__attribute__((noinline)) static {ty} **am{n}_member(int i) "
                                      f"{{ return &am{n}_holder.m[i % am{n}_holder.n]; }}")
            self.idiom_helpers.append(f"static {ty} *{get}(int i) {{ return *am{n}_member(i); }}")
        apply = f"am{n}_apply"
        self.idiom_helpers.append(
            f"__attribute__((noinline)) static double {apply}(const {ty} *m, double u, double v) {{\n"
            f"  return m->w[0] * u + m->w[1] * {self.bexpr(['u', 'v'])} + m->w[2] * m->k * v;\n}}")
        i, tgt = self.name("i"), ra.choice(["s", "t"])
        return [f"for (int {i} = 0; {i} < {ra.randint(2, 5)}; {i}++) {tgt} = 0.5 * {tgt} + 0.25 * "
                f"{apply}({get}({i} + {ra.randint(0, 2)}), {self.bexpr([f'a[{i} % {M}]', 's'])}, x[{i} % {N}]);"]

    def scratch_stmt(self) -> list[str]:
        """A VLA in a block followed by a helper using the stack, a qsort of records built from
        the arrays (keys kept apart), a memalign'd buffer, or an aborting check, reduced into
        s or t."""
        return self._drawn_from(self.rq, self._scratch_stmt)

    def _scratch_stmt(self) -> list[str]:
        rq = self.rq
        kind = rq.choice(["vla", "qsort", "memalign", "abort"])
        k, n, v, tgt = self.name("k"), self.name("n"), self.name("v"), rq.choice(["s", "t"])
        own = lambda: self.bexpr([f"a[{k} % {M}]", f"b[({k} + 1) % {M}]", f"x[{k} % {N}]", "s"])
        if kind == "vla":
            clob = self.name("clobber")
            self.idiom_helpers.append(
                f"__attribute__((noinline)) static double {clob}(const double *p, int m) {{\n"
                f"  volatile double w[48];\n  double r = 0;\n"
                f"  for (int i = 0; i < 48; i++) w[i] = 1e3 * p[i % m] + i;\n"
                f"  for (int i = 0; i < 48; i++) r += w[i] * 1e-12;\n  return r;\n}}")
            count = f"{M // 2} + (int)({M / 4:.1f} * (1.0 + tanh({self.expr(['s', 't', f'x[{rq.randrange(N)}]'])})))"
            return [f"{{ int {n} = {count};", f"  {{ double {v}[{n}];",
                    f"    for (int {k} = 0; {k} < {n}; {k}++) {v}[{k}] = {own()};",
                    f"    for (int {k} = 0; {k} < {n}; {k}++) {tgt} = 0.5 * {tgt} + 0.25 * {v}[{k}] * {v}[({k} + 1) % {n}]; }}",
                    f"  {tgt} += {clob}(a, {M}); }}"]
        if kind == "qsort":
            ty, cmp = self.name("struct QR"), self.name("qcmp")
            self.globals.append(f"{ty} {{ double key; double w; int id; }};")
            self.idiom_helpers.append(
                f"static int {cmp}(const void *p, const void *q) {{\n"
                f"  double u = ((const {ty} *)p)->key, v = ((const {ty} *)q)->key;\n"
                f"  return (u > v) - (u < v);\n}}")
            return [f"{{ {ty} {v}[{M}];",
                    f"  for (int {k} = 0; {k} < {M}; {k}++) {{ {v}[{k}].key = 0.25 * {own()} + 0.7 * {k} * ({k} % 2 ? 1 : -1); "
                    f"{v}[{k}].w = {own()}; {v}[{k}].id = {k}; }}",
                    f"  qsort({v}, {M}, sizeof {v}[0], {cmp});",
                    f"  for (int {k} = 0; {k} < {M}; {k}++) {tgt} = 0.5 * {tgt} + 0.25 * {v}[{k}].w * ({k} + 1) "
                    f"* {v}[{k}].key + 0.01 * {v}[{k}].id; }}"]
        if kind == "memalign":
            return [f"{{ double *{v} = memalign(64, {M} * sizeof(double));",
                    f"  for (int {k} = 0; {k} < {M}; {k}++) {v}[{k}] = {own()};",
                    f"  for (int {k} = 0; {k} < {M}; {k}++) {tgt} = 0.5 * {tgt} + 0.25 * {v}[{k}] * {v}[({M} - 1 - {k})];",
                    f"  free({v}); }}"]
        return [f"if (!({tgt} > -1e300) || isnan(a[{rq.randrange(M)}])) {{ fprintf(stderr, \"bad %g\\n\", {tgt} * a[0]); abort(); }}"]

    def omp_stmt(self) -> list[str]:
        """An OpenMP parallel loop over the arrays, race-free: each iteration writes only its own
        element, reads what no iteration of the loop writes, and sums through a reduction, an
        atomic or a lastprivate value."""
        return self._drawn_from(self.ro, self._omp_stmt)

    def _omp_stmt(self) -> list[str]:
        ro = self.ro
        k, r = self.name("k"), self.name("r")
        own = lambda: self.bexpr(["s", f"a[{k}]", f"b[{k}]", f"x[{k} % {N}]"])
        acc = ro.choice(["s", "t"])
        loop = f"  for (int {k} = 0; {k} < {M}; {k}++)"
        kind = ro.choice(["map", "schedule", "reduction", "atomic", "private", "neighbour",
                          "lastprivate", "firstprivate", "region", "threads"])
        if kind == "map":
            return ["#pragma omp parallel for", f"{loop} a[{k}] = {own()};"]
        if kind == "schedule":
            sched = ro.choice(["static, 2", "dynamic", "dynamic, 2", "guided", "runtime"])
            return [f"#pragma omp parallel for schedule({sched})", f"{loop} b[{k}] = {own()};"]
        if kind == "reduction":
            return [f"{{ double {r} = 0;", "#pragma omp parallel for reduction(+:" + r + ")",
                    f"{loop} {r} += 0.1 * {own()};", f"  {acc} = {acc} + {r}; }}"]
        if kind == "atomic":
            return [f"{{ double {r} = 0;", "#pragma omp parallel for", f"{loop} {{",
                    "#pragma omp atomic", f"    {r} += 0.1 * {own()}; }}", f"  {acc} = {acc} + {r}; }}"]
        if kind == "private":
            return [f"{{ double {r};", f"#pragma omp parallel for private({r})",
                    f"{loop} {{ {r} = {own()}; b[{k}] = 0.5 * b[{k}] + 0.1 * {r} * {r}; }} }}"]
        if kind == "neighbour":
            near = self.bexpr(["s", f"a[{k}]", f"a[({k} + 1) % {M}]", f"x[{k} % {N}]"])
            return ["#pragma omp parallel for", f"{loop} b[{k}] = 0.5 * b[{k}] + {near};"]
        if kind == "lastprivate":
            return [f"{{ double {r} = 0;", f"#pragma omp parallel for lastprivate({r})",
                    f"{loop} {{ {r} = {own()}; b[{k}] = b[{k}] + 0.1 * {r}; }}", f"  {acc} = {acc} + 0.5 * {r}; }}"]
        if kind == "firstprivate":
            return [f"{{ double {r} = 0.5 * {acc};", f"#pragma omp parallel for firstprivate({r})",
                    f"{loop} b[{k}] = b[{k}] + {r} * a[{k}]; }}"]
        if kind == "region":
            near = self.bexpr(["s", f"b[{k}]", f"a[({k} + 1) % {M}]", f"x[{k} % {N}]"])
            return ["#pragma omp parallel", "  {", "#pragma omp for", f"  {loop} a[{k}] = {own()};",
                    "#pragma omp for", f"  {loop} b[{k}] = {near};", "  }"]
        return ["#pragma omp parallel for num_threads(2)", f"{loop} a[{k}] = {own()};"]

    # ---------------------------------------------------------------- program
    def program(self) -> str:
        r = self.r
        self.make_helpers()
        body: list[str] = []
        for _ in range(r.randint(3, 7)):
            body += self.stmt()
        # each extra statement kind, with the share of programs it joins: its stream decides
        # whether and where (between statements, not inside one), then writes it
        for stream, share, make in (
                (self.rv, 0.3, self.vector_stmt), (self.ri, 0.35, self.idiom_stmt),
                (self.rp, 0.3, self.pointer_aggregate_stmt), (self.rs, 0.3, self.structure_stmt),
                (self.rl, 0.3, self.loop_shape_stmt), (self.rw, 0.3, self.word_stmt),
                (self.rm, 0.35, self.math_stmt), (self.rc, 0.4, self.control_stmt),
                (self.rf, 0.2, self.float_stmt), (self.rh, 0.3, self.heap_stmt),
                (self.ro, 0.25, self.omp_stmt), (self.rd, 0.3, self.data_stmt),
                (self.rt, 0.3, self.stepper_stmt), (self.rr, 0.3, self.row_stmt),
                (self.rk, 0.3, self.walk_stmt), (self.ra, 0.3, self.accessor_stmt),
                (self.rq, 0.3, self.scratch_stmt)):
            if stream.random() < share:
                at = stream.randint(0, len(body))
                while at < len(body) and (body[at].startswith((" ", "}")) or _in_parallel_region(body[:at]) or
                                          (stream in (self.rd, self.rt, self.rr, self.rk) and _depth(body[:at]) > 0)):
                    # no statement goes inside an OpenMP region (every thread would run it:
                    # a race on s, t, a and b); the data streams stay out of any braces
                    at += 1
                body[at:at] = make()
        wa = [f"{r.uniform(-1, 1):.3f}" for _ in range(M)]
        wb = [f"{r.uniform(-1, 1):.3f}" for _ in range(M)]
        x0 = [f"{r.uniform(-0.9, 0.9):.4f}" for _ in range(N)]
        init = [f"  for (int i = 0; i < {M}; i++) {{ a[i] = {self.expr([f'x[i % {N}]', f'x[(i + 1) % {N}]'])} + 0.1 * i; "
                f"b[i] = {self.bexpr([f'x[(i + 2) % {N}]', 'a[i]'])}; }}"]
        lines = [
            "#include <math.h>", "#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>",
            "#include <string.h>", "#include <malloc.h>", "#include <emmintrin.h>",
            "typedef double v2d __attribute__((vector_size(16)));",
            "extern int enzyme_dup, enzyme_const;",
            "void __enzyme_autodiff(void *, ...);",
            "double __enzyme_fwddiff(void *, ...);",
            "void *__enzyme_augmentfwd(void *, ...);",
            "void __enzyme_reverse(void *, ...);",
            "struct S { double u; double v; int k; };",
            "struct V { double *p; int n; double w; };",
            "struct DL { double d; long k; };",
            "struct SP { double *p; long n; };",
            "struct PP { double *p; double *q; };",
            "struct T3 { double x, y, z; };",
            "",
        ] + self.globals + [h + "\n" for h in self.helpers + self.idiom_helpers] + [
            "__attribute__((noinline)) double f(const double *x) {",
            f"  double a[{M}];",
            f"  double *b = malloc({M} * sizeof(double));",
            f"  double s = {self.bexpr(['x[0]', 'x[1]'])}, t = {self.bexpr([f'x[{N - 1}]', 'x[2]'])};",
            f"  struct S st = {{ x[1] * 0.5, {self.bexpr(['x[0]', 'x[3]'])}, {r.randint(0, 3)} }};",
        ] + self.resets + init + ["  " + l for l in body] + [
            f"  static const double wa[{M}] = {{{', '.join(wa)}}}, wb[{M}] = {{{', '.join(wb)}}};",
            "  double out = s + 0.5 * t + 0.25 * st.u - 0.125 * st.v;",
            f"  for (int i = 0; i < {M}; i++) out += wa[i] * a[i] + wb[i] * b[i];",
            "  free(b);",
            "  return out;",
            "}",
            "",
            "int main(void) {",
            f"  double x[{N}] = {{{', '.join(x0)}}};",
            f"  double g[{N}] = {{0}};",
            '  printf("VAL %.17g\\n", f(x));',
        ] + ([f'  printf("TOL {SINGLE_TOLERANCES}\\n");'] if self.single else []) + [
            "  __enzyme_autodiff((void *)f, enzyme_dup, x, g);",
            f'  for (int i = 0; i < {N}; i++) printf("REV %d %.17g\\n", i, g[i]);',
            f"  for (int i = 0; i < {N}; i++) {{",
            f"    double e[{N}] = {{0}};",
            "    e[i] = 1.0;",
            '    printf("FWD %d %.17g\\n", i, __enzyme_fwddiff((void *)f, enzyme_dup, x, e));',
            "  }",
            f"  double gs[{N}] = {{0}};",
            "  void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, gs);",
            "  __enzyme_reverse((void *)f, enzyme_dup, x, gs, 1.0, tape);",
            f'  for (int i = 0; i < {N}; i++) printf("SPL %d %.17g\\n", i, gs[i]);',
            f"  static const double steps[3] = {{{', '.join(SINGLE_FD_STEPS if self.single else FD_STEPS)}}};",
            "  for (int k = 0; k < 3; k++)",
            f"    for (int i = 0; i < {N}; i++) {{",
            f"      double xp[{N}], xm[{N}];",
            f"      memcpy(xp, x, sizeof xp); memcpy(xm, x, sizeof xm);",
            "      xp[i] += steps[k]; xm[i] -= steps[k];",
            '      printf("FD %g %d %.17g\\n", steps[k], i, (f(xp) - f(xm)) / (xp[i] - xm[i]));',
            "    }",
            "  return 0;",
            "}",
        ]
        return "\n".join(lines) + "\n"


def _depth(lines: list[str]) -> int:
    """How many braces the lines leave open (a `#pragma omp parallel` region's)."""
    return sum(line.count("{") - line.count("}") for line in lines)


def _in_parallel_region(lines: list[str]) -> bool:
    """Whether the lines end inside an OpenMP parallel construct: a `parallel { ... }` region,
    or the braced body of a `parallel for` loop (the atomic and private forms)."""
    starts = [k for k, line in enumerate(lines) if line.strip().startswith("#pragma omp parallel")]
    return bool(starts) and _depth(lines[starts[-1]:]) > 0


def gen(seed: int) -> str:
    return _Gen(seed).program()


if __name__ == "__main__":
    sys.stdout.write(gen(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
