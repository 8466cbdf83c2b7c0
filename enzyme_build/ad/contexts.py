"""Shadow contexts: Enzyme's `__enzyme_context(width)` / `enzyme_context` API.

A context holds a shadow of every global at a fixed width, private to the context:

    void *ctx = __enzyme_context(1);
    double *dg = __enzyme_shadow(ctx, &g, 0);    // g's shadow in this context, lane 0
    *dg = 0;
    __enzyme_autodiff(f, enzyme_context, ctx, x);  // f's derivative uses the context's shadows
    // *dg now holds d f / d g
    __enzyme_zero_shadows(ctx);                  // every shadow of the context back to 0

Each `__enzyme_context` call in the program is one context (numbered in module order), which
must be made in the function that uses it: the pass follows its value within that function
only. The lowering happens around the engine, which knows nothing of contexts:

1. `lower_contexts` (before the engine): every use of the context value becomes the address
   of a marker global; `__enzyme_shadow(ctx, &g + off, lane)` becomes the address of g's
   context shadow `@g$ctx<k>` (lane > 0: `@g$ctx<k>l<lane>`) at that offset, and the
   queried global is made active (its value then has a derivative even if the program never
   writes it); `__enzyme_zero_shadows(ctx)` calls a function defined at the end; an AD call
   passing `enzyme_context, ctx` loses those two arguments and is renamed `<callee>.ctx<k>`.
2. The engine lowers the renamed call like any other, except that a context call leaves the
   global shadows as they are (a normal top-level call clears them: the context's shadows are
   the user's to seed and read).
3. `specialize` (after the pass): the derived functions the context's calls reach are cloned
   as `<name>.ctx<k>`, their shadow globals (`@g$sh`, forward lanes `@g$fsh`, `@g$fsh<j>`)
   renamed to the context's, and the calls switched to the clones.
4. `finish` (after the last pass): the context shadows are defined (zeroed internal globals)
   and each context's `__enzyme_build_zero_context<k>` zeroes them all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import EnzymeBuildError
from ..ir.model import make_name, parse_module, source_location, strip_name
from .shadowinit import mirrored_closure, reset_lines, shadow_definitions, value_type

_CREATE = ("__enzyme_context", "__enzyme_new_context")
MARKER = "__enzyme_build_context"       # @__enzyme_build_context<k>: the value of context k
ZERO = "__enzyme_build_zero_context"    # @__enzyme_build_zero_context<k>(): zero its shadows
CHECK = "__enzyme_build_check_context"  # @__enzyme_build_check_context<k>(): before each AD call with k
_SITE = re.compile(r'\.ctx(\d+)$')      # an AD entry point renamed for context k


@dataclass
class Contexts:
    """What `lower_contexts` found: the width of each context and the globals with a
    context shadow (g -> value type) per context."""
    widths: dict[int, int] = field(default_factory=dict)
    shadows: dict[int, dict[str, str]] = field(default_factory=dict)


def context_of_callee(callee: str | None) -> int | None:
    """k for an AD entry point renamed by lower_contexts (`@__enzyme_autodiff.site0.ctx1`)."""
    m = _SITE.search(strip_name(callee or ""))
    return int(m.group(1)) if m else None


def shadow_name(g: str, k: int, lane: int = 0) -> str:
    """'@g$ctx<k>' (lane 0) or '@g$ctx<k>l<lane>' for the global named g (without '@')."""
    return make_name("@", g, f"ctx{k}" if lane == 0 else f"ctx{k}l{lane}")


def lower_contexts(text: str, registry):
    """(text, registry, Contexts or None): see the module docstring, step 1."""
    if not any(name in text for name in _CREATE):
        return text, registry, None
    module = parse_module(text)
    lines = list(module.lines)
    contexts = Contexts()
    found: dict[tuple[str, str], int] = {}       # (function, value) -> k
    marker_of = {}
    for fname in module.functions:
        for inst in module.functions[fname].instructions():
            if inst.opcode != "call" or strip_name(inst.callee or "") not in _CREATE:
                continue
            where = source_location(module, inst.metadata.get("!dbg")) or f"@{fname}"
            width = inst.operands[0][1] if inst.operands else ""
            if not re.fullmatch(r'\d+', width) or int(width) < 1:
                raise EnzymeBuildError(f"the width of a differentiation context must be a constant >= 1 "
                                       f"(got {width or 'none'}, in @{fname})", location=where,
                                       hint="__enzyme_context(1)")
            if inst.result is None:
                continue
            k = len(contexts.widths)
            contexts.widths[k] = int(width)
            contexts.shadows[k] = {}
            found[(fname, inst.result)] = k
            marker_of[k] = make_name("@", f"{MARKER}{k}")
            lines[inst.first_line] = ""
    if not found:
        return text, registry, None
    # every use of a context value: the marker global of its context
    for (fname, value), k in found.items():
        fn = module.functions[fname]
        pattern = re.compile(re.escape(value) + r'(?![-\w$.])')
        for i in range(fn.first_line + 1, fn.last_line):   # debug records too
            if pattern.search(lines[i]):
                lines[i] = pattern.sub(marker_of[k], lines[i])
    text = "\n".join(lines)
    module = parse_module(text)
    lines = list(module.lines)
    extra: list[str] = [f"{marker_of[k]} = private unnamed_addr constant i8 0" for k in contexts.widths]
    declared: set[str] = set()
    marker_re = re.compile(r'@' + MARKER + r'(\d+)(?![-\w$.])')
    for fname in module.functions:
        for inst in module.functions[fname].instructions():
            if inst.opcode != "call" or not inst.callee:
                continue
            where = source_location(module, inst.metadata.get("!dbg")) or f"@{fname}"
            callee = strip_name(inst.callee)
            line = lines[inst.first_line]
            if "__enzyme_shadow" in callee and inst.operands and marker_re.fullmatch(inst.operands[0][1]):
                k = int(marker_re.fullmatch(inst.operands[0][1]).group(1))
                lines[inst.first_line] = _lower_query(module, fname, inst, k, contexts, where)
            elif "__enzyme_zero_shadows" in callee:
                m = marker_re.fullmatch(inst.operands[0][1]) if inst.operands else None
                if m is None:
                    raise EnzymeBuildError(f"__enzyme_zero_shadows needs a context made by __enzyme_context "
                                           f"in the same function (in @{fname})", location=where)
                lines[inst.first_line] = f"  call void @{ZERO}{m.group(1)}()"
                declared.add(f"declare void @{ZERO}{m.group(1)}()")
            elif "__enzyme_" in callee and "@enzyme_context" in line:
                stripped, k = _strip_context_arguments(line, fname, where, declared, module, callee)
                lines[inst.first_line] = f"  call void @{CHECK}{k}()\n{stripped}"
                declared.add(f"declare void @{CHECK}{k}()")
            elif marker_re.search(line):
                raise EnzymeBuildError(
                    f"a differentiation context is passed to @{callee} (in @{fname}): a context can only "
                    f"be given to __enzyme_shadow, __enzyme_zero_shadows and the AD calls of the function "
                    f"that made it", location=where,
                    hint="make the context with __enzyme_context in the function that uses it")
    for fname in module.functions:   # a context stored to memory or passed on cannot be followed
        for inst in module.functions[fname].instructions():
            if inst.opcode != "call" and marker_re.search(lines[inst.first_line]):
                raise EnzymeBuildError(
                    f"a differentiation context is stored or passed on in @{fname} "
                    f"({inst.text.strip()}): enzyme-build follows a context only within the function "
                    f"that made it", location=source_location(module, inst.metadata.get("!dbg")) or f"@{fname}",
                    hint="make the context with __enzyme_context in the function that uses it")
    from dataclasses import replace as copy_registry
    queried = {g: ty for shadows in contexts.shadows.values() for g, ty in shadows.items()}
    registry = copy_registry(registry, context_globals=queried)
    return "\n".join(lines + extra + sorted(declared)) + "\n", registry, contexts


def _lower_query(module, fname, inst, k: int, contexts: Contexts, where: str) -> str:
    """`__enzyme_shadow(ctx, &g + off, lane)` -> the address of g's context shadow + off."""
    ops = inst.operands
    if len(ops) != 3 or ops[1][0] != "ptr" or not re.fullmatch(r'\d+', ops[2][1]):
        raise EnzymeBuildError(f"__enzyme_shadow(ctx, &global, lane) needs a global's address and a constant "
                               f"lane (in @{fname})", location=where)
    lane = int(ops[2][1])
    if lane >= contexts.widths[k]:
        raise EnzymeBuildError(f"lane {lane} of a context of width {contexts.widths[k]} does not exist "
                               f"(in @{fname})", location=where, hint=f"lanes go from 0 to {contexts.widths[k] - 1}")
    found = re.search(r'@("[^"]*"|[-a-zA-Z$._0-9]+)', ops[1][1])
    g = strip_name("@" + found.group(1)) if found else None
    ty = value_type(module, g) if g else None
    if ty is None:
        raise EnzymeBuildError(f"__enzyme_shadow needs the address of a global variable (got {ops[1][1]}, "
                               f"in @{fname})", location=where, hint="(double *)__enzyme_shadow(ctx, &g, 0)")
    contexts.shadows[k][make_name("@", g)] = ty
    address = re.sub(re.escape(make_name("@", g)) + r'(?![-\w$.])', shadow_name(g, k, lane), ops[1][1])
    if inst.result is None:
        return ""
    return f"  {inst.result} = getelementptr i8, ptr {address}, i64 0"


