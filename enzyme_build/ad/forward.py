"""Forward-mode (and vector forward-mode) derivative synthesis: `fwddiffe_<f>`.

One sweep: every primal instruction is copied, followed by the tangents of its result
(N per value in vector mode, scalarized) and the shadows of its pointer result. Tangents
flow with the primal, so there is no tape: phis get tangent phis, shadow memory holds
tangents (a store stores the tangent into the shadow address, a load reads it back).
Partial derivatives come from the rules table shared with reverse mode.
"""
from __future__ import annotations

import re

from ..analysis.activity import (ALLOCATORS, analyze_activity, callee_name, global_base, is_inactive_call,
                                 shadow_is_primal)
from ..analysis.cfg import returning_blocks
from ..analysis.library import NODE_LINKERS, RELEASERS, shadow_allocator
from ..analysis.types import (check_packed_floats, check_mixed_aggregates, check_vector_operands, float_views,
                              memcpy_element_kind, pointer_as_integer, string_characters, strip_punned_tbaa)
from ..errors import EnzymeBuildError
from ..ir.builder import FreshNames, IRBuilder, print_block
from ..ir.model import (entry_point_name, Function, Instruction, byval_attributes, fast_math_flags, is_active_type, is_float_type, is_local,
                        make_name, named_types, strip_name)
from . import openmp
from .abi import ACTIVE, CONST, DUP, DUPNONEED, Signature, parse_forward_call
from .callsite import builder, call_line, clear_shadow_globals, shadow_linkage
from .diagnostics import (active_argument_not_a_float, refuse_aliased_global_pointer_loads, refuse_untracked_loads,
                          float_bits_travel, lost_active_store, refuse_lost_call_stores, refuse_mixed_shadow_merges,
                          refuse_unshadowed_pointer,
                          warn_dropped_const_paths, uncallable_pointer)
from .sweep import RuleOperands, classify_call, mirror_node_call, shadow_release, zero_of, zeroed_shadow_block
from ..analysis.types import bits_stay_integer
from .indirect import derived_callee, uncallable
from .forward_abi import bind_tangents, layout, value_leaves
from .rules import FORWARD_INSTRUCTION_RULES, Builder, fused_fmul_rule, math_rule
from .shadowinit import mirrored_closure, shadow_definitions

_DBG_RE = re.compile(r',\s*!dbg\s+!\d+')
_ALIGN_RE = re.compile(r',\s*align\s+(\d+)')
# how the activity analysis names a parameter's activity
_ANALYSIS_ACTIVITY = {ACTIVE: "out", DUP: "dup", DUPNONEED: "dupnoneed", CONST: "const"}
_UNSUPPORTED_FLOATS = {"fp128", "ppc_fp128"}


def lane_names(value: str, tag: str, width: int) -> list[str]:
    """Deterministic names of a value's tangents ('t') or shadows ('sh'), one per lane."""
    if width == 1:
        return [make_name(value[0], value, tag)]
    return [make_name(value[0], value, f"{tag}{k}") for k in range(width)]


def returns_shadow(engine, fn: Function, sig: Signature) -> bool:
    """A function returning a pointer returns the pointer's shadows too when it is given
    shadowed memory (accessors like `double *row(Mat *m, int i)`) or when, with this
    activity, the pointer it returns has a shadow of its own (a constructor storing an active
    value into the block it allocates: `mk(x * x)`); the same question reverse mode asks
    (Engine.returns_shadow), so both modes agree."""
    if fn.return_type != "ptr":
        return False
    if sig.ret_shadow or any(a in (DUP, DUPNONEED) for a in sig.args):
        return True
    return engine.returns_shadow(fn.name, tuple(_ANALYSIS_ACTIVITY[a] for a in sig.args))


def derived_return_type(engine, fn: Function, sig: Signature) -> str:
    """void, the primal type, or `{ T, T x width }` (primal then tangents or shadows)."""
    rt = fn.return_type
    if rt == "void" or not (is_active_type(rt) or returns_shadow(engine, fn, sig)):
        return rt
    return "{ " + ", ".join([rt] * (sig.width + 1)) + " }"


def derived_params(fn: Function, sig: Signature) -> list[tuple[str, str]]:
    """(type with attributes, name) of fwddiffe_<f>'s parameters."""
    out = []
    for p, a in zip(fn.params, sig.args):
        byval = byval_attributes(p)
        ptr = f"ptr {byval}" if byval else "ptr"
        out.append((ptr if byval else p.type, p.name))
        if a == ACTIVE:
            out += [(p.type, t) for t in lane_names(p.name, "t", sig.width)]
        elif a in (DUP, DUPNONEED):
            out += [(ptr, s) for s in lane_names(p.name, "sh", sig.width)]
    return out


def request_forward(engine, fn: Function, sig: Signature) -> str:
    """The name of fwddiffe_<f> for this signature, generated on first request (memoized in
    the engine, before the body is generated, so recursion and shared call sites work)."""
    return engine.request_forward(fn, sig, lambda name: ForwardGenerator(engine, fn, sig, name).generate())


def rewrite_forward_call(engine, fn: Function, inst: Instruction) -> list[str]:
    """Replacement lines for one __enzyme_fwddiff / __enzyme_batch call."""
    counter = [0]

    def fresh() -> str:
        counter[0] += 1
        return f"%fwd$L{inst.line}${counter[0]}"

    where = engine.location(inst) or f"call to {entry_point_name(inst.callee)} in @{fn.name}"
    if "__enzyme_batch" in entry_point_name(inst.callee):
        raise EnzymeBuildError("__enzyme_batch (batched primal evaluation) is not supported", location=where,
                               hint="for several tangents in one sweep use __enzyme_fwddiff with enzyme_width N")
    call = parse_forward_call(engine, fn, inst, fresh)
    name = request_forward(engine, call.primal, call.sig)
    rty = derived_return_type(engine, call.primal, call.sig)
    lines = list(call.lines)
    tangents: list[str] = []
    tangent_type = None
    out = call_line(rty, name, call.passed, fresh, lines)
    if out is not None and rty != call.primal.return_type:
        tangent_type = call.primal.return_type
        ir = builder(fresh, lines)
        for k in range(call.sig.width):
            tangents.append(ir.extractvalue(rty, out, [k + 1], tangent_type))
    bind_tangents(engine, call, inst, tangents, tangent_type, fresh, lines, where)
    clear_shadow_globals(engine, name, fresh, lines, forward_width=call.sig.width)
    return lines


