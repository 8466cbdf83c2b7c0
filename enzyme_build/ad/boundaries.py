"""Floats that cross a call in an ABI-coerced form are brought back into one function.

The x86-64 calling convention passes small structs in registers, and clang lowers them
to whatever register type holds their bytes:

- `struct {float x, y;}` (and `std::complex<float>`, the first eight bytes of
  `{float, float, double}`) travels as one `<2 x float>`;
- `struct {float val; int idx;}` travels as one `i64`: the float is bitcast to `i32`,
  zero-extended and or-ed with the shifted int, and the callee truncates and bitcasts
  it back;
- a `double` copied into a `uint64_t` (generic code that moves values as words) and passed
  or returned by value is a plain `i64` argument or result bitcast from/to `double`; the
  bitcast may be on the caller's side only (a callee that stores the word into memory the
  caller reads as doubles, or returns a word it loaded: instcombine stores and loads the
  integer directly), so a call passing a float's bits, or whose result is taken as a float,
  marks its callee too;
- `struct {double d; long k;}` is returned as `{ double, i64 }`, an aggregate the engine
  cannot give a derivative (without optimization nothing simplifies it away);
- `struct {double *p; long n;}` (a span, a pair of pointers) is returned as `{ ptr, i64 }`:
  the pointer inside reaches the caller without the shadow the engine gives a pointer
  returned on its own, so loads through it would silently carry no derivative;
- a pointer passed or returned as an integer (`uintptr_t`, a tagged pointer made or read
  by a helper) reaches the other side without a shadow in the same way.

Inside one function the Scalarizer (vectors) and instcombine (`trunc(or(zext(bitcast f),
shl …))` folds to `f`) remove these forms, and the engine sees plain floats.  Across a
call they survive, and a float travelling as an integer or a vector register has no
derivative the engine can follow.  So before differentiation every defined function whose
signature or body shows such a boundary is inlined into its direct callers (repeatedly:
a caller that only forwards the register gets the pattern after one round), and the
forms then fold away.  Recursive calls cannot be inlined; they keep the clear error the
engine gives for the packed value.  Functions with custom rules or other registrations are
left alone (their calls are opaque while the pre-AD pipeline runs anyway).
"""
from __future__ import annotations

import re

from ..ir.model import LOCAL as _V, DEFINE_RE, INTTOPTR_RE, PTRTOINT_RE

_FP_VECTOR = re.compile(r'<\s*\d+\s+x\s+(?:double|float|half)\s*>')
# float bits placed into a wider integer, and taken back out of one
_TO_BITS = re.compile(r'^  ' + _V + r' = bitcast (?:float|half) ' + _V + r' to i(?:32|16)$')
_WIDEN = re.compile(r'^  ' + _V + r' = zext (?:nneg )?i(?:32|16) ' + _V + r' to i(?:64|128)$')
_NARROW = re.compile(r'^  ' + _V + r' = trunc (?:nuw |nsw )*i(?:64|128) ' + _V + r' to i(?:32|16)$')
_FROM_BITS = re.compile(r'^  ' + _V + r' = bitcast i(?:32|16) ' + _V + r' to (?:float|half)$')
# a whole float moved as an integer of its width (a double in a `uint64_t`)
_INT_TO_FP = re.compile(r'^  ' + _V + r' = bitcast i(?:64|32|16|80|128) ' + _V + r' to (?:double|float|half|x86_fp80|fp128)$')
_FP_TO_INT = re.compile(r'^  ' + _V + r' = bitcast (?:double|float|half|x86_fp80|fp128) ' + _V + r' to i\d+$')
_DIRECT_CALL = re.compile(r'\b(?:call|invoke)\b[^@]*?(@(?:"[^"]*"|[-\w$.]+))\(')
_ATTR_GROUP = re.compile(r'^attributes (#\d+) = \{ ?(.*?) ?\}$')

MAX_ROUNDS = 4
_MARK = '"enzyme-build-coerced-floats"'


