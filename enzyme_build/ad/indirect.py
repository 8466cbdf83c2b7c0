"""Indirect calls (callbacks in structs, tables of callbacks, C++ virtual calls) made direct
before the engine runs: each one in code the AD calls reach becomes a dispatch on the
function pointer over the program's functions that may be its target, and
`__enzyme_virtualreverse(f)` becomes the shadow of f.

The shadow of a function pointer is the function itself (a function has no derivative of
its own), so a pointer stored into shadowed memory stores the same pointer into the shadow,
and a shadow vtable is the vtable. At an indirect call the derived code compares the primal
pointer with every candidate — a function of the module whose address is taken, with the
call's parameter and return types — and calls the candidate's derived version directly
(`icmp eq ptr %fp, @sq` then `call double @sq(...)`), which every mode already knows how to
differentiate. A pointer that is none of them (one an external library made) still gets the
original call: in the program as written, and in derived code too, but there, after
`@__enzyme_build_unknown_callee` stops the program with a message, since its derivative
cannot be known.
"""
from __future__ import annotations

import re
from dataclasses import replace as copy_registry

from ..custom.registry import Registry
from ..errors import EnzymeBuildError
from ..ir.model import (NAME, is_float_type, is_local, make_name, parse_module, source_location, split_top, strip_name,
                        take_type)
from ..ir.model import header_return_type, split_metadata_attachments
from .abi import marker_kind

UNKNOWN_CALLEE = "@__enzyme_build_unknown_callee"
# the fallback's marker at a call no function of the program can be the target of (no
# candidate): the same as UNKNOWN_CALLEE, and the engine warns when derived code keeps it
NO_CALLEE = "@__enzyme_build_unknown_callee.none"
UNKNOWN_CALLEE_TRAP = "@__enzyme_build_unknown_callee.trap"
UNKNOWN_CALLEE_INACTIVE = "@__enzyme_build_unknown_callee.inactive"
# how many candidates a dispatch may compare against before the call is left as it is
MAX_CANDIDATES = 64
# the pointer an indirect call goes through: the one local name followed by `(` on the line
_CALLEE_POINTER = re.compile(r'\b(?:call|invoke)\b[^\n]*?\s(%[-a-zA-Z$._0-9]+|%"[^"]*")\(')
_GLOBAL_REF = re.compile(r'(@(?:"[^"]*"|[-a-zA-Z$._0-9]+))(?![-a-zA-Z$._0-9]|\s*\()')
# the block holding a dispatch's fallback call (not dispatched again by a later nested-AD pass)
_FALLBACK_BLOCK = re.compile(r'enzyme\.dispatch\d+\.n\d+')
_TERMINATOR = re.compile(r'^\s*(br|switch|ret|unreachable|resume|indirectbr|invoke|callbr)\b')
_VIRTUALREVERSE = re.compile(r'\b(?:call|invoke)\b[^\n]*@"?[-a-zA-Z$._0-9]*__enzyme_virtualreverse')


def dispatch_indirect_calls(text: str, registry: Registry | None, inactive_value: str):
    """The module with `__enzyme_virtualreverse` lowered and every indirect call of the
    functions the AD calls reach turned into a dispatch over its candidates; returns
    (text, registry) with the helpers the fallbacks use registered inactive."""
    if "__enzyme_" not in text:
        return text, registry
    text = lower_virtualreverse(text)
    if not _has_indirect_call(text.split("\n")):
        return text, registry
    module = parse_module(text)
    registry = registry or Registry()
    candidates = _address_taken(module, registry)
    reached = _reached_functions(module, candidates)
    detached: set[str] = set()
    bodies: dict[int, tuple[int, list[str]]] = {}     # first line -> (line count, new lines)
    for name in sorted(reached):
        if name not in module.functions or not _has_indirect_call(module.functions.body_lines(name)):
            continue
        fn = module.functions[name]
        body = _dispatch_function(module, fn, candidates, detached, inactive_value)
        if body is not None:
            bodies[fn.first_line] = (len(module.functions.body_lines(name)), body)
    if not bodies:
        return text, registry
    lines: list[str] = []
    i = 0
    while i < len(module.lines):
        if i in bodies:
            count, body = bodies[i]
            lines += body
            i += count
        else:
            lines.append(module.lines[i])
            i += 1
    defined = set(module.functions)
    extra = [_inactive_identity(ty, inactive_value) for ty in sorted(detached)
             if strip_name(make_name("@", inactive_value, ty)) not in defined]
    extra += _unknown_callee_functions(module)
    inactive = set(registry.inactive) | {strip_name(make_name("@", inactive_value, ty)) for ty in detached}
    inactive.add(strip_name(UNKNOWN_CALLEE))
    inactive.add(strip_name(NO_CALLEE))
    inactive.add(strip_name(UNKNOWN_CALLEE_INACTIVE))
    inactive.add(strip_name(UNKNOWN_CALLEE_TRAP))   # in derived code an outer nested-AD pass reads
    out = "\n".join(lines) + "\n" + "\n".join(extra) + "\n"
    return out, copy_registry(registry, inactive=inactive)


