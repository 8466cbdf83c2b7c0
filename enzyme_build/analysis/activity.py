"""Activity analysis: which float values carry derivatives and which pointers need shadows.

Forward data flow from the active arguments (floats marked `out`, pointers marked `dup`):
a float is *varied* if it is computed from a varied value or loaded from shadowed memory;
a pointer is *shadowed* if one of its roots (argument, alloca, allocation call, loaded
pointer) has a shadow. Memory makes it a fixpoint: storing a varied value (or a shadowed
pointer) through a pointer gives that pointer's allocations shadows, which makes loads
from them varied. Integers, comparisons and int<->float conversions are never varied.
`print_activity(fn, args)` renders the result for tests.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ir.model import Function, Instruction, is_active_type, is_float_type, is_local, make_name, split_top
from .cfg import returning_blocks
# the library facts this module and its importers use (the one table: analysis/library.py)
from .library import (ALLOCATORS, DEALLOCATORS, INACTIVE_FUNCTIONS,  # noqa: F401  (re-exported)
                      INACTIVE_INTRINSIC_PREFIXES, INACTIVE_WRITING_PREFIXES, NODE_LINKERS)

_POINTER_FORWARDERS = {"getelementptr", "bitcast", "addrspacecast", "phi", "select", "freeze"}


@dataclass
class Activity:
    varied: set[str] = field(default_factory=set)     # float values with derivatives
    shadowed: set[str] = field(default_factory=set)   # pointers with a shadow
    unshadowable: set[str] = field(default_factory=set)  # roots that cannot get a shadow
    lost_stores: list = field(default_factory=list)       # active stores no shadow can follow
    # memcpy/memmove from shadowed memory into memory no shadow can follow (the engine asks
    # what they copy: only floats and pointers lose a derivative)
    lost_copies: list = field(default_factory=list)
    # enzyme_const pointer parameter -> an active store into its memory that the memory
    # absorbs, when floats are also read from that memory (a derivative path is dropped)
    dropped_const_paths: dict = field(default_factory=dict)
    # (load, call): floats read through a pointer a call returned inside an aggregate, the
    # call having been given active data, so the pointer may point into it (no shadow follows)
    untracked_loads: list = field(default_factory=list)

    def is_varied(self, value: str) -> bool:
        return value in self.varied

    def has_shadow(self, value: str) -> bool:
        """Locals in the shadowed set; globals (and constant expressions on them) whose
        global has a shadow global."""
        if value in self.shadowed:
            return True
        g = global_base(value)
        return g is not None and g in self.shadowed


def _node_linker_call(inst: Instruction | None) -> bool:
    return inst is not None and inst.opcode == "call" and callee_name(inst) in NODE_LINKERS


def shadow_is_primal(module, value: str, fn: Function | None = None) -> bool:
    """A function, or a constant global holding no floats (a vtable, a table of callbacks),
    or in `fn` a pointer only ever one of those (selected, or loaded from such a table): its
    shadow is itself. Nothing accumulates into it, and derived code calls functions through
    the primal pointer (ad/indirect.py), so a shadow object may hold the same pointers as
    the primal one."""
    if fn is not None and is_local(value):
        roots = pointer_roots(fn, value)
        return all(r in ("null", "poison", "undef") or (not is_local(r) and shadow_is_primal(module, r))
                   or _loaded_from_primal_shadowed(module, fn, r) for r in roots)
    g = global_base(value)
    if g is None:
        return False
    name = g[1:].strip('"')
    if name in module.functions or name in module.declarations:
        return True
    line = module.globals.get(name, "")
    m = re.match(r'^@(?:"[^"]*"|\S+)\s*=\s*(.*?)\bconstant\s+(.*)$', line)
    return m is not None and not re.search(r'\b(double|float|half|bfloat|fp128|x86_fp80|ppc_fp128)\b', m.group(2))


def _loaded_from_primal_shadowed(module, fn: Function, value: str) -> bool:
    inst = fn.defs.get(value)
    return inst is not None and inst.opcode == "load" and all(
        not is_local(r) and shadow_is_primal(module, r) for r in pointer_roots(fn, inst.operands[0][1]))


def global_base(value: str) -> str | None:
    """'@g' for '@g' or a constant expression on @g; None for locals and plain constants."""
    if value.startswith("%"):
        return None
    m = re.search(r'@("[^"]*"|[-a-zA-Z$._0-9]+)', value)
    return "@" + m.group(1) if m else None


def callee_name(inst: Instruction) -> str:
    name = inst.callee_name
    if name is None:
        name = inst.callee_name = (inst.callee or "").lstrip("@").strip('"')
    return name


def is_inactive_call(inst: Instruction, inactive_extra=frozenset()) -> bool:
    name = callee_name(inst)
    return (name in INACTIVE_FUNCTIONS or name in inactive_extra
            or name.startswith(INACTIVE_INTRINSIC_PREFIXES) or name.startswith(INACTIVE_WRITING_PREFIXES))


_ATOMIC_FADD_RE = re.compile(r'atomicrmw (?:volatile )?fadd ptr (%[-\w$.]+|@[-\w$.]+), (double|float) '
                             r'(%[-\w$.]+|[-+0-9.eEx]+)')


def atomic_fadd_operands(inst: Instruction) -> tuple[str, str, str] | None:
    """(pointer, type, value) of `atomicrmw fadd ptr P, T V` (OpenMP atomics and reductions)."""
    if inst.opcode != "atomicrmw":
        return None
    m = _ATOMIC_FADD_RE.search(inst.text)
    return (m.group(1), m.group(2), m.group(3)) if m else None


def pointer_roots(fn: Function, value: str, cache: dict | None = None) -> set[str]:
    """The values a pointer may be derived from, looking through GEPs, casts, phis, selects."""
    out, seen, work = set(), set(), [value]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        inst = fn.defs.get(v)
        if inst is None or inst.opcode not in _POINTER_FORWARDERS:
            out.add(v)
        elif inst.opcode == "phi":
            work.extend(x for x, _ in inst.incoming)
        elif inst.opcode == "select":
            work.extend([inst.operands[1][1], inst.operands[2][1]])
        else:
            work.append(inst.operands[0][1])
    return out


def analyze_activity(fn: Function, arg_activity: list[str], *, defined: set[str] = frozenset(),
                     inactive: set[str] = frozenset(), custom: set[str] = frozenset(),
                     active_globals: set[str] = frozenset(),
                     views: dict[str, str] | None = None,
                     returns_shadow=None, ret_needs_shadow: bool = False,
                     global_users=frozenset(), shadow_outputs=None, slot_writes=None,
                     pointer_words=frozenset()) -> Activity:
    """arg_activity[i] in {'out', 'dup', 'dupnoneed', 'const'} for fn.params[i].

    `defined` are functions with bodies (differentiated interprocedurally), `custom` those
    with user rules; `inactive` user-declared inactive functions; `global_users` functions
    that touch active globals themselves (their results vary even without active arguments);
    `shadow_outputs` maps functions whose rules take null shadows to one letter per
    parameter: an active call of one gives shadows only to the pointers marked 'o' (those
    it writes derivative-carrying data through), not to the memory it only reads.
    `slot_writes(callee, k)`: whether the module's function `callee` may write through its
    k-th parameter (`constant_pointer_slot`). `pointer_words`: the `i64` loads that only copy
    words holding pointers (`types.pointer_carriers`): stored into shadowed memory, they give
    the memory they were read from a shadow."""
    shadow_outputs = shadow_outputs or {}
    act = Activity()
    views = views or {}
    const_params = {p.name for p, a in zip(fn.params, arg_activity) if a == "const" and p.type == "ptr"}
    act.shadowed |= set(active_globals)
    params = [p for p in fn.params if p.type != "..."]
    for p, a in zip(params, arg_activity):
        if a == "out" and is_float_type(p.type):
            act.varied.add(p.name)
        elif a in ("dup", "dupnoneed"):
            act.shadowed.add(p.name)
        elif p.type == "ptr":
            act.unshadowable.add(p.name)
    roots: dict[str, set[str]] = {}

    def roots_of(v: str) -> set[str]:
        if v not in roots:
            roots[v] = {global_base(r) or r for r in pointer_roots(fn, v)}
        return roots[v]

    def shadowable(root: str) -> bool:
        if root in act.unshadowable or not is_local(root):
            return False
        inst = fn.defs.get(root)
        if inst is None:           # an argument: only dup args have shadows
            return root in act.shadowed
        if inst.opcode == "alloca":
            return True
        if inst.opcode == "call" and inst.callee in ALLOCATORS:
            return True
        if inst.opcode == "load":   # a pointer read from memory: shadowed if the memory is
            # a pointer held in a global has nowhere to keep its shadow (globals holding
            # pointers get none), nor one held in memory an enzyme_const argument points
            # to (an array of object pointers): its shadow would be the primal memory itself
            if constant_pointer_slot(inst.operands[0][1]):
                return False
            return not any((r.startswith("@") and r not in act.shadowed) or r in const_params
                           for r in roots_of(inst.operands[0][1]))
        return False

    slots: dict[str, bool] = {}

    def constant_pointer_slot(addr: str) -> bool:
        """A stack slot that only ever holds pointers the caller passed as constant (an
        iterator an -O0 constructor keeps in memory because a helper takes it by reference):
        every store into it stores a pointer rooted in enzyme_const parameters (or null),
        and every other use loads from it, marks its lifetime, or hands it to a function
        with a body that never writes through that parameter. What is loaded from it is
        then such a pointer: constant memory, no shadow."""
        if slot_writes is None or not is_local(addr):
            return False
        inst = fn.defs.get(addr)
        if inst is None or inst.opcode != "alloca":
            return False
        if addr not in slots:
            slots[addr] = False
            for user in fn.users().get(addr, ()):
                if user.opcode == "load":
                    continue
                if user.opcode == "store":
                    (vty, v), (_, p) = user.operands
                    stored = roots_of(v) - {"null"} if v != "null" else set()
                    if p != addr or v == addr or vty != "ptr" or not stored <= const_params:
                        return False
                    continue
                name = callee_name(user) if user.opcode == "call" else ""
                if name.startswith("llvm.lifetime"):
                    continue
                if name and not any(slot_writes(name, k) for k, (_, a) in enumerate(user.operands) if a == addr):
                    continue
                return False
            slots[addr] = True
        return slots[addr]

    def call_args_activity(inst) -> list[str]:
        out = []
        for t, v in inst.operands:
            if is_local(v) and v in act.varied and is_float_type(t):
                out.append("out")
            elif t == "ptr" and any_shadowed(v):
                out.append("dup")
            else:
                out.append("const")
        return out

    asked: set[str] = set()
    visiting: set[str] = set()

    def _inactive(inst) -> bool:
        # an inactive routine's returned pointer has no shadow, body or not (std::string's
        # members keep their bodies without optimization: `data()`), since its call is never
        # derived: the sweeps copy it as it is
        return callee_name(inst) in inactive or is_inactive_call(inst)

    def give_shadow(ptr: str) -> bool:
        changed = False
        for r in roots_of(ptr):
            if r not in act.shadowed and r not in visiting and shadowable(r):
                inst = fn.defs.get(r)
                if inst is not None and inst.opcode == "load":
                    # a loaded pointer's shadow is loaded from the shadow of its memory: when
                    # that memory cannot have one (a pointer returned by a function that
                    # returns no shadow: a reference into global objects), neither can it --
                    # its "shadow" would be loaded from the primal memory, and adjoints would
                    # accumulate into the primal object
                    visiting.add(r)
                    try:
                        changed |= give_shadow(inst.operands[0][1])
                    finally:
                        visiting.discard(r)
                    if not any_shadowed(inst.operands[0][1]):
                        continue
                act.shadowed.add(r)
                changed = True
            elif r not in act.shadowed and r not in asked and _node_linker_call(fn.defs.get(r)):
                # a node a container routine returns (the next node of a std::map): the same
                # routine on the shadows returns its shadow (ad/sweep.py: mirror_node_call)
                asked.add(r)
                for t, v in fn.defs[r].operands:
                    if t == "ptr" and is_local(v):
                        give_shadow(v)
                act.shadowed.add(r)
                changed = True
            elif r not in act.shadowed and r not in asked:
                # a pointer returned by a function with a body (e.g. std::vector::operator[]):
                # give its pointer arguments shadows so the callee can return one
                inst = fn.defs.get(r)
                if inst is not None and inst.opcode == "call" and callee_name(inst) in defined and not _inactive(inst):
                    asked.add(r)
                    for t, v in inst.operands:
                        if t == "ptr" and is_local(v):
                            changed |= give_shadow(v)
                    if returns_shadow is not None and returns_shadow(
                            callee_name(inst), tuple(call_args_activity(inst)), True):
                        act.shadowed.add(r)
                        changed = True
        return changed

    def any_shadowed(ptr: str) -> bool:
        return ptr in act.shadowed or any(r in act.shadowed for r in roots_of(ptr))

    def word_copy_source(v: str) -> str | None:
        """The address a pointer-carrying `i64` load (only stored again) reads from, when
        that is heap memory (a container's storage). Not a stack object: the engine's own
        tapes and side tables are `{ptr, i64, i64}` allocas copied as words when derivative
        code is differentiated again, and a shadow for them is a shadow for tape memory."""
        d = fn.defs.get(v) if v in pointer_words else None
        if d is None or d.opcode != "load":
            return None
        src = d.operands[0][1]
        if any((r_inst := fn.defs.get(r)) is not None and r_inst.opcode == "alloca" for r in roots_of(src)):
            return None
        return src

    insts = list(fn.instructions())
    changed = True
    while changed:
        changed = False
        if ret_needs_shadow:   # the caller keeps the returned pointer where shadows live
            for inst in insts:
                if inst.opcode == "ret" and inst.operands and inst.operands[0][0] == "ptr" \
                        and is_local(inst.operands[0][1]) and not any_shadowed(inst.operands[0][1]):
                    changed |= give_shadow(inst.operands[0][1])
        for inst in insts:
            op, res = inst.opcode, inst.result
            if res and res not in act.varied and (is_active_type(inst.type) or res in views):
                if _float_result_varied(inst, act, any_shadowed, defined, inactive, custom) or (
                        op == "call" and callee_name(inst) in defined and callee_name(inst) in global_users
                        and callee_name(inst) not in inactive):
                    act.varied.add(res)
                    changed = True
            if res and inst.type == "ptr" and res not in act.shadowed:
                if op in _POINTER_FORWARDERS and any(any_shadowed(v) for v in _ptr_inputs(inst)):
                    act.shadowed.add(res)
                    changed = True
                elif op == "load" and any_shadowed(inst.operands[0][1]) and shadowable(res):
                    act.shadowed.add(res)
                    changed = True
                elif _node_linker_call(inst) and any(t == "ptr" and any_shadowed(v) for t, v in inst.operands):
                    act.shadowed.add(res)
                    changed = True
                elif op == "call" and returns_shadow is not None and callee_name(inst) in defined \
                        and not _inactive(inst):
                    args = call_args_activity(inst)
                    if any(a != "const" for a in args) and returns_shadow(callee_name(inst), tuple(args)):
                        act.shadowed.add(res)
                        changed = True
            if op == "store":
                (vty, v), (_, p) = inst.operands
                # a pointer stored as an integer (`ptrtoint`: std::unique_ptr moved through
                # i64, uintptr_t fields) is a stored pointer: its shadow goes along
                stored_ptr = v if vty == "ptr" else pointer_as_integer(fn, v)
                if v in act.varied or (stored_ptr is not None and any_shadowed(stored_ptr)):
                    changed |= give_shadow(p)
                if stored_ptr is not None and is_local(stored_ptr) and any_shadowed(p) \
                        and not any_shadowed(stored_ptr):
                    changed |= give_shadow(stored_ptr)
                elif (source := word_copy_source(v)) is not None and any_shadowed(p) and not any_shadowed(source):
                    # a word copied from memory into shadowed memory (a std::vector relocating
                    # its unique_ptrs through i64): the bytes may be a pointer, whose shadow
                    # the sweeps copy along from the source's shadow (pointer carriers)
                    changed |= give_shadow(source)
            elif op == "atomicrmw" and (rmw := atomic_fadd_operands(inst)) is not None:
                if rmw[2] in act.varied:          # *p += v: like a store of a varied value
                    changed |= give_shadow(rmw[0])
            elif op == "call" and inst.callee == "@realloc" and res:
                # the new block holds the old one's data: both or neither have shadows
                if any_shadowed(res) and not any_shadowed(inst.operands[0][1]):
                    changed |= give_shadow(inst.operands[0][1])
                if any_shadowed(inst.operands[0][1]) and res not in act.shadowed:
                    act.shadowed.add(res)
                    changed = True
            elif op == "call" and inst.callee and ("llvm.memcpy" in inst.callee or "llvm.memmove" in inst.callee):
                d, s = inst.operands[0][1], inst.operands[1][1]
                if any_shadowed(s) and not any_shadowed(d):
                    changed |= give_shadow(d)
                if any_shadowed(d) and not any_shadowed(s):
                    changed |= give_shadow(s)
            elif _node_linker_call(inst):
                # a container routine links or walks nodes: with one shadow, all of its
                # pointers need one (it runs on the shadows too)
                ptrs = [v for t, v in inst.operands if t == "ptr" and is_local(v)]
                if any(any_shadowed(v) for v in ptrs):
                    for v in ptrs:
                        if not any_shadowed(v):
                            changed |= give_shadow(v)
            elif op == "call" and (callee_name(inst) in defined or callee_name(inst) in custom):
                name = callee_name(inst)
                args = [v for _, v in inst.operands]
                given = any(a in act.varied or any_shadowed(a) for a in args if is_local(a))
                # a callee that reads active globals itself is active without an active
                # argument: what it writes through a pointer (`solve(&x)` computing x from a
                # global the caller set) carries derivatives, and that memory needs a shadow
                if given or (name in defined and name in global_users and not _inactive(inst)):
                    outputs = shadow_outputs.get(name)
                    for k, (ty, a) in enumerate(inst.operands):
                        if outputs is not None and outputs[k:k + 1] != "o":
                            continue
                        if not given and slot_writes is not None and not slot_writes(name, k):
                            continue
                        if ty == "ptr" and is_local(a) and not any_shadowed(a):
                            changed |= give_shadow(a)
            if op in ("phi", "select") and res and inst.type == "ptr" and res in act.shadowed:
                for v in _ptr_inputs(inst):
                    if is_local(v) and not any_shadowed(v):
                        changed |= give_shadow(v)
    # every pointer derived from a shadowed root is shadowed
    for inst in fn.of_opcode(*_POINTER_FORWARDERS):
        if inst.result and inst.type == "ptr":
            if any_shadowed(inst.result):
                act.shadowed.add(inst.result)
    # active data written where no shadow can follow it: only memory the caller declared
    # constant (an enzyme_const pointer argument) may silently absorb it
    returning = returning_blocks(fn)   # what runs on a way to a throw needs no derivative
    for inst in fn.of_opcode("store"):
        (vty, v), (_, p) = inst.operands
        if inst.block not in returning:
            continue
        if (v in act.varied or (vty == "ptr" and any_shadowed(v))) and not any_shadowed(p):
            if not all(r in const_params for r in roots_of(p)):
                act.lost_stores.append(inst)
            elif vty != "ptr":
                for r in roots_of(p):
                    act.dropped_const_paths.setdefault(r, inst)
    for inst in fn.of_opcode("call"):
        if inst.block in returning and inst.callee and ("llvm.memcpy" in inst.callee or "llvm.memmove" in inst.callee):
            d, s = inst.operands[0][1], inst.operands[1][1]
            if any_shadowed(s) and not any_shadowed(d) and is_local(d) \
                    and not all(r in const_params for r in roots_of(d)):
                act.lost_copies.append(inst)
    if act.dropped_const_paths:   # only where the written memory is read back as floats too
        read = {r for inst in fn.of_opcode("load") if is_active_type(inst.type)
                for r in roots_of(inst.operands[0][1])}
        act.dropped_const_paths = {r: i for r, i in act.dropped_const_paths.items() if r in read}
    # a pointer returned inside an aggregate (`{ ptr, i64 }`) gets no shadow; the AD stage
    # inlines such functions first (ad/boundaries.py), so what is left here (recursion, no
    # body) is refused where it reads data that may be active, never silently inactive
    for inst in fn.of_opcode("load"):
        if not is_active_type(inst.type) or any_shadowed(inst.operands[0][1]):
            continue
        for r in roots_of(inst.operands[0][1]):
            d = fn.defs.get(r)
            src = fn.defs.get(d.operands[0][1]) if d is not None and d.opcode == "extractvalue" and d.operands else None
            if src is not None and src.opcode == "call" and any(
                    is_local(v) and (v in act.varied or (t == "ptr" and any_shadowed(v))) for t, v in src.operands):
                act.untracked_loads.append((inst, src))
                break
    # the recursive closure refers to itself through its cell: a reference cycle that would
    # keep the function (and its module) alive until the cyclic collector runs
    give_shadow = None  # noqa: F841
    return act


def pointer_global(fn: Function, ptr: str, shadowed: set[str] = frozenset()) -> str | None:
    """The global (without a shadow) a pointer was loaded from, when `ptr` is derived from
    such a load (`g_work[i]` with `static double *g_work`); None otherwise."""
    for r in sorted(pointer_roots(fn, ptr)):
        d = fn.defs.get(r)
        if d is None or d.opcode != "load":
            continue
        for a in sorted(pointer_roots(fn, d.operands[0][1])):
            g = global_base(a)
            if g is not None and g not in shadowed:
                return g
    return None


def pointer_as_integer(fn: Function, value: str) -> str | None:
    """The pointer an integer value is (`ptrtoint ptr %p to i64`), or None."""
    d = fn.defs.get(value) if is_local(value) else None
    if d is not None and d.opcode == "ptrtoint" and d.operands and d.operands[0][0] == "ptr":
        return d.operands[0][1]
    return None


def _ptr_inputs(inst: Instruction) -> list[str]:
    if inst.opcode == "phi":
        return [v for v, _ in inst.incoming]
    if inst.opcode == "select":
        return [inst.operands[1][1], inst.operands[2][1]]
    return [inst.operands[0][1]] if inst.operands else []


def _float_result_varied(inst, act, any_shadowed, defined, inactive, custom) -> bool:
    op = inst.opcode
    if op in ("fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fpext", "fptrunc", "freeze", "bitcast"):
        return any(v in act.varied for _, v in inst.operands)
    if op == "phi":
        return any(v in act.varied for v, _ in inst.incoming)
    if op == "select":
        return inst.operands[1][1] in act.varied or inst.operands[2][1] in act.varied
    if op == "load":
        return any_shadowed(inst.operands[0][1])
    if op == "extractvalue":
        return inst.operands[0][1] in act.varied
    if op == "insertvalue":
        return any(v in act.varied for _, v in inst.operands)
    if op == "call":
        if is_inactive_call(inst, inactive) and callee_name(inst) not in custom:
            return False
        return any(v in act.varied or (t == "ptr" and any_shadowed(v)) for t, v in inst.operands
                   if is_local(v) or (t == "ptr" and global_base(v) is not None))
    return False


def print_activity(fn: Function, arg_activity: list[str], **kw) -> str:
    act = analyze_activity(fn, arg_activity, **kw)
    out = [f"activity of @{fn.name} ({', '.join(arg_activity)})"]
    for p in fn.params:
        out.append(f"  {p.name}: " + ("varied" if p.name in act.varied else
                                      "shadowed" if p.name in act.shadowed else "inactive"))
    for inst in fn.instructions():
        if inst.result:
            tag = "varied" if inst.result in act.varied else "shadowed" if inst.result in act.shadowed else "inactive"
            out.append(f"  {inst.result}: {tag}")
    return "\n".join(out)


def _float_record_type(module, ty: str) -> bool:
    """A struct (or array of structs) holding floats next to integers but no pointers: a
    shadow of the same type keeps the floats' adjoints, its integer fields stay unused."""
    from ..ir.model import float_leaves
    if not (ty.startswith(("%", "{", "<{")) or ty.startswith("[")):
        return False
    return _no_pointers(module, ty) and any(True for _ in float_leaves(module, ty))


def _no_pointers(module, t: str, depth: int = 0) -> bool:
    """Whether type `t` holds no pointer (vectors count as holding one)."""
    from ..ir.model import named_type_body, split_top
    t = t.strip()
    if depth > 16 or t == "ptr" or t.endswith("*"):
        return False
    if t.startswith("%"):
        body = named_type_body(module, t)
        return body is not None and _no_pointers(module, body, depth + 1)
    m = re.fullmatch(r'\[(\d+) x (.+)\]', t)
    if m:
        return _no_pointers(module, m.group(2), depth + 1)
    if t.startswith("<{") and t.endswith("}>"):
        return all(_no_pointers(module, e, depth + 1) for e in split_top(t[2:-2]))
    if t.startswith("{") and t.endswith("}"):
        return all(_no_pointers(module, e, depth + 1) for e in split_top(t[1:-1]))
    return not t.startswith("<")   # scalars; vectors are left alone


# `@g = <linkage and attributes> global <type> <initializer>...` (constants do not match)
_GLOBAL_DEFINITION = re.compile(r'^@(?:"[^"]*"|\S+)\s*=\s*(.*?)\bglobal\s+(.*)$')


def call_arg_activity(act: Activity, operands) -> tuple[str, ...]:
    """The activity a call's operands give its callee in `act`: 'out' for a varied float,
    'dup' for a pointer with a shadow, 'const' otherwise (the plain form of the reverse
    sweep's callee signature)."""
    return tuple("out" if is_local(v) and v in act.varied and is_float_type(t)
                 else "dup" if t == "ptr" and act.has_shadow(v) else "const" for t, v in operands)


def written_float_globals(module) -> dict[str, str]:
    """Mutable globals holding floats that some function writes: they get shadow globals.

    Globals that are only read stay inactive (constants in all but name); globals holding
    pointers are never shadowed (nobody could have put shadow pointers in them)."""
    candidates = _float_globals(module, _GLOBAL_DEFINITION)
    if not candidates:
        return {**_byte_buffers_holding_floats(module), **_escaping_float_constants(module)}
    # a text scan (no parsing): a candidate is written when a function line that names it is
    # anything but a load from it (stores, calls, GEPs whose result may be stored through)
    pattern = global_names_pattern(candidates)
    written: set[str] = set()
    for name in module.functions:
        for line in module.functions.body_lines(name)[1:]:
            if "@" not in line:
                continue
            found = pattern.findall(line)
            if found and not re.match(r'\s*%\S+\s*=\s*load\s', line):
                written.update(found)
    found = {g: ty for g, ty in candidates.items() if g in written}
    found.update(_byte_buffers_holding_floats(module))
    found.update(_escaping_float_constants(module))
    found.update(_pointer_tables_into(module, found))
    return found


def _pointer_tables_into(module, shadowed: dict[str, str]) -> dict[str, str]:
    """Constant tables of pointers into globals that get shadows (`double *rows[3] =
    {M[0], M[1], M[2]}` of a written `M`, which clang keeps as a constant and memcpys into
    the local array): they get shadows too, mirrors of their initializers pointing at the
    shadow globals (ad/shadowinit.py), so the local copy's pointers have shadows to copy.
    `@name` -> value type."""
    if not shadowed:
        return {}
    from ..ir.model import take_type
    refers = global_names_pattern(shadowed)
    out: dict[str, str] = {}
    for name, line in module.globals.items():
        m = _CONSTANT_DEFINITION.match(line)
        if m is None or "@" + name in shadowed:
            continue
        ty, init = take_type(m.group(2))
        if "ptr" in ty and refers.search(init):
            out[make_name("@", name)] = ty
    return out


def _float_globals(module, definition: re.Pattern) -> dict[str, str]:
    """The globals whose definition line `definition` matches (group 1: linkage and
    attributes, group 2: type and initializer) and whose value type holds floats only:
    `@name` -> value type."""
    from ..ir.model import take_type
    out: dict[str, str] = {}
    for name, line in module.globals.items():
        m = definition.match(line)
        if not m or " constant " in f" {m.group(1)} ":
            continue
        ty, _ = take_type(m.group(2))
        if is_active_type(ty) or _float_record_type(module, ty):
            out[make_name("@", name)] = ty
    return out


def global_names_pattern(names) -> re.Pattern:
    """A regex finding any of the global `names` (`@g`, not a prefix of a longer name)."""
    return re.compile("(" + "|".join(re.escape(g) for g in names) + r")(?![-\w$.])")


# `@g = <linkage and attributes> constant <type> <initializer>...`
_CONSTANT_DEFINITION = re.compile(r'^@(?:"[^"]*"|\S+)\s*=\s*(.*?)\bconstant\s+(.*)$')


def _escaping_float_constants(module) -> dict[str, str]:
    """Constant globals holding floats whose address is stored into memory or returned (a
    struct of pointers whose `const double *coef` points at a table of coefficients): derived
    code reaching the table through the struct's shadow needs a shadow there too. It is a zero
    block, written by nothing but the reverse sweep's accumulations (dropped after each call,
    as any shadow global's), so the table still carries no derivative. Found by a text scan
    (`_escaping_pointers`): the global, or a GEP, select or phi of it, as the value of a
    `store ptr` or a `ret ptr`, or passed to a function that stores or returns that parameter
    (an `init(&s, table, ...)` helper). A table only read (even at a computed index, or by a
    callee) keeps no shadow."""
    candidates = _float_globals(module, _CONSTANT_DEFINITION)
    if not candidates:
        return {}
    pattern = global_names_pattern(candidates)
    escaped: set[str] = set()
    callee_memo: dict[tuple[str, int], bool] = {}
    for name in module.functions:
        escaped |= _escaping_pointers(module, module.functions.body_lines(name)[1:], pattern, {}, callee_memo, 1)
    return {g: ty for g, ty in candidates.items() if g in escaped}


def _escaping_pointers(module, lines, pattern, seeds: dict[str, set[str]], callee_memo: dict,
                       depth: int) -> set[str]:
    """The labels of the pointers that reach a `store ptr` value or a `ret ptr` in `lines` (a
    function body): globals matching `pattern` (labelled by their name) and the locals of
    `seeds` (local -> labels), followed through GEPs, selects and phis, and into callees
    defined in the module (`depth` levels) that store or return the parameter."""
    derived = {k: set(v) for k, v in seeds.items()}   # local -> the labels it may point at
    out: set[str] = set()

    def labels_in(text: str) -> set[str]:
        found = set(pattern.findall(text)) if "@" in text else set()
        if derived:
            for local in _LOCAL_NAME.findall(text):
                found |= derived.get(local, set())
        return found

    for line in lines:
        stored = _STORED_OR_RETURNED_POINTER.match(line) if "store" in line or "ret ptr" in line else None
        if stored is not None:
            value = stored.group(1) if stored.group(1) is not None else stored.group(2)
            out |= labels_in(value)
            continue
        flow = _POINTER_FLOW.match(line) if ("getelementptr" in line or "select" in line or "phi ptr" in line) \
            else None
        if flow is not None:
            found = labels_in(line.split("=", 1)[1])
            if found:
                derived.setdefault(flow.group(1), set()).update(found)
            continue
        if depth > 0 and "call" in line and (derived or pattern.search(line)):
            call = _DEFINED_CALL.search(line)
            callee = call.group(1).strip('"') if call is not None else None
            if callee is None or callee not in module.functions:
                continue
            for k, arg in enumerate(split_top(call.group(2))):
                found = labels_in(arg)
                if found and not found <= out and _parameter_escapes(module, callee, k, pattern,
                                                                      callee_memo, depth - 1):
                    out |= found
    return out


def _parameter_escapes(module, callee: str, k: int, pattern, memo: dict, depth: int) -> bool:
    """Whether function `callee` stores its k-th parameter (or a pointer derived from it) or
    returns it."""
    key = (callee, k)
    if key not in memo:
        memo[key] = False   # a recursive call asks again: no
        fn = module.functions[callee]
        if k < len(fn.params) and fn.params[k].type == "ptr":
            seed = {fn.params[k].name: {"param"}}
            memo[key] = bool(_escaping_pointers(module, module.functions.body_lines(callee)[1:], pattern, seed,
                                                memo, depth) & {"param"})
    return memo[key]


_STORED_OR_RETURNED_POINTER = re.compile(r'\s*(?:store(?: volatile)? ptr (.*?), ptr |ret ptr (?=\S)(.*)$)')
_POINTER_FLOW = re.compile(r'\s*(%\S+)\s*=\s*(?:getelementptr\b|select\b|phi ptr\b)')
_DEFINED_CALL = re.compile(r'\bcall\b[^@]*@("[^"]*"|[-\w$.]+)\((.*)\)')
_LOCAL_NAME = re.compile(r'%[-\w$.]+|%"[^"]*"')


_BYTE_ARRAY = re.compile(r'\[(\d+) x i8\]')


def _byte_buffers_holding_floats(module) -> dict[str, str]:
    """Mutable `char` arrays some function stores floats into (raw storage: a bump allocator
    over `char buffer[1024]`, `(double *)&buffer[8 * k]`): they hold floats as much as a
    `double` array does, so they get shadows too. Found by the memory type analysis (a strong
    float fact on bytes rooted at the global), in the functions that name the global on a
    line other than a load."""
    from ..ir.model import make_name, take_type
    buffers: dict[str, str] = {}
    for name, line in module.globals.items():
        m = _GLOBAL_DEFINITION.match(line)
        if not m or re.search(r'\bexternal\b', m.group(1)):
            continue
        ty, _ = take_type(m.group(2))
        if _BYTE_ARRAY.fullmatch(ty):
            buffers[make_name("@", name)] = ty
    if not buffers:
        return {}
    pattern = global_names_pattern(buffers)
    pools = _pool_functions(module, buffers, pattern)
    calls = re.compile("(" + "|".join(re.escape(f) for f in pools) + r")\(") if pools else None
    found: dict[str, str] = {}
    mt = None
    for fname in module.functions:
        lines = module.functions.body_lines(fname)[1:]
        named = {g for line in lines if "@" in line and not re.match(r'\s*%\S+\s*=\s*load\s', line)
                 for g in pattern.findall(line)} - set(found)
        pooled = calls is not None and any("@" in line and calls.search(line) for line in lines)
        if not (named or pooled) or not any(re.match(r'\s*store (?:double|float|half|x86_fp80|fp128|bfloat) ', line)
                                            for line in lines):
            continue
        if mt is None:
            from .memtypes import MemoryTypes
            mt = MemoryTypes.of(module)
        fn = module.functions[fname]
        for fact in mt.function(fn).facts:
            if not (fact.strong and is_float_type(fact.kind)):
                continue
            if fact.place.root in named:
                found[fact.place.root] = buffers[fact.place.root]
            elif pooled:
                for g in _pooled_globals(fn, fact.place.root, pools, buffers):
                    found[g] = buffers[g]
    return found


def _pool_functions(module, buffers: dict[str, str], pattern) -> dict[str, tuple[frozenset, frozenset]]:
    """Functions returning pointers into byte-array globals -- a bump allocator over `char
    pool[N]` kept out of line, or one handed the pool as an argument (Enzyme's
    `__enzyme_allocation_like` example): name -> (globals the returned pointer may point
    into, indices of parameters it may be derived from). Wrappers of such functions are found
    too (to a fixpoint); callers storing floats through the result make the pool hold floats."""
    # functions returning a pointer: `define ... ptr @name(` (the first `@` names the function)
    candidates = [f for f in module.functions
                  if module.functions.body_lines(f)[0].split("@", 1)[0].split()[-1:] == ["ptr"]]
    pools: dict[str, tuple[frozenset, frozenset]] = {}
    changed = True
    while changed:
        changed = False
        for fname in candidates:
            fn = module.functions[fname]
            globals_, params = set(), set()
            index = {p.name: k for k, p in enumerate(fn.params)}
            for block in fn.blocks:
                term = block.terminator
                if term.opcode != "ret" or not term.operands:
                    continue
                for root in _returned_roots(fn, term.operands[0][1], pools):
                    if root in buffers:
                        globals_.add(root)
                    elif root in index:
                        params.add(index[root])
            summary = (frozenset(globals_), frozenset(params))
            if (globals_ or params) and pools.get(make_name("@", fname)) != summary:
                pools[make_name("@", fname)] = summary
                changed = True
    return pools


def _returned_roots(fn: Function, value: str, pools) -> set[str]:
    """The roots of a pointer, looking through calls of pool functions too (their globals,
    and the roots of the arguments their result is derived from)."""
    out = set()
    for root in pointer_roots(fn, value):
        d = fn.defs.get(root)
        if d is not None and d.opcode == "call" and d.callee in pools:
            globals_, params = pools[d.callee]
            out |= globals_
            for k in params:
                if k < len(d.operands):
                    out |= _returned_roots(fn, d.operands[k][1], pools)
        else:
            out.add(root)
    return out


def _pooled_globals(fn: Function, root: str, pools, buffers) -> set[str]:
    """The byte-array globals a pointer rooted at a call of a pool function may point into."""
    return {r for r in _returned_roots(fn, root, pools) if r in buffers}