_CONTEXT_ARGS = re.compile(r',\s*ptr(?:\s+(?:noundef|nonnull))*\s+@enzyme_context\s*,\s*ptr(?:\s+(?:noundef|nonnull))*\s+@'
                           + MARKER + r'(\d+)(?=\s*[,)])')


def _strip_context_arguments(line: str, fname: str, where: str, declared: set[str], module,
                             callee: str) -> tuple[str, str]:
    """(the AD call without `enzyme_context, ctx`, its callee renamed for the context; k)."""
    m = _CONTEXT_ARGS.search(line)
    if m is None:
        raise EnzymeBuildError(f"enzyme_context must be followed by a context made by __enzyme_context in "
                               f"the same function (in the call to @{callee} in @{fname})", location=where)
    k = m.group(1)
    line = line[:m.start()] + line[m.end():]
    renamed = make_name("@", f"{callee}.ctx{k}")
    line = re.sub(re.escape(make_name("@", callee)) + r'(?=\()', renamed, line, count=1)
    decl = re.match(r'^declare (.*?)' + re.escape(make_name("@", callee)) + r'\((.*)$', module.declarations.get(callee, ""))
    declared.add(f"declare {decl.group(1)}{renamed}({decl.group(2)}" if decl else f"declare void {renamed}(...)")
    return line, k