def trap_unknown_callees(derived_text: str) -> str:
    """In derived code the fallback of a dispatch stops the program (see the module doc),
    unless the engine found that none of the call's arguments carries a derivative
    (`derived_callee`)."""
    return derived_text.replace(UNKNOWN_CALLEE + "(", UNKNOWN_CALLEE_TRAP + "(") \
        .replace(NO_CALLEE + "(", UNKNOWN_CALLEE_TRAP + "(")


def derived_callee(inst, varied, has_shadow) -> dict[str, str]:
    """What the copy of call `inst` in derived code calls instead, as a mapping for the IR
    builder's `clone` (empty: the same callee). The fallback marker's call, whose arguments
    after the pointer are the indirect call's, becomes the marker that does not stop the
    program when none of them carries a derivative (`varied` values, pointers for which
    `has_shadow` holds): the library function (`delete` of a `std::filebuf` through its
    vtable) cannot reach active memory then, so derived code calls it as the program does."""
    if inst.callee not in (UNKNOWN_CALLEE, NO_CALLEE) or any((is_local(v) and v in varied) or (t == "ptr" and has_shadow(v))
                                            for t, v in inst.operands[1:]):
        return {}
    return {inst.callee: UNKNOWN_CALLEE_INACTIVE}


def uncallable(inst) -> bool:
    """Whether `inst` is the fallback's marker at a call no function of the program can be
    the target of (its derived copy stops the program unless `derived_callee` retargets it)."""
    return inst.callee == NO_CALLEE


def lower_virtualreverse(text: str) -> str:
    """`__enzyme_virtualreverse(f)` (Enzyme: the derivative table a shadow vtable holds for f;
    of a vtable: the shadow vtable) -> f itself, the shadow of a function or vtable in
    enzyme-build: derived code dispatches on the primal pointer, so the entries of a shadow
    object's vtable are never called."""
    if "__enzyme_virtualreverse" not in text or not _VIRTUALREVERSE.search(text):
        return text
    module = parse_module(text)
    lines = list(module.lines)
    for name in module.functions:
        if not any("__enzyme_virtualreverse" in line for line in module.functions.body_lines(name)[1:]):
            continue
        for inst in module.functions[name].instructions():
            if inst.opcode != "call" or not inst.callee or "__enzyme_virtualreverse" not in inst.callee:
                continue
            if len(inst.operands) != 1 or inst.operands[0][0] != "ptr":
                raise EnzymeBuildError(f"__enzyme_virtualreverse takes one function (or vtable) pointer "
                                       f"(called in @{name})",
                                       location=source_location(module, inst.metadata.get("!dbg")) or f"@{name}",
                                       hint="e.g. __enzyme_virtualreverse((void *)f)")
            new = [f"  {inst.result} = getelementptr i8, ptr {inst.operands[0][1]}, i64 0" if inst.result else ""]
            normal = inst.invoke_normal
            if normal is not None:
                new.append(f"  br label {make_name('%', normal)}")
            lines[inst.first_line] = "\n".join(new)
            for extra in range(inst.first_line + 1, inst.line + 1):
                lines[extra] = ""
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- candidates

