"""Reverse-mode derivative synthesis for one function (combined or split into two pieces).

Combined (`diffe_<f>`): the forward sweep clones f (plus shadow pointers and caching),
each `ret` jumps into the reverse sweep, which walks blocks backwards (recorded
predecessor indices choose the way back) and instructions backwards, accumulating
adjoints as SSA values (values used only in their own block) or in allocas ("diffe slots"). Split: `augmented_<f>` runs the forward sweep and
keeps what the reverse needs on a tape passed in; `reverse_<f>` reads it back.
What the reverse sweep reads, and how it is kept, is decided by the generator's cache
planner (`self.cache`, ad/cache.py: `fetch` a forward value in a reverse block, `place` the
caches once both sweeps are known).
"""
from __future__ import annotations

import re

from ..analysis.activity import (ALLOCATORS, DEALLOCATORS, analyze_activity, callee_name, shadow_is_primal,
                                 global_base, pointer_global, pointer_roots)
from ..analysis.cfg import analyze_cfg, deciding_branch, returning_blocks
from ..analysis.library import NODE_LINKERS, shadow_allocator
from ..analysis.speculation import speculated_values
from ..analysis.types import (bits_stay_integer, check_memory_access, check_mixed_aggregates, check_vector_operands, float_views, only_reaches_integers, pointer_as_integer, strip_punned_tbaa, memcpy_element_kind,
                              memcpy_record_type, string_characters)
from ..errors import EnzymeBuildError, InternalError
from ..ir.builder import InsertPoint, IRBuilder, print_instruction
from ..custom.registry import check_rule_arity
from ..ir.model import (Function, Instruction, aggregate_elements, byval_attributes, fast_math_flags, float_leaves, pointer_leaves, is_float_type, is_local,
                        make_name)
from .abi import Signature
from .diagnostics import (active_argument_not_a_float, refuse_aliased_global_pointer_loads,
                          float_bits_travel, lost_active_store, refuse_lost_call_stores, refuse_mixed_shadow_merges,
                          refuse_unshadowed_pointer,
                          refuse_untracked_loads, warn_dropped_const_paths, uncallable_pointer)
from . import openmp
from .indirect import derived_callee, uncallable
from .sweep import (DROP, FREE, INACTIVE, RuleOperands, classify_call, mirror_node_call, shadow_release, zero_of,
                    zeroed_shadow_block)
from .rules import INSTRUCTION_RULES, Builder, float_constant, fused_fmul_rule, math_rule
from .cache import (FRAME_OFFSET, TAPE, CachePlanner, cache_plans_wanted,
                    released_pointer)
from .tape import CELL_BYTES, TAPE_TYPE

DRET = "%dret$"
# the reverse sweep's last block; `$` keeps it apart from every `rev$<block>` and from the
# primal's own labels (a C label `exit:` names a block `exit`, whose reverse is `rev$exit`)
EXIT_LABEL = "%exit$"
_DBG_RE = re.compile(r',\s*!dbg\s+!\d+')
# pure instructions the reverse sweep recomputes instead of caching
# instructions that may read an active value without passing a derivative on (or that the
# reverse sweep handles itself); any other instruction reading one is refused
_CONSUMES_ACTIVE_SAFELY = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fpext", "fptrunc", "fptosi",
                           "fptoui", "fcmp", "select", "phi", "load", "store", "call", "ret", "freeze",
                           "bitcast", "extractvalue", "insertvalue", "br", "switch", "getelementptr",
                           "alloca", "icmp", "ptrtoint", "addrspacecast"}


# instructions whose reverse neither reads nor overwrites shadow memory (a load's reverse
# adds into it, which commutes with other additions): `ReverseGenerator._carried_loads`
_SHADOW_PURE = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fpext", "fptrunc", "fptosi", "fptoui",
                "sitofp", "uitofp", "fcmp", "icmp", "select", "getelementptr", "bitcast", "freeze", "add",
                "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor", "sext", "zext", "trunc",
                "extractvalue", "insertvalue", "load", "ptrtoint", "inttoptr"}
_PURE_INTRINSIC_RE = re.compile(r"^@llvm\.(fmuladd|fma|fabs|sqrt|exp|exp2|log|log2|log10|sin|cos|pow|powi|"
                                r"minnum|maxnum|minimum|maximum|copysign|floor|ceil|trunc|rint|round|"
                                r"nearbyint|assume|lifetime|dbg)\b")


def _pure_for_shadows(inst) -> bool:
    if inst.opcode in _SHADOW_PURE:
        return "volatile" not in inst.flags if inst.opcode == "load" else True
    return inst.opcode == "call" and bool(inst.callee) and bool(_PURE_INTRINSIC_RE.match(inst.callee))


def _is_point(item, kind: str) -> bool:
    return isinstance(item, InsertPoint) and item.kind == kind


def shadow_param(name: str) -> str:
    return make_name("%", name, "sh")


def adjoint_type(fn: Function, sig: Signature) -> str:
    outs = [p.type for p, a in zip(fn.params, sig.args) if a == "out" and is_float_type(p.type)]
    if not outs:
        return "void"
    if len(outs) == 1:
        return outs[0]
    return "{ " + ", ".join(outs) + " }"


def caller_shadow_param(name: str) -> str:
    """The caller's shadow of a `byval` parameter (the body uses a private copy, `shadow_param`)."""
    return make_name("%", name, "shin")


def byval_type(param) -> str | None:
    """T of a `byval(T)` parameter, or None."""
    attrs = byval_attributes(param)
    if not attrs:
        return None
    return attrs[len("byval("):attrs.rindex(")")]


def derived_params(fn: Function, sig: Signature) -> list[tuple[str, str]]:
    """A struct passed by value in memory keeps `byval(T) align N`: the callee may write its
    private copy. Its shadow arrives as the caller's shadow pointer; the body works on a
    private shadow copy whose adjoints flow back at the end of the reverse sweep."""
    out = []
    for p, a in zip(fn.params, sig.args):
        byval = byval_attributes(p)
        out.append((f"ptr {byval}" if byval else p.type, p.name))
        if a in ("dup", "dupnoneed"):
            out.append(("ptr", caller_shadow_param(p.name) if byval else shadow_param(p.name)))
    return out


def accumulation_flags(primal_flags: str) -> str:
    """The fast-math flags of an `fadd` that adds a contribution to an adjoint: the primal
    instruction's own flags plus `reassoc`. An adjoint is the sum of the contributions of
    every use of its value; the source fixes no order for that sum (the primal's order is
    already lost: contributions arrive in reverse), so the engine may choose it. With
    `reassoc` on the accumulation alone, a loop-carried adjoint (the adjoint of a value used
    in every iteration, such as `mag(in)` in `out[i] = in[i] / mag(in)`) is a reduction the
    loop vectorizer may split into lanes; without it the reverse loop runs one add latency per
    iteration. The flag is on the accumulation only: the contributions keep the primal's
    arithmetic exactly."""
    words = primal_flags.split()
    if "fast" in words or "reassoc" in words:
        return primal_flags
    return " ".join(["reassoc", *words])


def adjoint_zero(ty: str) -> str:
    """What an adjoint slot holds before anything is added to it: -0.0 for double and float,
    the identity of addition (`-0.0 + x` is `x` for every x, so the optimizer folds the first
    accumulation into a slot to the contribution itself; `+0.0 + x` is not `x` for x = -0.0
    and stays an `fadd` in every adjoint of the final code)."""
    # spelled here: float_constant is memoized and -0.0 == 0.0 as a key
    return _NEGATIVE_ZERO.get(ty) or zero_of(ty)


_NEGATIVE_ZERO = {"double": "0x8000000000000000", "float": "0x8000000000000000"}


