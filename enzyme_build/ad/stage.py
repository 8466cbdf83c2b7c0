"""The AD stage of the whole-program link: the one entry point the link step calls.

Order (ARCHITECTURE §1): collect registrations -> pre-AD optimization (O2 without
unrolling/vectorization) -> synthesize derivatives for every __enzyme_* call -> return the
module; the link step then runs the post-AD pipeline (O3) and codegen.
With ENZYME_BUILD_AD_BEFORE_OPT=1 the AD runs on the unoptimized module instead.
"""
from __future__ import annotations

import os
import re

from ..analysis.library import STRING_CREATE, STRING_CREATE_DEFINED
from ..ir.model import INTTOPTR_RE, LOCAL, NAME, PTRTOINT_RE, by_function, make_name, strip_name
from .abi import ENTRY_POINTS as ENZYME_CALL_MARKERS  # the entry points of Enzyme's ABI
from .abi import LANES_SUFFIX


def module_needs_ad(function_names) -> bool:
    """True when any function called like an __enzyme_* entry point is present."""
    return any(marker in name for name in function_names for marker in ENZYME_CALL_MARKERS)


_MARKER_LOAD_RE = re.compile(r'^\s*(%[-a-zA-Z$._0-9"]+)\s*=\s*load i32, ptr (@enzyme_[A-Za-z0-9_]+)')
_ENZYME_CALL_RE = re.compile(r'call\s+(.*?)(@[-a-zA-Z$._0-9]*__enzyme_[A-Za-z0-9_]*)\(')


def canonicalize_markers(text: str) -> str:
    """Pass marker globals by address (`ptr @enzyme_dup`) instead of their loaded value.

    Must run before any optimization: a user-defined `int enzyme_dup = 0;` would otherwise
    be folded to a constant 0 and the marker lost. Also drops the optnone/noinline pair
    that -O0 front ends add, so -O0 builds are still optimized before AD.
    """
    lines = text.split("\n")
    markers: dict[str, str] = {}
    for i, line in enumerate(lines):
        if line.startswith("define "):
            markers = {}
        m = _MARKER_LOAD_RE.match(line)
        if m:
            markers[m.group(1)] = m.group(2)
            continue
        if "__enzyme_" in line and markers:
            cm = _ENZYME_CALL_RE.search(line)
            if cm and any(k in cm.group(2) for k in ENZYME_CALL_MARKERS):
                new = line
                for local, glob in markers.items():
                    new = re.sub(r'i32\s+(?:noundef\s+|signext\s+|zeroext\s+)*' + re.escape(local)
                                 + r'(?=[,)])', f"ptr {glob}", new)
                if new != line:
                    new = _make_variadic_call(new, cm)
                lines[i] = new
        if line.startswith("attributes #") and "optnone" in line:
            lines[i] = re.sub(r'\b(optnone|noinline)\b ?', "", line)
    if "!tbaa" not in text:
        # every unit was compiled at -O0 (no type tags anywhere): clang marks all of its
        # functions noinline even without optnone; let the pre-AD pipeline inline them so
        # the engine sees the types of copies (std::copy, vector growth) where they are used
        for i, line in enumerate(lines):
            if line.startswith("attributes #") and "noinline" in line:
                lines[i] = re.sub(r'\bnoinline\b ?', "", line)
    return "\n".join(lines)


def _make_variadic_call(line: str, cm: re.Match) -> str:
    """Type the call of an __enzyme_* function as `RET (ptr, ...)` so any argument list is valid."""
    head = cm.group(1).strip()
    if "..." in head:
        return line
    # head: [fast-math/attrs] RET ; keep everything, append the variadic function type
    start = cm.start(2)
    return line[:start] + "(ptr, ...) " + line[start:]


_FUNCTION_ALIAS = re.compile(r'^(@(?:"[^"]*"|[-a-zA-Z$._0-9]+)) = [^\n]*?\balias [^\n]*, ptr (@(?:"[^"]*"|[-a-zA-Z$._0-9]+))\s*$',
                             re.M)


def resolve_function_aliases(text: str) -> str:
    """Uses of an alias of a function defined in the module name the function itself:
    clang emits a C++ class's complete constructor as an alias of its base constructor
    (`@_ZN1PC1Ev = alias void (ptr), ptr @_ZN1PC2Ev`) when the class has no virtual bases.
    The optimizer resolves such calls; with AD before optimization the engine met a call
    of a function "without body" (a constructor defined out of line: box2d-lite's `Body`)."""
    if " alias " not in text:
        return text
    defined = set(re.findall(r'^define [^@\n]*(@(?:"[^"]*"|[-a-zA-Z$._0-9]+))\(', text, re.M))
    aliases = {a: f for a, f in _FUNCTION_ALIAS.findall(text) if f in defined}
    if not aliases:
        return text
    use = re.compile("(" + "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True))
                     + r')(?![-a-zA-Z$._0-9"])')
    lines = text.split("\n")
    for k, line in enumerate(lines):
        if "@" in line and not _FUNCTION_ALIAS.match(line) and use.search(line):
            lines[k] = use.sub(lambda m: aliases[m.group(1)], line)
    return "\n".join(lines)


def distinct_ad_sites(text: str) -> str:
    """Give every __enzyme_* call its own declaration (`@__enzyme_autodiff.site3`).

    Calls of one declaration that differ only in the function argument are merged by the
    pre-AD optimizer (a switch over AD calls becomes one call on a lookup table of function
    pointers); calls of distinct functions cannot be merged, so each keeps its own target.
    The engine recognizes the entry point by the name it contains.
    """
    from ..ir.model import parse_instruction
    lines = text.split("\n")
    decls: list[str] = []
    in_body = False
    for i, line in enumerate(lines):
        if line.startswith("define "):
            in_body = True
        elif line.startswith("}"):
            in_body = False
        if not in_body or "__enzyme_" not in line:
            continue
        cm = _ENZYME_CALL_RE.search(line)
        if not cm or not any(k in cm.group(2) for k in ENZYME_CALL_MARKERS):
            continue
        line = _make_variadic_call(line, cm)
        cm = _ENZYME_CALL_RE.search(line)
        ret = parse_instruction(line.strip()).type or "void"
        site = f"{cm.group(2)}.site{len(decls)}"
        decls.append(f"declare {ret} {site}(ptr, ...)")
        lines[i] = line[:cm.start(2)] + site + line[cm.end(2):]
    return "\n".join(lines + decls)


_FLOAT_VECTOR_TYPE_RE = re.compile(r'<(\d+) x (float|double)>')
_AD_TARGET_RE = re.compile(r'@[-a-zA-Z$._0-9]*__enzyme_[A-Za-z0-9_.]*\(ptr (?:[a-z]+ )*(' + NAME + r')[,)]')


def vector_lane_entries(text: str, registered: set[str] = frozenset()) -> str:
    """A function given to an AD call that takes a vector of floats (a struct of two floats
    passed by value: x86-64 packs it into one `<2 x float>` register; `float _Complex` too) gets
    a twin taking each lane as a scalar parameter, `@f.lanes(float, float, ...)`, which
    rebuilds the vectors and calls f (inlined into the twin before AD, like any function whose
    floats cross a call packed: `boundaries`). The call sites still name f; the argument
    parser (`abi.py`) differentiates the twin instead, passing each lane of the vector (and of
    its tangents) as a float of its own, so the derivative of such a parameter is one per lane
    and comes back, for a reverse-mode call declared to return the struct, packed as the
    struct. The twin is `hidden`, not internal, so the pre-AD pipeline keeps it although
    nothing calls it yet. Functions with byval, sret or variadic parameters, and functions with
    a registered rule, are left alone (the argument parser refuses their vectors clearly)."""
    if "__enzyme_" not in text or not _FLOAT_VECTOR_TYPE_RE.search(text):
        return text
    from ..ir.model import DEFINE_RE, header_return_type, parse_params
    targets = set(_AD_TARGET_RE.findall(text))
    if not targets:
        return text
    twins = []
    for line in text.split("\n"):
        if not line.startswith("define ") or "<" not in line:
            continue
        m = DEFINE_RE.match(line)
        if not m or m.group(2) not in targets or strip_name(m.group(2)) in registered:
            continue
        params = parse_params(m.group(3))
        if not any(_FLOAT_VECTOR_TYPE_RE.fullmatch(p.type) for p in params) or any(
                p.type == "..." or re.search(r'\b(byval|sret|inalloca|preallocated)\b', p.attrs) for p in params):
            continue
        ret = header_return_type(m.group(1))
        name = make_name("@", strip_name(m.group(2)) + LANES_SUFFIX)
        head, body, args = [], [], []
        for k, p in enumerate(params):
            v = _FLOAT_VECTOR_TYPE_RE.fullmatch(p.type)
            if v is None:
                head.append(f"{p.type} %a{k}")
                args.append(f"{p.type} %a{k}")
                continue
            n, elem = int(v.group(1)), v.group(2)
            prev = "poison"
            for lane in range(n):
                head.append(f"{elem} %a{k}.{lane}")
                body.append(f"  %v{k}.{lane} = insertelement {p.type} {prev}, {elem} %a{k}.{lane}, i64 {lane}")
                prev = f"%v{k}.{lane}"
            args.append(f"{p.type} {prev}")
        call = f"call {ret} {m.group(2)}({', '.join(args)})"
        body.append(f"  {call}\n  ret void" if ret == "void" else f"  %r = {call}\n  ret {ret} %r")
        twins.append(f"\ndefine hidden {ret} {name}({', '.join(head)}) {{\nentry:\n" + "\n".join(body) + "\n}")
    return text + "".join(twins) + ("\n" if twins else "")