def _signature_of_declaration(line: str) -> tuple[str, tuple[str, ...]] | None:
    """(return type, parameter types) of a `declare` line; None for a variadic function."""
    m = re.match(r'^declare\s+(.*?)(' + NAME + r')\(', line)
    if not m:
        return None
    depth, end = 1, m.end()
    while end < len(line) and depth:
        depth += {"(": 1, ")": -1}.get(line[end], 0)
        end += 1
    params = []
    for part in split_top(line[m.end():end - 1]):
        if part.strip() == "...":
            return None
        params.append(take_type(part)[0])
    return header_return_type(m.group(1)), tuple(params)


def _address_taken(module, registry: Registry) -> dict[tuple[str, tuple[str, ...]], list[str]]:
    """Functions whose address the program takes (named anywhere but as a callee or an AD
    call's target), grouped by (return type, parameter types)."""
    rules = {n for r in registry.rules.values() for n in (r.augment, r.gradient, r.forward) if n}
    functions = set(module.functions) | set(module.declarations)
    taken: set[str] = set()
    for line in module.lines:
        if not line or line.startswith(("define ", "declare ", "!", ";", "attributes ")) or "@" not in line:
            continue
        if line.startswith("@") and "__enzyme_register" in line.split("=", 1)[0]:
            continue
        refs = _GLOBAL_REF.findall(line)
        if refs and re.search(r'\b(?:call|invoke)\b[^\n]*@"?[-a-zA-Z$._0-9]*__enzyme_', line):
            refs = refs[1:]   # an AD call's target (its other arguments, e.g. a callback, count)
        for ref in refs:
            name = strip_name(ref)
            if name in functions and name not in rules and not name.startswith(("llvm.", "__enzyme_")) \
                    and not marker_kind(ref):
                taken.add(name)
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for name in sorted(taken):
        if name in module.functions:
            fn = module.functions[name]
            if any(p.type == "..." for p in fn.params):
                continue
            key = (fn.return_type, tuple(p.type for p in fn.params))
        else:
            key = _signature_of_declaration(module.declarations[name])
            if key is None:
                continue
        groups.setdefault(key, []).append(name)
    return groups


def _call_signature(inst) -> tuple[str, tuple[str, ...]]:
    return inst.type or "void", tuple(t for t, _ in inst.operands)


def _reached_functions(module, candidates) -> set[str]:
    """The functions the AD calls' targets reach, through direct calls and through the
    candidates of their indirect calls."""
    todo = []
    for name in module.functions:
        if not module.functions.body_mentions(name, "__enzyme_"):
            continue
        for inst in module.functions[name].instructions():
            if inst.opcode == "call" and marker_kind(inst.callee) and inst.operands:
                m = re.search(NAME, inst.operands[0][1])
                if m and m.group(0).startswith("@"):
                    todo.append(strip_name(m.group(0)))
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in module.functions:
            continue
        seen.add(name)
        for inst in module.functions[name].instructions():
            if inst.opcode != "call":
                continue
            if inst.callee:
                todo.append(strip_name(inst.callee))
            else:
                todo += candidates.get(_call_signature(inst), [])
    return seen


_LOCAL_CALLEE = re.compile(r'%(?:[-a-zA-Z$._0-9]+|"[^"]*")\(')   # what every indirect call contains


def _has_indirect_call(body: list[str]) -> bool:
    """Whether the lines after the first (a function's body after its `define`) call through
    a pointer."""
    if _LOCAL_CALLEE.search("\n".join(body[1:])) is None:
        return False
    return any(("call" in line or "invoke" in line) and _CALLEE_POINTER.search(line) for line in body[1:])


def _may_carry_derivatives(sig: tuple[str, tuple[str, ...]]) -> bool:
    ret, params = sig
    return any(t == "ptr" or is_float_type(t) or "double" in t or "float" in t for t in (ret, *params))


# ---------------------------------------------------------------- the rewrite