class ReverseGenerator:
    """Builds the text of diffe_<f> (combined) or augmented_<f> + reverse_<f> (split)."""

    def __init__(self, engine, fn: Function, sig: Signature, split: bool):
        self.engine, self.fn, self.sig, self.split = engine, fn, sig, split
        if any(p.type == "..." for p in fn.params):
            raise EnzymeBuildError(f"cannot differentiate the variadic function @{fn.name}",
                                   location=engine.location_of_function(fn),
                                   hint="give it a fixed parameter list, or mark it inactive")
        openmp.prepare(engine, fn)
        self.footprint = None   # OpenMP: thread-private address ranges of a forked function
        self.private_memory = None
        self.custom_tapes: dict[int, str] = {}   # custom augment call -> its tape
        self.fork_tapes: dict[int, str] = {}     # OpenMP fork -> its per-thread tapes
        self.tape_handed_in: set[str] = set()    # forward blocks that pass the tape to a callee
        # run by every thread of a team: adjoints of shared memory are added atomically
        self.parallel = fn.name in openmp.parallel_functions(engine)
        if self.parallel:
            openmp.refuse_unsupported(engine, fn, "reverse")
            self.private_memory = openmp.PrivateAccesses(fn, pointer_roots)
            if split and fn.name in openmp.fork_targets(engine):
                self.footprint = openmp.Footprint(self)
        self.cfg = analyze_cfg(fn)
        self._returning = returning_blocks(fn)
        self.views = float_views(fn, engine.module)
        # integer copies of bytes that hold pointers (and integers): the forward sweep moves
        # the shadow's bytes with them (`pointer_carriers`), as a memcpy of pointers does
        self.pointer_carriers = engine.pointer_words(fn)
        self.carried_bits: dict[str, str] = {}
        strip_punned_tbaa(fn, engine.module, self.views)
        self.act = analyze_activity(fn, list(sig.args), defined=engine.differentiable,
                                    inactive=engine.inactive, custom=engine.custom,
                                    active_globals=set(engine.active_globals), views=self.views,
                                    returns_shadow=engine.returns_shadow,
                                    ret_needs_shadow=sig.ret_shadow, global_users=engine.global_users,
                                    shadow_outputs=engine.shadow_outputs, slot_writes=engine.writes_through,
                                    pointer_words=self.pointer_carriers)
        self.counter = 0
        self.types: dict[str, str] = {p.name: p.type for p in fn.params}
        for inst in fn.instructions():
            if inst.result:
                self.types[inst.result] = inst.type
        # integers carrying float data take their float type for adjoints
        self.types.update(self.views)
        self.params = {p.name for p in fn.params} | {shadow_param(p.name) for p in fn.params}
        self.home: dict[str, str] = {}           # generated forward values -> block
        for p, _ in self._byval_dups():
            # the private shadow copy is made in the entry block; split pieces keep it on the heap
            # and pass it to the reverse piece like any other forward value
            self.types[shadow_param(p.name)] = "ptr"
            if split:
                self.params.discard(shadow_param(p.name))
                self.home[shadow_param(p.name)] = fn.blocks[0].label
        self._check_precisions()
        self._check_integer_views()
        refuse_untracked_loads(engine, fn, self.act, "derivative")
        warn_dropped_const_paths(engine, fn, self.act)
        for inst in self.act.lost_stores:
            self._refuse_global_pointer_store(inst)
            raise lost_active_store(engine, fn, inst)
        for inst in self.act.lost_copies:
            if memcpy_element_kind(self, inst) != "int":
                raise lost_active_store(engine, fn, inst)
        refuse_lost_call_stores(engine, fn, self.act, sig.args)
        refuse_mixed_shadow_merges(engine, fn, self.act)
        refuse_aliased_global_pointer_loads(engine, fn, self.act, "derivative")
        self.diffe_slots: dict[str, str] = {}
        self.fmf = ""   # fast-math flags of the instruction being reversed
        # values a select (or min/max) may leave unchosen: their partials get a strong zero
        self.speculated = speculated_values(fn)
        # adjoints kept as SSA values in their block's reverse (no slot): value -> running sum
        self.local_adjoints: set[str] = set()
        self.register_adjoints: dict[str, str] = {}
        # what each adjoint slot holds at the end of the lines last written about it:
        # slot -> (those lines, the value, index there of the store that put it: nothing has
        # read the slot since)
        self.slot_contents: dict[str, tuple[list, str, int]] = {}
        self.slot_stores: dict[str, list[str]] = {b.label: [] for b in fn.blocks}
        self.fwd: dict[str, list[str]] = {}
        self.fwd_term: dict[str, list[str]] = {}
        self.rev: dict[str, list[str]] = {}
        self.rev_term: dict[str, list[str]] = {}
        self.edge_blocks: list[tuple[str, list[str]]] = []
        self.pred_index: dict[str, str] = {}
        self.freed_roots = self._freed_allocations()
        self.realloc_copied: dict[str, str] = {}   # realloc result -> bytes copied from the old shadow
        # exit-edge insertion points -> (loop header, pred, exit, the lines holding the point)
        self.exit_markers: dict[InsertPoint, tuple] = {}
        self._kinds: dict[int, str] = {}
        self._escaped: set[str] | None = None
        self.shadow_primal: dict[str, str] = {}  # shadow name -> primal pointer
        # loads of the block being reversed whose shadow update waits for its end, and those
        # updates (`_carried_loads`)
        self._deferred_loads: frozenset = frozenset()
        self._deferred_accumulations: list[tuple[str, str, str, str]] = []
        # what the reverse sweep reads and how it is kept (ad/cache.py), made last: it reads
        # the sweep's state
        self.cache = CachePlanner(self)

    def _undo_current(self, store: Instruction) -> str:
        """Split mode: the name of what an undone store's memory held when the reverse piece
        undid it (read there, written back when the piece ends)."""
        return make_name("%", self.cache.undone_stores[id(store)], "cur")

    def _refuse_global_pointer_store(self, inst: Instruction) -> None:
        """An active store through a pointer held in a global (a workspace kept in `static
        double *w`): the global has no shadow, so neither has the memory; say which global."""
        g = pointer_global(self.fn, inst.operands[1][1], self.act.shadowed)
        if g is None:
            return
        name = g[1:].strip('"')
        owner, _, var = name.partition(".")
        line = self.engine.module.globals.get(name, "")
        held = re.search(r'\b(?:global|constant)\s+(\S+)', line.split("=", 1)[-1])
        rest = ("pass the workspace to the differentiated function as a parameter (enzyme_dup with a "
                "zeroed shadow buffer of the same size), or allocate it inside the differentiated function")
        if var and owner in self.engine.module.functions:
            what, decl = f"the static variable '{var}' of {owner}", var
        elif var.isdigit():
            # LLVM splits a struct global into one global per member, named `M.0`, `M.1`, ...;
            # the registration names whole pointer globals only
            what, decl = f"a pointer member of the global '{owner}' (LLVM splits a struct global into one " \
                         f"global per member)", None
        elif held and held.group(1) != "ptr":
            what, decl = f"a pointer member of the global '{name}'", None
        else:
            what, decl = f"the global '{name}'", name
        if decl is not None:
            hint = (f"declare a shadow pointer for it and point that at a zeroed buffer of the same size "
                    f"(`double *d_{decl}; void *__enzyme_shadow_global_{decl}[2] = {{&{decl}, &d_{decl}}};` "
                    f"or `__attribute__((enzyme_shadow(d_{decl})))` on it), " + rest)
        else:
            hint = ("keep the workspace pointer in a global of its own (`double *work;`) and declare a shadow "
                    "pointer for that (`double *d_work; void *__enzyme_shadow_global_work[2] = {&work, &d_work};` "
                    "pointing at a zeroed buffer of the same size), " + rest)
        raise EnzymeBuildError(
            f"an active value is stored through the pointer held in {what} (@{name}), and enzyme-build "
            f"cannot give that memory a shadow: globals holding pointers have none unless one is declared "
            f"({inst.text.split(', !', 1)[0].strip()} in @{self.fn.name})",
            location=self.engine.location(inst) or f"@{self.fn.name}",
            hint=hint)

    def _check_integer_views(self) -> None:
        """A float's bits carried in an integer (a view) must reach a float again through a
        bitcast or memory; packing it with other bits (a {float, int} struct in one register)
        would silently drop its derivative, so that is an error."""
        varied = self.act.varied
        # in program order (a walk of the set would visit the instructions at random)
        integers = [p.name for p in self.fn.params if p.name in varied and p.type.startswith("i")]
        integers += [i.result for i in self.fn.instructions()
                     if i.result and i.type[:1] == "i" and i.result in varied]
        if not integers:
            return
        users = self.fn.users()
        for v in integers:
            for u in users.get(v, []):
                if u.opcode in ("bitcast", "store", "load", "getelementptr", "icmp", "call") or (
                        u.result and u.result in self.act.varied):
                    continue
                if u.result and u.type.startswith("i") and bits_stay_integer(self.fn, u.result):
                    continue
                if u.opcode in ("br", "switch"):
                    continue
                raise float_bits_travel(self.fn, v, u, self.engine.location(u))

    def _check_precisions(self) -> None:
        """Only double, float and x86 long double carry derivatives (half, fp128 do not)."""
        if not any("fp128" in ty or "half" in ty or "bfloat" in ty for ty in set(self.types.values())):
            return
        for v in self.act.varied:
            ty = self.types.get(v, "double")
            if "fp128" in ty or "half" in ty or "bfloat" in ty:
                inst = self.fn.defs.get(v)
                raise EnzymeBuildError(
                    f"cannot differentiate {ty} arithmetic ({v} in @{self.fn.name})",
                    location=self.engine.location(inst) if inst else f"@{self.fn.name}",
                    hint="use double or float for the values being differentiated")

    # ------------------------------------------------------------------ names
    def fresh(self, hint: str = "t") -> str:
        self.counter += 1
        return f"%{hint}${self.counter}"

    def ir(self, lines: list[str]) -> IRBuilder:
        """A builder making instructions at the end of `lines` (the sweeps still assemble
        text: each instruction is printed as it is made, see docs/engine.md "IR as values")."""
        return IRBuilder(self.fresh, lines, True)

    def shadow(self, value: str) -> str:
        """The shadow of a pointer operand in the forward sweep."""
        if value in self.params and value in self.act.shadowed:
            return shadow_param(value)
        if not is_local(value):
            g = global_base(value)
            if g is not None and g in self.act.shadowed:
                self.engine.shadow_globals_used.add(g)
                return re.sub(re.escape(g) + r'(?![-\w$.])', make_name("@", g, "sh"), value)
            return value
        if value in self.act.shadowed:
            name = make_name("%", value, "sh")
            self.shadow_primal[name] = value
            return name
        return value  # null / constant memory / unshadowable: the primal itself

    def diffe_slot(self, value: str) -> str:
        if value not in self.diffe_slots:
            self.diffe_slots[value] = make_name("%", value, "d")
        return self.diffe_slots[value]

    def rev_label(self, block: str) -> str:
        return make_name("%", "rev", block)

    def def_block(self, value: str) -> str | None:
        """The forward block defining a value (or the primal of a shadow)."""
        if value in self.home:
            return self.home[value]
        inst = self.fn.defs.get(self.shadow_primal.get(value, value))
        return inst.block if inst else None

    # ------------------------------------------------------------------ caching







    # ------------------------------------------------------------------ adjoints
    def _local_adjoint_values(self) -> set[str]:
        """Float values whose every use is in their own block (and not a phi): the reverse of
        that block sees all their adjoint contributions before their definition, so their
        adjoints are SSA values there (a running sum) rather than slots loaded and stored
        around every contribution. OpenMP-parallel functions keep slots (their reductions
        read slots by name)."""
        if self.parallel:
            return set()
        users = self.fn.users()
        local = set()
        for inst in self.fn.instructions():
            v = inst.result
            if not v or inst.opcode == "phi" or v not in self.act.varied or not is_float_type(inst.type) \
                    or not is_float_type(self.types.get(v, "")):
                continue
            if all(u.block == inst.block and u.opcode != "phi" for u in users.get(v, [])):
                local.add(v)
        return local

    def take_adjoint(self, value: str, lines: list[str]) -> str:
        ty = self.types[value]
        if value in self.local_adjoints:
            return self.register_adjoints.pop(value, None) or adjoint_zero(ty)
        slot = self.diffe_slot(value)
        known = self._slot_known(slot, lines)
        name = known[1] if known is not None else self.ir(lines).load(ty, slot, align=8, hint="dr")
        self._store_slot(ty, adjoint_zero(ty), slot, lines, known)
        return name

    def accumulate(self, value: str, contrib: str, lines: list[str]) -> None:
        if not is_local(value) or value not in self.act.varied:
            return
        ty = self.types[value]
        if value in self.local_adjoints:
            current = self.register_adjoints.get(value)
            self.register_adjoints[value] = contrib if current is None else self._add(ty, current, contrib, lines)
            return
        zero = _NEGATIVE_ZERO.get(ty)
        if contrib == zero:   # x + -0.0 is x, for every x
            return
        slot = self.diffe_slot(value)
        known = self._slot_known(slot, lines)
        old = known[1] if known is not None else self.ir(lines).load(ty, slot, align=8, hint="da")
        new = contrib if old == zero else self._add(ty, old, contrib, lines)   # -0.0 + x is x
        self._store_slot(ty, new, slot, lines, known)

    # Within one list of lines (a block's reverse, an edge), an adjoint slot's contents are
    # known after the first load or store of it: later contributions and the final read use
    # that value instead of loading it again, and a store that nothing read before the next
    # one is dropped. Each list still ends with the slot's value in memory, which is all the
    # other blocks see. (OpenMP-parallel functions read their partial-sum slots by name
    # elsewhere: there every access stays.)
    def _slot_known(self, slot: str, lines: list[str]) -> tuple[list, str, int] | None:
        if self.parallel:
            return None
        known = self.slot_contents.get(slot)
        return known if known is not None and known[0] is lines else None

    def _store_slot(self, ty: str, value: str, slot: str, lines: list[str], known) -> None:
        if known is not None:
            at = known[2]
            if at < len(lines) and isinstance(lines[at], str) and lines[at].startswith("  store ") \
                    and lines[at].endswith(f"ptr {slot}, align 8"):
                lines[at] = ""   # overwritten before anything read it (dropped when the text is assembled)
        self.ir(lines).store(ty, value, slot, align=8)
        self.slot_contents[slot] = (lines, value, len(lines) - 1)

    def _add(self, ty: str, a: str, b: str, lines: list[str]) -> str:
        """a + b for floats, elementwise for aggregates of floats. The sum is an adjoint
        accumulation: its order is the engine's choice (see `accumulation_flags`)."""
        if is_float_type(ty):
            return self.ir(lines).binop("fadd", ty, a, b, accumulation_flags(self.fmf), hint="da")
        agg = a
        for i, ety in enumerate(aggregate_elements(ty)):
            x = self.ir(lines).extractvalue(ty, a, [i], ety, hint="ea")
            y = self.ir(lines).extractvalue(ty, b, [i], ety, hint="eb")
            s = self._add(ety, x, y, lines)
            agg = self.ir(lines).insertvalue(ty, agg, ety, s, [i], hint="ei")
        return agg

    def accumulate_memory(self, shadow_ptr: str, ty: str, contrib: str, lines: list[str],
                          primal: str | None = None, label: str | None = None) -> None:
        if self.parallel and openmp.accumulate_shared(self, shadow_ptr, ty, contrib, lines, primal, label):
            return
        ir = self.ir(lines)
        old = ir.load(ty, shadow_ptr, hint="dm")
        # `nsz` besides `reassoc`: the adjoint of an in-place update `a[i] = f(a[i], ...)`
        # zeroes the shadow cell and adds the old value's adjoint back into it; the
        # optimizer folds the `+0.0 + ds` it sees only when the sign of a zero may be
        # ignored, and then the pair is a store of the value just loaded, which it drops.
        # Left in place, that store is a loop-carried dependence through memory which
        # keeps the reverse loop scalar. A sum that is zero may come out as -0.0 instead
        # of +0.0; no derivative value changes.
        new = ir.binop("fadd", ty, old, contrib, "reassoc nsz", hint="dm")
        ir.store(ty, new, shadow_ptr)

    # ------------------------------------------------------------------ driver
    def release(self) -> None:
        """Drop the planner's reference back to this sweep once the function is generated:
        the cycle would keep every analysis of the function alive until the cyclic collector
        runs (see driver._cyclic_gc_paused)."""
        self.cache.sweep = None

    def generate(self) -> list[str]:
        self.local_adjoints = self._local_adjoint_values()
        for p, a in zip(self.fn.params, self.sig.args):
            if a == "out" and p.name in self.act.varied:
                self.diffe_slot(p.name)
        for block in self.fn.blocks:
            self._forward_block(block)
        self.cache.prepare_static_records()
        self._index_loop_edges()
        for block in self.fn.blocks:
            self._reverse_block(block)
        self.cache.fill_exit_edges()
        freed = self._deferred_free_pointers()
        self.cache.place()
        if cache_plans_wanted():
            names = self.engine.names_for(self.fn, self.sig, self.split)
            CachePlanner.announce(self.cache.describe(
                f"{names['augmented']} / @{names['reverse']}" if self.split else names["combined"]))
        for inst in self.cache.deferred_frees.values():   # the reverse sweep reads that memory again
            self.fwd[inst.block].remove(print_instruction(inst))   # the line its copy printed
        if set(self.cache.deferred_frees) != set(freed):
            raise InternalError(f"a free in @{self.fn.name} was deferred after the cache plan was made")
        self.freed_pointers = freed
        return self._assemble()

    def _deferred_free_pointers(self) -> dict[int, dict[str, str]]:
        """The operands of each deferred free as the end of the reverse sweep names them
        (forward value -> name). A combined function uses the forward values themselves; a
        reverse piece fetches them in the reverse of the free's own block, so the frame record
        keeps them from the augmented piece: the pointer, which may be merged after the entry
        block (buffers swapped in a loop, freed after it), and any other operand (the size a
        sized `operator delete(void *, size_t)` takes). A deferred free's block runs once and
        dominates every return (`cache._defer_frees`), so every way back to `exit$` passes
        through the reverse of that block."""
        out: dict[int, dict[str, str]] = {}
        for key, inst in self.cache.deferred_frees.items():
            values = dict.fromkeys([released_pointer(inst), *(v for v in inst.values() if is_local(v))])
            out[key] = {v: self.cache.fetch(v, inst.block) if self.split else v for v in values}
        return out

    def _freed_allocations(self) -> set[str]:
        freed = set()
        for inst in self.fn.of_opcode("call"):
            if (inst.callee in DEALLOCATORS or inst.callee == "@realloc") and inst.operands:
                freed |= pointer_roots(self.fn, inst.operands[0][1])
        return freed

    # ------------------------------------------------------------------ forward sweep
    def _forward_block(self, block) -> None:
        lines: list[str] = []
        self.fwd[block.label] = lines
        preds = self.cfg.preds[block.label]
        inserted_index = False
        for inst in block.instructions[:-1]:
            if inst.opcode != "phi" and not inserted_index:
                self._insert_pred_index(block.label, preds, lines)
                inserted_index = True
            self._forward_instruction(inst, lines)
        if not inserted_index:
            self._insert_pred_index(block.label, preds, lines)
        self.fwd_term[block.label] = self._forward_terminator(block)

    def _insert_pred_index(self, label, preds, lines) -> None:
        if len(preds) < 2:
            return
        name = f"%pidx${len(self.pred_index)}"
        self.pred_index[label] = name
        self.home[name] = label
        ivs = self.cache.canonical_ivs(label, preds)
        if ivs:
            loop = self.cfg.loop_of[label]
            primary = next((iv for iv in ivs if iv[0] == loop.iv), ivs[0])
            self.cache.header_index[name] = primary
        elif (decided := deciding_branch(self.fn, self.cfg, label)) is not None:
            cond, when_true, when_false = decided
            self.cache.branch_index[name] = (cond, preds.index(when_true), preds.index(when_false))
        # each IV's `add` to its next value, from the latch
        steps = {iv[0]: self.fn.defs[next(v for v, b in self.fn.defs[iv[0]].incoming if b == preds[iv[3]])]
                 for iv in ivs}
        for iv in ivs:
            # the loop's counting IV is replayed from a counter slot; one stepping beside it
            # at a constant distance (`i + 1` kept as a phi of its own) is that counter plus
            # the distance, so the optimizer sees both index the same iteration (see
            # CachePlanner.derive_iv); any other from its own slot
            if self.cache.derive_iv(iv, primary, loop, steps):
                continue
            slot = make_name("%", iv[0], "ivslot")
            self.cache.iv_loops[iv[0]] = (loop, steps[iv[0]].operands[1][1], slot, preds[iv[3]])
        incoming = []
        for i, p in enumerate(preds):
            incoming += [(str(i), p)] * self.cfg.edge_count[(p, label)]
        self.ir(lines).phi("i32", incoming, name=name)
        self.types[name] = "i32"

    def _forward_terminator(self, block) -> list[str]:
        term = block.terminator
        if term.opcode == "ret":
            if self.split:
                out = []
                if len(self.cfg.returns) > 1:
                    out += self.cache.push_lines([(str(self.cfg.returns.index(block.label)), "i32")])
                out.append(InsertPoint("frame push"))   # the frame record's offset, once laid out
                if self.sig.ret_shadow:
                    v = term.operands[0][1]
                    a = self.ir(out).insertvalue("{ ptr, ptr }", "poison", "ptr", v, [0], hint="ret")
                    shadow = self._shadow_or_fail(v, term)
                    b = self.ir(out).insertvalue("{ ptr, ptr }", a, "ptr", shadow, [1], hint="ret")
                    self.ir(out).ret("{ ptr, ptr }", b)
                    return out
                self.ir(out).copy(term)
                return out
            out = []
            self.ir(out).br(f"rev${block.label}")   # self.rev_label(block.label)
            return out
        if term.opcode in ("invoke", "callbr", "indirectbr", "resume"):
            raise EnzymeBuildError(f"cannot differentiate through '{term.opcode}' in @{self.fn.name}",
                                   location=self.engine.location(term),
                                   hint="build C++ code with -fno-exceptions, or mark the function inactive")
        out = []
        self.ir(out).copy(term)
        return out

    def _forward_instruction(self, inst: Instruction, lines: list[str]) -> None:
        op, res = inst.opcode, inst.result
        if op == "call" and self._call_kind(inst) in ("derived", "custom"):
            self._forward_active_call(inst, lines)
            return
        if op == "call":
            self._check_call(inst)
        if op in ("load", "store"):
            check_memory_access(self, inst)
        where = lambda: self.engine.location(inst)   # noqa: E731  (only for an error)
        check_vector_operands(self.fn, inst, self.act.varied, where)
        check_mixed_aggregates(self.fn, inst, self.act.varied, where)
        if op == "store" and id(inst) in self.cache.undone_stores:
            (vty, _), (_, p) = inst.operands
            self.ir(lines).load(vty, p, name=self.cache.undone_stores[id(inst)])
        retarget = derived_callee(inst, self.act.varied, self.act.has_shadow) if op == "call" else {}
        if not retarget and op == "call" and uncallable(inst):
            uncallable_pointer(self.engine, self.fn, inst)
        if retarget:
            self.ir(lines).clone(inst, mapping=retarget)
        else:
            self.ir(lines).copy(inst)
        if op == "call" and callee_name(inst) in NODE_LINKERS and \
                any(t == "ptr" and self._ptr_shadowed(v) for t, v in inst.operands):
            mirror_node_call(self.engine, self.fn, self.ir(lines), inst, self.shadow, self._ptr_shadowed,
                             self.shadow(res) if res and res in self.act.shadowed else None)
        if self.footprint is not None:
            self.footprint.record(inst, lines)
        if res and res in self.act.shadowed and res not in self.cache.reverse_local and \
                not (op == "call" and (self._call_kind(inst) in ("derived", "custom")
                                       or callee_name(inst) in NODE_LINKERS)):
            self._forward_shadow(inst, lines)
        if op == "load" and res and res in self.pointer_carriers and self._ptr_shadowed(inst.operands[0][1]):
            # an integer copy of bytes holding pointers: the shadow's bytes go along
            self.carried_bits[res] = self.ir(lines).load(inst.type, self.shadow(inst.operands[0][1]), hint="ptrbits")
        if op == "store":
            (vty, v), (_, p) = inst.operands
            if v in self.pointer_carriers and self._ptr_shadowed(p):
                self.ir(lines).store(vty, self.carried_bits.get(v, "0"), self.shadow(p))
            if vty == "ptr" and self._ptr_shadowed(p):
                self.ir(lines).store("ptr", self._shadow_or_fail(v, inst), self.shadow(p), align=8)
            elif self._ptr_shadowed(p) and (x := pointer_as_integer(self.fn, v)) and self.act.has_shadow(x):
                # a pointer kept as an integer (Eigen's evaluators, uintptr_t fields): its
                # shadow goes into the shadow memory the same way
                t = self.ir(lines).cast("ptrtoint", "ptr", self.shadow(x), vty, hint="shint")
                self.ir(lines).store(vty, t, self.shadow(p), align=8)
        if op == "call" and inst.callee and ("llvm.memcpy" in inst.callee or "llvm.memmove" in inst.callee):
            d, s = inst.operands[0][1], inst.operands[1][1]
            kind = memcpy_element_kind(self, inst) if self._ptr_shadowed(d) else None
            if kind == "pointer":
                self.ir(lines).call("void", "@llvm.memcpy.p0.p0.i64", [("ptr", self.shadow(d)), ("ptr", self.shadow(s)),
                                                                         inst.operands[2], ("i1", "false")])
                self.engine.declare("@llvm.memcpy.p0.p0.i64")
            elif kind == "record" and self._ptr_shadowed(s):
                record = memcpy_record_type(self, inst, with_pointers=True)
                if record is not None:   # records holding pointers: copy the pointers' shadows
                    helper = self._record_helper(record, "ptrcopy")
                    self.ir(lines).call("void", helper, [("ptr", self.shadow(d)), ("ptr", self.shadow(s)),
                                                         inst.operands[2]])

    def _shadow_or_fail(self, v: str, inst: Instruction) -> str:
        """The shadow of a pointer that is stored into active memory or returned."""
        if v in ("null", "poison", "undef") or self.act.has_shadow(v):
            return self.shadow(v) if v not in ("null", "poison", "undef") else "null"
        if shadow_is_primal(self.engine.module, v, self.fn):   # a function or a vtable
            return v
        if string_characters(self.engine.module, self.fn, v):   # a std::string's characters
            return "null"
        refuse_unshadowed_pointer(self.engine, self.fn, v, inst)

    def _ptr_shadowed(self, p: str) -> bool:
        return self.act.has_shadow(p)

    def _heap_shadow(self, alloca: Instruction) -> bool:
        """Whether the shadow of a stack array is a zeroed heap block, freed where the reverse
        sweep passes the array: in split pieces (the stack is gone between the two), and in
        combined mode for an array a `llvm.stackrestore` may release (`stack_may_release`: a
        C99 variable-length array): the forward sweep's restore would hand its shadow's bytes
        to the next frame while the reverse sweep still accumulates into them."""
        return self.split or self.cache.stack_may_release(alloca)

    def _forward_shadow(self, inst: Instruction, lines: list[str]) -> None:
        op, res = inst.opcode, inst.result
        sh = self.shadow(res)
        if op == "alloca":
            size = f"ptrtoint (ptr getelementptr ({inst.source_type}, ptr null, i32 1) to i64)"
            ir = self.ir(lines)
            if inst.operands:
                cty, cnt = inst.operands[0]
                n = ir.cast("zext", cty, cnt, "i64", hint="n") if cty != "i64" else \
                    ir.binop("add", "i64", cnt, "0", hint="n")
                size = ir.binop("mul", "i64", n, size, hint="n")
            if self._heap_shadow(inst):
                ir.call("ptr", "@calloc", [("i64", "1"), ("i64", size)], name=sh)
                self.engine.declare("@calloc")
            else:
                ir.clone(inst, result=sh)
                ir.call("void", "@llvm.memset.p0.i64", [("ptr", sh), ("i8", "0"), ("i64", size), ("i1", "false")])
                self.engine.declare("@llvm.memset.p0.i64")
        elif op == "call" and inst.callee in ALLOCATORS:
            name = callee_name(inst)
            args = [v for _, v in inst.operands]
            ir = self.ir(lines)
            if name == "realloc" and not shadow_allocator(name)[0]:
                # a fresh zeroed shadow holding a copy of the old one; the old shadow stays
                # alive for the reverse sweep of the code before the realloc
                old = self.shadow(args[0])
                self.engine.support.add("__enzyme_build_shadow_realloc")
                ir.call("ptr", "@__enzyme_build_shadow_realloc", [("ptr", old), ("i64", args[1])], name=sh)
                n_copy = ir.call("i64", "@__enzyme_build_shadow_copied", [("ptr", old), ("i64", args[1])],
                                 hint="rcopy")
                self.types[n_copy] = "i64"
                self.home[n_copy] = inst.block
                self.realloc_copied[inst.result] = n_copy
            else:
                zeroed_shadow_block(self.engine, ir, name, args, sh)
        elif op in ("getelementptr", "bitcast", "addrspacecast", "freeze"):
            base = inst.operands[0][1]
            self.ir(lines).clone(inst, result=sh, mapping={base: self.shadow(base)})
        elif op == "phi":
            # every incoming value's shadow: a written global's is its shadow global (the
            # global itself would take the adjoints into the primal data)
            self.ir(lines).phi("ptr", [(self.shadow(v), b) for v, b in inst.incoming], name=sh)
        elif op == "select":
            c = inst.operands[0][1]
            a, b = inst.operands[1][1], inst.operands[2][1]
            self.ir(lines).select(c, "ptr", self.shadow(a), self.shadow(b), name=sh)
        elif op == "load":
            self.ir(lines).load("ptr", self.shadow(inst.operands[0][1]), align=8, name=sh)
        else:
            raise EnzymeBuildError(
                f"cannot create a shadow for pointer {res} produced by '{op}' in @{self.fn.name}",
                location=self.engine.location(inst),
                hint="functions returning pointers to active memory are not supported; pass the buffer as an argument")

    # ------------------------------------------------------------------ calls
    def _call_kind(self, inst: Instruction) -> str:
        """'inactive' | 'math' | 'derived' | 'custom' | 'memory' | 'unknown'."""
        kind = self._kinds.get(id(inst))
        if kind is None:
            kind = self._kinds[id(inst)] = self._classify_call(inst)
        return kind

    def _classify_call(self, inst: Instruction) -> str:
        if inst.block not in self._returning:
            return INACTIVE   # on a way that never returns (a throw): only the primal runs
        kind = classify_call(self.engine, inst, mode="reverse", active=lambda: self._call_active(inst))
        # frees and debug intrinsics are copied like inactive calls (the reverse sweep frees
        # shadows where it passes their allocation)
        return INACTIVE if kind in (FREE, DROP) else kind

    def _call_active(self, inst: Instruction) -> bool:
        if inst.result and (inst.result in self.act.varied or inst.result in self.act.shadowed):
            return True
        if inst.callee and callee_name(inst) in self.engine.differentiable \
                and callee_name(inst) in self.engine.global_users:
            return True   # reads or writes active globals itself
        return any((is_local(v) and v in self.act.varied) or (t == "ptr" and self.act.has_shadow(v))
                   for t, v in inst.operands)

    def _check_call(self, inst: Instruction) -> None:
        if self._call_kind(inst) == "unknown":
            self.engine.missing_derivative(inst, self.fn)

    def _callee_signature(self, inst: Instruction) -> Signature:
        args = []
        for t, v in inst.operands:
            if is_local(v) and v in self.act.varied and is_float_type(t):
                args.append("out")
            elif is_local(v) and v in self.act.varied:
                raise active_argument_not_a_float(t, callee_name(inst), self.engine.location(inst))
            elif t == "ptr" and (self.act.has_shadow(v) or (v == "null" and self._null_is_dup(inst))):
                args.append("dup")
            else:
                args.append("const")
        ret_active = bool(inst.result) and inst.result in self.act.varied
        ret_shadow = bool(inst.result) and inst.type == "ptr" and inst.result in self.act.shadowed
        if self.cache._stable is None:
            self.cache._stable = self.cache.stable_roots()
        stable = tuple(t == "ptr" and bool(pointer_roots(self.fn, v)) and pointer_roots(self.fn, v) <= self.cache._stable
                       for t, v in inst.operands)
        private = self._private_operands(inst)
        rev_only = tuple(t == "ptr" and a in ("dup", "dupnoneed") and v in self.cache.reverse_local
                         for (t, v), a in zip(inst.operands, args))
        # the globals it reads that nothing here writes while its pieces wait for each other
        vouched = self.cache.mutable_stable_globals() & self.engine.globals_named(callee_name(inst))
        return Signature(callee_name(inst), tuple(args), ret_active, ret_shadow,
                         stable if any(stable) else (), private if any(private) else (),
                         rev_only if any(rev_only) else (), stable_globals=vouched)

    def _null_is_dup(self, inst: Instruction) -> bool:
        """A literal null passed to a function the engine differentiates is a pointer whose
        shadow is null (the shadow of null is null): `push(NULL, v)` then calls the same
        derived constructor as `push(head, v)`, which stores its argument's shadow into the
        node's shadow. Custom rules keep the activity the call's operands have."""
        return callee_name(inst) in self.engine.differentiable

    def _private_operands(self, inst: Instruction) -> tuple[bool, ...]:
        """Per call operand: a pointer into the caller's own allocations (alloca, malloc) that
        no other operand of the call reaches."""
        def local(root: str) -> bool:
            d = self.fn.defs.get(root)
            return d is not None and (d.opcode == "alloca" or (d.opcode == "call" and d.callee in ALLOCATORS))

        escaped = self._escaped_allocations()
        roots = [pointer_roots(self.fn, v) if t == "ptr" and is_local(v) else set() for t, v in inst.operands]
        out = []
        for i, ri in enumerate(roots):
            ok = bool(ri) and all(local(r) and r not in escaped for r in ri) and inst.operands[i][0] == "ptr"
            ok = ok and not any(ri & rj for j, rj in enumerate(roots) if j != i)
            out.append(ok)
        return tuple(out)

    def _escaped_allocations(self) -> set[str]:
        """Allocations whose address is stored somewhere: a loaded pointer may reach them."""
        if self._escaped is None:
            self._escaped = set()
            for i in self.fn.instructions():
                if i.opcode == "store" and i.operands[0][0] == "ptr" and is_local(i.operands[0][1]):
                    self._escaped |= pointer_roots(self.fn, i.operands[0][1])
        return self._escaped

    def _interleaved(self, inst: Instruction, sig: Signature, get, forward: bool = False) -> list[str]:
        out = []
        kind = self._call_kind(inst)
        callee = self.engine.module.functions[sig.function] if kind == "derived" else None
        # rules that take a null shadow for a constant pointer (blas/): one slot per pointer
        null_shadows = kind == "custom" and sig.function in self.engine.shadow_outputs
        rev_only = sig.rev_shadow_args or (False,) * len(sig.args)
        for k, ((t, v), a, r) in enumerate(zip(inst.operands, sig.args, rev_only)):
            byval = byval_attributes(callee.params[k]) if callee and k < len(callee.params) else ""
            out.append(f"{t} {byval} {get(v)}" if byval else f"{t} {get(v)}")
            if a in ("dup", "dupnoneed"):
                # a shadow that exists only in the reverse piece: the augmented piece never uses it
                out.append("ptr poison" if forward and r else f"ptr {get(self.shadow(v))}")
            elif null_shadows and t == "ptr":
                out.append("ptr null")
        return out

    def _forward_active_call(self, inst: Instruction, lines: list[str]) -> None:
        sig = self._callee_signature(inst)
        args = self._interleaved(inst, sig, lambda v: v, forward=True)
        if self._call_kind(inst) == "custom":
            rule = self.engine.custom[sig.function]
            if not rule.augment or not rule.gradient:
                self.engine.missing_derivative(inst, self.fn, partial_rule=True)
            args += self.cache.cache_mask_arguments(inst, sig)
            check_rule_arity(self.engine.module, rule.augment, "augment", sig.function, len(args), sig.args,
                             self.engine.location(inst))
            aug_ret = self.engine.function_return_type(rule.augment)
            tape = self.fresh("ctape")
            ir = self.ir(lines)
            if inst.result and aug_ret != "ptr":
                whole = ir.call(aug_ret, f"@{rule.augment}", args, hint="caug")
                ir.extractvalue(aug_ret, whole, [0], "ptr", name=tape)
                ir.extractvalue(aug_ret, whole, [1], inst.type, name=inst.result)
            else:
                ir.call(aug_ret, f"@{rule.augment}", args, name=tape, result=True)
                if inst.result:
                    raise EnzymeBuildError(f"custom augment @{rule.augment} must return {{ptr, T}} when "
                                           f"@{sig.function} returns a value", location=self.engine.location(inst))
            self.types[tape] = "ptr"
            self.home[tape] = inst.block
            self.custom_tapes[id(inst)] = tape
            return
        callee_fn = self.engine.module.functions[sig.function]
        aug, _ = self.engine.request_split(callee_fn, sig, caller=self.fn.name)
        self.cache.uses_tape = True
        if openmp.fork_ident(inst) is not None:
            tapes = openmp.augmented_fork(self, inst, sig, aug, args, lines)
            self.types[tapes] = "ptr"
            self.home[tapes] = inst.block
            self.fork_tapes[id(inst)] = tapes
            return
        ir = self.ir(lines)
        self.tape_handed_in.add(inst.block)   # the callee may grow the tape
        if sig.ret_shadow:
            pair = ir.call("{ ptr, ptr }", f"@{aug}", args + [("ptr", TAPE)], hint="pair")
            ir.extractvalue("{ ptr, ptr }", pair, [0], "ptr", name=inst.result)
            ir.extractvalue("{ ptr, ptr }", pair, [1], "ptr", name=self.shadow(inst.result))
            return
        ir.call(callee_fn.return_type, f"@{aug}", args + [("ptr", TAPE)], name=inst.result, result=bool(inst.result))

    # ------------------------------------------------------------------ reverse sweep
    def _reverse_block(self, block) -> None:
        label = block.label
        lines: list[str] = []
        self.rev[label] = lines
        term = block.terminator
        if term.opcode == "unreachable":
            self.rev_term[label] = ["  unreachable"]
            return
        self.fmf = ""   # (set per reversed instruction: only its own derivative carries its flags)
        if term.opcode == "ret" and term.operands and self.sig.ret_active:
            v = term.operands[0][1]
            seed = DRET if self.split else float_constant(1.0, term.type)
            self.accumulate(v, seed, lines)
        body = [i for i in block.instructions[:-1] if i.opcode != "phi"]
        self._deferred_loads = self._carried_loads(block, body)
        self._deferred_accumulations = []
        for inst in reversed(body):
            self._reverse_instruction(inst, label, lines)
        self.fmf = ""
        phi_adjoints = {}
        for phi in block.phis():
            if phi.result in self.act.varied:
                phi_adjoints[phi.result] = self.take_adjoint(phi.result, lines)
        for shadow_ptr, ty, contrib, primal in self._deferred_accumulations:
            self.accumulate_memory(shadow_ptr, ty, contrib, lines, primal=primal, label=label)
        self._deferred_loads, self._deferred_accumulations = frozenset(), []
        if label == self.fn.blocks[0].label:
            lines += self._byval_shadow_returns(label)
            for inst in self.fn.instructions():   # redo the undone stores, in forward order
                if inst.opcode == "store" and id(inst) in self.cache.undone_stores:
                    (vty, v), (_, p) = inst.operands
                    value = self._undo_current(inst) if self.split else v
                    self.ir(lines).store(vty, value, self.cache.fetch(p, label))
        self.rev_term[label] = self._reverse_terminator(block, phi_adjoints)

    def _carried_loads(self, block, body) -> frozenset:
        """Loads of `block` whose adjoint is added into shadow memory at the end of its reverse
        block instead of where the load is reversed: those whose value the next iteration of
        a loop reads again through a header phi (GVN keeps `a[i + 1]` in a register as the
        next iteration's `a[i]`). Their adjoint includes the phi's, which the reverse block
        finishes last; added at once, the shadow update of one reverse iteration waits for
        the phi adjoint of the one before through memory, a recurrence LLVM's vectorizer
        cannot reorder. Added after the phis' adjoints, the same sum is a first-order
        recurrence in a register, which it vectorizes (the heat stepper's reverse loop).

        Moving a `+=` into shadow memory later is exact when nothing reversed after it reads
        or overwrites shadow memory: only other loads (whose reverse is a `+=` too) and pure
        arithmetic may precede the load in the block. Not in OpenMP-parallel functions,
        whose shadow updates are atomic."""
        if self.parallel:
            return frozenset()
        loop = self.cfg.loop_of.get(block.label)
        if loop is None or block.label not in loop.latches:
            return frozenset()
        carried = set()
        for phi in self.fn.block(loop.header).phis():
            if phi.result in self.act.varied:
                carried.update(v for v, b in phi.incoming if b == block.label)
        if not carried:
            return frozenset()
        out = set()
        for inst in body:
            if inst.opcode == "load" and inst.result in carried and inst.result in self.act.varied:
                out.add(id(inst))
            if not _pure_for_shadows(inst):
                break   # what follows may be reversed after a shadow read or write
        return frozenset(out)

    def _reverse_terminator(self, block, phi_adjoints) -> list[str]:
        label = block.label
        preds = self.cfg.preds[label]
        if label == self.fn.blocks[0].label:
            out: list[str] = []
            self.ir(out).br(EXIT_LABEL[1:])
            return out
        if not preds:
            return ["  unreachable"]

        def edge_lines(pred) -> list[str]:
            out = []
            exited = self._loops_exited(pred, label)   # the loops the edge pred -> label leaves
            # entering a loop's reverse through one of its exits: start its IV at the last value
            # entering a loop's reverse through an exit: its invariant values' slots get set
            for _, loop in exited:
                point = InsertPoint("exit edge", loop.header)
                out.append(point)
                self.exit_markers[point] = (loop.header, pred, label, out)
            # going back to the previous iteration of a top-level loop: its side table is full again
            for loop in self._loops_by_header.get(label, ()):
                if loop.depth == 1 and pred in loop.blocks:
                    out.append(InsertPoint("side latch", loop.header))
            # entering a static-record loop's reverse through an exit: where its record starts
            statics = sorted((self._static_order[id(loop)] for _, loop in exited if id(loop) in self._static_order),
                             key=lambda numbered: numbered[0])
            for _, static in statics:
                start = self.cache.value_on_exit(static["off"], pred, label)
                self.ir(out).store("i64", start, static["slot"], align=8)
                # the iteration count and first IV value the record's columns are laid out by
                loop = static["loop"]
                count = self.fresh("tc")
                self.cache.static_count(count, loop, lambda v: self.cache.fetch(v, label), out)
                self.ir(out).store("i64", count, static["count_slot"], align=8)
                if static["start_slot"] is not None:
                    self.ir(out).store(self.types[loop.iv], self.cache.fetch(loop.start, label), static["start_slot"],
                                       align=8)
                out.append(InsertPoint("side static", loop.header))   # its side record, if it gets one
            static = self.cache.static_loops.get(label)
            if static is not None and pred == static["loop"].preheader:
                # leaving the loop's reverse: drop the record of all its iterations
                tc64, nbytes = self.fresh("tc"), self.fresh("tb")
                self.cache.static_count(tc64, static["loop"], lambda v: self.cache.fetch(v, label), out)
                self.ir(out).binop("mul", "i64", tc64, static["stride"], name=nbytes)
                self.ir(out).call("ptr", "@__enzyme_build_tape_pop", [("ptr", TAPE), ("i64", nbytes)], result=False)
            for iv, (loop, step, slot, latch) in self._iv_loops_at(label, exited):
                if pred in loop.blocks and label not in loop.blocks:
                    last = self.cache.iv_on_exit(iv, loop, pred, label, out)
                    self.ir(out).store(self.types[iv], last, slot, align=8)
                if label == loop.header and pred == latch:
                    ir, ty = self.ir(out), self.types[iv]
                    cur = ir.load(ty, slot, align=8, hint="iv")
                    prev = ir.binop("add", ty, cur, step[1:], hint="iv") if step.startswith("-") \
                        else ir.binop("sub", ty, cur, step, hint="iv")
                    ir.store(ty, prev, slot, align=8)
            for phi in block.phis():
                if phi.result not in phi_adjoints:
                    continue
                for v, b in phi.incoming:
                    if b == pred:
                        self.accumulate(v, phi_adjoints[phi.result], out)
                        break
            return out

        # (labels for the builder: without '%', as rev_label and the edge blocks spell them)
        if len(preds) == 1:
            out = edge_lines(preds[0])
            self.ir(out).br(f"rev${preds[0]}")
            return out
        index = self.cache.fetch(self.pred_index[label], label)
        targets = []
        for i, p in enumerate(preds):
            extra = edge_lines(p)
            if extra:
                edge = f"rev${label}$from${p}"
                self.ir(extra).br(f"rev${p}")
                self.edge_blocks.append((make_name("%", edge), extra))
                targets.append(edge)
            else:
                targets.append(f"rev${p}")
        out = []
        self.ir(out).switch("i32", index, targets[0], [(str(i), t) for i, t in enumerate(targets) if i > 0])
        return out

    def _reverse_instruction(self, inst: Instruction, label: str, lines: list[str]) -> None:
        self.fmf = fast_math_flags(inst)   # the derivative's arithmetic carries the primal's flags
        op, res = inst.opcode, inst.result
        varied = res is not None and res in self.act.varied
        if op in INSTRUCTION_RULES and varied:
            rule, operands = fused_fmul_rule(self.fn, inst) or (INSTRUCTION_RULES[op], inst.operands)
            self._apply_rule(rule, inst.type, operands, res, label, lines)
        elif op in ("fpext", "fptrunc") and varied:
            dr = self.take_adjoint(res, lines)
            src_ty, src = inst.operands[0]
            conv = self.ir(lines).cast("fptrunc" if op == "fpext" else "fpext", inst.type, dr, src_ty, hint="cv")
            self.accumulate(src, conv, lines)
        elif op == "extractvalue" and varied:
            dr = self.take_adjoint(res, lines)
            aty, agg = inst.operands[0]
            if is_local(agg) and agg in self.act.varied:
                part = self.ir(lines).insertvalue(aty, "zeroinitializer", inst.type or self.types[res], dr, inst.indices,
                                                  hint="ev")
                self.accumulate(agg, part, lines)
        elif op == "insertvalue" and varied:
            dr = self.take_adjoint(res, lines)
            (aty, agg), (ety, elem) = inst.operands[0], inst.operands[1]
            if is_local(elem) and elem in self.act.varied:
                part = self.ir(lines).extractvalue(aty, dr, inst.indices, ety, hint="iv")
                self.accumulate(elem, part, lines)
            if is_local(agg) and agg in self.act.varied:
                rest = self.ir(lines).insertvalue(aty, dr, ety, zero_of(ety), inst.indices, hint="iv")
                self.accumulate(agg, rest, lines)
        elif op in ("freeze", "bitcast") and varied:
            dr = self.take_adjoint(res, lines)
            self.accumulate(inst.operands[0][1], dr, lines)
        elif op == "select" and varied:
            dr = self.take_adjoint(res, lines)
            cond = self.cache.fetch(inst.operands[0][1], label)
            ty = self.types[res]     # a select of integer views of floats: its float type
            zero = zero_of(ty)
            for pos, (a, b) in ((1, (dr, zero)), (2, (zero, dr))):
                v = inst.operands[pos][1]
                if is_local(v) and v in self.act.varied:
                    self.accumulate(v, self.ir(lines).select(cond, ty, a, b, hint="sel"), lines)
        elif op == "load":
            if varied:
                if not self._ptr_shadowed(inst.operands[0][1]):
                    # the adjoint would be added into the primal memory itself: never silently
                    raise InternalError(f"a load in @{self.fn.name} carries a derivative but its pointer "
                                        f"{inst.operands[0][1]} has no shadow")
                dr = self.take_adjoint(res, lines)
                ptr = self.cache.fetch(self.shadow(inst.operands[0][1]), label)
                if id(inst) in self._deferred_loads:
                    self._deferred_accumulations.append((ptr, self.types[res], dr, inst.operands[0][1]))
                else:
                    self.accumulate_memory(ptr, self.types[res], dr, lines, primal=inst.operands[0][1], label=label)
        elif op == "store":
            (vty, v), (_, p) = inst.operands
            vty = self.views.get(v, vty)
            if is_float_type(vty) and self._ptr_shadowed(p):
                ptr = self.cache.fetch(self.shadow(p), label)
                old = self.ir(lines).load(vty, ptr, hint="ds")
                self.ir(lines).store(vty, float_constant(0.0, vty), ptr)
                self.accumulate(v, old, lines)
            elif re.fullmatch(r"i(32|64)", vty) and not (is_local(v) and v in self.act.varied) \
                    and self._ptr_shadowed(p) and self._holds_floats_only(p, int(vty[1:]) // 8):
                # bits that are not float data stored over floats (a memcpy of known doubles
                # folded to `store i64 C`, bits computed by integer arithmetic): the overwritten
                # floats' adjoint ends here, as for a float store (forward mode stores a zero
                # tangent there)
                self.ir(lines).store(vty, "0", self.cache.fetch(self.shadow(p), label))
            if id(inst) in self.cache.undone_stores:
                at = self.cache.fetch(p, label)
                old = self.cache.undone_stores[id(inst)]
                if self.split:
                    # the caller may have changed the memory since the augmented piece: keep
                    # what it holds now, to put back when the reverse piece ends
                    self.ir(lines).load(inst.operands[0][0], at, name=self._undo_current(inst))
                    old = self.cache.fetch(old, label)
                self.ir(lines).store(inst.operands[0][0], old, at)
        elif op == "call":
            self._reverse_call(inst, label, lines)
        elif (rmw := openmp.atomic_fadd_operands(inst)) is not None and self._ptr_shadowed(rmw[0]):
            # *p += v (omp atomic, reductions): v's adjoint is p's; p's adjoint is unchanged
            p, ty, v = rmw
            if res and any(res in i.values() for i in self.fn.instructions()):
                raise EnzymeBuildError(f"the old value of an atomic update is used ({inst.text.strip()} in "
                                       f"@{self.fn.name})", location=self.engine.location(inst),
                                       hint="use `#pragma omp atomic` updates whose result is not read")
            if is_local(v) and v in self.act.varied:
                got = self.fresh("dat")
                self.ir(lines).load(ty, self.cache.fetch(self.shadow(p), label), align=8, name=got)
                self.accumulate(v, got, lines)
        elif op == "alloca" and res in self.act.shadowed and self._heap_shadow(inst) \
                and res not in self.cache.reverse_local:
            self.ir(lines).call("void", "@free", [("ptr", self.cache.fetch(self.shadow(res), label))])
            self.engine.declare("@free")
        elif varied or (op not in _CONSUMES_ACTIVE_SAFELY
                        and any(v in self.act.varied for v in inst.values())
                        and not (inst.result and inst.type.startswith("i")
                                 and bits_stay_integer(self.fn, inst.result))
                        and not (inst.result and only_reaches_integers(self.fn, inst.result))):
            raise EnzymeBuildError(f"cannot differentiate '{op}' ({inst.text.strip()}) in @{self.fn.name}",
                                   location=self.engine.location(inst),
                                   hint="vector values and this operation are not supported on active data; "
                                        "the pre-AD pipeline never vectorizes, so this comes from explicit "
                                        "vector code or intrinsics")

    def _holds_floats_only(self, ptr: str, size: int) -> bool:
        """Whether the function's own accesses show the `size` bytes at `ptr` hold floats only
        (not its callers' and callees': a derived function of an inner AD pass has many
        integer constant stores, and that question per store took minutes)."""
        from ..analysis.memtypes import DOUBLE, FLOAT, MemoryTypes
        kinds = MemoryTypes.of(self.engine.module).own_kinds_at(self.fn, ptr, size)
        return bool(kinds) and kinds <= {DOUBLE, FLOAT}

    def _apply_rule(self, rule, fty, operands, res, label, lines) -> None:
        if res in self.local_adjoints and res not in self.register_adjoints:
            # nothing reached this block-local value's adjoint (a fused rule took its one user's
            # share: the sqrt of x * sqrt(x)): its partials would only be multiplied by zero
            return
        dr = self.take_adjoint(res, lines)
        b = Builder(fty, self.fresh, into=lines, text=True)
        b.flags = self.fmf
        b.reuse = lambda base, ty, call_args: self.cache.reuse_primal_call(base, ty, call_args, label)
        args = RuleOperands([v for _, v in operands], res, b, fetch=lambda v: self.cache.fetch(v, label),
                            at_hand=lambda v: self.cache.at_hand(v, label),
                            costless=lambda v: self.cache.costless(v, label))
        dropped = None    # a speculated value's adjoint is 0: its partials may be inf or NaN
        for i, (ty, v) in enumerate(operands):
            if not (is_local(v) and v in self.act.varied):
                continue
            if i >= len(rule.partials):
                raise EnzymeBuildError(f"no derivative rule for operand {i} of {rule.names[0]}")
            partial = rule.partials[i](b, args)
            if partial is None:
                continue
            if b.is_const(partial, 1.0):
                contrib = dr
            elif b.is_const(partial, -1.0):
                contrib = b.fneg(dr)
            else:
                contrib = b.fmul(dr, partial)
                if res in self.speculated:
                    # strong zero (analysis/speculation.py): 0 * inf would be NaN
                    dropped = dropped or b.fcmp("oeq", dr, b.const(0.0))
                    contrib = b.select(dropped, b.const(0.0), contrib)
            self.accumulate(v, contrib, lines)
        for callee, decl in b.declarations.items():
            self.engine.declare(callee, decl)
        for helper in b.helpers:
            self.engine.support.add(f"__enzyme_build_{helper}")

    def _reverse_call(self, inst: Instruction, label: str, lines: list[str]) -> None:
        kind = self._call_kind(inst)
        name = callee_name(inst)
        res = inst.result
        if kind == "math":
            if res and res in self.act.varied:
                found = math_rule(inst.callee) or math_rule("@" + self.engine.function_like[name])
                rule, fty = found
                self._apply_rule(rule, inst.type, inst.operands, res, label, lines)
        elif kind == "derived":
            sig = self._callee_signature(inst)
            callee_fn = self.engine.module.functions[sig.function]
            _, rev = self.engine.request_split(callee_fn, sig, caller=self.fn.name)
            args = self._interleaved(inst, sig, lambda v: self.cache.fetch(v, label))
            if openmp.fork_ident(inst) is not None:
                openmp.reverse_fork(self, inst, rev, args, self.cache.fetch(self.fork_tapes[id(inst)], label), lines)
                return
            if sig.ret_active:
                args.append(f"{inst.type} {self.take_adjoint(res, lines)}")
            args.append(f"ptr {TAPE}")
            self._call_with_adjoints(f"@{rev}", adjoint_type(callee_fn, sig), args, inst, sig, lines)
        elif kind == "custom":
            sig = self._callee_signature(inst)
            rule = self.engine.custom[sig.function]
            args = self._interleaved(inst, sig, lambda v: self.cache.fetch(v, label))
            args += self.cache.cache_mask_arguments(inst, sig)   # what the augment was told
            if sig.ret_active:
                args.append(f"{inst.type} {self.take_adjoint(res, lines)}")
            args.append(f"ptr {self.cache.fetch(self.custom_tapes[id(inst)], label)}")
            check_rule_arity(self.engine.module, rule.gradient, "gradient", sig.function, len(args), sig.args,
                             self.engine.location(inst))
            self._call_with_adjoints(f"@{rule.gradient}", self.engine.function_return_type(rule.gradient),
                                     args, inst, sig, lines)
        elif kind == "memory":
            self._reverse_memory_call(inst, name, label, lines)
        elif name == "__kmpc_barrier" and self.parallel:
            # the phases a barrier separates are undone in the opposite order: so is the barrier
            ident, gtid = inst.operands[0][1], self.cache.fetch(inst.operands[1][1], label)
            self.ir(lines).call("void", "@__kmpc_barrier", [("ptr", ident), ("i32", gtid)])

    def _call_with_adjoints(self, callee, ret_ty, args, inst, sig, lines) -> None:
        outs = [v for (t, v), a in zip(inst.operands, sig.args) if a == "out"]
        if ret_ty == "void" or not outs:
            self.ir(lines).call(ret_ty, callee, args, result=False)
            return
        adj = self.ir(lines).call(ret_ty, callee, args, hint="adj")
        if len(outs) == 1:
            self.accumulate(outs[0], adj, lines)
            return
        elements = aggregate_elements(ret_ty) or [ret_ty] * len(outs)
        for k, v in enumerate(outs):
            self.accumulate(v, self.ir(lines).extractvalue(ret_ty, adj, [k], elements[k], hint="adj"), lines)

    def _reverse_memory_call(self, inst, name, label, lines) -> None:
        if name.startswith(("llvm.memcpy", "llvm.memmove")):
            d, s = inst.operands[0][1], inst.operands[1][1]
            if not self._ptr_shadowed(d):
                return
            nty, n = inst.operands[2]
            kind = memcpy_element_kind(self, inst)
            if kind == "record":
                record = memcpy_record_type(self, inst) or memcpy_record_type(self, inst, with_pointers=True)
                dsh = self.cache.fetch(self.shadow(d), label)
                nn = self.cache.fetch(n, label)
                if self._ptr_shadowed(s):
                    helper = self._record_helper(record, "adjoint")
                    ssh = self.cache.fetch(self.shadow(s), label)
                    self.ir(lines).call("void", helper, [("ptr", dsh), ("ptr", ssh), ("i64", nn)])
                else:
                    self.ir(lines).call("void", "@llvm.memset.p0.i64", [("ptr", dsh), ("i8", "0"), (nty, nn),
                                                                         ("i1", "false")])
                    self.engine.declare("@llvm.memset.p0.i64")
                return
            if kind in ("double", "float"):
                dsh = self.cache.fetch(self.shadow(d), label)
                nn = self.cache.fetch(n, label)
                if self._ptr_shadowed(s):
                    ssh = self.cache.fetch(self.shadow(s), label)
                    # memmove's ranges may overlap: its adjoint walks away from the overlap
                    helper = ("__enzyme_build_memmove_adjoint_" if name.startswith("llvm.memmove")
                              else "__enzyme_build_memcpy_adjoint_") + ("f64" if kind == "double" else "f32")
                    self.engine.support.add(helper)
                    self.ir(lines).call("void", f"@{helper}", [("ptr", dsh), ("ptr", ssh), ("i64", nn)])
                else:
                    self.ir(lines).call("void", "@llvm.memset.p0.i64", [("ptr", dsh), ("i8", "0"), (nty, nn),
                                                                         ("i1", "false")])
                    self.engine.declare("@llvm.memset.p0.i64")
        elif name.startswith("llvm.memset"):
            d = inst.operands[0][1]
            if self._ptr_shadowed(d):
                dsh = self.cache.fetch(self.shadow(d), label)
                nty, n = inst.operands[2]
                self.ir(lines).call("void", "@llvm.memset.p0.i64", [("ptr", dsh), ("i8", "0"),
                                                                     (nty, self.cache.fetch(n, label)), ("i1", "false")])
                self.engine.declare("@llvm.memset.p0.i64")
        elif inst.callee in ALLOCATORS and inst.result in self.act.shadowed:
            if name == "realloc" and inst.result in self.realloc_copied:
                kind = memcpy_element_kind(self, inst, [inst.result, inst.operands[0][1]])
                if kind in ("double", "float"):
                    helper = "__enzyme_build_memcpy_adjoint_" + ("f64" if kind == "double" else "f32")
                    self.engine.support.add(helper)
                    new = self.cache.fetch(self.shadow(inst.result), label)
                    old = self.cache.fetch(self.shadow(inst.operands[0][1]), label)
                    n = self.cache.fetch(self.realloc_copied[inst.result], label)
                    self.ir(lines).call("void", f"@{helper}", [("ptr", new), ("ptr", old), ("i64", n)])
            if inst.result in self.freed_roots:
                own, release = shadow_allocator(name)
                self.ir(lines).call("void", shadow_release(self.engine, release if own else None),
                                    [("ptr", self.cache.fetch(self.shadow(inst.result), label))])

    def _record_helper(self, record: str, what: str) -> str:
        """A function over the `n` bytes of `record` elements at d and s, per element:
        what="adjoint" moves the adjoints of a copy back to the source (per float field
        `s' += d'; d' = 0`; integer and pointer fields untouched); what="ptrcopy" copies the
        pointer fields' shadows from s to d (the forward sweep of a copy of records holding
        pointers: writes through the copied pointer must reach the shadow memory)."""
        helpers = self.engine.record_adjoint_helpers
        if (record, what) in helpers:
            return helpers[(record, what)]
        name = make_name("@", f"__enzyme_build_memcpy_{what}_rec{len(helpers)}")
        helpers[(record, what)] = name
        body = [f"define internal void {name}(ptr %d, ptr %s, i64 %n) {{",
                "entry:",
                f"  %stride = ptrtoint ptr getelementptr ({record}, ptr null, i32 1) to i64",
                "  %count = udiv i64 %n, %stride",
                "  %none = icmp eq i64 %count, 0",
                "  br i1 %none, label %done, label %loop",
                "loop:",
                "  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]"]
        leaves = float_leaves if what == "adjoint" else pointer_leaves
        for k, (path, fty, count) in enumerate(leaves(self.engine.module, record)):
            idx = "".join(f", i32 {j}" for j in path)
            body += [f"  %d{k} = getelementptr inbounds {record}, ptr %d, i64 %i{idx}",
                     f"  %s{k} = getelementptr inbounds {record}, ptr %s, i64 %i{idx}"]
            if what == "ptrcopy":
                body.append(f"  call void @llvm.memcpy.p0.p0.i64(ptr %d{k}, ptr %s{k}, i64 {8 * count}, i1 false)")
                self.engine.declare("@llvm.memcpy.p0.p0.i64")
            elif count == 1:
                body += [f"  %a{k} = load {fty}, ptr %d{k}", f"  %b{k} = load {fty}, ptr %s{k}",
                         f"  %c{k} = fadd {fty} %b{k}, %a{k}", f"  store {fty} %c{k}, ptr %s{k}",
                         f"  store {fty} {zero_of(fty)}, ptr %d{k}"]
            else:
                helper = "__enzyme_build_memcpy_adjoint_" + ("f64" if fty == "double" else "f32")
                self.engine.support.add(helper)
                body.append(f"  call void @{helper}(ptr %d{k}, ptr %s{k}, i64 {count * (8 if fty == 'double' else 4)})")
        body += ["  %i.next = add i64 %i, 1",
                 "  %more = icmp ult i64 %i.next, %count",
                 "  br i1 %more, label %loop, label %done",
                 "done:",
                 "  ret void",
                 "}"]
        self.engine.texts.append("\n".join(body))
        return name

    # ------------------------------------------------------------------ caches and the tape





    # ------------------------------------------------------------------ text
    def _entry_prologue(self) -> list[str]:
        out = self.cache.side_prologue()
        ir = self.ir(out)
        if self.cache.uses_tape and not self.split:
            ir.alloca(TAPE_TYPE, align=8, name=TAPE)
            ir.store(TAPE_TYPE, "zeroinitializer", TAPE, align=8)
        for v, slot in self.cache.cache_slots.items():
            ir.alloca(self.cache.types.get(v, "ptr"), align=8, name=slot)
        if not self.split:
            out += self.cache.iv_slot_allocas() + self.cache.static_slot_allocas() + self.cache.hoist_slot_allocas()
        if self.footprint is not None:
            out += self.footprint.entry_lines()
        return out + self._byval_shadow_copies() + self.cache.side_zero()

    def _byval_dups(self):
        return [(p, byval_type(p)) for p, a in zip(self.fn.params, self.sig.args)
                if a in ("dup", "dupnoneed") and byval_type(p)]

    def _byval_leaf_ptrs(self, base: str, ty: str, lines: list[str]):
        for path, fty, count in float_leaves(self.engine.module, ty):
            g = self.ir(lines).gep(ty, base, [("i32", "0")] + [("i32", str(k)) for k in path], hint="bv")
            yield g, fty, count

    def _byval_shadow_copies(self) -> list[str]:
        """Private shadow copies of byval parameters (the shadow of the copy the call made):
        the caller's shadow bytes (pointer shadows inside the struct) with the floats zeroed.
        Combined mode: an alloca; split pieces: a heap block the reverse piece frees."""
        out: list[str] = []
        for p, ty in self._byval_dups():
            sh, size = shadow_param(p.name), f"ptrtoint (ptr getelementptr ({ty}, ptr null, i32 1) to i64)"
            ir = self.ir(out)
            if self.split:
                ir.call("ptr", "@malloc", [("i64", size)], name=sh)
                self.engine.declare("@malloc")
            else:
                ir.alloca(ty, align=16, name=sh)
            ir.call("void", "@llvm.memcpy.p0.p0.i64", [("ptr", sh), ("ptr", caller_shadow_param(p.name)),
                                                        ("i64", size), ("i1", "false")])
            self.engine.declare("@llvm.memcpy.p0.p0.i64")
            for g, fty, count in list(self._byval_leaf_ptrs(sh, ty, out)):
                if count == 1:
                    ir.store(fty, zero_of(fty), g)
                else:
                    ir.call("void", "@llvm.memset.p0.i64", [("ptr", g), ("i8", "0"),
                                                            ("i64", str(count * (8 if fty == "double" else 4))),
                                                            ("i1", "false")])
                    self.engine.declare("@llvm.memset.p0.i64")
        return out

    def _byval_shadow_returns(self, label: str) -> list[str]:
        """The reverse of the copy the call made: the private copy's adjoints go to the caller."""
        out: list[str] = []
        for p, ty in self._byval_dups():
            mine_base = self.cache.fetch(shadow_param(p.name), label)
            mine = list(self._byval_leaf_ptrs(mine_base, ty, out))
            theirs = list(self._byval_leaf_ptrs(caller_shadow_param(p.name), ty, out))
            for (g, fty, count), (h, _, _) in zip(mine, theirs):
                if count == 1:
                    self.accumulate_memory(h, fty, self._load_line(g, fty, out), out)
                elif fty in ("double", "float"):
                    helper = "__enzyme_build_memcpy_adjoint_" + ("f64" if fty == "double" else "f32")
                    self.engine.support.add(helper)
                    self.ir(out).call("void", f"@{helper}", [("ptr", g), ("ptr", h),
                                                             ("i64", str(count * (8 if fty == "double" else 4)))])
            if self.split:
                self.ir(out).call("void", "@free", [("ptr", mine_base)])
                self.engine.declare("@free")
        return out

    def _load_line(self, ptr: str, ty: str, out: list[str]) -> str:
        return self.ir(out).load(ty, ptr, hint="bl")

    def _diffe_prologue(self) -> list[str]:
        out: list[str] = []
        ir = self.ir(out)
        for v, slot in self.diffe_slots.items():
            ty = self.types[v]
            ir.alloca(ty, align=8, name=slot)
            ir.store(ty, adjoint_zero(ty), slot, align=8)
        return out

    def _exit_block(self) -> list[str]:
        out = [f"{EXIT_LABEL[1:]}:"]
        if self.cache.uses_tape and not self.split:
            self.engine.support.add("__enzyme_build_tape_free_data")
            self.ir(out).call("void", "@__enzyme_build_tape_free_data", [("ptr", TAPE)])
        out += self.cache.side_free()
        for key, inst in self.cache.deferred_frees.items():
            self.ir(out).clone(inst, mapping=self.freed_pointers[key])
        if self.parallel:
            out += openmp.flush_partials(self)
        rty = adjoint_type(self.fn, self.sig)
        outs = [p for p, a in zip(self.fn.params, self.sig.args) if a == "out" and is_float_type(p.type)]
        ir = self.ir(out)
        if rty == "void":
            ir.ret()
            return out
        vals = []
        for p in outs:
            v = self.fresh("ret")
            if p.name in self.act.varied:
                # + 0.0 turns the slots' -0.0 into the +0.0 a caller expects of a zero gradient
                loaded = ir.load(p.type, self.diffe_slot(p.name), align=8, hint="ret")
                ir.binop("fadd", p.type, loaded, zero_of(p.type), name=v)
            else:
                ir.binop("fadd", p.type, float_constant(0.0, p.type), float_constant(0.0, p.type), name=v)
            vals.append((p.type, v))
        if len(vals) == 1:
            ir.ret(*vals[0])
            return out
        agg = "poison"
        for k, (t, v) in enumerate(vals):
            agg = ir.insertvalue(rty, agg, t, v, [k], hint="agg")
        ir.ret(rty, agg)
        return out

    def _forward_blocks_text(self, diffe_prologue: list[str]) -> list[str]:
        out = []
        for i, block in enumerate(self.fn.blocks):
            out.append(f"{make_name('%', block.label)[1:]}:")
            if i == 0:
                out += self._entry_prologue() + diffe_prologue
            out += self.fwd[block.label]
            if i == 0:   # after every alloca of the entry block; before any use (preheader lines below)
                out += self.cache.stride_definitions()
            out += self.cache.snapshot_lines.get(block.label, [])   # before the block's own record
            out += self.cache.fwd_pushes.get(block.label, [])
            out += self.cache.side_fwd.get(block.label, [])
            out += self.cache.static_pre_lines.get(block.label, [])
            out += self.cache.slot_store_lines.get(block.label, [])
            out += self.cache.preheader_lines.get(block.label, [])
            out += self.cache.static_base_lines.get(block.label, [])   # after the last growth
            out += self.fwd_term[block.label]
        return out

    def _reverse_blocks_text(self) -> list[str]:
        out = []
        for block in reversed(self.fn.blocks):
            out.append(f"{self.rev_label(block.label)[1:]}:")
            out += self.cache.rev_prologue.get(block.label, [])
            out += self.cache.static_prologue.get(block.label, [])
            out += self.cache.recompute_lines.get(block.label, [])
            out += self.cache.snapshot_pops.get(block.label, [])   # after the block's own record
            out += self.rev[block.label]
            out += self.rev_term[block.label]
        for edge, lines in self.edge_blocks:
            out.append(f"{edge[1:]}:")
            out += lines
        return [line for line in out if line != ""]   # the stores _store_slot dropped

    # ------------------------------------------------------------------ edge indexes
    # The reverse terminators ask, per CFG edge, which loops it leaves and which loop records
    # live there; these indexes answer in time proportional to the answer, not to the number
    # of loops in the function (built once static_loops and iv_loops are final).
    def _index_loop_edges(self) -> None:
        position = {id(loop): k for k, loop in enumerate(self.cfg.loops)}
        self._exits_of_edge: dict[tuple[str, str], list[tuple[int, object]]] = {}
        for loop in self.cfg.loops:
            for b in loop.blocks:
                for succ in self.cfg.succs[b]:
                    if succ not in loop.blocks:
                        edge = self._exits_of_edge.setdefault((b, succ), [])
                        if not edge or edge[-1][1] is not loop:
                            edge.append((position[id(loop)], loop))
        self._loops_by_header: dict[str, list] = {}
        for loop in self.cfg.loops:
            self._loops_by_header.setdefault(loop.header, []).append(loop)
        self._static_order = {id(static["loop"]): (k, static) for k, static in enumerate(self.cache.static_loops.values())}
        self._iv_by_loop: dict[int, list[tuple[int, str]]] = {}
        self._iv_by_header: dict[str, list[tuple[int, str]]] = {}
        self._iv_irreducible: list[tuple[int, str]] = []   # IVs of cycles that are no natural loop
        for k, (iv, (loop, _, _, _)) in enumerate(self.cache.iv_loops.items()):
            self._iv_by_loop.setdefault(id(loop), []).append((k, iv))
            self._iv_by_header.setdefault(loop.header, []).append((k, iv))
            if not self.cfg.is_natural(loop):
                self._iv_irreducible.append((k, iv))

    def _loops_exited(self, pred: str, label: str) -> list:
        """(position in cfg.loops, loop) of the natural loops holding pred but not label."""
        return self._exits_of_edge.get((pred, label), [])

    def _iv_loops_at(self, label: str, exited: list) -> list[tuple[str, tuple]]:
        """The entries of iv_loops (in their order) an edge into `label` leaving the loops
        `exited` can touch: IVs of those loops and of the loop `label` heads."""
        found = dict(self._iv_by_header.get(label, ()))
        found.update(self._iv_irreducible)
        for _, loop in exited:
            found.update(self._iv_by_loop.get(id(loop), ()))
        return [(iv, self.cache.iv_loops[iv]) for _, iv in sorted(found.items())]

    def _assemble(self) -> list[str]:
        return self._assemble_text()

    def _assemble_text(self) -> list[str]:
        names = self.engine.names_for(self.fn, self.sig, self.split)
        params = derived_params(self.fn, self.sig)
        rty = adjoint_type(self.fn, self.sig)
        if not self.split:
            head = ", ".join(f"{t} {n}" for t, n in params)
            text = [f"define internal {rty} @{names['combined']}({head}){self.engine.derived_attributes(self.fn)} {{"]
            text += self._forward_blocks_text(self._diffe_prologue())
            text += self._reverse_blocks_text() + self._exit_block() + ["}"]
            return ["\n".join(text)]
        # the tape object is reached only through this parameter (and what the piece passes on): noalias
        # lets the optimizer keep its data pointer in a register across stores to user memory
        aug_head = ", ".join([f"{t} {n}" for t, n in params] + [f"ptr noalias {TAPE}"])
        aug_ret = "{ ptr, ptr }" if self.sig.ret_shadow else self.fn.return_type
        inline = " alwaysinline" if self.engine.inline_pieces(self.fn) else ""
        aug = [f"define internal {aug_ret} @{names['augmented']}({aug_head}){inline}"
               f"{self.engine.derived_attributes(self.fn)} {{"]
        body = self._forward_blocks_text([])
        if self.cache.frame:
            self.engine.support.add("__enzyme_build_tape_frame")
            # after the entry block's allocas: the inlined reservation may branch (growth), and
            # allocas behind a branch become dynamic ones the optimizer may duplicate
            at = 1
            while at < len(body) and isinstance(body[at], str) and re.match(r'\s+%\S+ = alloca ', body[at]):
                at += 1
            body.insert(at, f"  {FRAME_OFFSET} = call i64 @__enzyme_build_tape_frame(ptr {TAPE}, "
                            f"i64 {CELL_BYTES * self.cache.frame_cells})")
            self.engine.support.add("__enzyme_build_tape_at")
            push = self.cache.side_frame_lines(load=False) + self.cache.push_lines([(FRAME_OFFSET, "i64")])
            body = [x for line in body for x in (push if _is_point(line, "frame push") else [line])]
        else:
            body = [line for line in body if not _is_point(line, "frame push")]
        if self.footprint is not None:
            body = self.footprint.before_returns(body)
            openmp.note_footprint(self.engine, names, len(self.footprint.roots))
        aug += body + ["}"]
        rev_params = [f"{t} {n}" for t, n in params]
        if self.sig.ret_active:
            rev_params.append(f"{self.fn.return_type} {DRET}")
        rev_params.append(f"ptr noalias {TAPE}")
        rev = [f"define internal {rty} @{names['reverse']}({', '.join(rev_params)}){inline}"
               f"{self.engine.derived_attributes(self.fn)} {{", "entry$:"]
        rev += self._diffe_prologue() + self.cache.iv_slot_allocas() + self.cache.static_slot_allocas() \
            + self.cache.hoist_slot_allocas()
        if self.footprint is not None:
            rev += self.footprint.reverse_entry_lines()
        if self.cache.frame:
            rev += self.cache.pop_lines([(FRAME_OFFSET, "i64")]) + self.cache.side_frame_lines(load=True)
        for v, root in self.cache.reverse_local.items():
            if v == root and v not in self.params:   # a parameter's shadow is the piece's parameter
                inst = self.fn.defs[v]
                sh = make_name("%", v, "sh")
                size = f"ptrtoint (ptr getelementptr ({inst.source_type}, ptr null, i32 1) to i64)"
                self.ir(rev).alloca(inst.source_type, align=16, name=sh)
                self.ir(rev).call("void", "@llvm.memset.p0.i64", [("ptr", sh), ("i8", "0"), ("i64", size),
                                                                   ("i1", "false")])
                self.engine.declare("@llvm.memset.p0.i64")
        rev += self.cache.stride_definitions()   # after every alloca of the block; used in later blocks only
        ir = self.ir(rev)
        if len(self.cfg.returns) > 1:
            idx = self.fresh("ret")
            rev += self.cache.pop_lines([(idx, "i32")])
            ir.switch("i32", idx, f"rev${self.cfg.returns[0]}",
                      [(str(i), f"rev${r}") for i, r in enumerate(self.cfg.returns) if i])
        elif self.cfg.returns:
            ir.br(f"rev${self.cfg.returns[0]}")
        else:
            ir.br(EXIT_LABEL[1:])
        exit_block = self._exit_block()
        if self.cache.frame:   # the frame record is the oldest of this call: drop it last
            pop: list[str] = []
            self.ir(pop).call("ptr", "@__enzyme_build_tape_pop", [("ptr", TAPE), ("i64", str(CELL_BYTES * self.cache.frame_cells))],
                              result=False)
            exit_block[1:1] = pop
        rev += self._reverse_blocks_text() + exit_block + ["}"]
        return ["\n".join(aug), "\n".join(rev)]