_MODF_RE = re.compile(r'^(\s*)(%[-a-zA-Z$._0-9]+) = (?:tail |notail )?call (?:[a-z]+ )*\{ (double|float), \3 \} '
                      r'@llvm\.modf\.f(?:64|32)\(\3 (?:noundef )?(%[-a-zA-Z$._0-9]+|[-+0-9.eEx]+)\)')


_SINCOS_PAIR_RE = re.compile(r'^(\s*)(%[-a-zA-Z$._0-9]+) = (?:tail |notail )?call (?:[a-z]+ )*\{ (double|float), \3 \} '
                             r'@llvm\.sincos\.f(?:64|32)\(\3 (?:noundef )?(%[-a-zA-Z$._0-9]+|[-+0-9.eEx]+)\)')
_SINCOS_RE = re.compile(r'^(\s*)(?:tail |notail )?call void @(sincos|sincosf)\((double|float) (?:noundef )?'
                        r'(%[-a-zA-Z$._0-9]+|[-+0-9.eEx]+), ptr (?:[a-z]+ |[a-z]+\(\d+\) )*(%[-a-zA-Z$._0-9]+), '
                        r'ptr (?:[a-z]+ |[a-z]+\(\d+\) )*(%[-a-zA-Z$._0-9]+)\)')
_MEMALIGN_RE = re.compile(r'^(\s*)(?:(%[-a-zA-Z$._0-9]+) = )?(?:tail |notail )?call (?:[a-z]+ )*i32 @posix_memalign\('
                          r'ptr (?:[a-z]+ |[a-z]+\(\d+\) )*(%[-a-zA-Z$._0-9]+), i64 (?:[a-z]+ )*(\S+), '
                          r'i64 (?:[a-z]+ )*(\S+)\)')


SIZE_CHECK = "__enzyme_build_check_size"


def _lower_line(line: str, need: set, counter) -> list[str] | None:
    """Library calls the engine handles better as simpler IR: pairs of results become
    scalars with known rules, out-parameter allocation becomes a returned allocation, libc
    memory copies become the intrinsics."""
    if "@mem" in line or "_chk(" in line:
        lowered = _lower_libc_memory(line, need, counter)
        if lowered is not None:
            return lowered
    m = _MODF_RE.match(line)
    if m:
        ind, res, ty, x = m.groups()
        sfx = "f64" if ty == "double" else "f32"
        need.add((ty, f"llvm.trunc.{sfx}"))
        return [f"{ind}{res}.int = call {ty} @llvm.trunc.{sfx}({ty} {x})",
                f"{ind}{res}.frac = fsub {ty} {x}, {res}.int",
                f"{ind}{res}.pair = insertvalue {{ {ty}, {ty} }} poison, {ty} {res}.frac, 0",
                f"{ind}{res} = insertvalue {{ {ty}, {ty} }} {res}.pair, {ty} {res}.int, 1"]
    m = _SINCOS_PAIR_RE.match(line)
    if m:
        ind, res, ty, x = m.groups()
        sfx = "f64" if ty == "double" else "f32"
        need.update({(ty, f"llvm.sin.{sfx}"), (ty, f"llvm.cos.{sfx}")})
        return [f"{ind}{res}.sin = call {ty} @llvm.sin.{sfx}({ty} {x})",
                f"{ind}{res}.cos = call {ty} @llvm.cos.{sfx}({ty} {x})",
                f"{ind}{res}.pair = insertvalue {{ {ty}, {ty} }} poison, {ty} {res}.sin, 0",
                f"{ind}{res} = insertvalue {{ {ty}, {ty} }} {res}.pair, {ty} {res}.cos, 1"]
    m = _SINCOS_RE.match(line)
    if m:
        ind, name, ty, x, ps, pc = m.groups()
        sfx = "f64" if ty == "double" else "f32"
        need.update({(ty, f"llvm.sin.{sfx}"), (ty, f"llvm.cos.{sfx}")})
        tag = ps.lstrip("%").replace('"', "")
        return [f"{ind}%sincos.{tag}.s = call {ty} @llvm.sin.{sfx}({ty} {x})",
                f"{ind}%sincos.{tag}.c = call {ty} @llvm.cos.{sfx}({ty} {x})",
                f"{ind}store {ty} %sincos.{tag}.s, ptr {ps}",
                f"{ind}store {ty} %sincos.{tag}.c, ptr {pc}"]
    m = _MEMALIGN_RE.match(line)
    if m:
        ind, res, pp, align, size = m.groups()
        tag = pp.lstrip("%").replace('"', "")
        need.add(("ptr", "aligned_alloc"))
        out = [f"{ind}%memalign.{tag}.p = call ptr @aligned_alloc(i64 {align}, i64 {size})",
               f"{ind}store ptr %memalign.{tag}.p, ptr {pp}"]
        if res:
            out += [f"{ind}%memalign.{tag}.null = icmp eq ptr %memalign.{tag}.p, null",
                    f"{ind}{res} = select i1 %memalign.{tag}.null, i32 12, i32 0"]   # ENOMEM
        return out
    return None


_LOWERED_DECLS = {
    "aligned_alloc": "declare ptr @aligned_alloc(i64, i64)",
    "llvm.memcpy.p0.p0.i64": "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
    "llvm.memmove.p0.p0.i64": "declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)",
    "llvm.memset.p0.i64": "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)",
    SIZE_CHECK: f"""define internal void @{SIZE_CHECK}(i64 %n, i64 %room) {{
entry:
  %too.big = icmp ugt i64 %n, %room
  br i1 %too.big, label %fail, label %ok
fail:
  call void @__chk_fail()
  unreachable
ok:
  ret void
}}
declare void @__chk_fail()""",
}

# memcpy/memmove/memset as libc calls (-fno-builtin, -ffreestanding, a call through a
# pointer) and their _FORTIFY_SOURCE forms (an extra last argument: the room at the
# destination) mean what the llvm.mem* intrinsics mean; the engine knows those. The checked
# forms keep their check, as a call of SIZE_CHECK (it calls glibc's __chk_fail as they do).
_LIBC_MEMORY_RE = re.compile(
    r'^(\s*)(?:(%[-a-zA-Z$._0-9]+) = )?(?:tail |notail |musttail )?call (?:[a-z_]+ )*ptr '
    r'@(memcpy|memmove|memset|__memcpy_chk|__memmove_chk|__memset_chk)\((.*)\)(.*)$')
_ARG_VALUE_RE = re.compile(r'(\S+)\s*$')


def _lower_libc_memory(line: str, need: set, counter) -> list[str] | None:
    m = _LIBC_MEMORY_RE.match(line)
    if m is None:
        return None
    ind, res, name, arglist, _rest = m.groups()
    from ..ir.model import split_top
    args = [_ARG_VALUE_RE.search(a.strip()).group(1) for a in split_top(arglist)]
    base = name.removeprefix("__").removesuffix("_chk")
    if len(args) != (4 if name.endswith("_chk") else 3):
        return None
    tag = f"%libc.mem.{next(counter)}"
    out = []
    if name.endswith("_chk"):
        need.add(("void", SIZE_CHECK))
        out.append(f"{ind}call void @{SIZE_CHECK}(i64 {args[2]}, i64 {args[3]})")
    if base == "memset":
        need.add(("void", "llvm.memset.p0.i64"))
        out += [f"{ind}{tag}.byte = trunc i32 {args[1]} to i8",
                f"{ind}call void @llvm.memset.p0.i64(ptr {args[0]}, i8 {tag}.byte, i64 {args[2]}, i1 false)"]
    else:
        intrinsic = f"llvm.{base}.p0.p0.i64"
        need.add(("void", intrinsic))
        out.append(f"{ind}call void @{intrinsic}(ptr {args[0]}, ptr {args[1]}, i64 {args[2]}, i1 false)")
    if res:  # the call returns its destination
        out.append(f"{ind}{res} = getelementptr i8, ptr {args[0]}, i64 0")
    return out


