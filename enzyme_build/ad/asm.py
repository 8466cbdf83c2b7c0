"""Inline assembly the engine knows: a table of asm templates with their IR meaning.

Libraries sometimes spell a single instruction, or nothing at all, in inline assembly to
pin down what the compiler may do. Eigen's SSE `pmin`/`pmax` are `asm("minpd %[a],
%[res]" : [res] "+x"(res) : [a] "x"(a))` (a workaround for an old GCC bug that clang
inherits through `EIGEN_COMP_GNUC`), and its vectorized `exp`/`log` clamp their arguments
with them and pass values through `EIGEN_OPTIMIZATION_BARRIER` (an empty asm whose output
is tied to its input). An asm call has no derivative, so such code was refused on active
values. Before AD, calls whose template and constraints are in the table are replaced by
the IR they mean; any other asm stays (and is refused where it touches active values).

- `minpd $1, $0` / `maxpd` / `minps` / `maxps` with constraints `=x,x,0` (the output tied
  to the second input): x86 `MINPD src, dst` computes per lane `dst < src ? dst : src`
  (NaNs and signed zeros go to `src`), which `fcmp olt` + `select` reproduces exactly;
  `MAX*` is the same with `ogt`.
- `""` with `=x,0` / `=r,0` / `=v,0` (a value barrier): the result is the input.
- `""` with `=*m,0`-style constraints (the output written through a pointer, tied to the
  value): a store of the value.
"""
from __future__ import annotations

import re

from ..ir.model import LOCAL as _V, by_function, split_top, take_type
from .rules.builder import literal_value

MINMAX = {"minpd $1, $0": "olt", "maxpd $1, $0": "ogt", "minps $1, $0": "olt", "maxps $1, $0": "ogt"}
_CLOBBERS = r'(?:,~\{[a-z]+\})*'
_HEAD = re.compile(r'^  (?:' + _V + r' = )?(?:tail |notail )?call (?:noundef )?(\S+|<\d+ x \w+>) asm (?:sideeffect )?'
                   r'"([^"]*)", "([^"]*)"\(')


def _args(line: str, start: int) -> tuple[list[tuple[str, str]], int] | None:
    depth, i = 1, start
    while i < len(line) and depth:
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        i += 1
    if depth:
        return None
    out = []
    for part in split_top(line[start:i - 1]):
        ty, rest = take_type(part.strip())
        rest = re.sub(r'^\s*(?:(?:nonnull|noundef|elementtype\([^)]*\))\s+)*', "", rest)
        out.append((ty, rest.strip()))
    return out, i


def lower_known_asm(text: str) -> str:
    if " asm " not in text:
        return text
    out = []
    for k, line in enumerate(text.split("\n")):
        m = _HEAD.match(line) if " asm " in line else None
        parsed = _args(line, m.end()) if m else None
        new = _lower(m, parsed[0], k) if parsed else None
        out.extend(new if new is not None else [line])
    return "\n".join(out)


def _lower(m: re.Match, args: list[tuple[str, str]], k: int) -> list[str] | None:
    res, ty, template, constraints = m.group(1), m.group(2), m.group(3), m.group(4)
    base = re.sub(_CLOBBERS + r'$', "", constraints)
    if template in MINMAX and base == "=x,x,0" and res and len(args) == 2 and args[0][0] == args[1][0] == ty:
        (_, a), (_, b) = args
        lanes = re.match(r'<(\d+) x', ty)
        cty = f"<{lanes.group(1)} x i1>" if lanes else "i1"
        cmp = f"%enzyme.asm.cmp{k}"
        return [f"  {cmp} = fcmp {MINMAX[template]} {ty} {b}, {a}",
                f"  {res} = select {cty} {cmp}, {ty} {b}, {ty} {a}"]
    if template == "" and res and base in ("=x,0", "=r,0", "=v,0") and len(args) == 1 and args[0][0] == ty:
        zero = "0.0" if re.fullmatch(r'double|float', ty) else "zeroinitializer" if ty.startswith("<") else None
        if zero is None:
            return None
        op = "fadd" if "double" in ty or "float" in ty else None
        if op is None:
            return None
        return [f"  {res} = {op} {ty} {args[0][1]}, {'-0.0' if zero == '0.0' else _neg_zero(ty)}"]
    if template == "" and not res and re.fullmatch(r'=\*[a-z|]+,0', base) and len(args) == 2 and args[0][0] == "ptr":
        return [f"  store {args[1][0]} {args[1][1]}, ptr {args[0][1]}"]
    return None


def _neg_zero(ty: str) -> str:
    elem = ty.split(" x ")[1].rstrip(">")
    return f"splat ({elem} -0.0)"