class ForwardGenerator:
    """Builds one fwddiffe_<f>: its blocks as model instructions made by one IRBuilder
    (`self.ir`, building into the current block), printed once at the end."""

    def __init__(self, engine, fn: Function, sig: Signature, name: str):
        self.engine, self.fn, self.sig, self.name = engine, fn, sig, name
        self.width = sig.width
        self._returning: set[str] | None = None
        openmp.prepare(engine, fn)
        if fn.name in openmp.parallel_functions(engine):
            openmp.refuse_unsupported(engine, fn, "forward")
        self.act = self._activity()
        refuse_untracked_loads(engine, fn, self.act, "tangent")
        refuse_aliased_global_pointer_loads(engine, fn, self.act, "tangent")
        warn_dropped_const_paths(engine, fn, self.act)
        for inst in self.act.lost_stores:   # as in reverse mode: the tangent would be dropped
            raise lost_active_store(engine, fn, inst)
        for inst in self.act.lost_copies:
            if memcpy_element_kind(self, inst) != "int":
                raise lost_active_store(engine, fn, inst)
        refuse_lost_call_stores(engine, fn, self.act, sig.args)
        refuse_mixed_shadow_merges(engine, fn, self.act)
        self.types: dict[str, str] = {p.name: p.type for p in fn.params}
        for inst in fn.instructions():
            if inst.result:
                self.types[inst.result] = inst.type
        for value in sorted(self.act.varied):
            if self.types.get(value) in _UNSUPPORTED_FLOATS:
                raise EnzymeBuildError(f"active {self.types[value]} value {value} in @{fn.name}: long double / "
                                       f"fp128 arithmetic is not supported", location=f"@{fn.name}",
                                       hint="compute in double (or float)")
        self.fresh = FreshNames("f")   # fresh(hint) -> '%hint$n'
        self.ir = IRBuilder(self.fresh)
        self.named = None
        self.bits: dict[str, list[str]] = {}   # non-float loads of shadowed memory -> shadow bytes

    def _activity(self):
        """Activity of the function. The analysis gives call results no shadows; here the result
        of realloc of shadowed memory (the old shadow, grown) and of a function returning a
        pointer given shadowed memory (its derived function returns the shadows) get them,
        re-seeding the analysis until stable."""
        seeds = set(self.engine.active_globals)
        # integer copies of float bytes (memory type analysis): they make the memory they are
        # stored into active, and are then moved as bytes (`_load_bits`), not as tangents
        # integers carrying float bytes (`float_views`: integer copies of float data, loads
        # later bitcast to a float) make the memory they are stored into active; in this
        # sweep they move as bytes (`_load_bits`, `_float_bits`), not as tangents
        views = float_views(self.fn, self.engine.module)
        copies = {v for v in views if not is_float_type(self.fn.defs[v].type if v in self.fn.defs else "double")}
        self.int_views = copies
        strip_punned_tbaa(self.fn, self.engine.module, views)
        words = self.engine.pointer_words(self.fn)
        while True:
            act = analyze_activity(self.fn, [_ANALYSIS_ACTIVITY[a] for a in self.sig.args],
                                   defined=self.engine.differentiable, inactive=self.engine.inactive,
                                   custom=set(self.engine.custom), active_globals=seeds, views=views,
                                   global_users=self.engine.global_users,
                                   shadow_outputs=self.engine.shadow_outputs,
                                   returns_shadow=self._needed_return_shadow,
                                   ret_needs_shadow=self.sig.ret_shadow,
                                   slot_writes=self.engine.writes_through,
                                   pointer_words=words)
            act.varied -= copies
            grown = {inst.result for inst in self.fn.instructions()
                     if inst.opcode == "call" and inst.result and inst.result not in act.shadowed
                     and self._call_returns_shadow(inst, act)}
            grown |= self._objects_behind_shadowed_results(act) - act.shadowed
            grown |= self._returned_allocations() - act.shadowed
            if not grown:
                return act
            # what this round shadowed stays shadowed: the pointer a call returns may have
            # its shadow because an argument got one here (a span into a malloc'd block
            # written through), and the next round must not drop the argument's
            seeds |= grown | act.shadowed

    def _objects_behind_shadowed_results(self, act) -> set[str]:
        """Local objects passed to a defined function whose returned pointer needs a shadow
        (`v[i] = x` through an unoptimized std::vector::operator[]): the pointer comes out of
        the object, so its shadow can only come out of the object's shadow."""
        out = set()
        for inst in self.fn.instructions():
            if inst.opcode != "call" or inst.type != "ptr" or not inst.result \
                    or inst.result not in act.shadowed:
                continue
            name = callee_name(inst)
            if name not in self.engine.module.functions or name in self.engine.inactive \
                    or (name in self.engine.custom and self.engine.custom[name].forward):
                continue
            out |= {v for t, v in inst.operands if t == "ptr" and is_local(v) and self._is_alloca(v)}
        return out

    def _returned_allocations(self) -> set[str]:
        """Allocations this function returns when its caller wants the returned pointer's
        shadow (`allocator::allocate` called for a shadowed std::vector): they need a
        shadow block of their own, else the caller would get the primal block as shadow."""
        if self.fn.return_type != "ptr" or not returns_shadow(self.engine, self.fn, self.sig):
            return set()
        roots, todo, seen = set(), [v for inst in self.fn.instructions() if inst.opcode == "ret"
                                    for _, v in inst.operands], set()
        while todo:
            value = todo.pop()
            if value in seen or not is_local(value):
                continue
            seen.add(value)
            d = self.fn.defs.get(value)
            if d is None:
                continue
            if d.opcode in ("phi", "select"):
                todo += [v for t, v in d.operands if t == "ptr"] if d.opcode == "select" else \
                    [v for _, v in d.operands]
            elif d.opcode == "call" and d.callee in ALLOCATORS:
                roots.add(value)
        return roots

    def _is_alloca(self, value: str) -> bool:
        d = self.fn.defs.get(value)
        return d is not None and d.opcode == "alloca"

    def _needed_return_shadow(self, name: str, args: tuple[str, ...], needed: bool = False) -> bool:
        """The activity analysis asks this when this function keeps active data where a call's
        returned pointer points (`needed`): whether the callee can return that pointer's
        shadow (the same question reverse mode asks). Calls with shadowed arguments are
        answered by `_call_returns_shadow` after the analysis, as before."""
        return needed and self.engine.returns_shadow(name, args, True)

    def _call_returns_shadow(self, inst: Instruction, act) -> bool:
        """realloc of shadowed memory, or a pointer-returning function given shadowed memory."""
        name = callee_name(inst)
        if name == "realloc":
            return act.has_shadow(inst.operands[0][1])
        callee = self.engine.module.functions.get(name)
        if callee is None or inst.type != "ptr" or name in self.engine.inactive or is_inactive_call(inst) \
                or (name in self.engine.custom and self.engine.custom[name].forward):
            return False   # an inactive routine is copied, not derived: its result has no shadow
        return returns_shadow(self.engine, callee, self._callee_signature(inst, act))

    # ------------------------------------------------------------------ names
    def lanes(self):
        return range(self.width)

    def tangents(self, value: str, ty: str) -> list[str]:
        """The tangent of an operand per lane: names for varied values, zero otherwise."""
        if is_local(value) and value in self.act.varied:
            return lane_names(value, "t", self.width)
        return [zero_of(ty)] * self.width

    def has_shadow(self, value: str) -> bool:
        return self.act.has_shadow(value)

    def shadows(self, value: str) -> list[str]:
        """The shadow of a pointer operand per lane (the primal itself when it has none)."""
        if is_local(value):
            if value in self.act.shadowed:
                return lane_names(value, "sh", self.width)
            return [value] * self.width
        g = global_base(value)
        if g is not None and g in self.act.shadowed:
            return [re.sub(re.escape(g) + r'(?![-\w$.])', self._shadow_global(g, k), value) for k in self.lanes()]
        return [value] * self.width

    def _shadow_global(self, g: str, lane: int) -> str:
        """Forward-mode shadow of a written float global (its tangent; zero initially)."""
        tag = "fsh" if self.width == 1 or lane == 0 else f"fsh{lane}"
        if tag != "fsh" and self.engine.active_globals[g] == "ptr" and g in self.engine.user_shadows:
            raise EnzymeBuildError(
                f"vector forward mode (width {self.width}) reaches the pointer global {g}, whose declared shadow "
                f"pointer serves one lane only (in @{self.fn.name})", location=f"@{self.fn.name}",
                hint="use width 1 for this function, or pass the workspace as an enzyme_dup argument "
                     "with one shadow buffer per lane")
        name = make_name("@", g, tag)
        module = self.engine.module
        # with the shadows its initializer points at (shadowinit)
        for primal, sh, ty in mirrored_closure(module, strip_name(g), self.engine.active_globals[g],
                                               lambda y: make_name("@", y, tag)):
            key = ("forward-global", sh)
            if key not in self.engine.memo:
                self.engine.memo[key] = {"global": sh}
                self.engine.texts.extend(shadow_definitions(module, primal, sh, ty, shadow_linkage(module, primal),
                                                            lambda y: make_name("@", y, tag))[0])
        return name

    def where(self, inst: Instruction) -> str:
        return self.engine.location(inst) or f"@{self.fn.name}"

    # ------------------------------------------------------------------ driver
    def generate(self) -> str:
        head = ", ".join(f"{t} {n}" for t, n in derived_params(self.fn, self.sig))
        out = [f"define internal {derived_return_type(self.engine, self.fn, self.sig)} @{self.name}({head})"
               f"{self.engine.derived_attributes(self.fn)} {{"]
        rule = self.engine.custom.get(self.fn.name)
        if rule is not None and rule.forward:
            return "\n".join(out + print_block("entry$", self._rule_body()) + ["}"])
        for block in self.fn.blocks:
            body: list[Instruction] = []
            lane_phis: list[Instruction] = []
            phis = block.phis()
            for phi in phis:
                body.append(phi)
                self.ir.into = lane_phis
                self._phi(phi)
            body += lane_phis
            self.ir.into = body
            for inst in block.instructions[len(phis):-1]:
                self._instruction(inst)
            self._terminator(block.terminator)
            out += print_block(block.label, body)
        out.append("}")
        return "\n".join(out)

    def _rule_body(self) -> list[Instruction]:
        """f itself has a custom forward rule: the derived function just calls it."""
        rt = self.fn.return_type
        result = None if rt == "void" else "%rule$result"
        call = Instruction(text="", opcode="call", result=result, type=rt, callee=make_name("@", self.fn.name),
                           operands=[(p.type, p.name) for p in self.fn.params])
        if result and is_float_type(rt):
            self.act.varied.add(result)
        self.ir.into = body = []
        self._custom_call(call)
        ret = Instruction(text="", opcode="ret", type=rt, operands=[(rt, result)] if result else [])
        self._terminator(ret)
        return body

    def _moves_active_bits(self, inst: Instruction) -> bool:
        """Does an atomic operation store a value with a derivative (a float, or a float's
        bits as the integer `_Atomic double` updates compare and exchange)?"""
        text = inst.text.split("=", 1)[1] if inst.result else inst.text
        for v in re.findall(r'%[-a-zA-Z$._0-9]+', _DBG_RE.sub("", text))[1:]:   # the values, after the address
            if v in self.act.varied:
                return True
            d = self.fn.defs.get(v)
            if d is not None and d.opcode == "bitcast" and d.operands and d.operands[0][1] in self.act.varied:
                return True
        return False

    def _phi(self, phi: Instruction) -> None:
        """Tangent phis (floats) or shadow phis (pointers), one per lane, on the same edges."""
        res = phi.result
        if res in self.act.varied:
            self._lane_phis(phi, "t", [self.tangents(v, phi.type) for v, _ in phi.incoming])
        if res in self.act.shadowed:
            self._lane_phis(phi, "sh", [self.shadows(v) for v, _ in phi.incoming])
        if res in self.int_views:
            # float bytes carried in an integer phi: merge their tangent bytes the same way
            self._lane_phis(phi, "bits", [self._bits_of(v) for v, _ in phi.incoming])
            self.bits[res] = lane_names(res, "bits", self.width)

    def _bits_of(self, value: str) -> list[str]:
        """Tangent bytes of an integer carrying float bytes (a constant carries none)."""
        if value in self.int_views:
            return lane_names(value, "bits", self.width)
        return ["0"] * self.width

    def _lane_phis(self, phi: Instruction, tag: str, per_edge: list[list[str]]) -> None:
        blocks = [b for _, b in phi.incoming]
        for k, name in enumerate(lane_names(phi.result, tag, self.width)):
            self.ir.phi(phi.type, [(values[k], b) for values, b in zip(per_edge, blocks)], name=name)

    def _terminator(self, term: Instruction) -> None:
        if term.opcode in ("invoke", "callbr", "indirectbr", "resume"):
            what, hint = _UNSUPPORTED[term.opcode]
            raise EnzymeBuildError(f"cannot differentiate through {what} in @{self.fn.name}",
                                   location=self.where(term), hint=hint)
        rty = derived_return_type(self.engine, self.fn, self.sig)
        if term.opcode != "ret" or rty == self.fn.return_type:
            self.ir.copy(term)
            return
        ty, v = term.operands[0]
        agg = self.ir.insertvalue(rty, "poison", ty, v, [0], hint="ret")
        for k, t in enumerate(self._kept_shadows(v, term) if ty == "ptr" else self.tangents(v, ty)):
            agg = self.ir.insertvalue(rty, agg, ty, t, [k + 1], hint="ret")
        self.ir.ret(rty, agg)

    # ------------------------------------------------------------------ instructions
    def _instruction(self, inst: Instruction) -> None:
        op, res = inst.opcode, inst.result
        if op == "call":
            self._call(inst)
            return
        rmw = openmp.atomic_fadd_operands(inst)
        if rmw is not None and self.has_shadow(rmw[0]) and not (res and self._users(res)):
            # *p += v (omp atomic, reductions): *dp += dv, atomically too
            self.ir.copy(inst)
            p, ty, v = rmw
            tangents = self.tangents(v, ty) if is_local(v) and v in self.act.varied else []
            for t, sh in zip(tangents, self.shadows(p)):
                self.ir.atomicrmw("fadd", sh, ty, t, "monotonic", align=8)
            return
        if op in ("cmpxchg", "atomicrmw") and self._moves_active_bits(inst):
            what, hint = _UNSUPPORTED[op]
            raise EnzymeBuildError(f"cannot differentiate {what} in @{self.fn.name}", location=self.where(inst),
                                   hint=hint)
        where = lambda: self.where(inst)   # noqa: E731  (only for an error)
        check_vector_operands(self.fn, inst, self.act.varied, where)
        check_mixed_aggregates(self.fn, inst, self.act.varied, where)
        self.ir.copy(inst)
        if op == "bitcast" and res and not is_float_type(inst.type) and inst.operands[0][1] in self.act.varied:
            self._float_bits(inst)
        if res and res in self.int_views:
            self._check_bits_uses(res)
            if op == "select":
                a, b = self._bits_of(inst.operands[1][1]), self._bits_of(inst.operands[2][1])
                names = lane_names(res, "bits", self.width)
                for k, name in enumerate(names):
                    self.ir.select(inst.operands[0][1], inst.type, a[k], b[k], name=name)
                self.bits[res] = names
        if res and res in self.act.shadowed:
            self._shadow(inst)
        if res and res in self.act.varied:
            self._tangent(inst)
        elif op == "load" and self.has_shadow(inst.operands[0][1]) and inst.type != "ptr":
            self._load_bits(inst)
        if res and res in self.int_views and res not in self.bits:
            # loaded from memory without a shadow, or the bits of a constant float: no tangent
            names = lane_names(res, "bits", self.width)
            for name in names:
                self.ir.binop("add", inst.type, "0", "0", name=name)
            self.bits[res] = names
        if op == "store":
            (vty, v), (_, p) = inst.operands
            if self.has_shadow(p):
                if is_active_type(vty):
                    values = self.tangents(v, vty)
                elif vty == "ptr":
                    values = self._kept_shadows(v, inst)
                elif (x := pointer_as_integer(self.fn, v)) and self.has_shadow(x):
                    # a pointer kept as an integer: its shadows, as integers, go along
                    values = []
                    for sh in self.shadows(x):
                        values.append(self.ir.cast("ptrtoint", "ptr", sh, vty, hint="shint"))
                else:
                    values = self._stored_bits(inst, vty, v)
                for value, at in zip(values, self.shadows(p)):
                    self.ir.store(vty, value, at, align=_alignment(inst))

    def _kept_shadows(self, v: str, inst: Instruction) -> list[str]:
        """The shadows of a pointer stored into shadow memory or returned beside its shadow.
        One without a shadow of its own: null for a std::string's characters, itself for a
        function or a constant table; else refused, as in reverse mode (the primal as its own
        shadow would give constant data a tangent, shadow stores would write into it and a
        shadow free would free it twice), unless inlining brings the pointer's maker and its
        users together."""
        if v in ("null", "poison", "undef") or self.has_shadow(v):
            return self.shadows(v)
        if string_characters(self.engine.module, self.fn, v):
            return ["null"] * self.width
        if not shadow_is_primal(self.engine.module, v, self.fn):
            refuse_unshadowed_pointer(self.engine, self.fn, v, inst)
        return self.shadows(v)

    def _load_bits(self, inst: Instruction) -> None:
        """A non-float load from shadowed memory (an integer or vector copy of the data, e.g. a
        struct copied through i64): load the shadow's bytes the same way, so a store of the
        value elsewhere carries the tangents along. Arithmetic on such values would lose
        tangents, so a vector of floats may only be stored again."""
        res = inst.result
        check_packed_floats(self.fn, self.engine.module, inst, self.where(inst))
        if ("double" in inst.type or "float" in inst.type) and any(
                u.opcode != "store" or u.operands[0][1] != res for u in self._users(res)):
            raise EnzymeBuildError(f"vector/aggregate access '{inst.type}' to active memory in @{self.fn.name} "
                                   f"is not supported", location=self.where(inst),
                                   hint="the pre-AD pipeline disables vectorization; avoid whole-struct "
                                        "arithmetic on float data")
        names = lane_names(res, "bits", self.width)
        for name, at in zip(names, self.shadows(inst.operands[0][1])):
            self.ir.load(inst.type, at, align=_alignment(inst), name=name)
        self.bits[res] = names

    def _float_bits(self, inst: Instruction) -> None:
        """`bitcast double %x to i64`: the tangent's bits travel along with the value's."""
        src_ty, src = inst.operands[0]
        names = lane_names(inst.result, "bits", self.width)
        for name, t in zip(names, self.tangents(src, src_ty)):
            self.ir.cast("bitcast", src_ty, t, inst.type, name=name)
        self.bits[inst.result] = names

    def _check_bits_uses(self, value: str) -> None:
        """An integer holding a float's bytes may be stored, bitcast back or compared; merged
        through a phi/select or computed with, its tangent cannot follow: refuse."""
        for u in self._users(value):
            if u.opcode in ("store", "bitcast", "icmp", "getelementptr", "br", "switch", "call",
                            "cmpxchg", "atomicrmw"):     # atomics are refused by their own check
                continue
            if u.opcode in ("phi", "select") and u.result in self.int_views:
                continue
            if u.result and u.type.startswith("i") and bits_stay_integer(self.fn, u.result):
                continue
            raise float_bits_travel(self.fn, value, u, self.where(u))

    def _stored_bits(self, inst: Instruction, vty: str, v: str) -> list[str]:
        """What a non-float store writes into shadow memory: the bytes loaded along with the
        value, or zero (constants, integers that never were float data)."""
        if v in self.bits:
            return self.bits[v]
        d = self.fn.defs.get(v)
        if d is not None and d.opcode == "bitcast" and d.operands[0][1] in self.act.varied:
            raise EnzymeBuildError(f"storing the bits of an active float as '{vty}' in @{self.fn.name} is not "
                                   f"supported ({inst.text.strip()})", location=self.where(inst),
                                   hint="store the floating-point value itself")
        return ["zeroinitializer"] * self.width

    def _users(self, value: str) -> list[Instruction]:
        return self.fn.users().get(value, [])

    def _define(self, name: str, ty: str, value: str, start: int) -> None:
        """Bind a fixed tangent name (phis may refer to it before its definition) to a value:
        the instruction made last (since position `start`) when it defines the value, else a
        copy of the value."""
        if not self.ir.rename_last(start, value, name):
            self.ir.select("true", ty, value, value, name=name)

    def _tangent(self, inst: Instruction) -> None:
        op, res, ty = inst.opcode, inst.result, inst.type
        names = lane_names(res, "t", self.width)
        if op in FORWARD_INSTRUCTION_RULES:
            rule, operands = fused_fmul_rule(self.fn, inst) or (FORWARD_INSTRUCTION_RULES[op], inst.operands)
            self._apply_rule(rule, ty, operands, res, names, fast_math_flags(inst))
        elif op in ("fpext", "fptrunc"):
            src_ty, src = inst.operands[0]
            for name, t in zip(names, self.tangents(src, src_ty)):
                self.ir.cast(op, src_ty, t, ty, name=name)
        elif op == "freeze":
            for name, t in zip(names, self.tangents(inst.operands[0][1], ty)):
                self._define(name, ty, t, len(self.ir.into))
        elif op == "select":
            cond = inst.operands[0][1]
            a, b = self.tangents(inst.operands[1][1], ty), self.tangents(inst.operands[2][1], ty)
            for k, name in enumerate(names):
                self.ir.select(cond, ty, a[k], b[k], name=name)
        elif op == "load":
            for name, at in zip(names, self.shadows(inst.operands[0][1])):
                self.ir.load(ty, at, align=_alignment(inst), name=name)
        elif op == "bitcast":
            src_ty, src = inst.operands[0]
            lanes = self.bits.get(src) if not is_float_type(src_ty) else self.tangents(src, src_ty)
            for k, name in enumerate(names):
                if lanes is None:
                    self.ir.select("true", ty, zero_of(ty), zero_of(ty), name=name)
                else:
                    self.ir.cast("bitcast", src_ty, lanes[k], ty, name=name)
        elif op == "extractvalue":
            aty, agg = inst.operands[0]
            for name, t in zip(names, self.tangents(agg, aty)):
                self.ir.extractvalue(aty, t, inst.indices, ty, name=name)
        elif op == "insertvalue":
            (aty, agg), (ety, elem) = inst.operands[0], inst.operands[1]
            for name, ta, te in zip(names, self.tangents(agg, aty), self.tangents(elem, ety)):
                self.ir.insertvalue(aty, ta, ety, te, inst.indices, name=name)
        else:
            what, hint = _UNSUPPORTED.get(op, (f"'{op}'", "vector floating-point values are not supported by "
                                                          "the engine"))
            raise EnzymeBuildError(f"cannot differentiate {what} producing {res} in @{self.fn.name}",
                                   location=self.where(inst), hint=hint)

    def _apply_rule(self, rule, fty: str, operands, res: str, names: list[str], flags: str = "") -> None:
        """tangent = sum over varied operands of partial_i * tangent_i, per lane."""
        if not is_float_type(fty):
            raise EnzymeBuildError(f"cannot differentiate {rule.names[0]} on '{fty}' values in @{self.fn.name}",
                                   hint="vector floating-point values are not supported by the engine")
        b = Builder(fty, self.fresh, into=self.ir.into)
        b.flags = flags   # the primal instruction's fast-math flags
        x = RuleOperands([v for _, v in operands], res, b)
        partials = []
        for i, (ty, v) in enumerate(operands):
            if not (is_local(v) and v in self.act.varied):
                continue
            if i >= len(rule.partials):
                raise EnzymeBuildError(f"no derivative rule for operand {i} of {rule.names[0]}")
            if i < len(rule.terms) and rule.terms[i] is not None:
                partials.append((rule.terms[i], lane_names(v, "t", self.width)))
                continue
            partial = rule.partials[i](b, x)
            if partial is not None:
                partials.append((partial, lane_names(v, "t", self.width)))
        for k, name in enumerate(names):
            start = len(self.ir.into)
            total = None
            for partial, tangent in partials:
                t = tangent[k]
                if callable(partial):   # the rule builds this operand's term from its tangent
                    term = partial(b, x, t)
                else:
                    term = t if b.is_const(partial, 1.0) else b.fneg(t) if b.is_const(partial, -1.0) \
                        else b.fmul(partial, t)
                total = term if total is None else b.fadd(total, term)
            self._define(name, fty, total if total is not None else b.const(0.0), start)
        for callee, decl in b.declarations.items():
            self.engine.declare(callee, decl)
        for helper in b.helpers:
            self.engine.support.add(f"__enzyme_build_{helper}")

    # ------------------------------------------------------------------ shadows
    def _shadow(self, inst: Instruction) -> None:
        op, res = inst.opcode, inst.result
        names = lane_names(res, "sh", self.width)
        if op == "alloca":
            size = f"ptrtoint (ptr getelementptr ({inst.source_type}, ptr null, i32 1) to i64)"
            if inst.operands:
                cty, cnt = inst.operands[0]
                n, total = self.fresh("n"), self.fresh("n")
                if cty != "i64":
                    self.ir.cast("zext", cty, cnt, "i64", name=n)
                else:
                    self.ir.binop("add", "i64", cnt, "0", name=n)
                size = self.ir.binop("mul", "i64", n, size, name=total)
            for sh in names:
                self.ir.clone(inst, result=sh)
                self.ir.call("void", "@llvm.memset.p0.i64", [("ptr", sh), ("i8", "0"), ("i64", size), ("i1", "false")])
            self.engine.declare("@llvm.memset.p0.i64")
        elif op in ("getelementptr", "bitcast", "addrspacecast", "freeze"):
            base = inst.operands[0][1]
            for sh, base_sh in zip(names, self.shadows(base)):
                self.ir.clone(inst, result=sh, mapping={base: base_sh})
        elif op == "select":
            c = inst.operands[0][1]
            a, b = self.shadows(inst.operands[1][1]), self.shadows(inst.operands[2][1])
            for k, sh in enumerate(names):
                self.ir.select(c, "ptr", a[k], b[k], name=sh)
        elif op == "load":
            for sh, at in zip(names, self.shadows(inst.operands[0][1])):
                self.ir.load("ptr", at, align=8, name=sh)
        else:
            raise EnzymeBuildError(
                f"cannot create a shadow for pointer {res} produced by '{op}' in @{self.fn.name}",
                location=self.where(inst),
                hint="functions returning pointers to active memory are not supported; pass the buffer as an argument")

    # ------------------------------------------------------------------ calls
    def _call_active(self, inst: Instruction) -> bool:
        # a result with a shadow too (a pointer an allocating helper returns, given no active
        # argument): the derived call defines the shadow, as in reverse mode
        if inst.result and (inst.result in self.act.varied or inst.result in self.act.shadowed):
            return True
        if inst.callee and callee_name(inst) in self.engine.differentiable \
                and callee_name(inst) in self.engine.global_users:
            return True
        return any((is_local(v) and v in self.act.varied) or (t == "ptr" and self.has_shadow(v))
                   for t, v in inst.operands)

    def _call_kind(self, inst: Instruction) -> str:
        """'drop' | 'free' | 'memory' | 'custom' | 'inactive' | 'math' | 'derived' | 'unknown'."""
        if self._returning is None:
            self._returning = returning_blocks(self.fn)
        if inst.block not in self._returning:
            return "inactive"   # on a way that never returns (a throw): only the primal runs
        return classify_call(self.engine, inst, mode="forward", active=lambda: self._call_active(inst))

    def _call(self, inst: Instruction) -> None:
        kind = self._call_kind(inst)
        if kind == "drop":
            return
        if kind == "unknown" and "__enzyme_" in callee_name(inst):
            raise EnzymeBuildError(
                f"@{self.fn.name} calls {entry_point_name(inst.callee)}: differentiating a function that itself "
                f"differentiates (e.g. forward over reverse for Hessians) is not supported",
                location=self.where(inst), hint="compute the inner derivative by hand or with finite differences")
        if kind == "unknown":
            rule = self.engine.custom.get(callee_name(inst))
            if rule is not None and inst.callee and callee_name(inst) not in self.engine.module.functions:
                raise EnzymeBuildError(
                    f"cannot differentiate through '{callee_name(inst)}' in forward mode: it has reverse-mode "
                    f"rules but no forward rule and no body (call chain: "
                    f"{' -> '.join([c for c, _ in self.engine.chain] + [callee_name(inst)])})",
                    location=self.where(inst),
                    hint=f"add __attribute__((enzyme(\"forward\", {callee_name(inst)}_fwd))) or "
                         f"`void* __enzyme_register_derivative_{callee_name(inst)}[] = "
                         f"{{{callee_name(inst)}, {callee_name(inst)}_fwd}};`")
            self.engine.missing_derivative(inst, self.fn, mode="forward")
        if kind == "derived":
            self._derived_call(inst)
            return
        if kind == "custom":
            self._custom_call(inst)
            return
        retarget = derived_callee(inst, self.act.varied, self.has_shadow)
        if not retarget and uncallable(inst):
            uncallable_pointer(self.engine, self.fn, inst)
        if retarget:
            self.ir.clone(inst, mapping=retarget)
        else:
            self.ir.copy(inst)
        if callee_name(inst) in NODE_LINKERS and any(t == "ptr" and self.has_shadow(v) for t, v in inst.operands):
            res = inst.result
            names = lane_names(res, "sh", self.width) if res and res in self.act.shadowed else [None] * self.width
            for k, name in enumerate(names):
                mirror_node_call(self.engine, self.fn, self.ir, inst, lambda v, k=k: self.shadows(v)[k], self.has_shadow, name)
        if kind == "math" and inst.result in self.act.varied:
            name = callee_name(inst)
            like = self.engine.function_like.get(name)
            rule, fty = math_rule(inst.callee) or math_rule("@" + like)
            self._apply_rule(rule, inst.type, inst.operands, inst.result,
                             lane_names(inst.result, "t", self.width), fast_math_flags(inst))
        elif kind == "memory":
            self._memory_call(inst)
        elif kind == "free":
            ptr = inst.operands[0][1] if inst.operands else None
            if ptr is not None and is_local(ptr) and ptr in self.act.shadowed:
                # a deallocator of its own kind of block releases that block's shadows too
                own = callee_name(inst) if callee_name(inst) in RELEASERS else None
                release = shadow_release(self.engine, own)
                for sh in self.shadows(ptr):
                    self.ir.call("void", release, [("ptr", sh)])

    def _memory_call(self, inst: Instruction) -> None:
        name = callee_name(inst)
        res = inst.result
        if inst.callee in ALLOCATORS:
            if not (res and res in self.act.shadowed):
                return
            args = [v for _, v in inst.operands]
            for sh in lane_names(res, "sh", self.width):
                if name == "realloc" and not shadow_allocator(name)[0]:
                    self._realloc_shadow(inst, sh)
                else:
                    zeroed_shadow_block(self.engine, self.ir, name, args, sh)
            return
        d = inst.operands[0][1]
        if not self.has_shadow(d):
            return
        nty, n = inst.operands[2]
        if name.startswith(("llvm.memcpy", "llvm.memmove")):
            s = inst.operands[1][1]
            if self.has_shadow(s):
                for dk, sk in zip(self.shadows(d), self.shadows(s)):
                    self.ir.call("void", inst.callee, [("ptr", dk), ("ptr", sk), (nty, n), ("i1", "false")])
                return
        for dk in self.shadows(d):
            self.ir.call("void", _memset_for(nty), [("ptr", dk), ("i8", "0"), (nty, n), ("i1", "false")])
        self.engine.declare("@llvm.memset.p0.i64")
        if nty != "i64":
            self.engine.declare(_memset_for(nty), f"declare void {_memset_for(nty)}(ptr, i8, {nty}, i1 immarg)")

    def _realloc_shadow(self, inst: Instruction, sh: str) -> None:
        """realloc's shadow: the old shadow grown the same way (new bytes zeroed), or a zeroed
        block when the old pointer has no shadow (e.g. NULL)."""
        (_, old), (_, size) = inst.operands[0], inst.operands[1]
        k = lane_names(inst.result, "sh", self.width).index(sh)
        if self.has_shadow(old) and is_local(old):
            old_sh = self.shadows(old)[k]
            self.engine.declare("@realloc")
            self.engine.declare("@malloc")
            self.ir.call("ptr", "@realloc", [("ptr", old_sh), ("i64", size)], name=sh)
        else:
            self.engine.declare("@calloc")
            self.ir.call("ptr", "@calloc", [("i64", "1"), ("i64", size)], name=sh)

    def _callee_signature(self, inst: Instruction, act=None) -> Signature:
        """The call's signature (with the activity `act` while it is being computed)."""
        act = act or self.act
        args = []
        for t, v in inst.operands:
            if is_local(v) and v in act.varied and is_float_type(t):
                args.append(ACTIVE)
            elif is_local(v) and v in act.varied:
                raise active_argument_not_a_float(t, callee_name(inst), self.where(inst))
            elif t == "ptr" and (act.has_shadow(v) or (v == "null" and callee_name(inst) in self.engine.differentiable)):
                args.append(DUP)   # a literal null's shadow is null (see reverse.py: _null_is_dup)
            else:
                args.append(CONST)
        # a pointer returned by a call without shadowed arguments, which this function keeps
        # active data behind (`double *p = pool_alloc(2); p[0] = x;` through a wrapper): the
        # callee is asked for the pointer's shadow as reverse mode asks its augmented piece
        callee = self.engine.module.functions.get(callee_name(inst))
        ret_shadow = bool(inst.result) and inst.type == "ptr" and inst.result in act.shadowed \
            and DUP not in args and DUPNONEED not in args and callee is not None \
            and callee_name(inst) not in self.engine.inactive \
            and not (callee_name(inst) in self.engine.custom and self.engine.custom[callee_name(inst)].forward)
        return Signature(callee_name(inst), tuple(args), ret_shadow=ret_shadow, mode="forward", width=self.width)

    def _derived_call(self, inst: Instruction) -> None:
        sig = self._callee_signature(inst)
        callee = self.engine.module.functions[sig.function]
        name = request_forward(self.engine, callee, sig)
        args = []
        for k, ((t, v), a) in enumerate(zip(inst.operands, sig.args)):
            # a struct passed by value: the call passes it and its shadows `byval` as
            # fwddiffe_<f> declares them (derived_params); without the attribute the callee
            # would read its copies from where the caller never put them
            byval = byval_attributes(callee.params[k]) if k < len(callee.params) else ""
            pty = f"ptr {byval}" if byval else t
            args.append((pty, v))
            if a == ACTIVE:
                args += [(t, x) for x in self.tangents(v, t)]
            elif a == DUP:
                args += [(pty if byval else "ptr", x) for x in self.shadows(v)]
        rty = derived_return_type(self.engine, callee, sig)
        res = inst.result
        if openmp.fork_ident(inst) is not None:
            openmp.forward_fork(self.engine, inst, self.fn, name, args, self.ir)
            return
        if rty == "void" or rty == callee.return_type:
            self.ir.call(rty, f"@{name}", args, name=res, result=bool(res))
            return
        whole = self.ir.call(rty, f"@{name}", args, hint="call")
        if res:
            rt = callee.return_type
            self.ir.extractvalue(rty, whole, [0], rt, name=res)
            if res in self.act.varied or res in self.act.shadowed:
                tag = "sh" if rt == "ptr" else "t"
                for k, t in enumerate(lane_names(res, tag, self.width)):
                    self.ir.extractvalue(rty, whole, [k + 1], rt, name=t)

    def _custom_call(self, inst: Instruction) -> None:
        """A user's forward rule: (x, dx) interleaved for floats and pointers, returning
        {primal, tangent}; called once per lane in vector mode (once in all, when f has a
        batch rule). A rule registered with null shadows gets `ptr null` for a pointer
        without a shadow."""
        name = callee_name(inst)
        rule = self.engine.custom[name]
        res, ty = inst.result, inst.type
        if ty != "void" and not is_float_type(ty):
            raise EnzymeBuildError(f"custom forward rule @{rule.forward} of @{name}: only functions returning "
                                   f"void or a float are supported (this one returns {ty})",
                                   location=self.where(inst))
        if self.width > 1 and rule.forward_batch and ty == "void":
            self._batch_custom_call(inst, rule)
            return
        rty = self.engine.function_return_type(rule.forward)
        if self.named is None:
            self.named = named_types(self.engine.module)
        primal = None
        for k in self.lanes():
            args = []
            for j, (t, v) in enumerate(inst.operands):
                args.append((t, v))
                if is_float_type(t):
                    args.append((t, self.tangents(v, t)[k]))
                elif t == "ptr":
                    if not self.has_shadow(v) and name in self.engine.shadow_outputs:
                        args.append(("ptr", "null"))   # the rule takes a null shadow: constant memory
                        continue
                    if not self.has_shadow(v):
                        raise EnzymeBuildError(
                            f"the custom forward rule @{rule.forward} of @{name} needs a shadow for pointer "
                            f"argument {j + 1}, but that pointer carries no derivative here",
                            location=self.where(inst),
                            hint="pass the memory as enzyme_dup (pointer, shadow) to the differentiated function")
                    args.append(("ptr", self.shadows(v)[k]))
            if ty == "void":
                self.ir.call(rty, f"@{rule.forward}", args, result=False)
                continue
            out = self.ir.call(rty, f"@{rule.forward}", args, hint="cfwd", result=True)
            size = layout(ty, self.named)[0]
            leaves = {o: (t, v) for o, t, v in value_leaves(rty, out, self.named, self.ir)}
            if leaves.get(0, (None,))[0] != ty or leaves.get(size, (None,))[0] != ty or len(leaves) != 2:
                raise EnzymeBuildError(f"custom forward rule @{rule.forward} of @{name} returns {rty}; "
                                       f"expected struct {{{ty} primal; {ty} tangent;}}",
                                       location=self.where(inst))
            if primal is None:
                primal = leaves[0][1]
            if res in self.act.varied:
                self._define(lane_names(res, "t", self.width)[k], ty, leaves[size][1], len(self.ir.into))
        if res and primal is not None:
            self.ir.select("true", ty, primal, primal, name=res)

    def _batch_custom_call(self, inst: Instruction, rule) -> None:
        """Vector mode through a rule registered with a batch forward (blas/): one call, each
        pointer followed by a stack array of its shadows of every lane (null without one),
        then the width -- the routine runs once, not once per lane."""
        name = callee_name(inst)
        saved = self.fresh("stack")
        self.engine.declare("@llvm.stacksave.p0", "declare ptr @llvm.stacksave.p0()")
        self.engine.declare("@llvm.stackrestore.p0", "declare void @llvm.stackrestore.p0(ptr)")
        self.ir.call("ptr", "@llvm.stacksave.p0", [], name=saved)
        args = []
        for j, (t, v) in enumerate(inst.operands):
            args.append((t, v))
            if is_float_type(t):
                raise EnzymeBuildError(f"the batch forward rule @{rule.forward_batch} of @{name} takes a float "
                                       f"argument ({j + 1}); batch rules take pointers and integers only",
                                       location=self.where(inst))
            if t != "ptr":
                continue
            if not self.has_shadow(v):
                args.append(("ptr", "null"))
                continue
            array = f"[{self.width} x ptr]"
            lanes = self.ir.alloca(array, hint="lanes")
            for k, sh in enumerate(self.shadows(v)):
                slot = self.ir.gep(array, lanes, [("i64", "0"), ("i64", str(k))], hint="lane")
                self.ir.store("ptr", sh, slot)
            args.append(("ptr", lanes))
        args.append(("i32", str(self.width)))
        self.ir.call("void", f"@{rule.forward_batch}", args)
        self.ir.call("void", "@llvm.stackrestore.p0", [("ptr", saved)])