def lower_library_calls(text: str) -> str:
    """`llvm.modf`/`llvm.sincos` (what the optimizer makes of modf, sin+cos) and GNU sincos
    as scalar calls with known rules; posix_memalign as aligned_alloc stored through its
    out-parameter (an allocation the engine shadows); libc memcpy/memmove/memset and their
    _FORTIFY_SOURCE forms as the llvm.mem* intrinsics."""
    if not any(k in text for k in ("@llvm.modf.", "@llvm.sincos.", "@sincos", "@posix_memalign",
                                   "@memcpy(", "@memmove(", "@memset(", "_chk(")):
        return text
    import itertools
    out, need, counter = [], set(), itertools.count()
    for line in text.split("\n"):
        lowered = _lower_line(line, need, counter) if "call" in line else None
        if lowered is not None:
            out += lowered
            continue
        out.append(line)
    text = "\n".join(out)
    for ty, name in sorted(need):
        if f"@{name}(" in text and not re.search(rf'^declare [^@]*@{re.escape(name)}\(', text, re.M):
            added = _LOWERED_DECLS.get(name, f"declare {ty} @{name}({ty})")
            if re.search(r'^declare [^@]*@__chk_fail\(', text, re.M):  # the program's own
                added = added.replace("\ndeclare void @__chk_fail()", "")
            text += "\n" + added + "\n"
    return text


# libstdc++'s std::string::_M_create (an extern-template member without a body in the
# program): a string's heap buffer, which the library table counts as an inactive routine's
# result. Kept in an object that also holds differentiated data (`struct {std::string name;
# double v;}`, a std::map<std::string, double> node), that buffer needs a shadow, and an
# inactive call's result has none. Its calls go to this definition of the same thing (the
# library's code: grow to twice the old capacity when asked for less, at most max_size(), a
# block of capacity + 1 from operator new), whose block the engine shadows like any other.
_STRING_CREATE_DEFINITION = """
@{name}.what = private unnamed_addr constant [24 x i8] c"basic_string::_M_create\\00"
define internal ptr @{name}(ptr %this, ptr %capacity, i64 %old) {
entry:
  %asked = load i64, ptr %capacity, align 8
  %too.long = icmp ugt i64 %asked, 4611686018427387903
  br i1 %too.long, label %fail, label %grow
fail:
  call void @_ZSt20__throw_length_errorPKc(ptr @{name}.what)
  unreachable
grow:
  %more = icmp ugt i64 %asked, %old
  %twice = shl i64 %old, 1
  %less = icmp ult i64 %asked, %twice
  %doubled = and i1 %more, %less
  %capped = call i64 @llvm.umin.i64(i64 %twice, i64 4611686018427387903)
  %new = select i1 %doubled, i64 %capped, i64 %asked
  store i64 %new, ptr %capacity, align 8
  %bytes = add nuw i64 %new, 1
  %block = call noalias nonnull ptr @_Znwm(i64 %bytes)
  ret ptr %block
}
"""
_STRING_CREATE_DECLS = {"_Znwm": "declare ptr @_Znwm(i64)",
                        "_ZSt20__throw_length_errorPKc": "declare void @_ZSt20__throw_length_errorPKc(ptr)",
                        "llvm.umin.i64": "declare i64 @llvm.umin.i64(i64, i64)"}


def define_string_create(text: str) -> str:
    """Calls of std::string::_M_create go to its definition above (`STRING_CREATE_DEFINED`)."""
    callee = "@" + STRING_CREATE + "("
    if callee not in text:
        return text
    lines = text.split("\n")
    for k, line in enumerate(lines):
        if callee in line and line.startswith("  "):
            lines[k] = line.replace(callee, f"@{STRING_CREATE_DEFINED}(")
    text = "\n".join(lines) + _STRING_CREATE_DEFINITION.replace("{name}", STRING_CREATE_DEFINED)
    for name, decl in _STRING_CREATE_DECLS.items():
        if not re.search(rf'^(?:declare|define) [^@]*@{re.escape(name)}\(', text, re.M):
            text += decl + "\n"
    return text


OPAQUE_SUFFIX = ".enzyme.opaque"


def _protect_registrations(text: str, registry) -> str:
    """Keep functions with registrations intact through the pre-AD pipeline.

    Rule functions are made non-internal so they survive. Calls to functions that have a
    custom rule, are inactive or are function_like go through an opaque external
    declaration (`@f.enzyme.opaque`) while the optimizer runs: it can neither inline them
    nor use attributes inferred from their bodies (a `returned` argument, `readnone`…) to
    make the call disappear. `_restore_opaque_calls` undoes it before the engine runs.
    """
    from ..ir.model import DEFINE_RE, parse_params, header_return_type, make_name
    keep_visible = set()
    for rule in registry.rules.values():
        keep_visible.update(n for n in (rule.augment, rule.gradient, rule.forward) if n)
    opaque = set(registry.rules) | set(registry.inactive) | set(registry.function_like)
    keep_visible |= opaque
    defined = set()
    for line in text.split("\n"):
        if line.startswith("define "):
            m = DEFINE_RE.match(line)
            if m:
                defined.add(m.group(2)[1:].strip('"'))
    opaque &= defined   # declared-only functions are opaque to the optimizer anyway
    out, decls = [], []
    names = {make_name("@", n): n for n in opaque}
    call_re = re.compile(r'(\bcall\b[^@]*?)(' + "|".join(re.escape(k) for k in sorted(names, key=len, reverse=True))
                         + r')\(') if names else None
    for line in text.split("\n"):
        if line.startswith("define "):
            m = DEFINE_RE.match(line)
            raw = m.group(2) if m else None
            if raw and raw[1:].strip('"') in keep_visible:
                line = re.sub(r'^define (internal |private )', "define ", line)
            if raw in names:
                params = ", ".join(p.type for p in parse_params(m.group(3)))
                decls.append(f"declare {header_return_type(m.group(1))} {make_name('@', names[raw] + OPAQUE_SUFFIX)}({params})")
        elif call_re is not None and " call " in line:
            line = call_re.sub(lambda mm: mm.group(1) + make_name("@", names[mm.group(2)] + OPAQUE_SUFFIX) + "(", line)
        out.append(line)
    return "\n".join(out + decls)


def _restore_opaque_calls(text: str, registry) -> str:
    from ..ir.model import make_name
    opaque = set(registry.rules) | set(registry.inactive) | set(registry.function_like)
    if not opaque or OPAQUE_SUFFIX not in text:
        return text
    lines = []
    for line in text.split("\n"):
        if line.startswith("declare ") and OPAQUE_SUFFIX in line:
            continue
        if OPAQUE_SUFFIX in line:
            for n in opaque:
                line = line.replace(make_name("@", n + OPAQUE_SUFFIX), make_name("@", n))
        lines.append(line)
    return "\n".join(lines)


def _rewritten(module, rewrite, llvm):
    """The module after a text rewrite (unchanged, and not re-parsed, when it does nothing)."""
    text = module.text()
    out = rewrite(text)
    return module if out == text else llvm.parse_assembly(out, module.name)


def _registered(registry) -> set[str]:
    """Functions named by a registration: primals with custom rules, the rules, inactive
    and function_like functions."""
    names = set(registry.rules) | set(registry.inactive) | set(registry.function_like)
    for rule in registry.rules.values():
        names.update(n for n in (rule.augment, rule.gradient, rule.forward) if n)
    return names


def _collect_registry(text: str):
    try:
        from ..custom.collect import collect_registry
    except ImportError:
        from ..custom.registry import Registry
        return Registry()
    return collect_registry(text)


def _synthesize(pre: str, registry, keep_dir: str | None, *, sink) -> None:
    """Derivative synthesis: the AD output's text, as UTF-8, into `sink`."""
    from .driver import differentiate_module
    if keep_dir:
        from .cache import listening_to_plans
        plans: list[str] = []
        with listening_to_plans(plans.append):
            differentiate_module(pre, registry, sink=sink)
        _keep(keep_dir, "cache-plan.txt", "\n".join(plans))
    else:
        differentiate_module(pre, registry, sink=sink)


def _keep(keep_dir: str | None, name: str, data: str | bytes) -> None:
    if keep_dir:
        os.makedirs(keep_dir, exist_ok=True)
        tmp = os.path.join(keep_dir, name + ".tmp")
        with open(tmp, "wb" if isinstance(data, bytes) else "w") as fh:
            fh.write(data)
        os.replace(tmp, os.path.join(keep_dir, name))


_FLOAT_VECTOR = re.compile(r'<\s*\d+\s+x\s+(?:double|float)\s*>')
SCALARIZER = "function(scalarizer<load-store>,instcombine<no-verify-fixpoint>,dce)"