def specialize(text: str, contexts: Contexts, derived: set[str], active_globals: dict[str, str]) -> str:
    """Step 3: clone the derived functions the context calls reach (see the module docstring).
    `derived` names the functions this pass defined."""
    module_funcs = _function_spans(text)
    lines = text.split("\n")
    out_extra: list[str] = []
    for k in sorted(contexts.widths):
        suffix = f".ctx{k}"
        # the context's call sites name derived functions marked with the context's suffix
        roots = {n[:-len(suffix)] for n in re.findall(r'@("[^"]*"|[-a-zA-Z$._0-9]+)', text)
                 for n in [strip_name("@" + n)] if n.endswith(suffix) and n[:-len(suffix)] in derived}
        if not roots:
            continue
        closure, todo = set(), list(roots)
        while todo:
            n = todo.pop()
            if n in closure or n not in module_funcs:
                continue
            closure.add(n)
            start, end = module_funcs[n]
            body = "\n".join(lines[start:end + 1])
            todo += [c for c in (strip_name("@" + x) for x in re.findall(r'@("[^"]*"|[-a-zA-Z$._0-9]+)', body))
                     if c in derived and c not in closure]
        names = {make_name("@", n): make_name("@", n + suffix) for n in closure}
        width = contexts.widths[k]
        for g, ty in active_globals.items():
            plain = strip_name(g)
            names[make_name("@", plain, "sh")] = shadow_name(plain, k)
            names[make_name("@", plain, "fsh")] = shadow_name(plain, k)
            for lane in range(1, width):
                names[make_name("@", plain, f"fsh{lane}")] = shadow_name(plain, k, lane)
            contexts.shadows[k].setdefault(g, ty)
        pattern = re.compile("(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                             + r")(?![-\w$.])")
        for n in sorted(closure):
            start, end = module_funcs[n]
            out_extra.append(pattern.sub(lambda m: names[m.group(1)], "\n".join(lines[start:end + 1])))
    if not out_extra:
        return text
    return text.rstrip("\n") + "\n\n" + "\n\n".join(out_extra) + "\n"