# constructs forward mode refuses: (how the message names them, the fix that applies)
_UNSUPPORTED = {
    "invoke": ("a call that may throw (C++ exceptions, 'invoke')",
               "build C++ code with -fno-exceptions, or mark the function inactive"),
    "resume": ("exception propagation ('resume')", "build C++ code with -fno-exceptions, or mark the function inactive"),
    "indirectbr": ("a computed goto ('goto *p', 'indirectbr')",
                   "use a switch over the targets instead of a table of label addresses"),
    "callbr": ("'asm goto' ('callbr')", "move the assembly into a function with a custom derivative rule"),
    "cmpxchg": ("an atomic read-modify-write on a float ('cmpxchg', e.g. `_Atomic double x; x += v;`)",
                "accumulate into a plain double (per thread, e.g. _Thread_local) and combine afterwards"),
    "atomicrmw": ("an atomic read-modify-write on a float ('atomicrmw', e.g. `_Atomic double x; x += v;`)",
                  "accumulate into a plain double (per thread, e.g. _Thread_local) and combine afterwards"),
}


def _alignment(inst: Instruction) -> int | None:
    """The `align` a parsed memory instruction states, for its shadow's access."""
    m = _ALIGN_RE.search(inst.text)
    return int(m.group(1)) if m else None


def _memset_for(nty: str) -> str:
    return f"@llvm.memset.p0.{nty}"