# ---------------------------------------------------------------- the rounding trick

# `(x + M) - M` with M = 2^52 or 1.5*2^52 (2^23 or 1.5*2^23 for float) rounds x to an
# integer in the current rounding mode; the value barrier between the two (lowered to an
# identity above) is what keeps compilers from folding it. Its derivative is 0, but taken
# operation by operation it is 1 (Eigen's SSE2 `print`/`pfloor`, and so its vectorized
# `exp`, would silently lose their derivative). The subtraction is replaced by `rint(x)`,
# which the rules table knows, and which equals it wherever the trick is valid.
_MAGIC = {"double": (2.0 ** 52, 1.5 * 2.0 ** 52), "float": (2.0 ** 23, 1.5 * 2.0 ** 23)}
_FADD = re.compile(r'^  ' + _V + r' = fadd (?:[a-z]+ )*(double|float|<\d+ x (?:double|float)>) (.+?)(?:, !.*)?$')
_FSUB = re.compile(r'^  ' + _V + r' = fsub (?:[a-z]+ )*(double|float|<\d+ x (?:double|float)>) (\S+), (.+?)(?:, !.*)?$')


def _constant(ty: str, text: str) -> float | None:
    """The value of an FP constant (a splat or an all-equal vector for vector types)."""
    text = text.strip()
    m = re.fullmatch(r'splat \((?:double|float) (\S+)\)', text)
    if m:
        text = m.group(1)
    elif text.startswith("<"):
        parts = {p.strip().split(" ", 1)[1] for p in split_top(text[1:-1]) if " " in p.strip()}
        if len(parts) != 1:
            return None
        text = parts.pop()
    return literal_value(text)


def _is_magic(ty: str, text: str) -> bool:
    elem = "float" if "float" in ty else "double"
    return _constant(ty, text) in _MAGIC[elem]


def lower_rounding_trick(text: str) -> str:
    if "fsub" not in text:
        return text
    return by_function(text, _rounding_in)


def _rounding_in(body: list[str]) -> list[str]:
    added, same = {}, {}     # %r -> x for `%r = fadd x, M`; %b -> %r for identities
    for line in body:
        m = _FADD.match(line)
        if not m:
            continue
        ops = [p.strip() for p in split_top(m.group(3))]
        if len(ops) != 2:
            continue
        a, b = ops
        if _is_magic(m.group(2), b) and a.startswith("%"):
            added[m.group(1)] = a
        elif _is_magic(m.group(2), a) and b.startswith("%"):
            added[m.group(1)] = b
        elif _constant(m.group(2), b) == 0.0 and str(_constant(m.group(2), b)) == "-0.0" and a.startswith("%"):
            same[m.group(1)] = a      # the lowered barrier: x + -0.0
    if not added:
        return body
    out = []
    for line in body:
        m = _FSUB.match(line)
        src = None
        if m and _is_magic(m.group(2), m.group(4)):          # fsub r, M
            src, res, ty = m.group(3), m.group(1), m.group(2)
        else:
            m = _FADD.match(line)                              # fadd r, -M (instcombine's form)
            ops = [p.strip() for p in split_top(m.group(3))] if m else []
            if len(ops) == 2:
                a, b = ops
                c = _constant(m.group(2), b)
                if c is not None and c < 0 and _is_magic(m.group(2), _neg(b)):
                    src, res, ty = a, m.group(1), m.group(2)
        src = same.get(src, src)
        if src in added:
            lanes = re.match(r'<(\d+) x (\w+)>', ty)
            suffix = f"v{lanes.group(1)}f{64 if lanes.group(2) == 'double' else 32}" if lanes else \
                ("f64" if ty == "double" else "f32")
            dbg = re.search(r', !dbg !\d+', line)
            out.append(f"  {res} = call {ty} @llvm.rint.{suffix}({ty} {added[src]})" + (dbg.group(0) if dbg else ""))
            _DECLS.add(f"declare {ty} @llvm.rint.{suffix}({ty})")
            continue
        out.append(line)
    return out


def _neg(text: str) -> str:
    """The constant text negated (enough for `_is_magic`)."""
    v = _constant("double", text)
    return repr(-v) if v is not None else text


_DECLS: set[str] = set()


def lower_rounding(text: str) -> str:
    """`lower_rounding_trick` with the `llvm.rint` declarations it needs appended."""
    _DECLS.clear()
    out = lower_rounding_trick(text)
    declared = {l.split("@", 1)[1].split("(")[0] for l in out.split("\n") if l.startswith("declare ")}
    missing = [d for d in sorted(_DECLS) if d.split("@", 1)[1].split("(")[0] not in declared]
    return out + ("\n" + "\n".join(missing) if missing else "")