def _dispatch_function(module, fn, candidates, detached: set[str], inactive_value: str) -> list[str] | None:
    """The function's lines with each indirect call (or invoke) that has candidates turned
    into a dispatch; None when there is none."""
    body = module.functions.body_lines(fn.name)
    sites = {}
    for inst in fn.instructions():
        if inst.opcode != "call" or inst.callee is not None:
            continue
        sig = _call_signature(inst)
        targets = candidates.get(sig, [])
        m = _CALLEE_POINTER.search(inst.text)
        if len(targets) > MAX_CANDIDATES or m is None or "musttail" in inst.text \
                or not _may_carry_derivatives(sig) or _FALLBACK_BLOCK.fullmatch(inst.block):
            continue
        sites[inst.first_line - fn.first_line] = (inst, m.group(1), targets)
    if not sites:
        return None
    out: list[str] = []
    renamed: dict[str, str] = {}     # block label -> label of the block that now ends it
    unwinding: dict[str, dict[str, list[str]]] = {}   # landing pad -> {old predecessor: new ones}
    label = current = None
    skip_to = -1
    # an earlier nested-AD pass may have dispatched calls here already: new names after its
    counter = max((int(n) for n in re.findall(r'%enzyme\.dispatch(\d+)\.', "\n".join(body))), default=0)
    for k, line in enumerate(body):
        if k <= skip_to:
            continue
        lm = re.match(r'^("[^"]*"|[-a-zA-Z$._0-9]+):', line)
        if lm:
            label = current = lm.group(1)
        if k not in sites:
            out.append(line)
            if _TERMINATOR.match(line) and label is not None and current != label:
                renamed[label] = current
            continue
        inst, pointer, targets = sites[k]
        skip_to = inst.line - fn.first_line
        counter += 1
        current, invoking = _emit_dispatch(out, inst, pointer, targets, f"enzyme.dispatch{counter}",
                                           detached, inactive_value)
        unwind = inst.invoke_unwind
        if unwind is not None:      # the invoke ended the block: the join now does
            renamed[label] = current
            unwinding.setdefault(unwind, {})[label] = invoking
    return _fix_phis(out, renamed, unwinding)


def _fix_phis(lines: list[str], renamed: dict[str, str], unwinding: dict[str, dict[str, list[str]]]) -> list[str]:
    """Phis name the blocks that now end the split blocks; a landing pad's phis get one
    entry per invoke that now unwinds to it."""
    out, label = [], None
    for line in lines:
        lm = re.match(r'^("[^"]*"|[-a-zA-Z$._0-9]+):', line)
        if lm:
            label = lm.group(1)
        if " = phi " in line and label in unwinding:
            line = _expand_phi_incoming(line, unwinding[label])
        elif " = phi " in line:
            line = _rename_phi_incoming(line, renamed)
        out.append(line)
    return out


def _expand_phi_incoming(line: str, preds: dict[str, list[str]]) -> str:
    def entries(m):
        old = m.group(2)
        if old not in preds:
            return m.group(0)
        return ", ".join(f"[ {m.group(1)}, %{new} ]" for new in preds[old])
    return re.sub(r'\[\s*([^\[\],]+?),\s*%("[^"]*"|[-a-zA-Z$._0-9]+)\s*\]', entries, line)