def scalarize_float_vectors(module, llvm):
    """Split vector floating-point code (`<2 x double>` loads, arithmetic, shuffles: SSE
    intrinsics, Eigen's packets, the vectorizers' output) into scalars before AD, with
    LLVM's Scalarizer (`opt`; llvmlite does not expose it). The engine then differentiates
    scalar code in every mode; the post-AD pipeline vectorizes again. Modules without
    float vectors are returned unchanged."""
    from .optrun import run_opt
    text = module.text()
    if not any(line.startswith("  ") and _FLOAT_VECTOR.search(line) for line in text.split("\n")):
        return module
    return run_opt(module, llvm, SCALARIZER, keep=_vector_invokers(text),
                   what="splitting vector floating-point code into scalars",
                   hint="report this program; building with -fno-vectorize and without "
                        "SIMD intrinsics avoids the step")


def _vector_invokers(text: str) -> set[str]:
    """LLVM's Scalarizer breaks a function that invokes a call returning a vector (the
    extracts land after the block's terminator). Such functions (a caller of
    `__enzyme_reverse` returning `{float, float}` as `<2 x float>` inside a try scope) are
    kept out of it; the engine does not differentiate them as vectors anyway."""
    names, current = set(), None
    for line in text.split("\n"):
        if line.startswith("define "):
            m = re.search(r'(@(?:"[^"]*"|[-\w$.]+))\(', line)
            current = m.group(1) if m else None
        elif current and re.match(r'^  %\S+ = invoke <', line):
            names.add(current)
    return names


_V = LOCAL
_INSERT_RE = re.compile(r'^  ' + _V + r' = insertelement <2 x i32> (poison|undef|' + _V[1:-1] + r'), i32 '
                        + _V + r', i64 ([01])$')
_BITCAST_RE = re.compile(r'^  ' + _V + r' = bitcast <2 x i32> ' + _V + r' to double$')
_LOAD_I32_RE = re.compile(r'^  ' + _V + r' = load i32, ptr ' + _V + r'(?:, align \d+)?(?:, !.*)?$')
_GEP_I8_RE = re.compile(r'^  ' + _V + r' = getelementptr (?:inbounds )?(?:nuw )?(?:nusw )?i8, ptr '
                        + _V + r', i64 (-?\d+)$')


def reassemble_split_doubles(text: str) -> str:
    """The Scalarizer splits a `<2 x double>` load that was reinterpreted as `<4 x i32>`
    (a shuffle of 32-bit lanes: Eigen's broadcasts) into i32 loads put back together with
    `insertelement <2 x i32>` + `bitcast ... to double`. When the two i32 loads read 8
    consecutive bytes in one block with no write between them, the double is a load of those
    bytes: rewrite it so (the engine differentiates a double load, not integer lanes)."""
    if "bitcast <2 x i32>" not in text:
        return text
    return by_function(text, _reassemble_split_doubles_in)


def _reassemble_split_doubles_in(lines: list[str]) -> list[str]:
    defs: dict[str, int] = {}
    for i, line in enumerate(lines):
        m = re.match(r'^  ' + _V + r' = ', line)
        if m:
            defs[m.group(1)] = i

    def match(rx, name):
        i = defs.get(name)
        return (i, rx.match(lines[i])) if i is not None else (None, None)

    def address(ptr):
        """(base, byte offset) of a pointer: a constant i8 GEP of a base, or the base."""
        _, g = match(_GEP_I8_RE, ptr)
        return (g.group(2), int(g.group(3))) if g else (ptr, 0)

    moves: dict[int, str] = {}     # line index of the later load -> the double load to add
    drop: set[int] = set()
    for i, line in enumerate(lines):
        b = _BITCAST_RE.match(line)
        if not b:
            continue
        _, hi = match(_INSERT_RE, b.group(2))
        if not hi or hi.group(4) != "1":
            continue
        _, lo = match(_INSERT_RE, hi.group(2))
        if not lo or lo.group(4) != "0" or lo.group(2) not in ("poison", "undef"):
            continue
        i0, l0 = match(_LOAD_I32_RE, lo.group(3))
        i1, l1 = match(_LOAD_I32_RE, hi.group(3))
        if not l0 or not l1:
            continue
        (b0, o0), (b1, o1) = address(l0.group(2)), address(l1.group(2))
        if b0 != b1 or o1 != o0 + 4:
            continue
        first, last = sorted((i0, i1))
        between = lines[first:last + 1]
        if any(t.startswith("  ") and (t.lstrip().startswith(("store", "call", "tail call", "fence"))
                                       or ":" in t.split(";")[0].strip()[-1:]) for t in between):
            continue
        moves[last] = (moves.get(last, "") +
                       f"\n  {b.group(1)} = load double, ptr {l0.group(2)}, align 4")
        drop.add(i)
    return [line + moves.get(i, "") for i, line in enumerate(lines) if i not in drop]


_WIDE_LOAD_RE = re.compile(r'^  ' + _V + r' = load (i64|i128|i256), ptr ' + _V + r'(?:, align (\d+))?(?:, !.*)?$')
_LSHR_CONST_RE = re.compile(r'^  ' + _V + r' = lshr (?:exact )?(i\d+) ' + _V + r', (\d+)(?:, !.*)?$')
_TRUNC_TO_RE = re.compile(r'^  ' + _V + r' = trunc (?:nuw )?(?:nsw )?(i\d+) ' + _V + r' to (i64|i32)(?:, !.*)?$')
_INT_TO_FLOAT_RE = re.compile(r'^  ' + _V + r' = bitcast (i64|i32) ' + _V + r' to (double|float)(?:, !.*)?$')
_DBG_ATTACHMENT_RE = re.compile(r', !dbg !\d+')
_FLOAT_OF_BITS = {"i64": "double", "i32": "float"}


def split_float_carriers(text: str) -> str:
    """A wide integer load cut into whole floats: `%w = load i128, ptr %p` whose only uses
    are `trunc` (after `lshr` by a multiple of the float's width) to i64/i32 that are only
    reinterpreted as double/float. GVN makes these when it forwards a 16-byte (SSE) load to
    later scalar loads of the same bytes. Each float becomes a load of its own bytes at the
    place of the wide load, so the engine sees float loads (a carrier with any other use,
    or a cut across a float boundary, is left to the memory type analysis to refuse).
    Little-endian targets only: bit k of the integer is bit k%8 of byte k/8."""
    if not re.search(r'= load i(?:64|128|256), ptr', text) or \
            not re.search(r'^target datalayout = "e', text, re.M):
        return text
    return by_function(text, _split_float_carriers_in)