def _function_spans(text: str) -> dict[str, tuple[int, int]]:
    spans, start, name = {}, None, None
    for i, line in enumerate(text.split("\n")):
        if line.startswith("define "):
            m = re.search(r'@("[^"]*"|[-a-zA-Z$._0-9]+)\(', line)
            name, start = (strip_name("@" + m.group(1)) if m else None), i
        elif line.startswith("}") and start is not None:
            if name:
                spans[name] = (start, i)
            start, name = None, None
    return spans


def _global_lines(text: str):
    """A stand-in module with only `globals` (name -> definition line), for shadowinit."""
    from types import SimpleNamespace
    found = {}
    for line in text.split("\n"):
        if line.startswith("@"):
            m = re.match(r'@("[^"]*"|[-a-zA-Z$._0-9]+)\s*=', line)
            if m:
                found[strip_name("@" + m.group(1))] = line
    return SimpleNamespace(globals=found, lines=[ln for ln in text.split("\n") if ln.startswith("%")])


def _drop_declaration(text: str, decl: str) -> str:
    return text.replace(decl + "\n", "").replace("\n" + decl, "")


_CHECKED_ELEMENTS = 16   # of an array of pointers, the first ones are checked


def _check_function(module, k: int, contexts: Contexts) -> list[str]:
    """@__enzyme_build_check_context<k>(): stops the program with a message naming the global
    when a pointer the context's shadow of a global holds is null while the global's own is
    not (a pointer global set at run time, whose shadow the user has to point at a buffer:
    the derivative would follow the null pointer)."""
    from ..ir.model import pointer_leaves
    body, messages, n = [], [], 0
    for g, ty in sorted(contexts.shadows[k].items()):
        plain = strip_name(g)
        leaves = [(path, count) for path, _, count in pointer_leaves(module, ty)][:_CHECKED_ELEMENTS]
        if not leaves:
            continue
        text = (f"enzyme-build: the shadow of the pointer global '{plain}' in a differentiation context is null "
                f"while '{plain}' points to memory; point it at a zeroed buffer as large as that memory before "
                f"the call (*(double **)__enzyme_shadow(ctx, &{plain}, lane) = calloc(...))\n")
        size = len(text.encode())
        escaped = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else f"\\{ord(c):02X}" for c in text)
        msg = make_name("@", f"{CHECK}{k}", "msg", str(len(messages)))
        messages.append(f"{msg} = private unnamed_addr constant [{size} x i8] c\"{escaped}\"")
        for lane in range(contexts.widths[k]):
            sh = shadow_name(plain, k, lane)
            for path, count in leaves:
                for e in range(min(count, _CHECKED_ELEMENTS)):
                    idx = list(path[:-1]) + [path[-1] + e] if path else []
                    gep = (lambda base: f"getelementptr inbounds ({ty}, ptr {base}, i64 0"
                           + "".join(f", i32 {i}" for i in idx) + ")") if idx else (lambda base: base)
                    body += [f"  %p{n} = load ptr, ptr {gep(g)}, align 8",
                             f"  %s{n} = load ptr, ptr {gep(sh)}, align 8",
                             f"  %a{n} = icmp ne ptr %p{n}, null",
                             f"  %b{n} = icmp eq ptr %s{n}, null",
                             f"  %c{n} = and i1 %a{n}, %b{n}",
                             f"  br i1 %c{n}, label %fail{n}, label %next{n}",
                             f"fail{n}:",
                             f"  %w{n} = call i64 @write(i32 2, ptr {msg}, i64 {size})",
                             "  call void @abort()",
                             "  unreachable",
                             f"next{n}:"]
                    n += 1
    return messages + [f"define internal void @{CHECK}{k}() {{", "entry:"] + body + ["  ret void", "}"]


