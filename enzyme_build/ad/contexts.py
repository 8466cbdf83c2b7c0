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
from ..ir.model import make_name, parse_module, source_location, strip_name, take_type

_CREATE = ("__enzyme_context", "__enzyme_new_context")
MARKER = "__enzyme_build_context"       # @__enzyme_build_context<k>: the value of context k
ZERO = "__enzyme_build_zero_context"    # @__enzyme_build_zero_context<k>(): zero its shadows
_SITE = re.compile(r'\.ctx(\d+)$')      # an AD entry point renamed for context k
_GLOBAL_LINE = re.compile(r'^@(?:"[^"]*"|\S+)\s*=\s*(.*?)\bglobal\s+(.*)$')


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


def _value_type(module, g: str) -> str | None:
    m = _GLOBAL_LINE.match(module.globals.get(g, ""))
    return take_type(m.group(2))[0] if m else None


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
                lines[inst.first_line] = _strip_context_arguments(line, fname, where, declared, module, callee)
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
    ty = _value_type(module, g) if g else None
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


def _strip_context_arguments(line: str, fname: str, where: str, declared: set[str], module, callee: str) -> str:
    """The AD call without `enzyme_context, ctx`, its callee renamed for the context."""
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
    return line


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


def finish(text: str, contexts: Contexts | None) -> str:
    """Step 4: define the context shadows and each context's zeroing function."""
    if contexts is None:
        return text
    out = [text.rstrip("\n")]
    for k in sorted(contexts.widths):
        body = []
        for g, ty in sorted(contexts.shadows[k].items()):
            plain = strip_name(g)
            for lane in range(contexts.widths[k]):
                sh = shadow_name(plain, k, lane)
                if not re.search(r'^' + re.escape(sh) + r'\s*=', text, re.M):
                    out.append(f"{sh} = internal global {ty} zeroinitializer, align 16")
                body += [f"  call void @llvm.memset.p0.i64(ptr {sh}, i8 0, i64 ptrtoint "
                         f"(ptr getelementptr ({ty}, ptr null, i64 1) to i64), i1 false)"]
        if re.search(r'@' + ZERO + str(k) + r'\(', text):
            text_decl = f"declare void @{ZERO}{k}()"
            out[0] = out[0].replace(text_decl + "\n", "").replace("\n" + text_decl, "")
            out.append(f"define internal void @{ZERO}{k}() {{\nentry:\n" + "\n".join(body) + "\n  ret void\n}")
    if not re.search(r'^declare void @llvm\.memset\.p0\.i64\(', "\n".join(out), re.M):
        out.append("declare void @llvm.memset.p0.i64(ptr, i8, i64, i1 immarg)")
    return "\n".join(out) + "\n"