def _functions(text: str):
    """(name, define line index, body lines) of each defined function."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = DEFINE_RE.match(lines[i]) if lines[i].startswith("define ") else None
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j] != "}":
            j += 1
        yield m.group(2), i, lines[i + 1:j]
        i = j + 1


_DEF = re.compile(r'^  ' + _V + r' = (\w+) ')
_CARRIERS = {"zext", "sext", "trunc", "or", "and", "shl", "lshr", "insertvalue", "extractvalue", "freeze"}
_NAME = re.compile(r'%(?:"[^"]*"|[-\w$.]+)')


def _crosses_as_integer(params: str, body: list[str], param_types: str, into: re.Pattern, out_of: re.Pattern,
                        carriers: set[str], single: bool = False) -> bool:
    """Whether a value arrives in an integer parameter (of `param_types`) and is turned back
    by `into`, or is turned into an integer by `out_of` and leaves in the result, followed
    through the integer operations in `carriers`. With `single`, an operation combining two
    such values makes something else (`last - first`: a distance, not a pointer)."""
    from_param = set(re.findall(r'\b(?:' + param_types + r') (?:noundef |signext |zeroext |range\([^)]*\) )*'
                                r'(%[-\w$.]+)', params))
    made: set[str] = set()
    for line in body:
        m = into.match(line)
        if m and m.group(2) in from_param:
            return True
        m = out_of.match(line)
        if m:
            made.add(m.group(1))
            continue
        m = _DEF.match(line)
        if m and m.group(2) in carriers:
            used = set(_NAME.findall(line[m.end():]))
            if used & from_param and not (single and len(used & from_param) > 1):
                from_param.add(m.group(1))
            if used & made and not (single and len(used & made) > 1):
                made.add(m.group(1))
        elif line.startswith("  ret ") and set(_NAME.findall(line)) & made:
            return True
    return False


def _integer_float_params(params: str, body: list[str]) -> bool:
    """A float arrives in an integer parameter or leaves in an integer (or aggregate of
    integers) result: a `double` copied into a `uint64_t` field and passed or returned by
    value. Bits are followed through the integer operations the ABI lowering uses."""
    return _crosses_as_integer(params, body, r'i\d+', _INT_TO_FP, _FP_TO_INT, _CARRIERS)


_POINTER_BITS = _CARRIERS | {"add", "sub", "xor"}


def _integer_pointer_params(params: str, body: list[str]) -> bool:
    """A pointer arrives in an integer parameter (turned back into a pointer with
    `inttoptr`) or leaves in an integer result (`ptrtoint`): a tagged pointer made or
    read by a helper (`box(double *d) { return (uintptr_t)d | 1; }`, a `PointerIntPair`
    passed by value). Inside one function the AD stage turns such arithmetic into GEPs
    (`stage.integer_pointer_arithmetic`); across a call the pointer would have no shadow."""
    return _crosses_as_integer(params, body, "i64", INTTOPTR_RE, PTRTOINT_RE, _POINTER_BITS, single=True)


def _returns_mixed_aggregate(prefix: str) -> bool:
    """The return type (in the define line before the name) is a struct mixing floats and
    integers: `{ double, i64 }` for a `struct {double d; long k;}` returned in two registers."""
    from ..analysis.types import mixed_float_aggregate
    from ..ir.model import header_return_type
    return mixed_float_aggregate(header_return_type(prefix))


def _returns_pointer_aggregate(prefix: str) -> bool:
    """The return type is a struct or array holding a pointer: `{ ptr, i64 }` for a
    `struct {double *p; long n;}` (a span, a pair of iterators) returned in two registers.
    The engine gives a returned pointer a shadow only when it is the whole result, so a
    pointer inside the aggregate would reach the caller without one."""
    from ..ir.model import header_return_type
    ty = header_return_type(prefix)
    return ty.startswith(("{", "[", "<{")) and re.search(r'(?<![\w.])ptr\b', ty) is not None


def _packs_floats(body: list[str]) -> bool:
    """The body puts float bits into a wider integer or takes them out of one."""
    to_bits, narrowed = set(), set()
    for line in body:
        m = _TO_BITS.match(line)
        if m:
            to_bits.add(m.group(1))
            continue
        m = _NARROW.match(line)
        if m:
            narrowed.add(m.group(1))
    for line in body:
        m = _WIDEN.match(line)
        if m and m.group(2) in to_bits:
            return True
        m = _FROM_BITS.match(line)
        if m and m.group(2) in narrowed:
            return True
    return False


_DEF_CALL = re.compile(r'^  ' + _V + r' = (?:tail |musttail |notail )?(?:call|invoke)\b')
_EXTRACT = re.compile(r'^  ' + _V + r' = extractvalue .+ ' + _V + r', \d+$')


def coerced_float_functions(text: str, exclude=frozenset()) -> set[str]:
    """Defined functions, called directly from another function, whose floats cross the
    call as a vector register or packed into an integer."""
    lines = text.split("\n")
    found, callers, passed_bits, defined = set(), {}, set(), set()
    for name, at, body in _functions(text):
        bits = {m.group(1) for m in map(_FP_TO_INT.match, body) if m}
        from_call: dict[str, str] = {}
        for line in body:
            for m in _DIRECT_CALL.finditer(line):
                if m.group(1) != name:
                    callers.setdefault(m.group(1), set()).add(name)
                    # the caller's side of the boundary: a float's bits passed as an integer
                    # argument (the callee may only store them: `store i64 %bits`), or an
                    # integer result taken as a float
                    if bits & set(_NAME.findall(line[m.end():])):
                        passed_bits.add(m.group(1))
                    r = _DEF_CALL.match(line)
                    if r:
                        from_call[r.group(1)] = m.group(1)
            m = _EXTRACT.match(line)
            if m and m.group(2) in from_call:
                # an element of an aggregate result (`{ i8, i64 }`: a struct holding a union
                # of a double and an int, returned in integer registers)
                from_call[m.group(1)] = from_call[m.group(2)]
                continue
            m = _INT_TO_FP.match(line)
            if m and m.group(2) in from_call:
                passed_bits.add(from_call[m.group(2)])
        if name[1:].strip('"') in exclude:
            continue
        defined.add(name)
        m = DEFINE_RE.match(lines[at])
        if (_FP_VECTOR.search(m.group(1)) or _FP_VECTOR.search(m.group(3)) or _packs_floats(body)
                or _integer_float_params(m.group(3), body) or _integer_pointer_params(m.group(3), body)
                or _returns_mixed_aggregate(m.group(1))
                or _returns_pointer_aggregate(m.group(1))):
            found.add(name)
    found |= passed_bits & defined
    return {n for n in found if callers.get(n)}


def mark_always_inline(text: str, names: set[str]) -> str:
    """Give each named function its own attribute group with `alwaysinline` instead of
    `noinline`/`optnone`."""
    lines = text.split("\n")
    groups = {}
    for line in lines:
        m = _ATTR_GROUP.match(line)
        if m:
            groups[m.group(1)] = m.group(2)
    new_groups, next_id = [], 1 + max((int(g[1:]) for g in groups), default=0)
    for name, at, _ in list(_functions(text)):
        if name not in names:
            continue
        line = lines[at]
        m = re.search(r'\) [^{]*?(#\d+)', line)
        attrs = groups.get(m.group(1), "") if m else ""
        words = [w for w in attrs.split() if w not in ("noinline", "optnone", "alwaysinline")]
        group = f"#{next_id}"
        next_id += 1
        new_groups.append(f"attributes {group} = {{ alwaysinline {_MARK} {' '.join(words)} }}")
        if m:
            lines[at] = line[:m.start(1)] + group + line[m.end(1):]
        else:
            lines[at] = re.sub(r'\s*\{\s*$', f" {group} {{", line)
    return "\n".join(lines + new_groups)


def inline_coerced_boundaries(module, llvm, exclude=frozenset()):
    """Inline functions whose floats cross calls in ABI-coerced registers (see the module
    docstring) and fold the registers away; the module is returned unchanged when there
    are none."""
    for _ in range(MAX_ROUNDS):
        text = module.text()
        names = coerced_float_functions(text, exclude)
        if not names:
            break
        module = llvm.parse_assembly(mark_always_inline(text, names), module.name)
        llvm.run_named_passes(module, ["always-inline", "sroa", "instcombine", "dce"])
        remaining = coerced_float_functions(module.text(), exclude)
        if remaining >= names:   # nothing could be inlined (recursion): stop
            break
    return module