def finish(text: str, contexts: Contexts | None) -> str:
    """Step 4: define the context shadows and each context's zeroing function. A shadow of a
    global whose initializer points at writable globals starts as the mirror of that
    initializer (shadowinit), pointing at the context's shadows of those globals, which are
    defined too; zeroing restores the mirror."""
    if contexts is None:
        return text
    module = _global_lines(text)
    out = [text.rstrip("\n")]
    uses_memcpy = False
    for k in sorted(contexts.widths):
        body = []
        closure: dict[str, str] = {}   # the queried globals and what their shadows point at
        for g, ty in sorted(contexts.shadows[k].items()):
            for name, _, t in mirrored_closure(module, strip_name(g), ty, lambda y: shadow_name(y, k)):
                closure.setdefault(name, t)
        for plain, ty in closure.items():
            contexts.shadows[k].setdefault(make_name("@", plain), ty)
            for lane in range(contexts.widths[k]):
                sh = shadow_name(plain, k, lane)
                shadow_of = (lambda y, lane=lane: shadow_name(y, k, lane))
                if not re.search(r'^' + re.escape(sh) + r'\s*=', text, re.M):
                    out.extend(shadow_definitions(module, plain, sh, ty, "internal", shadow_of)[0])
                size = f"ptrtoint (ptr getelementptr ({ty}, ptr null, i64 1) to i64)"
                reset = reset_lines(module, plain, sh, ty, shadow_of, size)
                uses_memcpy |= any("@llvm.memcpy" in line for line in reset or [])
                body += reset if reset is not None else \
                    [f"  call void @llvm.memset.p0.i64(ptr {sh}, i8 0, i64 {size}, i1 false)"]
        if re.search(r'@' + CHECK + str(k) + r'\(', text):
            out[0] = _drop_declaration(out[0], f"declare void @{CHECK}{k}()")
            out.extend(_check_function(module, k, contexts))
        if re.search(r'@' + ZERO + str(k) + r'\(', text):
            out[0] = _drop_declaration(out[0], f"declare void @{ZERO}{k}()")
            out.append(f"define internal void @{ZERO}{k}() {{\nentry:\n" + "\n".join(body) + "\n  ret void\n}")
    joined = "\n".join(out)
    if not re.search(r'^declare void @llvm\.memset\.p0\.i64\(', joined, re.M):
        out.append("declare void @llvm.memset.p0.i64(ptr, i8, i64, i1 immarg)")
    for name, decl in (("write", "declare i64 @write(i32, ptr, i64)"), ("abort", "declare void @abort()")):
        if f"@{name}(" in joined and not re.search(r'^(?:declare|define) [^@]*@' + name + r'\(', joined, re.M):
            out.append(decl)
    if uses_memcpy and not re.search(r'^declare void @llvm\.memcpy\.p0\.p0\.i64\(', joined, re.M):
        out.append("declare void @llvm.memcpy.p0.p0.i64(ptr noalias, ptr noalias, i64, i1 immarg)")
    return "\n".join(out) + "\n"