def _emit_dispatch(out: list[str], inst, pointer: str, targets: list[str], tag: str, detached: set[str],
                   inactive_value: str) -> tuple[str, list[str]]:
    """Lines comparing `pointer` with each target and calling it directly, then the
    fallback; returns the label of the block that continues after the call and the
    labels of the blocks that call (for an invoke: that unwind to its landing pad)."""
    res, ty = inst.result, inst.type or "void"
    # the attachments (`, !dbg !7, !noalias !21`) follow an invoke's destinations: cut them
    # off here, put them back after `to label … unwind label …`
    text, attachments = split_metadata_attachments(inst.text)
    dbg_tail = "".join(f", {kind} {node}" for kind, node in attachments.items())
    call = re.sub(r'^\s*%\S+\s*=\s*', "", text).strip()
    join = f"%{tag}.join"
    normal, unwind = inst.invoke_normal, inst.invoke_unwind
    if unwind is not None:
        call = re.sub(r'^(?:tail |notail )?call\b', "invoke", call)
        jump = f" to label {join} unwind label {make_name('%', unwind)}"
    else:
        jump = ""
    incoming, calling = [], []

    def emit(value: str, line: str, block: str) -> None:
        out.append(f"  {value + ' = ' if res else ''}{line}{jump}{dbg_tail}")
        if not jump:
            out.append(f"  br label {join}")
        incoming.append((value, block))
        calling.append(block[1:])

    for n, target in enumerate(targets):
        hit, miss, is_it = f"%{tag}.c{n}", f"%{tag}.n{n}", f"%{tag}.is{n}"
        out.append(f"  {is_it} = icmp eq ptr {pointer}, {make_name('@', target)}")
        out.append(f"  br i1 {is_it}, label {hit}, label {miss}")
        out.append(f"{hit[1:]}:")
        emit(f"%{tag}.r{n}", call.replace(pointer + "(", make_name("@", target) + "(", 1), hit)
        out.append(f"{miss[1:]}:")
    # the fallback: a pointer none of the candidates is (the program's own call, detached
    # from the derivatives so the engine copies it; derived code stops before it when an
    # argument, passed to the marker too, carries a derivative)
    if not targets:     # the fallback alone, in a block of its own as after a comparison
        out.append(f"  br label %{tag}.n0")
        out.append(f"{tag}.n0:")
    carried = "".join(f", {t} {v}" for t, v in inst.operands
                      if t == "ptr" or is_float_type(t) or t.startswith(("{", "[", "<")))
    marker = UNKNOWN_CALLEE if targets else NO_CALLEE
    out.append(f"  call void (ptr, ...) {marker}(ptr {pointer}{carried})")
    head, paren, rest = call.partition(pointer + "(")
    for a, (t, v) in enumerate(inst.operands):
        if t == "ptr" or is_float_type(t) or t.startswith(("{", "[", "<")):
            d = f"%{tag}.a{a}"
            out.append(f"  {d} = call {t} {make_name('@', inactive_value, t)}({t} {v})")
            detached.add(t)
            rest = re.sub(r'(?<=\s)' + re.escape(v) + r'(?=[,)])', d, rest, count=1)
    emit(f"%{tag}.rf", head + paren + rest, f"%{tag}.n{max(len(targets) - 1, 0)}")
    out.append(f"{join[1:]}:")
    if res:
        out.append(f"  {res} = phi {ty} " + ", ".join(f"[ {v}, {b} ]" for v, b in incoming))
    if normal is not None:
        out.append(f"  br label {make_name('%', normal)}")
    return join[1:], calling


def _rename_phi_incoming(line: str, renamed: dict[str, str]) -> str:
    if " = phi " not in line:
        return line
    return re.sub(r'(,\s*)%("[^"]*"|[-a-zA-Z$._0-9]+)(\s*\])',
                  lambda m: m.group(1) + "%" + renamed.get(m.group(2), m.group(2)) + m.group(3), line)


def _inactive_identity(ty: str, inactive_value: str) -> str:
    return "\n".join([f"define internal {ty} {make_name('@', inactive_value, ty)}({ty} %x) alwaysinline {{",
                      "entry:", f"  ret {ty} %x", "}"])


def _unknown_callee_functions(module) -> list[str]:
    """The fallback's marker (nothing in the program) and what it becomes in derived code."""
    if strip_name(UNKNOWN_CALLEE) in module.functions:
        return []
    message = "enzyme-build: derived code called a function pointer that is none of the program's functions, " \
              "with arguments that carry derivatives (its derivative is unknown)\n"
    n = len(message.encode())
    escaped = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else f"\\{ord(c):02X}" for c in message)
    out = [f"@__enzyme_build_unknown_callee.msg = private unnamed_addr constant [{n} x i8] c\"{escaped}\"",
           f"define internal void {UNKNOWN_CALLEE}(ptr %f, ...) {{", "entry:", "  ret void", "}",
           f"define internal void {NO_CALLEE}(ptr %f, ...) {{", "entry:", "  ret void", "}",
           f"define internal void {UNKNOWN_CALLEE_INACTIVE}(ptr %f, ...) {{", "entry:", "  ret void", "}",
           f"define internal void {UNKNOWN_CALLEE_TRAP}(ptr %f, ...) cold noinline {{", "entry:",
           f"  %w = call i64 @write(i32 2, ptr @__enzyme_build_unknown_callee.msg, i64 {n})",
           "  call void @abort()", "  unreachable", "}"]
    if "write" not in module.functions and "write" not in module.declarations:
        out.append("declare i64 @write(i32, ptr, i64)")
    if "abort" not in module.functions and "abort" not in module.declarations:
        out.append("declare void @abort()")
    return out