def _split_float_carriers_in(lines: list[str]) -> list[str]:
    users: dict[str, list[int]] = {}
    records: dict[str, list[int]] = {}    # debug records (#dbg_value) naming a value
    for i, line in enumerate(lines):
        if not line.startswith("  "):
            continue
        if line.lstrip().startswith("#dbg_"):
            for name in set(_NAME_TOKEN_RE.findall(line)):
                records.setdefault(name, []).append(i)
            continue
        rhs = line.split(" = ", 1)[1] if re.match(r'^  ' + _V + r' = ', line) else line
        for name in set(_NAME_TOKEN_RE.findall(rhs)):
            users.setdefault(name, []).append(i)

    replace: dict[int, list[str]] = {}
    drop: set[int] = set()
    for i, line in enumerate(lines):
        m = _WIDE_LOAD_RE.match(line)
        if not m:
            continue
        wide, width, ptr = m.group(1), int(m.group(2)[1:]), m.group(3)
        align = int(m.group(4) or 1)
        pieces: list[tuple[str, str, int]] = []     # (float name, float type, byte offset)
        chain: set[int] = set()

        def follow(value: str, shift: int) -> bool:
            for u in users.get(value, []):
                chain.add(u)
                sh, tr = _LSHR_CONST_RE.match(lines[u]), _TRUNC_TO_RE.match(lines[u])
                if sh and sh.group(3) == value and sh.group(2) == f"i{width}":
                    if not follow(sh.group(1), shift + int(sh.group(4))):
                        return False
                    continue
                if not (tr and tr.group(3) == value and tr.group(2) == f"i{width}"):
                    return False
                bits = int(tr.group(4)[1:])
                if shift % bits or shift + bits > width or not users.get(tr.group(1)):
                    return False
                for b in users[tr.group(1)]:
                    bc = _INT_TO_FLOAT_RE.match(lines[b])
                    if not (bc and bc.group(3) == tr.group(1) and bc.group(4) == _FLOAT_OF_BITS[tr.group(4)]):
                        return False
                    chain.add(b)
                    pieces.append((bc.group(1), bc.group(4), shift // 8))
            return True

        if not follow(wide, 0) or not pieces:
            continue
        out = []
        dbg = _DBG_ATTACHMENT_RE.search(line)
        dbg = dbg.group(0) if dbg else ""
        for name, ty, offset in pieces:
            address = ptr
            if offset:
                address = name[:-1] + '.bytes"' if name.endswith('"') else name + ".bytes"
                out.append(f"  {address} = getelementptr inbounds i8, ptr {ptr}, i64 {offset}{dbg}")
            a = align if not offset else min(align, offset & -offset)
            out.append(f"  {name} = load {ty}, ptr {address}, align {a}{dbg}")
        replace[i] = out
        gone = {wide} | {_NAME_TOKEN_RE.match(lines[c].strip()).group(0) for c in chain} - {n for n, _, _ in pieces}
        drop |= chain | {r for g in gone for r in records.get(g, [])}
    return _spliced(lines, replace, drop)


def _spliced(lines: list[str], replace: dict[int, list[str]], drop: set[int]) -> list[str]:
    """`lines` with line i replaced by replace[i] and the lines in drop removed (the same
    list when nothing changes)."""
    if not replace and not drop:
        return lines
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in replace:
            out.extend(replace[i])
        elif i not in drop:
            out.append(line)
    return out


_SIGN_OP_RE = re.compile(r'^  ' + _V + r' = (xor|and|or)(?: disjoint)? (i64|i32) ' + _V + r', (-?\d+)(, !dbg !\d+)?$')
# the same with the constant first (as SCCP leaves `(C & MASK) | (y & SIGN)` without instcombine)
_SIGN_OP_CONST_FIRST_RE = re.compile(r'^  ' + _V + r' = (or)(?: disjoint)? (i64|i32) (-?\d+), ' + _V + r'(, !dbg !\d+)?$')
_OR_RE = re.compile(r'^  ' + _V + r' = or(?: disjoint)? (i64|i32) ' + _V + r', ' + _V + r'(, !dbg !\d+)?$')
_FLOAT_TO_INT_RE = re.compile(r'^  ' + _V + r' = bitcast (double|float) ' + _V + r' to (i64|i32)')
# sign bit and its complement of each float width, as LLVM prints the signed constants
_SIGN_MASKS = {"i64": (-(1 << 63), (1 << 63) - 1), "i32": (-(1 << 31), (1 << 31) - 1)}


def sign_bit_ops(text: str) -> str:
    """Sign-bit arithmetic on a float's bits, as the float operation it is: `x ^ SIGN` is
    `-x`, `x & ~SIGN` is `fabs(x)`, `x | SIGN` is `-fabs(x)`, `(a & ~SIGN) | (b & SIGN)` is
    `copysign(a, b)` (a `uint64_t` union or memcpy idiom from memory GVN leaves as integer
    loads; instcombine folds it only when both ends are bitcasts of doubles). Each op whose
    result is reinterpreted as a float, or whose operand is a float's bits, becomes
    `bitcast`, the float op, `bitcast` back: the same bits (LLVM defines fneg, fabs and
    copysign as sign-bit operations), and the engine sees float data it can differentiate
    instead of integer bits whose derivative it would drop."""
    if not re.search(r'= (?:xor|and|or)(?: disjoint)? i(?:64|32) %', text):
        return text
    used: set[str] = set()

    def rewrite(lines):
        out = _sign_bit_ops_in(lines)
        if out is not lines:
            used.update(re.findall(r'@llvm\.(?:fabs|copysign)\.f(?:32|64)\b', "\n".join(out)))
        return out

    text = by_function(text, rewrite)
    for name in sorted(used):
        if not re.search(r'^declare [^\n]*' + re.escape(name) + r'\(', text, re.M):
            ty = "double" if name.endswith("f64") else "float"
            args = f"{ty}, {ty}" if "copysign" in name else ty
            text += f"\ndeclare {ty} {name}({args})\n"
    return text


def _sign_bit_ops_in(lines: list[str]) -> list[str]:
    defs: dict[str, int] = {}
    users: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        m = re.match(r'^  ' + _V + r' = ', line)
        if m:
            defs[m.group(1)] = i
        if line.startswith("  "):
            rhs = line.split(" = ", 1)[1] if m else line
            for name in set(_NAME_TOKEN_RE.findall(rhs)):
                users.setdefault(name, []).append(i)

    def merged(value: str, ity: str, freeze: bool = False) -> list[str] | None:
        """The values the phi or select (or freeze) of type ity defining `value` merges."""
        i = defs.get(value)
        if i is None:
            return None
        m = re.match(r'^  ' + _V + r' = phi ' + ity + r' (.*)$', lines[i])
        if m:
            return re.findall(r'\[\s*([^,\s]+)\s*,', m.group(2))
        m = re.match(r'^  ' + _V + r' = select i1 [^,]+, ' + ity + r' ([^,]+), ' + ity + r' ([^,\s]+)', lines[i])
        if m:
            return [m.group(2), m.group(3)]
        m = re.match(r'^  ' + _V + r' = freeze ' + ity + r' ([^,\s]+)', lines[i]) if freeze else None
        return [m.group(2)] if m else None

    def read_as_float(value: str, ity: str) -> bool:
        return any(re.match(r'^  ' + _V + r' = bitcast ' + ity + r' ' + re.escape(value) + r' to ' +
                            _FLOAT_OF_BITS[ity] + r'\b', lines[u]) for u in users.get(value, []))

    def float_bits(value: str, ity: str, seen: set | None = None) -> bool:
        """`value` is a float's bits: bitcast from a float, read as one, or a merge (phi,
        select, freeze) of which such a value is part — a word picked on a branch from a
        double stored there and the bytes loaded before (fuzz-15)."""
        seen = set() if seen is None else seen
        if value in seen or value not in defs:
            return False
        seen.add(value)
        if _FLOAT_TO_INT_RE.match(lines[defs[value]]) or read_as_float(value, ity):
            return True
        return any(float_bits(v, ity, seen) for v in merged(value, ity, freeze=True) or [])

    def float_facing(result: str, operands: list[str], ity: str) -> bool:
        """The result is read as a float, or an operand is a float's bits, or bits loaded from
        memory go back to memory (a sign flipped in place)."""
        if read_as_float(result, ity) or any(float_bits(v, ity) for v in operands):
            return True
        return any(lines[u].startswith(f"  store {ity} {result}, ") for u in users.get(result, [])) and \
            all(v in defs and re.match(r'^  ' + _V + r' = load ' + ity + r', ', lines[defs[v]]) for v in operands)

    def masked(value: str, ity: str):
        """(operand, mask) of `and ity operand, mask` defining value."""
        i = defs.get(value)
        m = _SIGN_OP_RE.match(lines[i]) if i is not None else None
        if m and m.group(2) == "and" and m.group(3) == ity and len(users.get(value, [])) == 1:
            return m.group(4), int(m.group(5))
        return None, None

    def sign_only(value: str, ity: str, seen=None) -> bool:
        """Whether no bit of `value` but the sign can be set: `and x, SIGN`, the constants 0
        and SIGN, and phis/selects of such (a sign picked on a branch)."""
        if not value.startswith("%"):
            return value in ("0", "undef", "poison") or value == str(_SIGN_MASKS[ity][0])
        seen = set() if seen is None else seen
        if value in seen:
            return True
        seen.add(value)
        i = defs.get(value)
        if i is None:
            return False
        m = _SIGN_OP_RE.match(lines[i])
        if m:
            return m.group(2) == "and" and m.group(3) == ity and int(m.group(5)) == _SIGN_MASKS[ity][0]
        ins = merged(value, ity)     # (not through freeze: a frozen undef is any bits)
        return ins is not None and all(sign_only(v, ity, seen) for v in ins)

    def magnitude(value: str, ity: str, fty: str):
        """How `value`, a float's bits with the sign bit cleared, becomes that float:
        (lines making it under a given name, the float itself when no line is needed, the
        lines it replaces) for `and a, ~SIGN` (a reinterpreted) or a bitcast of a `fabs`
        call (the call's result); else None."""
        a, ma = masked(value, ity)
        if ma == _SIGN_MASKS[ity][1]:
            return (lambda name: [f"  {name} = bitcast {ity} {a} to {fty}"]), None, {defs[value]}
        found = fabs_float(value, ity, fty)
        if found is not None:
            return (lambda name: []), found, set()
        i = defs.get(value)
        merge = re.match(r'^  ' + _V + r' = (phi|select) ', lines[i]) if i is not None else None
        if merge and value not in merged_magnitudes:
            # a magnitude picked on a branch (GVN merges `fabs(d)`'s bits with a constant
            # magnitude from another path): the same merge of the floats, next to it
            floats = [fabs_float(v, ity, fty) if v.startswith("%") else
                      (_float_of_bits(int(v), ity) if re.fullmatch(r"-?\d+", v) and 0 <= int(v) <= _SIGN_MASKS[ity][1]
                       and not _float_nan_bits(int(v), ity) else None)
                      for v in merged(value, ity) or [None]]
            if floats and None not in floats:
                line = lines[i]
                for v, fv in zip(merged(value, ity), floats):
                    line = re.sub(r'(?<=[\s\[,])' + re.escape(v) + r'(?=[\s,\]]|$)', fv, line)
                mf = _sub(value, "magf")
                line = line.replace(f"{value} = ", f"{mf} = ", 1).replace(f" {ity} ", f" {fty} ")
                merged_magnitudes[value] = (i, mf, line)
        if value in merged_magnitudes:
            return (lambda name: []), merged_magnitudes[value][1], set()
        return None

    def fabs_float(value: str, ity: str, fty: str) -> str | None:
        """The float of `bitcast (fabs x) to ity` defining `value` (the fabs call's result)."""
        i = defs.get(value)
        c = _FLOAT_TO_INT_RE.match(lines[i]) if i is not None else None
        j = defs.get(c.group(3)) if c and c.group(2) == fty and c.group(4) == ity else None
        if j is not None and re.match(r'^  ' + _V + r' = (?:tail )?call (?:\w+ )*' + fty + r' @llvm\.fabs\.',
                                      lines[j]):
            return c.group(3)
        return None

    merged_magnitudes: dict[str, tuple[int, str, str]] = {}   # i64 merge -> (its line, float merge, its text)

    new: dict[int, list[str]] = {}
    drop: set[int] = set()

    def copysign(res: str, ity: str, magnitude_float: str, sgn: str, dbg: str) -> list[str]:
        """`res`, bits of copysign(magnitude_float, the float whose sign `sgn` carries): on
        that float's word itself when sgn is `and y, SIGN` used here only (the `and` goes)."""
        fty = _FLOAT_OF_BITS[ity]
        y, my = masked(sgn, ity)
        if my == _SIGN_MASKS[ity][0]:
            drop.add(defs[sgn])
            sgn = y
        return [f"  {_sub(res, 'sgn')} = bitcast {ity} {sgn} to {fty}{dbg}",
                f"  {_sub(res, 'f')} = call {fty} @llvm.copysign.{_FSUFFIX[fty]}({fty} {magnitude_float}, "
                f"{fty} {_sub(res, 'sgn')}){dbg}",
                f"  {res} = bitcast {fty} {_sub(res, 'f')} to {ity}{dbg}"]

    for i, line in enumerate(lines):
        if not line.startswith("  ") or " = " not in line:
            continue
        r = _OR_RE.match(line)
        if r:      # copysign: (a & ~SIGN) | (b & SIGN), either order; fabs(d) for a & ~SIGN
            res, ity, dbg = r.group(1), r.group(2), r.group(5) or ""
            fty = _FLOAT_OF_BITS[ity]
            for sgn, mag in ((r.group(3), r.group(4)), (r.group(4), r.group(3))):
                how = magnitude(mag, ity, fty)
                if how is not None and sign_only(sgn, ity) and float_facing(res, [sgn, mag], ity):
                    break
            else:
                continue
            made, a, gone = how
            drop |= gone
            new[i] = [f"{step}{dbg}" for step in made(_sub(res, "mag"))] + \
                copysign(res, ity, a or _sub(res, "mag"), sgn, dbg)
            continue
        m = _SIGN_OP_RE.match(line)
        if m:
            res, op, ity, v, c, dbg = m.group(1), m.group(2), m.group(3), m.group(4), int(m.group(5)), m.group(6) or ""
        else:
            m = _SIGN_OP_CONST_FIRST_RE.match(line)
            if not m:
                continue
            res, op, ity, c, v, dbg = m.group(1), m.group(2), m.group(3), int(m.group(4)), m.group(5), m.group(6) or ""
        sign, rest = _SIGN_MASKS[ity]
        fty = _FLOAT_OF_BITS[ity]
        if op == "or" and 0 < c <= rest and not _float_nan_bits(c, ity) and sign_only(v, ity) \
                and float_facing(res, [v], ity):
            # copysign(C, y) with a constant magnitude: `(y & SIGN) | C`, C's sign bit clear
            # (the magnitude's `and` folded away with a constant operand)
            new[i] = copysign(res, ity, _float_of_bits(c, ity), v, dbg)
            continue
        fabs = f"call {fty} @llvm.fabs.{_FSUFFIX[fty]}({fty} {_sub(res, 'x')}){dbg}"
        body = {("xor", sign): [f"fneg {fty} {_sub(res, 'x')}{dbg}"],
                ("and", rest): [fabs],
                ("or", sign): [fabs, f"fneg {fty} {_sub(res, 'abs')}{dbg}"],
                # the sign bit alone: +0.0 or -0.0 with x's sign, which carries no derivative
                ("and", sign): [f"call {fty} @llvm.copysign.{_FSUFFIX[fty]}({fty} 0.0, {fty} {_sub(res, 'x')}){dbg}"],
                }.get((op, c))
        if body is None or not float_facing(res, [v], ity):
            continue
        steps = [f"  {_sub(res, 'x')} = bitcast {ity} {v} to {fty}{dbg}"]
        names = [_sub(res, "abs"), _sub(res, "f")] if len(body) == 2 else [_sub(res, "f")]
        steps += [f"  {n} = {b}" for n, b in zip(names, body)]
        steps.append(f"  {res} = bitcast {fty} {names[-1]} to {ity}{dbg}")
        new[i] = steps
    for at, _, line in merged_magnitudes.values():   # the float merges, after their integer ones
        if at not in new and at not in drop:
            new[at] = [lines[at], line]
    return _spliced(lines, new, drop - set(new))


_FSUFFIX = {"double": "f64", "float": "f32"}


def _float_nan_bits(bits: int, ity: str) -> bool:
    """A float NaN (its payload may not survive the widening _float_of_bits does)."""
    return ity == "i32" and bits & 0x7F800000 == 0x7F800000 and bits & 0x7FFFFF != 0


def _float_of_bits(bits: int, ity: str) -> str:
    """The float whose bits are `bits`, as an LLVM constant (hex of the double it widens to:
    LLVM spells float constants as doubles too)."""
    import struct
    if ity == "i32":
        value = struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
        bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    return f"0x{bits & 0xFFFFFFFFFFFFFFFF:016X}"


def _sub(name: str, suffix: str) -> str:
    """A new local name derived from `name` (quoted names keep their quotes)."""
    return name[:-1] + f'.{suffix}"' if name.endswith('"') else f"{name}.{suffix}"


_LOAD_I64_RE = re.compile(r'^  ' + _V + r' = load i64, ptr ' + _V + r'(, align \d+)?(?:, !.*)?$')
_STORE_I64_RE = re.compile(r'^  store i64 ' + _V + r', ptr ' + _V + r'(, align \d+)?(?:, !.*)?$')
_NAME_TOKEN_RE = re.compile(r'%(?:"[^"]*"|[-\w$.]+)')


def pointers_as_integers(text: str) -> str:
    """Pointers kept in memory as integers (`uintptr_t` fields; Eigen's evaluators store a
    matrix's address with ptrtoint): `store i64 (ptrtoint ptr %p)` becomes `store ptr %p`
    and `inttoptr (load i64)` becomes `load ptr`, when the integer has no other use. The
    engine then gives such fields shadows like any pointer field (as integers they had none:
    the derivative read an unset shadow, or none at all)."""
    if "inttoptr i64" not in text and "ptrtoint ptr" not in text:
        return text
    return by_function(text, _pointers_as_integers_in)


def _pointers_as_integers_in(body: list[str]) -> list[str]:
    if not any("inttoptr i64" in l or "ptrtoint ptr" in l for l in body):
        return body
    uses: dict[str, int] = {}
    defs: dict[str, int] = {}
    for i, line in enumerate(body):
        if not line.startswith("  "):
            continue
        head, eq, rest = line.partition(" = ")
        if eq and head.strip().startswith("%"):
            defs[head.strip()] = i
        for n in _NAME_TOKEN_RE.findall(rest if eq and head.strip().startswith("%") else line):
            uses[n] = uses.get(n, 0) + 1
    body = list(body)
    drop: set[int] = set()
    for i, line in enumerate(body):
        m = INTTOPTR_RE.match(line)
        if m and uses.get(m.group(2)) == 1 and m.group(2) in defs:
            j = defs[m.group(2)]
            ld = _LOAD_I64_RE.match(body[j])
            # the load defines the integer, so it dominates the inttoptr and every use of its
            # result: the load itself can define the pointer, wherever the conversion sat
            # (LLVM sinks it to the exit of a loop the load is in: std::sort's heap of
            # tuples holding a pointer)
            if ld and j < i:
                body[j] = f"  {m.group(1)} = load ptr, ptr {ld.group(2)}{ld.group(3) or ''}"
                drop.add(i)
            continue
        st = _STORE_I64_RE.match(line)
        if st and uses.get(st.group(1)) == 1 and st.group(1) in defs:
            j = defs[st.group(1)]
            pi = PTRTOINT_RE.match(body[j])
            if pi:
                body[i] = f"  store ptr {pi.group(2)}, ptr {st.group(2)}{st.group(3) or ''}"
                drop.add(j)
    return [line for k, line in enumerate(body) if k not in drop]


_INT_ARITH_RE = re.compile(r'^  ' + _V + r' = (add|sub|and|or|xor)(?: nuw| nsw| disjoint)* i64 ([^,]+), (.+?)$')


def integer_pointer_arithmetic(text: str) -> str:
    """`inttoptr` of integer arithmetic on one `ptrtoint ptr %p` (aligning a buffer by
    hand: `(double *)(((uintptr_t)raw + 63) & ~63)`) becomes a GEP of %p by the difference,
    the same address: the engine follows GEPs to the allocation (and its shadow), not
    integers. The same for arithmetic on one pointer loaded as an integer (`(node *)(p->link
    & ~1)`: a tagged pointer; a pointer load of the same word is the base) and for a store
    of such arithmetic (`p->link = (uintptr_t)q | 1`: the GEP is stored as a pointer). The
    bits are the program's own either way; the engine then moves shadows with them."""
    if "inttoptr i64" not in text and "ptrtoint ptr" not in text:
        return text
    return by_function(text, _integer_pointer_arithmetic_in)


def _pointer_leaf(v: str, defs: dict[str, str]):
    """The one pointer an integer is computed from by add/sub/and/or/xor with other
    integers (a tag, a mask, an offset: anything else that is not a pointer's bits):
    ('ptrtoint', its integer, the pointer) or ('load', the integer, the address it was
    loaded from, for a word read back from memory); None when there is none or more than
    one."""
    leaves, work, seen = set(), [v], set()
    while work and len(seen) < 64:
        x = work.pop()
        if x in seen or not x.startswith("%"):
            continue
        seen.add(x)
        d = defs.get(x, "")
        pi = PTRTOINT_RE.match(d)
        ar = _INT_ARITH_RE.match(d)
        ld = _LOAD_I64_RE.match(d)
        if pi:
            leaves.add(("ptrtoint", pi.group(1), pi.group(2)))
        elif ld:
            leaves.add(("load", ld.group(1), ld.group(2)))
        elif ar:
            work.extend([ar.group(3).strip(), ar.group(4).strip()])
    if len(leaves) != 1 or work:
        return None
    return next(iter(leaves))


def _integer_pointer_arithmetic_in(body: list[str]) -> list[str]:
    if not any("inttoptr i64" in l for l in body) and not any(" or i64 " in l or " and i64 " in l or " add i64 " in l
                                                                 for l in body):
        return body
    defs = {}
    for i, line in enumerate(body):
        m = re.match(r'^  ' + _V + r' = ', line)
        if m:
            defs[m.group(1)] = line
    loaded: dict[str, str] = {}      # an i64 load -> the pointer load beside it
    stored: dict[str, int] = {}      # a stored word -> the stores of it rewritten so far
    out = []
    for line in body:
        m = INTTOPTR_RE.match(line)
        st = _STORE_I64_RE.match(line) if m is None else None
        value = m.group(2) if m else (st.group(1) if st and _INT_ARITH_RE.match(defs.get(st.group(1), "")) else None)
        leaf = _pointer_leaf(value, defs) if value else None
        if leaf is None:
            out.append(line)
            continue
        kind, as_int, base = leaf
        if kind == "load":
            if as_int not in loaded:
                loaded[as_int] = _sub(as_int, "asptr")
            base = loaded[as_int]
        if m:
            name = m.group(1)
        else:   # one twin per store: a word stored in several places (a boxed value copied)
            stored[value] = stored.get(value, 0) + 1
            name = _sub(value, "asptr" if stored[value] == 1 else f"asptr{stored[value]}")
        if value == as_int:
            # the loaded word itself, converted more than once (LLVM sinks a copy of the
            # conversion into each successor; `pointers_as_integers` took the single ones)
            off = "0"
        else:
            off = _sub(name, "intoff")
            out.append(f"  {off} = sub i64 {value}, {as_int}")
        out.append(f"  {name} = getelementptr i8, ptr {base}, i64 {off}")
        if st:
            out.append(f"  store ptr {name}, ptr {st.group(2)}{st.group(3) or ''}")
    out = _merged_pointer_words(out, defs, loaded)
    if loaded:
        # the pointer loads, right after the integer loads they mirror
        final = []
        for line in out:
            final.append(line)
            ld = _LOAD_I64_RE.match(line)
            if ld and ld.group(1) in loaded:
                final.append(f"  {loaded[ld.group(1)]} = load ptr, ptr {ld.group(2)}{ld.group(3) or ''}")
        out = final
    return out


_PHI_I64_RE = re.compile(r'^  ' + _V + r' = phi i64 (.+)$')
_SELECT_I64_RE = re.compile(r'^  ' + _V + r' = select i1 ([^,]+), i64 ([^,]+), i64 ([^,]+)$')
_INCOMING_RE = re.compile(r'\[ ([^,]+), %([^\]]+?) \]')
_LABEL_RE = re.compile(r'^("[^"]+"|[-\w$.]+):')
_TERMINATOR_RE = re.compile(r'^  (br|switch|ret|unreachable|resume|indirectbr) ')
_PLAIN_OPS_RE = re.compile(r'^  ' + _V + r' = (?:(?:add|sub|mul|shl|lshr|ashr|and|or|xor|udiv|sdiv|urem|srem)'
                           r'(?: nuw| nsw| disjoint| exact)* i64 ([^,]+), (.+?)|(zext|sext)(?: nneg)? i(\d+) \S+ to i64'
                           r'|phi i64 (.+)|(?:tail )?call [^@]*@[-\w$.]+\(([^)]*)\).*)$')


def _plain_integer(v: str, defs: dict[str, str], seen: set[str] | None = None) -> bool:
    """`v` is an integer no pointer's bits flow into: a constant, an integer extended from a
    narrower one, or arithmetic, phis and calls without pointer arguments over such integers
    (`(uintptr_t)(i << 1)`, a small integer made by a helper). A load, a `ptrtoint`, an i64
    parameter or anything else is not (it may hold a pointer's bits). A cycle of phis and
    arithmetic is plain when everything entering it is."""
    v = v.strip()
    if not v.startswith("%"):
        return bool(re.fullmatch(r'-?\d+', v))
    seen = set() if seen is None else seen
    if v in seen:
        return True
    if len(seen) > 64:
        return False
    seen.add(v)
    m = _PLAIN_OPS_RE.match(defs.get(v, ""))
    if m is None:
        return False
    if m.group(4):               # extended from a narrower integer: no pointer fits
        return int(m.group(5)) < 64
    if m.group(7) is not None:   # a call: plain when no pointer goes in
        return "ptr" not in m.group(7)
    operands = ([v for v, _ in _INCOMING_RE.findall(m.group(6))] if m.group(6) is not None
                else [m.group(2), m.group(3)])
    return all(_plain_integer(o, defs, seen) for o in operands)


def _merged_pointer_words(body: list[str], defs: dict[str, str], loaded: dict[str, str]) -> list[str]:
    """A word stored to memory that a phi or select merges from arithmetic on one pointer and
    from plain integers (a tagged value: `v = is_boxed ? (uintptr_t)p | 1 : (uintptr_t)i << 1`)
    is stored as a pointer: the merge is made again over pointers, each pointer incoming as a
    GEP of its pointer (`integer_pointer_arithmetic`), each plain integer as a GEP of null by
    its value. The stored bits are the program's; the engine then stores the pointer's shadow
    beside it, which as an integer it had none of (the gradient through the word was 0).
    Optimization usually unrolls such a merge away; AD before optimization meets it."""
    stores = [(i, st) for i, line in enumerate(body) if (st := _STORE_I64_RE.match(line))
              and (_PHI_I64_RE.match(defs.get(st.group(1), "")) or _SELECT_I64_RE.match(defs.get(st.group(1), "")))]
    if not stores:
        return body

    # a loaded word counts as a pointer's bits only where words are read back as pointers;
    # integer tables merged with constants (`b[i] = c ? a[i] : 5`) stay integers
    reads_words = any(" = inttoptr i64 " in line for line in defs.values())   # as it was before

    def pointer_leaf(v: str):
        leaf = _pointer_leaf(v.strip(), defs)
        return leaf if leaf is not None and (leaf[0] != "load" or reads_words) else None

    def as_pointer(v: str, name: str, twins: dict[str, str]):
        """Lines making `name` a pointer with v's bits, or None when v is neither kind; a
        loaded word's pointer load goes into `twins` (added to `loaded` if the merge is made)."""
        v = v.strip()
        leaf = pointer_leaf(v)
        if leaf is not None:
            kind, as_int, base = leaf
            if kind == "load":
                base = twins.setdefault(as_int, loaded.get(as_int, _sub(as_int, "asptr")))
            if v == as_int:
                return [f"  {name} = getelementptr i8, ptr {base}, i64 0"]
            return [f"  {_sub(name, 'intoff')} = sub i64 {v}, {as_int}",
                    f"  {name} = getelementptr i8, ptr {base}, i64 {_sub(name, 'intoff')}"]
        if _plain_integer(v, defs):
            return [f"  {name} = getelementptr i8, ptr null, i64 {v}"]
        return None

    labels = {m.group(1): i for i, line in enumerate(body) if (m := _LABEL_RE.match(line))}

    def block_end(block: str):
        """The index of the terminator of `block`, None when it is not a plain one."""
        for k in range(labels.get(block, len(body)) + 1, len(body)):
            if _TERMINATOR_RE.match(body[k]):
                return k
            if _LABEL_RE.match(body[k]) or not body[k].startswith("  "):
                return None
        return None

    before: dict[int, list[str]] = {}    # line index -> lines to insert before it
    after: dict[int, list[str]] = {}     # line index -> lines to insert after it
    replace: dict[int, str] = {}
    done: dict[str, str] = {}            # merged integer -> its pointer twin
    for i, st in stores:
        value = st.group(1)
        if value not in done:
            d = defs[value]
            j = next(k for k, line in enumerate(body) if line == d)
            twin = _sub(value, "asptr")
            phi, sel = _PHI_I64_RE.match(d), _SELECT_I64_RE.match(d)
            twins: dict[str, str] = {}
            if phi:
                incoming = _INCOMING_RE.findall(phi.group(2))
                made, ok = [], len({b for _, b in incoming}) == len(incoming)   # one entry per edge
                for n, (v, block) in enumerate(incoming):
                    lines, end = as_pointer(v, _sub(value, f"in{n}"), twins), block_end(block)
                    if lines is None or end is None:
                        ok = False
                        break
                    made.append((end, lines, f"[ {_sub(value, f'in{n}')}, %{block} ]"))
                if not ok or not any(pointer_leaf(v) for v, _ in incoming):
                    continue
                for end, lines, _ in made:
                    before.setdefault(end, []).extend(lines)
                after.setdefault(j, []).append(f"  {twin} = phi ptr " + ", ".join(t for _, _, t in made))
            elif sel:
                a = as_pointer(sel.group(3), _sub(value, "in0"), twins)
                b = as_pointer(sel.group(4), _sub(value, "in1"), twins)
                if a is None or b is None or not (pointer_leaf(sel.group(3)) or pointer_leaf(sel.group(4))):
                    continue
                before.setdefault(j, []).extend(a + b)
                after.setdefault(j, []).append(
                    f"  {twin} = select i1 {sel.group(2)}, ptr {_sub(value, 'in0')}, ptr {_sub(value, 'in1')}")
            loaded.update(twins)
            done[value] = twin
        replace[i] = f"  store ptr {done[value]}, ptr {st.group(2)}{st.group(3) or ''}"
    if not replace:
        return body
    out = []
    for k, line in enumerate(body):
        out.extend(before.get(k, ()))
        out.append(replace.get(k, line))
        out.extend(after.get(k, ()))
    return out


MAX_INLINE_ROUNDS = 3   # rounds of inlining a refusal may ask for (ResolvedByInlining)


def run_ad_stage(module, *, ad_before_opt: bool = False, keep_dir: str | None = None):
    """Canonicalize markers, optimize (unless ad_before_opt), synthesize derivatives.

    Returns a new verified module; the caller runs the post-AD pipeline and codegen.
    With ad_before_opt only SROA runs first (the engine needs SSA values, not allocas).
    `module` is consumed: it and every module made on the way are freed as soon as their
    text is taken, so the engine's own memory is not added to theirs.
    """
    from .. import llvm
    from ..errors import EnzymeBuildError, InternalError

    name = module.name
    text = resolve_function_aliases(distinct_ad_sites(canonicalize_markers(module.text())))
    module.close()
    from ..blas import attach_blas_rules   # BLAS calls: renamed to the rule library, linked in
    text = attach_blas_rules(text)
    from ..complex import attach_complex_rules; text = attach_complex_rules(text)   # complex runtime/libm calls
    from .openmp import prepare_module
    text = prepare_module(text)   # reduction(+:…) through clang's atomic path
    from .qsort import define_qsort
    text = define_qsort(text)   # qsort with a constant size and comparator: a heapsort in IR
    registry = _collect_registry(text)
    # (a function with a registered rule keeps its vectors: its rule takes them as they are)
    text = vector_lane_entries(text, set(registry.rules) | set(registry.inactive) | set(registry.function_like))
    text = _protect_registrations(text, registry)
    from .boundaries import mark_always_inline
    from .diagnostics import ResolvedByInlining
    # a refusal that inlining may lift (diagnostics.ResolvedByInlining: a constant pointer in a
    # context struct handed to a callee) is retried with those functions inlined before AD
    inlined: set[str] = set()
    registered = {make_name("@", n) for n in _registered(registry)}
    for attempt in range(MAX_INLINE_ROUNDS + 1):
        try:
            out = _optimize_and_synthesize(mark_always_inline(text, inlined) if inlined else text, name, registry,
                                           ad_before_opt=ad_before_opt, keep_dir=keep_dir)
            break
        except ResolvedByInlining as err:
            more = set(err.inline) - inlined - registered
            if not more or attempt == MAX_INLINE_ROUNDS:
                raise
            inlined |= more
            from .. import progress
            progress.report(f"inlining {', '.join(sorted(strip_name(n) for n in more))} before AD")
    del text
    _keep(keep_dir, "ad-output.ll", out)
    try:
        new = llvm.parse_assembly(out, name)
    except EnzymeBuildError as err:
        raise InternalError(f"the AD stage produced invalid IR: {err.message}")
    llvm.verify(new, generated=True)
    return new


def _optimize_and_synthesize(text: str, name: str, registry, *, ad_before_opt: bool, keep_dir: str | None) -> str:
    """The AD stage after its textual preparation: pre-AD optimization and the rewrites that
    follow it, then derivative synthesis (in a child process); returns the AD output."""
    from .. import llvm
    m = llvm.parse_assembly(text, name)
    from .. import progress
    from . import optrun
    progress.report("pre-AD optimization")
    if ad_before_opt:
        # always-inline: what clang does at -O0 too (SIMD intrinsics are always_inline wrappers)
        llvm.run_named_passes(m, ["always-inline", "sroa", "sccp"])  # sccp: folds loads of constant function-pointer tables
    else:
        m = optrun.optimize(m, llvm, 2, unroll=False)
    from .bytecopies import loops_to_memcpy   # byte-copy loops the optimizer left (helpers not inlined)
    m = loops_to_memcpy(m, llvm, exclude=_registered(registry))
    if not ad_before_opt:
        # small constant-count loops unrolled completely, once byte-copy loops are memcpys
        # (unrolled, a char copy of a double would be bytes no derivative can follow)
        m = optrun.optimize(m, llvm, 2, unroll="full")
    from .boundaries import inline_coerced_boundaries
    m = inline_coerced_boundaries(m, llvm, exclude=_registered(registry))
    from .asm import lower_known_asm, lower_rounding
    m = _rewritten(m, lower_known_asm, llvm)
    m = scalarize_float_vectors(m, llvm)
    m = _rewritten(m, lower_rounding, llvm)
    # loop-simplify: dedicated loop exits (side tables keep a loop's last records on its exits)
    llvm.run_named_passes(m, ["loop-simplify", "instnamer"])
    optimized = m.text()
    m.close()
    del m
    pre = lower_library_calls(_restore_opaque_calls(optimized, registry))
    if not ad_before_opt:
        # not inlined, std::string's members are inactive calls on the primal object only,
        # and a shadow buffer in the shadow object would be shared by both sides of a move
        pre = define_string_create(pre)
    pre = integer_pointer_arithmetic(pointers_as_integers(sign_bit_ops(split_float_carriers(reassemble_split_doubles(
        pre)))))
    del optimized
    from .counters import counted_pointer_loops, lagging_ivs   # loops counted by integer IVs
    from .openmp import pass_firstprivate_by_address
    pre = lagging_ivs(counted_pointer_loops(pass_firstprivate_by_address(pre)))
    _keep(keep_dir, "ad-input.ll", pre)
    from .isolate import synthesize
    # in a child process: its memory is gone before LLVM's module of the output grows (isolate.py)
    out = synthesize(_synthesize, pre, registry, keep_dir)
    return out
