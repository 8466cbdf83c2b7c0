"""The cache planner of reverse mode: what the reverse sweep reads of the forward sweep's
values and how each is kept (free values, IV replay, re-reads, recomputation, cache slots,
frame records, tape records, static records, side tables).

`CachePlanner` is a component the sweep (`ReverseGenerator`, ad/reverse.py) owns and calls:
`fetch(value, block)` during the sweeps, `place()` after them; its class docstring lists the
API. It reads the sweep's context and asks it for fresh names, shadows and defining blocks.
"""
from __future__ import annotations

import re
from collections.abc import MutableMapping
from contextlib import contextmanager

from ..analysis.activity import ALLOCATORS, DEALLOCATORS, callee_name, global_base, is_inactive_call, pointer_roots
from ..analysis.addresses import Affine, affine_address, allocation_extent, never_same
from ..analysis.cfg import STEP_CONSTANT, constant_step_ivs, loop_invariant, returning_blocks
from ..analysis.invariance import iteration_invariant
from ..analysis.library import REUSABLE_MATH, writes_through_args
from ..errors import InternalError
from ..ir.builder import InsertPoint, IRBuilder, fill_at
from ..analysis.memtypes import type_size
from ..analysis.types import memcpy_element_kind
from ..custom.convention import cache_mask_values
from ..ir.model import Instruction, function_attributes, is_local, make_name, strip_name
from .rules import math_rule
from .tape import CELL_BYTES

TAPE = "%tape$"
# a static record is laid out by columns when its loop keeps at most this many values per
# iteration, by rows otherwise (benchmarks/run.py, heat and n-body: columns let a taping loop
# vectorize; six columns made n-body's pair loop 1.3x slower than one row)
MAX_COLUMNS = 4
FRAME_OFFSET = "%frame.offset$"   # split mode: where this call's frame record starts on the tape
SIDE = "%side$"                       # the side table object (`_place_side_tables`)

_plan_listeners: list = []


@contextmanager
def listening_to_plans(listener):
    """Call `listener(text)` with the cache plan of every reverse-mode function derived
    inside the block (`CachePlanner.describe`)."""
    _plan_listeners.append(listener)
    try:
        yield
    finally:
        _plan_listeners.remove(listener)


def cache_plans_wanted() -> bool:
    return bool(_plan_listeners)


def _where(kind: str, where: str) -> str:
    """The place of a kept value as the plan prints it."""
    if kind in ("static record", "side table"):
        return f"of loop %{where}"
    if kind == "tape record":
        return f"of block %{where}"
    return where

# insertion points (ir.builder.InsertPoint) the reverse terminators leave for this planner:
# "side latch" (key: loop header) where the reverse sweep starts an earlier iteration of a
# side-table loop, "side static" (key: loop header) where it enters a static loop through an
# exit; "exit edge" where it enters a loop's reverse through an exit (fill_exit_edges)

# integer division and remainder too (a periodic index `(i + 1) % n`, a flat index split as
# `k / m`, `k % m`): the reverse sweep divides the same operands the forward sweep did, so it
# cannot trap where the forward did not, and a division costs less than a tape cell per iteration
# (and float comparisons: a branch's or a select's condition from values the reverse sweep has)
_RECOMPUTABLE = {"getelementptr", "sext", "zext", "trunc", "add", "sub", "mul", "shl", "lshr",
                 "ashr", "and", "or", "xor", "icmp", "bitcast", "inttoptr", "ptrtoint",
                 "udiv", "sdiv", "urem", "srem", "fcmp"}
# float arithmetic recomputed in the reverse sweep when all its operands come for free
_CHEAP_FLOAT = {"fadd", "fsub", "fmul", "fneg", "fpext", "fptrunc", "sitofp", "uitofp"}
# float arithmetic the reverse sweep may redo from its operands (`_rebuildable_float`): when
# each operand costs no cell per iteration (`_recompute`), or when the block keeps the operands
# anyway (`_recompute_from_kept`): the cheap float ops, division and fused multiply-add
_REBUILDABLE_FLOAT = _CHEAP_FLOAT | {"fdiv"}
_REBUILDABLE_CALL_RE = re.compile(r"^@llvm\.(fmuladd|fma)\.f(32|64)$")
# how many levels of operands the reverse sweep follows to rebuild a value instead of keeping
# it: a float computed from re-read inputs whose addresses are index arithmetic of a loop nest
# (`x[(i*n + j)*m + k] - mu[k]`: load, GEP, GEP, mul, add, mul, IV) is rebuilt, not kept
_REBUILD_DEPTH = 10
_INT = re.compile(r"-?\d+")


def _cheap_float(inst) -> bool:
    """Float arithmetic as cheap to redo as to read back: fadd/fsub/fmul/..., fmuladd, fma."""
    return inst.opcode in _CHEAP_FLOAT or \
        (inst.opcode == "call" and bool(inst.callee) and bool(_REBUILDABLE_CALL_RE.match(inst.callee)))


def _rebuildable_float(inst) -> bool:
    """Float arithmetic the reverse sweep may redo from its operands: the cheap ops and division."""
    return inst.opcode in _REBUILDABLE_FLOAT or _cheap_float(inst)


def _lifetime_pointer(inst, which: str) -> str | None:
    """The pointer of an `llvm.lifetime.<which>` call (its last operand: `(ptr)` since LLVM 22,
    `(i64 size, ptr)` before), None for any other instruction."""
    if inst.opcode == "call" and inst.operands and callee_name(inst).startswith(f"llvm.lifetime.{which}"):
        return inst.operands[-1][1]
    return None


def released_pointer(inst) -> str | None:
    """The pointer whose memory a call ends: a free's or realloc's first argument, a stack
    array's `llvm.lifetime.end` (`CachePlanner._defer_frees`); None for any other instruction."""
    if inst.opcode == "call" and inst.operands and (inst.callee in DEALLOCATORS or inst.callee == "@realloc"):
        return inst.operands[0][1]
    return _lifetime_pointer(inst, "end")


def _align_of(inst) -> int:
    """The `align` a load or store states (1 when it states none)."""
    found = re.search(r'align\s+(\d+)', inst.text)
    return int(found.group(1)) if found else 1


def derived_pointers(fn, roots: dict[str, str]) -> dict[str, str]:
    """`roots` (pointer -> root) grown by the GEP/bitcast chains of `fn` based on them."""
    derived = dict(roots)
    changed = True
    while changed:
        changed = False
        for inst in fn.instructions():
            if inst.result and inst.result not in derived and inst.opcode in ("getelementptr", "bitcast") \
                    and inst.operands[0][1] in derived:
                derived[inst.result] = derived[inst.operands[0][1]]
                changed = True
    return derived


def float_data_misuses(fn, derived: dict[str, str], other_use_ok) -> set[str]:
    """Roots one of whose derived pointers is used other than to address float data: as a
    GEP/bitcast base, by loads and stores of non-pointer values, lifetime markers and
    memsets, or a use `other_use_ok(inst, pointer)` accepts."""
    bad: set[str] = set()
    for inst in fn.instructions():
        for v in inst.values():
            if v not in derived:
                continue
            op = inst.opcode
            if op in ("getelementptr", "bitcast") and inst.operands[0][1] == v:
                continue
            if op == "load" and inst.type != "ptr":
                continue
            if op == "store" and inst.operands[1][1] == v and inst.operands[0][1] != v \
                    and inst.operands[0][0] != "ptr":
                continue
            if op == "call" and callee_name(inst).startswith(("llvm.lifetime", "llvm.memset")):
                continue
            if other_use_ok(inst, v):
                continue
            bad.add(derived[v])
    return bad


def passes_reverse_only_shadow(engine, inst, pointer: str) -> bool:
    """A call that takes `pointer` (float data whose shadow lives only in the reverse piece)
    where its callee's pieces can do the same: a derived function that uses that parameter
    only to address float data (`Engine.reverse_only_shadow`)."""
    if inst.opcode != "call":
        return False
    name = callee_name(inst)
    positions = [k for k, (_, v) in enumerate(inst.operands) if v == pointer]
    return bool(positions) and all(engine.reverse_only_shadow(name, k) for k in positions)


# intrinsics that write no memory a load of the function may read
_INTRINSICS_WITHOUT_WRITES = ("llvm.lifetime.", "llvm.dbg.", "llvm.assume", "llvm.prefetch", "llvm.invariant.",
                              "llvm.experimental.noalias.scope.decl", "llvm.objectsize", "llvm.var.annotation",
                              "llvm.ptr.annotation", "llvm.annotation", "llvm.is.constant", "llvm.stacksave",
                              "llvm.stackrestore")
_MEMORY_RE = re.compile(r'\bmemory\(([^)]*)\)')
_ARGUMENT_OR_PRIVATE_MEMORY = ("argmem", "inaccessiblemem", "errnomem")


def _writes_only_arguments(attrs: str) -> bool:
    """Whether a function's `memory(...)` attribute allows writes through its pointer
    arguments only: every location kind but `argmem` is `none` or `read`, apart from memory
    no load of the module can reach (`inaccessiblemem`: an allocator's state; `errnomem`:
    errno, which `sqrt` may set). No attribute: it may write anything."""
    m = _MEMORY_RE.search(attrs)
    if m is None:
        return False
    for item in m.group(1).split(","):
        kind, _, access = item.strip().rpartition(":")
        if kind.strip() not in _ARGUMENT_OR_PRIVATE_MEMORY and access.strip() not in ("none", "read"):
            return False
    return True


def call_write_targets(engine, inst: Instruction) -> list[str] | None:
    """The pointer operands through which a call may write (what it writes is reached from
    them), or None when it may write other memory too: a global, memory no argument
    reaches, or memory of a routine the tables do not know. A function of the module is
    read from its `memory(...)` attribute, else from its body (`_written_parameters`): a
    helper calling `sin` without -fno-math-errno has no useful attribute but writes only
    errno."""
    name = callee_name(inst)
    pointers = [v for t, v in inst.operands if t == "ptr"]
    if name.startswith(_INTRINSICS_WITHOUT_WRITES) or (inst.callee in ALLOCATORS and "realloc" not in name):
        return []
    if name.startswith(("llvm.memcpy", "llvm.memmove", "llvm.memset")):
        return pointers[:1]
    if name.startswith("llvm.") or math_rule(inst.callee or "") or writes_through_args(name) \
            or is_inactive_call(inst) or name in engine.cache_masks:
        return pointers   # known routines write at most through their pointers
    if name in engine.module.functions:
        callee = engine.module.functions[name]
        if _writes_only_arguments(function_attributes(engine.module, callee)):
            return [v for (t, v), p in zip(inst.operands, callee.params)
                    if t == "ptr" and not {"readonly", "readnone"} & set(p.attrs.split())]
        written = _written_parameters(engine, name)
        if written is None:
            return None
        return [v for k, (t, v) in enumerate(inst.operands) if t == "ptr" and k in written]
    return None


def memory_roots(fn, pointer: str) -> set[str]:
    """`pointer_roots`, with a constant expression on a global (`getelementptr (i8, ptr @M,
    i64 80)`: a member of a global struct, as -O2 folds it) named by that global."""
    return {global_base(r) or r for r in pointer_roots(fn, pointer)}


def _write_roots(engine, fn, skip=lambda inst: False) -> set[str] | None:
    """The roots of all memory `fn`'s stores and calls may write (`pointer_roots` of each
    target but null; instructions `skip` accepts left out), or None when some write may go anywhere:
    an atomic, an invoke, a call `call_write_targets` cannot bound."""
    roots: set[str] = set()
    for inst in fn.instructions():
        if inst.opcode in ("atomicrmw", "cmpxchg", "invoke", "callbr"):
            return None
        if inst.opcode == "store":
            targets = [] if skip(inst) else [inst.operands[1][1]]
        elif inst.opcode == "call":
            targets = call_write_targets(engine, inst)
            if targets is None:
                return None
        else:
            continue
        for target in targets:
            roots |= memory_roots(fn, target)
    # a null root is no memory: a std::vector's data pointer is null until it allocates, so its
    # fill writes through `phi [null, new]` (every function with a local vector wrote "null")
    roots.discard("null")
    return roots


def _written_parameters(engine, name: str) -> frozenset | None:
    """Which parameters of the module's function `name` it (or what it calls) may write
    through, when that is all it writes besides its own allocations; None when it may write
    anything else (a global, an atomic, an unknown routine, a pointer loaded from memory).
    Memoized on the engine; a recursive call counts as unknown."""
    memo = engine.write_summaries
    if name in memo:
        return memo[name]
    memo[name] = None   # recursion: unknown
    fn = engine.module.functions[name]
    params = {p.name: k for k, p in enumerate(fn.params)}
    own = {i.result for i in fn.of_opcode("alloca", "call")
           if i.result and (i.opcode == "alloca" or i.callee in ALLOCATORS)}
    roots = _write_roots(engine, fn)
    if roots is None or any(r not in params and r not in own for r in roots):
        return None
    memo[name] = frozenset(params[r] for r in roots if r in params)
    return memo[name]


def _constant_line(line: str) -> bool:
    """Whether a global's definition line makes it a constant."""
    return " constant " in line.split("=", 1)[1][:80]


class CachePlanner:
    """The cache planner of one reverse-mode function (Enzyme's CacheUtility): what the
    reverse sweep reads of the forward sweep's values and how each is kept.

    API used by the sweep (`ReverseGenerator`, ad/reverse.py, which owns the planner):

    - `fetch(value, block)`: the name under which the reverse block of `block` reads the
      forward value `value`. Free values (constants, parameters, values the reverse block
      recomputes, re-reads from memory that is not overwritten or rebuilds from the store
      that wrote them, IVs it replays) cost nothing; everything else is recorded as needed
      there (`needs`, `rev_names`).
    - `place()`, after both sweeps: decide how each needed value is kept -- a cache slot
      (an alloca, combined mode), the frame record (split mode), a tape record pushed in its
      block and popped in its reverse block, a static record addressed by the loop's IV, a
      side table for values every iteration computes alike -- and produce the lines the
      sweep assembles: `fwd_pushes`, `rev_prologue`, `slot_store_lines`, `static_prologue`,
      `static_pre_lines`, `preheader_lines`, `static_base_lines`, `recompute_lines`, the
      side-table lines.
    - `push_lines`/`pop_lines` (tape records), `value_on_exit`/`iv_on_exit` (values on loop
      exit edges), `canonical_ivs`, `static_count`, the slot allocas of each kind, the side
      table's prologue/frame/free lines, `cache_mask_arguments` (custom rules' masks),
      `reuse_primal_call`, and the facts about memory the sweep needs too: `reverse_local`
      (allocas only the reverse sweep touches), `undone_stores`, `deferred_frees`,
      `stable_roots`.

    It reads the sweep's context (function, CFG, activity, types, homes, engine, signature,
    mode) and asks the sweep for fresh names, shadows and defining blocks (`self.sweep`)."""

    def __init__(self, sweep):
        self.sweep = sweep   # (a cycle, broken by ReverseGenerator.release)
        self.engine, self.fn, self.sig, self.split = sweep.engine, sweep.fn, sweep.sig, sweep.split
        self.cfg, self.act, self.home = sweep.cfg, sweep.act, sweep.home
        # what the planner keeps are primal values: an integer carrying a float keeps its
        # integer type here (the sweep's types give it the float type of its adjoint)
        declared = {p.name: p.type for p in self.fn.params}
        self.types = PrimalTypes(sweep.types, {v: self.fn.defs[v].type if v in self.fn.defs else declared[v]
                                               for v in sweep.views if v in self.fn.defs or v in declared})
        self.params, self.parallel = sweep.params, sweep.parallel
        self.cache_slots: dict[str, str] = {}
        self.needs: dict[str, list[str]] = {b.label: [] for b in self.fn.blocks}
        self.rev_names: dict[tuple[str, str], str] = {}
        self.uses_tape = self.split
        self.recompute_lines: dict[str, list[str]] = {}
        self.static_prologue: dict[str, list[str]] = {}
        self.static_loops: dict[str, dict] = {}
        self.static_pre_lines: dict[str, list[str]] = {}
        self.hoists: dict[tuple[str, str], str] = {}   # (loop header, value) -> reverse slot
        self.hoist_enabled = True
        self._primal_calls: dict | None = None
        self.rev_primal: dict[tuple[str, str], str] = {}   # (block, reverse name) -> forward value
        self._stable: set[str] | None = None
        self._captured: set[str] | None = None
        self._locals: set[str] | None = None
        self._stack: set[str] | None = None       # stack arrays that live through the reverse sweep
        self._restores: bool | None = None        # whether the function calls llvm.stackrestore
        self._final_loads: dict[int, bool] = {}   # load -> its memory is final once it ran
        self._parents: dict[int, object] = {}   # loop -> the innermost loop around it (_parent_loop)
        self._mask_args: dict[int, list[str]] = {}   # cache-mask rule call -> its two masks
        self.deferred_frees: dict[int, Instruction] = {}   # frees run after the reverse sweep
        self._null_roots: set[str] | None = None   # _no_memory
        self._invariants: dict[str, set[str]] = {}   # top-level loop header -> iteration invariants
        self.reverse_local: dict[str, str] = self.reverse_local_allocas()  # pointer -> its alloca
        self.undone_stores: dict[int, str] = self.undoable_stores()   # store -> saved old value
        self.header_index: dict[str, tuple] = {}  # pred index of a loop header -> its IV
        # pred index of a join -> (branch condition, index when true, index when false)
        self.branch_index: dict[str, tuple[str, int, int]] = {}
        # canonical IVs replayed in the reverse sweep: iv -> (loop, step, slot, latch)
        self.iv_loops: dict[str, tuple] = {}
        # IVs replayed as another IV of their loop plus a constant: iv -> (loop, that IV, distance, flags)
        self.iv_offsets: dict[str, tuple] = {}
        self._home: dict[str, str] = {}          # needed value -> block defining it
        # made by place() and the record placers
        self.fwd_pushes: dict[str, list[str]] = {}
        self.rev_prologue: dict[str, list[str]] = {}
        self.slot_store_lines: dict[str, list[str]] = {}
        self.preheader_lines: dict[str, list[str]] = {}
        self.static_base_lines: dict[str, list[str]] = {}   # preheader -> a record's base pointer
        self.pushed_counts: dict[str, int] = {}        # block -> values in its tape record
        self.static_strides: dict[str, int] = {}
        self.side_loops: dict[str, object] = {}   # loop header -> top-level loop with a side table
        self.side_fwd: dict[str, list[str]] = {}
        self.side_cell = 0
        self.frame: dict[str, int] = {}          # split mode: value -> cell of the frame record
        self.frame_cells = 0
        # for the printer (`describe`): how each (reverse block, forward value) read is served
        self.how: dict[tuple[str, str], str] = {}
        self._costless_seen: set[tuple[str, str]] = set()   # (block, value) found costless
        # snapshots (`_snapshot_plan`): instruction -> (loop, base, extent, phi address) or None;
        # (loop header, base) -> the snapshot; its forward lines and reverse pops by preheader
        self._snapshot_plans: dict[int, tuple | None] = {}
        # blocks of a known size that may also be the null pointer (`std::vector` storage)
        self._nullable_blocks: set[str] = set()
        self._snapshot_loops: dict[tuple[str, str], bool] = {}
        self._private: set[str] | None = None
        self.snapshots: dict[tuple[str, str], dict] = {}
        self.snapshot_lines: dict[str, list[str]] = {}
        self.snapshot_pops: dict[str, list[str]] = {}
        self.kept_in: dict[tuple[str, str], tuple[str, str]] = {}   # -> (kind, where)
        # store-to-load forwarding (`_forwarding`): load -> plan or None; stores of counted
        # loops by the base of their address; a store -> the blocks after its loop and which
        # of them write nothing of the store's block
        self._forwardings: dict[int, tuple | None] = {}
        self._counted_stores: dict[str, list] | None = None
        self._regions: dict[int, tuple] = {}
        self._returning: set[str] | None = None   # blocks with a way to a `ret`

    def _is_free(self, value: str) -> bool:
        """True when the reverse sweep can use a forward value without caching it."""
        if not is_local(value) or value in self.params or value == TAPE:
            return True
        if self.sweep.shadow_primal.get(value) in self.reverse_local and \
                self.reverse_local[self.sweep.shadow_primal[value]] == self.sweep.shadow_primal[value]:
            return True
        home = self.sweep.def_block(value)
        if home is None:
            return True
        return not self.split and not self.cfg.in_loop(home) and \
            all(self.cfg.dominates(home, r) for r in self.cfg.returns)

    def ir(self, lines: list[str]) -> IRBuilder:
        """A builder making instructions at the end of `lines` (printed as they are made)."""
        return self.sweep.ir(lines)

    def fetch(self, value: str, block: str, depth: int = 0) -> str:
        """The name under which the reverse block of `block` can read a forward value.

        Free values are used directly; cheap pure values (GEPs, casts, integer arithmetic
        with at most one non-free operand, loop-header predecessor indices) are recomputed
        from their fetched operands; everything else is cached (slot or tape)."""
        if self._is_free(value):
            return value
        key = (block, value)
        if key in self.rev_names:
            return self.rev_names[key]
        if self._replayed_iv(value, block):
            if value in self.iv_loops:    # from its counter slot
                name = self.ir(self.recompute_lines.setdefault(block, [])).load(
                    self.types[value], self.iv_loops[value][2], align=8, hint="iv")
            else:                         # another IV's counter plus the distance (derive_iv)
                _, base, distance, flags = self.iv_offsets[value]
                counter = self.fetch(base, block, depth + 1)
                name = self.ir(self.recompute_lines.setdefault(block, [])).binop(
                    "add", self.types[value], counter, str(distance), flags, hint="iv")
            self.rev_names[key] = name
            self.rev_primal[(block, name)] = value
            self.how[key] = "IV replayed"
            return name
        for serve, how in ((self._reread, "re-read from memory"), (self._forwarded, "rebuilt from its store"),
                           (self._snapshot_read, "re-read from a snapshot"), (self._recompute, "recomputed")):
            got = serve(value, block, depth)
            if got is not None:
                self.rev_names[key] = got
                self.rev_primal[(block, got)] = value
                self.how[key] = how
                return got
        if self.sweep.shadow_primal.get(value) in self.reverse_local:
            raise InternalError(f"cannot recompute shadow {value} in @{self.fn.name}")
        hoisted = self._hoisted(value, block)
        if hoisted is not None:
            self.rev_names[key] = hoisted
            self.rev_primal[(block, hoisted)] = value
            self.how[key] = "loop-invariant: slot filled on loop exit"
            return hoisted
        self.how[key] = "kept"
        self.rev_names[key] = self.sweep.fresh("r")
        self.rev_primal[(block, self.rev_names[key])] = value
        self.needs[block].append(value)
        self._home[value] = self.sweep.def_block(value)
        return self.rev_names[key]

    def _hoisted(self, value: str, block: str) -> str | None:
        """A value invariant in the innermost loop of `block` is kept once per execution of
        the loop, not per iteration: the reverse sweep stores it into a slot when it enters
        the loop's reverse through an exit edge, and reads the slot inside. Invariant: from
        outside the loop, or computed inside it the same in every iteration
        (`_invariant_inside`)."""
        if not self.hoist_enabled:
            return None
        loop = self.cfg.loop_of.get(block)
        home = self.sweep.def_block(value)
        # natural loops only (irreducible cycles have no single entry to hoist to)
        if loop is None or home is None or not loop.exits or not self.cfg.is_natural(loop):
            return None
        if home in loop.blocks and not self._invariant_inside(value, home, loop):
            return None
        key = (loop.header, value)
        if key not in self.hoists:
            self.hoists[key] = make_name("%", value, "inv", loop.header)
        return self.ir(self.recompute_lines.setdefault(block, [])).load(
            self.types.get(value, "ptr"), self.hoists[key], align=8, hint="inv")

    def _invariant_inside(self, value: str, home: str, loop) -> bool:
        """Whether `value`, computed in `loop` itself (not in a loop inside it), is the same
        in every iteration of one execution of the loop and computed before every exit: a load
        through an address the loop does not change from memory the loop does not write
        (`x[i]` read in `for (j...) out[j] += l[k++] * x[i]`, where the optimizer could not
        hoist it past the stores to `out`), or arithmetic on such values. Its value on leaving
        the loop is then its value in each iteration, and one copy per execution of the loop
        serves them all."""
        if self.cfg.loop_of.get(home) is not loop:
            return False
        exiting = [p for e in loop.exits for p in self.cfg.preds[e] if p in loop.blocks]
        return bool(exiting) and all(self.cfg.dominates(home, p) for p in exiting) \
            and value in self._iteration_invariants(loop)

    def fill_exit_edges(self) -> None:
        """Write the loop-invariant slots on every exit edge (markers left by the reverse
        terminators); filling may hoist more values, so repeat until nothing is new."""
        done: dict[str, set] = {}
        by_header: dict[str, list[tuple[str, str]]] = {}   # header -> (value, slot), in hoisting order
        indexed = 0
        changed = True
        while changed:
            changed = False
            for marker, (header, pred, label, lines) in self.sweep.exit_markers.items():
                if len(self.hoists) != indexed:   # hoisted since: index the new ones (dicts keep order)
                    for (h, value), slot in list(self.hoists.items())[indexed:]:
                        by_header.setdefault(h, []).append((value, slot))
                    indexed = len(self.hoists)
                for value, slot in list(by_header.get(header, ())):
                    if value in done.setdefault(marker, set()):
                        continue
                    done[marker].add(value)
                    start = self.value_on_exit(value, pred, label)
                    store: list[str] = []
                    self.ir(store).store(self.types.get(value, "ptr"), start, slot, align=8)
                    fill_at(lines, marker, store)
                    changed = True
        for marker, (_, _, _, lines) in self.sweep.exit_markers.items():
            lines.remove(marker)   # by identity: an InsertPoint equals nothing but itself

    def hoist_slot_allocas(self) -> list[str]:
        out: list[str] = []
        for (_, value), slot in self.hoists.items():
            self.ir(out).alloca(self.types.get(value, "ptr"), align=8, name=slot)
        return out

    def _reread(self, value: str, block: str, depth: int) -> str | None:
        """A load from memory nothing may write between the load and the reverse sweep is read
        again there instead of being cached: in combined mode memory the function never
        writes; in split pieces memory the caller vouches for (`stable_args`); in both, the
        function's own heap blocks once they are final (`_final_after`)."""
        if depth > _REBUILD_DEPTH:
            return None
        inst = self.fn.defs.get(value)
        if inst is not None and inst.opcode == "phi":
            return self._reread_carried(inst, block, depth)
        if inst is None or inst.opcode != "load" or "volatile" in inst.flags:
            return None
        if self._stable is None:
            self._stable = self.stable_roots()
        addr = inst.operands[0][1]
        if not memory_roots(self.fn, addr) <= self._stable and not self._final_after(inst):
            return None
        raddr = self.fetch(addr, block, depth + 1)
        return self.ir(self.recompute_lines.setdefault(block, [])).load(
            inst.type, raddr, align=_align_of(inst), hint="rl")

    def _carried_rereadable(self, phi) -> Affine | None:
        """The address of a carried-load phi (`_carried_address`) whose memory the reverse
        sweep may read again: nothing writes it, or it is final after both loads."""
        address = self._carried_address(phi)
        if address is None:
            return None
        if self._stable is None:
            self._stable = self.stable_roots()
        if pointer_roots(self.fn, address.base) <= self._stable:
            return address
        loads = [self.fn.defs[v] for v, _ in phi.incoming]
        return address if all(self._final_after(load) for load in loads) else None

    def _reread_carried(self, phi, block: str, depth: int) -> str | None:
        """A carried-load phi read again from memory at its address (a CSR row's start
        `row_ptr[i]`, which the previous iteration loaded as `row_ptr[i + 1]`)."""
        address = self._carried_rereadable(phi)
        if address is None:
            return None
        lines = self.recompute_lines.setdefault(block, [])
        rbase = self.fetch(address.base, block, depth + 1)
        delta = self._affine_delta(address, block, depth, lines)
        at = self.ir(lines).gep("i8", rbase, [("i64", delta)], flags="", hint="rc")
        return self.ir(lines).load(phi.type, at, align=self._carried_align(phi), hint="rl")

    def _carried_align(self, phi) -> int:
        return min(_align_of(self.fn.defs[v]) for v, _ in phi.incoming)

    # ------------------------------------------------------------ store-to-load forwarding

    def _counted(self, loop) -> tuple[str, int, str] | None:
        """(iv, first value, bound) of a loop whose IV steps by 1 from a constant and which
        leaves only through its latch when `iv + 1 == bound`: every iteration from the first
        value to `bound - 1` runs, each exactly once."""
        if loop is None or not self.cfg.is_natural(loop) or loop.preheader is None or len(loop.latches) != 1:
            return None
        latch = loop.latches[0]
        if any(s not in loop.blocks for b in loop.blocks if b != latch for s in self.cfg.succs[b]):
            return None
        if loop.trip_count is not None and loop.iv is not None:
            return loop.iv, 0, loop.trip_count
        if loop.iv is None or loop.bound is None or loop.clamp is not None or loop.step != 1 \
                or loop.tested != "next" or loop.start is None or not _INT.fullmatch(loop.start):
            return None
        return loop.iv, int(loop.start), loop.bound

    def _same_bound(self, a: str, b: str) -> bool:
        """Whether two loop bounds are the same number: one value, or one integer extended
        the same way twice (`zext i32 %d to i64` in two inlined helpers)."""
        if a == b:
            return True
        da, db = self.fn.defs.get(a), self.fn.defs.get(b)
        return da is not None and db is not None and da.opcode == db.opcode and \
            da.opcode in ("zext", "sext") and da.type == db.type and da.operands == db.operands

    def _same_instance(self, value: str, writer, reader_block: str) -> bool:
        """Whether `value`, read by the loop `writer`, has at `reader_block` the value it had
        while the loop ran: a constant or argument, or defined outside the loop in a block no
        loop holds that does not hold `reader_block` too (one iteration of an enclosing loop
        runs both)."""
        if not is_local(value) or value in self.params:
            return True
        inst = self.fn.defs.get(value)
        if inst is None or inst.block in writer.blocks:
            return False
        home = self.cfg.loop_of.get(inst.block)
        return home is None or reader_block in home.blocks

    def _forwarding(self, load) -> tuple | None:
        """(store, loop of the store, its IV, the load's index, its shift, the values from
        outside the loop the rebuilt expression reads) when `load` reads an element
        an earlier loop of the same iteration wrote, from values the reverse sweep can compute
        again: `xc[j] = x[j] - mu[j]` filled for j < d, then read as `xc[i]` by later loops
        over i < d (GMM's centred vector, a scratch row reused for every pair). The reverse
        sweep rebuilds the stored expression with the load's index for the store's IV instead
        of keeping the value on the tape.

        What makes it exact: the writing loop counts by 1 from a constant to a bound and
        leaves only through its latch; its header dominates the load (it ran, in this
        iteration of every loop around both); the store runs in each of its iterations and is
        its only write to the block, to an element per iteration (the IV's stride covers the
        stored size); the load's index is the IV of a loop holding it that counts from no
        lower a constant to the same bound (so the element was written); the address is the
        store's with that IV in place of the writer's; nothing that may write the block runs
        between the writing loop and the load; and the stored expression reads only memory
        nothing writes (`stable_roots`) through index arithmetic and cheap float arithmetic
        (`_forward_tree`)."""
        key = id(load)
        if key in self._forwardings:
            return self._forwardings[key]
        self._forwardings[key] = None
        if self.parallel or "volatile" in load.flags or "atomic" in load.flags:
            return None
        # a carried-load phi (GVN's `g[i - 1]`, loaded as `g[i]` the iteration before) is a
        # load at its address too
        address = self._carried_address(load) if load.opcode == "phi" else \
            affine_address(self.fn, self.engine.module, load.operands[0][1])
        if address is None or not address.terms:
            return None
        readers = {}   # IV of a loop holding the load -> (first value, bound)
        loop = self.cfg.loop_of.get(load.block)
        while loop is not None:
            counted = self._counted(loop)
            if counted is not None:
                readers[counted[0]] = counted[1:]
            loop = self._parent_loop(loop)
        if not readers:
            return None
        if self._stable is None:
            self._stable = self.stable_roots()
        if self._counted_stores is None:
            self._counted_stores = {}
            for store in self.fn.of_opcode("store"):
                if self._counted(self.cfg.loop_of.get(store.block)) is not None:
                    written = affine_address(self.fn, self.engine.module, store.operands[1][1])
                    if written is not None:
                        self._counted_stores.setdefault(written.base, []).append((store, written))
        for store, written in self._counted_stores.get(address.base, ()):
            found = self._forwarding_store(load, address, readers, store, written)
            if found is not None:
                self._forwardings[key] = found
                return found
        return None

    def _forwarding_store(self, load, address: Affine, readers: dict, store, written: Affine) -> tuple | None:
        """`_forwarding`'s test of one store (at the affine address `written`)."""
        if "volatile" in store.flags or "atomic" in store.flags or store.operands[0][0] != load.type:
            return None
        writer = self.cfg.loop_of.get(store.block)
        iv, first, bound = self._counted(writer)
        if load.block in writer.blocks:
            return None
        moving = [(t, c) for t, c in written.terms if t[1] == iv]
        size = type_size(self.engine.module, load.type)
        if len(moving) != 1 or size is None or abs(moving[0][1]) < size:
            return None
        term, coeff = moving[0]
        # the load's address is the store's with a reader's IV, plus a constant number of
        # elements `shift`, in the place of the writer's (`d[i - 1]` of a `d[j]` filled before)
        shift, rest = divmod(address.const - written.const, coeff)
        index = next((t for t, c in address.terms if c == coeff and t[0] == term[0] and t[2:] == term[2:]
                      and t[1] in readers and written.with_term(term, t).terms == address.terms), None)
        if index is None or rest or shift > 0 or (shift and term[0] != "v"):
            return None
        start, end = readers[index[1]]
        if start + shift < first or not self._same_bound(end, bound):
            return None
        parent = self._parent_loop(writer)
        if not self.cfg.dominates(writer.header, load.block) or not self.cfg.dominates(store.block, writer.latches[0]) \
                or (parent is not None and load.block not in parent.blocks):
            return None
        if not all(self._same_instance(v, writer, load.block)
                   for v in [address.base] + [t[1] for t, _ in written.terms if t != term]):
            return None
        if not self._unwritten_between(store, writer, parent, address.base, load.block):
            return None
        leaves: set[str] = {index[1]}   # what the rebuilt expression fetches as it is
        if not self._forward_tree(store.operands[0][1], writer, iv, load.block, [0], leaves):
            return None
        return store, writer, iv, index[1], shift, leaves

    def _unwritten_between(self, store, writer, parent, base: str, reader: str) -> bool:
        """Whether nothing but `store` may write the block `base` points into in the loop
        `writer`, nor on any way from the loop's exits to the block `reader` before the loop
        (or `parent`, the loop around it) starts again."""
        key = id(store)
        private = self._private_allocations()
        if key not in self._regions:
            # the blocks reached from the loop's exits before it starts again; None when the
            # loop itself writes the block other than through the store
            region = None
            if not any(self._clobbers(i, base, private) for b in writer.blocks
                       for i in self.fn.block(b).instructions if i is not store):
                region = set()
                todo = [s for b in writer.blocks for s in self.cfg.succs[b] if s not in writer.blocks]
                stops = {writer.header} | ({parent.header} if parent is not None else set())
                while todo:
                    b = todo.pop()
                    if b in region or b in stops or (parent is not None and b not in parent.blocks):
                        continue
                    region.add(b)
                    todo.extend(self.cfg.succs[b])
            self._regions[key] = (region, {})
        region, clean = self._regions[key]
        if region is None or reader not in region:
            return False
        seen: set[str] = set()
        todo = [reader]
        while todo:   # back from the reader, through the blocks after the loop
            b = todo.pop()
            if b in seen or b not in region:
                continue
            seen.add(b)
            if b not in clean:
                clean[b] = not any(self._clobbers(i, base, private) for i in self.fn.block(b).instructions)
            if not clean[b]:
                return False
            todo.extend(self.cfg.preds.get(b, ()))
        return True

    def _forward_tree(self, value: str, writer, iv: str, reader_block: str, count: list[int],
                      leaves: set[str]) -> bool:
        """Whether the reverse sweep can compute a value of the writing loop again at the
        reader with another index: the IV, values from outside the loop (`_same_instance`,
        added to `leaves`), and at most 12 instructions of the loop: index arithmetic, cheap
        float arithmetic and loads of memory nothing writes."""
        if value == iv or not is_local(value):
            return True
        inst = self.fn.defs.get(value)
        if inst is None or inst.block not in writer.blocks:
            leaves.add(value)
            return self._same_instance(value, writer, reader_block)
        count[0] += 1
        if count[0] > 12:
            return False
        if inst.opcode == "load":
            if "volatile" in inst.flags or "atomic" in inst.flags or \
                    not pointer_roots(self.fn, inst.operands[0][1]) <= self._stable:
                return False
        elif inst.opcode == "phi" or not (inst.opcode in _RECOMPUTABLE or _rebuildable_float(inst)):
            return False
        return all(self._forward_tree(v, writer, iv, reader_block, count, leaves)
                   for v in dict.fromkeys(inst.values()))

    def _forward_invariant(self, load, block: str) -> bool:
        """A forwarded load read in a loop it is invariant in: its hoisted slot is filled on
        the loop's exit (`_hoisted`) from the value forwarded there, once per execution. Also
        true, so that the value is kept as any other, when `block` lies outside the loop
        holding the load (a use past its exit, where the reader's IV has moved on)."""
        home = self.cfg.loop_of.get(load.block)
        if home is not None and block not in home.blocks:
            return True
        loop = self.cfg.loop_of.get(block)
        return self.hoist_enabled and loop is not None and load.block not in loop.blocks \
            and bool(loop.exits) and self.cfg.is_natural(loop)

    def _forwarded(self, value: str, block: str, depth: int) -> str | None:
        """A load `_forwarding` serves: the stored expression rebuilt in the reverse block with
        the load's index for the writer's IV."""
        inst = self.fn.defs.get(value)
        if inst is None or inst.opcode not in ("load", "phi") or depth > _REBUILD_DEPTH:
            return None
        plan = self._forwarding(inst)
        if plan is None or self._forward_invariant(inst, block):
            return None
        store, writer, iv, index, shift, _ = plan
        lines = self.recompute_lines.setdefault(block, [])
        element = self.fetch(index, block, depth + 1)
        if shift:
            element = self.ir(lines).binop("add", self.types[index], element, str(shift), name=self.sweep.fresh("fw"))
        built: dict[str, str] = {iv: element}

        def build(v: str) -> str:
            if not is_local(v):
                return v
            if v in built:
                return built[v]
            d = self.fn.defs.get(v)
            if d is None or d.block not in writer.blocks:
                built[v] = self.fetch(v, block, depth + 1)
                return built[v]
            mapping = {u: build(u) for u in dict.fromkeys(d.values())}
            name = self.sweep.fresh("fw")
            self.ir(lines).clone(d, result=name, mapping=mapping, metadata=False)
            built[v] = name
            return name

        return build(store.operands[0][1])

    def _forward_costless(self, load, block: str, depth: int) -> bool:
        """Whether `_forwarded` serves the load in `block` without any cache cell."""
        plan = self._forwarding(load)
        if plan is None or self._forward_invariant(load, block):
            return False
        return all(self._costless(v, block, depth + 1) for v in plan[-1])

    def _affine_delta(self, address: Affine, block: str, depth: int, lines: list[str]) -> str:
        """The byte offset `const + sum(coeff * term)` of an address, computed in the reverse
        block of `block` from the terms it fetches."""
        terms = [(self.fetch(t[1], block, depth + 1), t, c) for t, c in address.terms]
        ir = self.ir(lines)
        delta = str(address.const)
        for v, t, c in terms:
            if t[0] != "v":
                v = ir.cast(t[0], t[2], v, "i64", hint="sni")
            delta = ir.binop("add", "i64", delta, ir.binop("mul", "i64", v, str(c), hint="sni"), hint="sno")
        return delta

    def undoable_stores(self) -> dict[int, str]:
        """Combined mode: stores of scalars through the function's arguments in a block that
        runs exactly once (no loop, dominates every return) with no load before them in that
        block. The forward sweep saves the old value, the reverse sweep puts it back when it
        passes the store and writes the stored value again at its end; while it re-reads
        memory, the memory is then as the forward sweep saw it, so such a store (a result
        written through `double *err` at the end) does not stop re-reading other arguments.
        Split pieces do the same when the caller vouches for some arguments: the old value
        goes into the frame record, and the reverse piece puts back what the memory holds
        when it gets there (the caller may have changed it since)."""
        if self.split and not any(self.sig.stable_args):
            return {}
        params = {p.name for p in self.fn.params}
        out: dict[int, str] = {}
        for block in self.fn.blocks:
            if self.cfg.in_loop(block.label) or not all(self.cfg.dominates(block.label, r)
                                                        for r in self.cfg.returns):
                continue
            for inst in block.instructions:
                if inst.opcode == "load" or (inst.opcode == "call" and not is_inactive_call(inst)
                                             and not callee_name(inst).startswith("llvm.")):
                    break
                if inst.opcode != "store" or "volatile" in inst.flags or "atomic" in inst.flags:
                    continue
                (vty, _), (_, p) = inst.operands
                roots = pointer_roots(self.fn, p)
                if vty.startswith(("{", "[", "<")) or not roots or not roots <= params:
                    continue
                out[id(inst)] = make_name("%", inst.operands[1][1], "old", str(len(out)))
                if self.split:   # a forward value the reverse piece fetches from the frame
                    self.home[out[id(inst)]] = block.label
                    self.types[out[id(inst)]] = vty
        return out

    def _final_after(self, load) -> bool:
        """Whether `load` reads a heap block of the function's own (malloc'd, never captured)
        that nothing may write once the load has run: no write to it is reachable from the
        load, and every free of it runs once, in a block dominating every return, so it can
        wait for the end of the reverse sweep (`deferred_frees`). A table filled before a loop
        nest and only read in it (GMM's Q matrices) is then read again in the reverse sweep
        instead of being taped at every read.

        Split pieces do the same for loads inside loops: the free moves to the end of the
        reverse piece, which gets the block's pointer from the frame record; nothing outside
        the function can reach the block in between (it is never captured). Each augmented
        call's block then lives until its reverse call, which costs less memory than taping
        every read only when the reads are many: loads outside loops keep being taped."""
        if "volatile" in load.flags or (self.split and not self.cfg.in_loop(load.block)):
            return False
        key = id(load)
        if key in self._final_loads:
            return self._final_loads[key]
        self._final_loads[key] = False
        # a null root is no memory (a std::vector's data before it allocates)
        roots = pointer_roots(self.fn, load.operands[0][1]) - {"null"}
        heap = {r for r in self._local_allocations()
                if (d := self.fn.defs.get(r)) is not None and d.opcode in ("call", "invoke")}
        # heap blocks are followed through phis and selects (a std::vector's data is
        # `phi [null, new]`, buffers swapped in a loop); a reverse piece names the pointer of a
        # deferred free as the reverse of the free's own block sees it (`_deferred_free_pointers`)
        captured = (roots & heap) - self._private_allocations() | (roots - heap) & self._captured_allocations()
        if not roots or not roots <= heap | self._stack_arrays() or captured:
            return False
        after = self._reachable_after(load)
        written, undone, unknown = self._writes(after)
        if unknown or (written | undone) & roots or any(
                (p := _lifetime_pointer(i, "start")) and pointer_roots(self.fn, p) & roots for i in after):
            return False
        if not self._defer_frees(roots):
            return False
        self._final_loads[key] = True
        return True

    def _stack_arrays(self) -> set[str]:
        """Combined mode: the function's own stack memory whose contents outlive the forward
        sweep -- allocas of the entry block, and allocas outside loops when nothing restores
        the stack (a VLA's `llvm.stackrestore`). The reverse sweep runs in the same frame, so a
        scratch array filled before a loop and only read afterwards is read again there like
        a final heap block; its `llvm.lifetime.end` waits for the end of the reverse sweep as a
        deferred free does. Split pieces return in between: their stack is gone."""
        if self.split:
            return set()
        if self._stack is None:
            entry = self.fn.blocks[0].label
            self._stack = {r for r in self._local_allocations() if (d := self.fn.defs[r]).opcode == "alloca"
                           and not self.stack_may_release(d)
                           and (d.block == entry or not self.cfg.in_loop(d.block))}
        return self._stack

    def stack_may_release(self, alloca) -> bool:
        """Whether a `llvm.stackrestore` of the function may release the stack array `alloca`
        before the reverse sweep runs: a C99 variable-length array (a count that is no
        constant) or any array past the entry block, in a function that restores the stack.
        Its bytes are not there to be read again, nor to hold adjoints (the sweeps give its
        shadow a heap block)."""
        if not (alloca.block != self.fn.blocks[0].label or any(not v.lstrip("-").isdigit() for _, v in alloca.operands)):
            return False
        if self._restores is None:
            self._restores = any(callee_name(i).startswith("llvm.stackrestore") for i in self.fn.of_opcode("call"))
        return self._restores

    def _reachable_after(self, inst) -> list:
        """The instructions that may run after `inst` in the forward sweep: the rest of its
        block and every block reachable from it (its whole block, `inst` included, when the
        block can run again)."""
        start = inst.block
        seen, todo = set(), list(self.cfg.succs[start])
        while todo:
            b = todo.pop()
            if b not in seen:
                seen.add(b)
                todo += self.cfg.succs[b]
        insts = self.fn.block(start).instructions
        after = insts if start in seen else insts[next(k for k, i in enumerate(insts) if i is inst) + 1:]
        return list(after) + [i for b in seen if b != start for i in self.fn.block(b).instructions]

    def _defer_frees(self, roots: set[str]) -> bool:
        """Whether every free of memory reached from `roots` can wait for the end of the
        reverse sweep: each runs once, in a block dominating every return (not a realloc);
        if so they are moved there (`deferred_frees`)."""
        frees = []
        for inst in self.fn.instructions():
            # a stack array's lifetime.end ends its memory as a free does (`_stack_arrays`)
            if (p := released_pointer(inst)) is not None and pointer_roots(self.fn, p) & roots:
                if inst.callee == "@realloc" or self.cfg.in_loop(inst.block) or \
                        not all(self.cfg.dominates(inst.block, r) for r in self.cfg.returns):
                    return False
                frees.append(inst)
        for inst in frees:
            self.deferred_frees[id(inst)] = inst
        return True

    def cache_mask_arguments(self, call, sig) -> list[str]:
        """The two masks a rule registered with __enzyme_build_cache_mask_f takes at this call
        (custom/convention.py): which pointer arguments' memory may change before the rule's
        gradient runs (`_changes_before_gradient`), and which have a shadow here. Empty for
        other rules; the same for the augment and the gradient of one call."""
        letters = self.engine.cache_masks.get(sig.function)
        if letters is None:
            return []
        if id(call) not in self._mask_args:
            changes = self._changes_before_gradient(call)
            over = [c in "rw" and changes(call.operands[k][1]) for k, c in enumerate(letters)]
            shadowed = [a in ("dup", "dupnoneed") for a in sig.args]
            self._mask_args[id(call)] = cache_mask_values(letters, over, shadowed)
        return self._mask_args[id(call)]

    def _changes_before_gradient(self, call):
        """A test of a pointer argument of `call` (a cache-mask function's): may the memory it
        points to change between the call and the reverse sweep's call of the gradient? The
        question `_reread` answers for a load; True whenever unsure -- a false "unchanged"
        makes the gradient read memory that was overwritten.

        Split pieces: unless the caller vouches for the argument and nothing in this function
        writes it (`_stable_roots`: a constant global, or a parameter the caller passes
        enzyme_not_overwritten or keeps unchanged itself) and nothing frees it. Combined mode:
        unless nothing that may run after the call (`_reachable_after`: the call itself again
        in a loop) writes memory it may reach (`_distinct`), stores the reverse sweep undoes
        included, and its frees can wait for the end of the reverse sweep (the function's own
        heap block, freed once at the end). The call's own writes are the rule's business: it
        knows what it overwrites. Threads of an OpenMP team may write anything."""
        if self.parallel:
            return lambda pointer: True

        def touches(roots: set[str], others: set[str]) -> bool:
            return any(not self._distinct(r, w) for r in roots for w in others)

        def freed_roots(instructions) -> set[str]:
            return {w for f in instructions if f.opcode == "call" and f.operands
                    and (f.callee in DEALLOCATORS or f.callee == "@realloc")
                    for w in pointer_roots(self.fn, f.operands[0][1])}

        if self.split:
            if self._stable is None:
                self._stable = self.stable_roots()
            freed = freed_roots(self.fn.instructions())

            def split_changes(pointer: str) -> bool:
                roots = pointer_roots(self.fn, pointer)
                return not roots or not roots <= self._stable or touches(roots, freed)
            return split_changes
        reached = self._reachable_after(call)
        written, undone, unknown = self._writes(reached)
        freed = freed_roots(reached)

        def changes(pointer: str) -> bool:
            roots = pointer_roots(self.fn, pointer)
            if unknown or not roots or touches(roots, written | undone):
                return True
            if not touches(roots, freed):
                return False
            heap = {r for r in self._local_allocations()
                    if (d := self.fn.defs.get(r)) is not None and d.opcode == "call"}
            return not roots <= heap or bool(roots & self._captured_allocations()) or not self._defer_frees(roots)
        return changes

    def _local_allocations(self) -> set[str]:
        if self._locals is None:
            self._locals = {i.result for i in self.fn.of_opcode("alloca", "call", "invoke")
                            if i.result and (i.opcode == "alloca" or i.callee in ALLOCATORS)}
        return self._locals

    def _writes(self, instructions) -> tuple[set[str], set[str], bool]:
        """(roots of memory the instructions may write, roots written only by undone stores,
        whether some write goes to memory no root names: an unknown callee, an atomic)."""
        written: set[str] = set()
        undone: set[str] = set()
        unknown_writes = False
        for inst in instructions:
            targets = []
            if inst.opcode == "store":
                targets = [inst.operands[1][1]]
                if id(inst) in self.undone_stores:   # written, but not while the reverse re-reads
                    undone |= pointer_roots(self.fn, targets[0])
                    continue
            elif inst.opcode == "call":
                name = callee_name(inst)
                if name.startswith(("llvm.memcpy", "llvm.memmove", "llvm.memset")):
                    targets = [inst.operands[0][1]]
                elif math_rule(inst.callee or "") or writes_through_args(name):
                    # modf/frexp/sincos results, fread/sprintf buffers
                    targets = [v for t, v in inst.operands if t == "ptr"]
                elif name.startswith("llvm.") or is_inactive_call(inst):
                    continue
                elif inst.callee in ALLOCATORS and "realloc" not in name:
                    continue   # a fresh block: writes nothing that existed before
                elif name in self.engine.cache_masks:
                    # a rule library's routine writes only through the pointers marked 'w'
                    targets = [v for (t, v), c in zip(inst.operands, self.engine.cache_masks[name]) if c == "w"]
                elif name in self.engine.module.functions:
                    found = call_write_targets(self.engine, inst)
                    if found is None:
                        callee = self.engine.module.functions[name]
                        found = [v for (t, v), p in zip(inst.operands, callee.params)
                                 if t == "ptr" and not {"readonly", "readnone"} & set(p.attrs.split())]
                        unknown_writes = True
                    targets = found
                else:
                    targets = [v for t, v in inst.operands if t == "ptr"]
                    unknown_writes = True
            elif inst.opcode in ("atomicrmw", "cmpxchg", "invoke", "callbr"):
                unknown_writes = True
            for t in targets:
                written |= pointer_roots(self.fn, t)
        return written, undone, unknown_writes

    def stable_roots(self) -> set[str]:
        """Arguments (and constant globals) whose memory no instruction of this function may
        write: noalias arguments unless written through themselves; other arguments only when
        every write goes to the function's own allocations or to arguments the caller passes
        as private memory (`Signature.private_args`)."""
        local_allocs = self._local_allocations()
        # a write on a way that never returns (a failed length check calling a `noreturn`
        # routine that throws, an exception's landing pad resuming) never comes before the
        # reverse sweep, which runs only once the function has returned
        returning = self._returning_blocks()
        written, undone, unknown_writes = self._writes(i for i in self.fn.instructions() if i.block in returning)
        stable = set()
        # a pointer that is null or one of the function's blocks (a std::vector of zero
        # elements keeps null) writes that block: a store through null is no execution
        foreign = {w for w in written if w not in local_allocs and w != "null"}
        vouched = dict(zip([p.name for p in self.fn.params], self.sig.stable_args))
        private_arg = dict(zip([p.name for p in self.fn.params], self.sig.private_args))
        for p in self.fn.params:
            if p.type != "ptr" or p.name in written or p.name in undone:
                continue
            if self.split and not vouched.get(p.name):
                continue
            # a byval parameter is the function's private copy: nothing else can write it
            noalias = "noalias" in p.attrs.split() or "byval(" in p.attrs
            # every write elsewhere goes through memory the caller says is private to its argument
            private = not unknown_writes and all(private_arg.get(w) for w in foreign)
            if noalias or private or (not foreign and not unknown_writes):
                stable.add(p.name)
        stable |= {make_name("@", g) for g, line in self.engine.module.globals.items() if _constant_line(line)}
        globals_, pointers_too = self._stable_globals()
        stable |= globals_
        if pointers_too:
            stable |= self._loaded_from(stable)
        return stable

    def _returning_blocks(self) -> set[str]:
        """The blocks from which some way leads to a `ret` (`cfg.returning_blocks`)."""
        if self._returning is None:
            self._returning = returning_blocks(self.fn)
        return self._returning

    def mutable_stable_globals(self) -> frozenset:
        """The mutable globals of the stable roots: what this function vouches for to the
        callees whose pieces it calls (constant globals are stable everywhere anyway)."""
        if self._stable is None:
            self._stable = self.stable_roots()
        return frozenset(g for g in self._stable if g.startswith("@")
                         and not _constant_line(self.engine.module.globals.get(strip_name(g), "= global")))

    def _loaded_from(self, stable: set[str]) -> set[str]:
        """Pointers loaded from stable memory (a global `double *data` set at start-up, a
        struct of pointers passed in), transitively, when the function writes only its own
        memory: they were set before the call, so they point to memory that existed then, and
        nothing in the function writes that. Their targets are then stable too."""
        out: set[str] = set()
        loads = [i for i in self.fn.of_opcode("load") if i.type == "ptr" and i.result and "volatile" not in i.flags]
        grew = True
        while grew:
            grew = False
            for inst in loads:
                if inst.result not in out and (roots := memory_roots(self.fn, inst.operands[0][1])) \
                        and roots <= stable | out:
                    out.add(inst.result)
                    grew = True
        return out

    def _stable_globals(self) -> tuple[set[str], bool]:
        """Combined mode: mutable globals nothing may write between the forward sweep's loads
        and the reverse sweep's -- a data array or table the program fills before calling the
        differentiated function (training data, an image, coefficients set at start-up). The
        reverse sweep runs in the same call, so the only writers are the function itself and
        what it calls. None when some write may reach memory no root names: a store through a
        pointer that is not the function's own allocation, a `noalias` parameter or a global
        (an argument may point into a global), an atomic, or a call that may write more than
        its pointer arguments (a function whose `memory(...)` allows other writes, a routine
        without body the library tables do not know). Stores the reverse sweep undoes
        (`undoable_stores`) leave memory as the forward sweep saw it. Split pieces: the caller
        runs between the two pieces and may write any global, so only those it vouches for
        (`Signature.stable_globals`) that the pieces do not write either. Also returns whether
        every write goes to the function's own memory (no global written either): then
        pointers loaded from stable memory point to stable memory (`_loaded_from`)."""
        if self.parallel or (self.split and not self.sig.stable_globals):
            return set(), False
        own = self._local_allocations() | {p.name for p in self.fn.params if "noalias" in p.attrs.split()}
        constant = {make_name("@", g) for g, line in self.engine.module.globals.items() if _constant_line(line)}
        roots = _write_roots(self.engine, self.fn, skip=lambda inst: id(inst) in self.undone_stores)
        if roots is None or any(not r.startswith("@") and r not in own for r in roots):
            return set(), False
        written = {r for r in roots if r.startswith("@") and r not in constant}   # not printf's format
        # an alias is a second name of another global's memory: neither name is vouched for
        for name, line in self.engine.module.globals.items():
            if re.match(r'\S+\s*=\s*(?:[\w()]+\s+)*(?:alias|ifunc)\b', line):
                written |= {make_name("@", name)} | set(re.findall(r'@[-\w$.]+|@"[^"]*"', line.split("=", 1)[1]))
        unwritten = {g for g in (make_name("@", name) for name in self.engine.module.globals) if g not in written}
        if self.split:   # the caller vouches for what runs between the pieces
            return unwritten & self.sig.stable_globals, False
        return unwritten, not written

    # ------------------------------------------------------------------ snapshots
    # A loop that reads a heap block the function overwrites afterwards (a time stepper's
    # state, two buffers swapped every step) used to keep every value it loaded from it, and
    # every value computed from those, one cell each per iteration: a 3-point stencil kept two
    # per point and step, a CSR product one per nonzero. When nothing in the loop writes the
    # block, the forward sweep copies the block onto the tape once at the loop's preheader
    # (its size is the allocation's), and the reverse sweep reads the loads, and what it
    # recomputes from them, back from that copy: 8 bytes per element per entry of the loop,
    # whatever the loop reads. Combined mode only.

    def _private_allocations(self) -> set[str]:
        """The function's heap blocks no pointer outside it can reach: every pointer derived
        from one (GEPs, casts, phis and selects: two buffers swapped every step) is only
        loaded from, stored through, compared, freed or handed to a memory intrinsic or to a
        callee that does not capture it (`_captured_allocations`, which also follows phis)."""
        if self._private is None:
            heap = {r for r in self._local_allocations()
                    if (d := self.fn.defs.get(r)) is not None and d.opcode in ("call", "invoke")}
            self._private = heap - self._captured_allocations()
        return self._private

    def _parent_loop(self, loop):
        """The innermost loop strictly containing `loop`, or None."""
        key = id(loop)
        if key not in self._parents:
            best = None
            for other in self.cfg.loops:
                if other is not loop and loop.header in other.blocks and loop.blocks <= other.blocks \
                        and (best is None or len(other.blocks) < len(best.blocks)):
                    best = other
            self._parents[key] = best
        return self._parents[key]

    _INT_REBUILT = frozenset({"add", "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor", "zext", "sext", "trunc"})

    def _rebuildable_at(self, value: str, block: str, depth: int = 0) -> bool:
        """Whether an integer (a heap block's size) can be computed at the end of `block`:
        it is available there, or integer arithmetic without division over values that are
        (`_rebuilt_at`)."""
        if self._available_at(value, block):
            return True
        inst = self.fn.defs.get(value)
        return depth < 6 and inst is not None and inst.opcode in self._INT_REBUILT \
            and all(self._rebuildable_at(v, block, depth + 1) for _, v in inst.operands)

    def _rebuilt_at(self, value: str, block: str, ir, depth: int = 0) -> str:
        """`value` at the end of `block` (`_rebuildable_at`): the arithmetic again, without
        its no-wrap and exactness flags (it may now run where the allocation did not happen,
        and its result is not used there)."""
        if self._available_at(value, block):
            return value
        inst = self.fn.defs[value]
        args = [self._rebuilt_at(v, block, ir, depth + 1) for _, v in inst.operands]
        if inst.opcode in ("zext", "sext", "trunc"):
            return ir.cast(inst.opcode, inst.operands[0][0], args[0], inst.type, hint="snx")
        return ir.binop(inst.opcode, inst.type, args[0], args[1], hint="snx")

    def _available_at(self, value: str, block: str) -> bool:
        """Whether a forward value can be read at the end of `block`."""
        if not is_local(value) or value in self.params:
            return True
        home = self.sweep.def_block(value)
        return home is not None and self.cfg.dominates(home, block)

    def _clobbers(self, inst, base: str, private: set[str]) -> bool:
        """Whether `inst` may write the memory of the heap block `base` points to."""
        op = inst.opcode
        if op == "store":
            return not never_same(self.fn, inst.operands[1][1], base, private)
        if op in ("atomicrmw", "cmpxchg", "invoke", "callbr"):
            return True
        if op != "call":
            return False
        name = callee_name(inst)
        if name.startswith(("llvm.memcpy", "llvm.memmove", "llvm.memset")):
            return not never_same(self.fn, inst.operands[0][1], base, private)
        if inst.callee in DEALLOCATORS or inst.callee == "@realloc":
            return not never_same(self.fn, inst.operands[0][1], base, private)
        if name.startswith("llvm.") or is_inactive_call(inst) or \
                (inst.callee in ALLOCATORS and "realloc" not in name):
            return False
        targets = call_write_targets(self.engine, inst)
        if targets is None:
            return True
        return any(not never_same(self.fn, t, base, private) for t in targets)

    def _loop_ivs(self, loop) -> dict[str, tuple[int, str]]:
        """The header phis of `loop` stepping by a constant: iv -> (step, start)."""
        return {iv: (step, start) for iv, (step, start, _) in constant_step_ivs(self.fn, loop).items()}

    def _moving_term(self, address: Affine, loop, ivs) -> tuple | None:
        """The one term of `address` that is an IV of `loop` (None when there is not exactly
        one, or another term changes inside the loop)."""
        moving = None
        for term, _ in address.terms:
            if term[1] in ivs and moving is None:
                moving = term
            elif self.sweep.def_block(term[1]) in loop.blocks or not self._available_at(term[1], loop.preheader):
                return None
        return moving

    def _snapshot_loop(self, loop, base: str, extent: str, private: set[str], at: str) -> list | None:
        """Whether the heap block `base` can be copied at the end of block `at` (the preheader
        of `loop`, or its header) and read back for all of the loop (one iteration of it for
        the header): `at` runs once per entry (per iteration), base and the block's size are
        known there, and nothing in the loop writes the block -- except in-place stores of
        the loop itself at an address stepping with one of its IVs (`u[i] = f(u[i], u[i+1])`),
        returned as (store, address) for `_reads_ahead` to check each load against. None
        when no copy can serve."""
        key = (loop.header, base, at)
        if key not in self._snapshot_loops:
            ok = self.cfg.is_natural(loop) and (loop.trip_count is not None or loop.bound is not None) \
                and self._available_at(base, at) and (extent is None or self._rebuildable_at(extent, at)) \
                and (at == loop.header or (loop.preheader == at and self.cfg.succs[at] == [loop.header]))
            in_place = []
            ivs = self._loop_ivs(loop) if ok else {}
            for b in sorted(loop.blocks) if ok else ():
                for inst in self.fn.block(b).instructions:
                    if not self._clobbers(inst, base, private):
                        continue
                    address = affine_address(self.fn, self.engine.module, inst.operands[1][1]) \
                        if inst.opcode == "store" else None
                    if address is None or address.base != base or at != loop.preheader \
                            or self.cfg.loop_of.get(b) is not loop or self._moving_term(address, loop, ivs) is None:
                        ok = False
                        break
                    in_place.append((inst, address))
                if not ok:
                    break
            self._snapshot_loops[key] = in_place if ok else None
        return self._snapshot_loops[key]

    def _reads_ahead(self, load, address: Affine, loop, in_place) -> bool:
        """Whether a load of `loop` reads, in every iteration, memory no in-place store of the
        loop has written yet: both step with the same IV by the same amount per iteration and
        the load's offset is ahead of the store's in the direction the loop goes (or equal,
        with the load first in the iteration)."""
        if not in_place:
            return True
        if load.opcode != "load" or self.cfg.loop_of.get(load.block) is not loop:
            return False
        ivs = self._loop_ivs(loop)
        for store, written in in_place:
            if address.base != written.base:
                return False
            moving = self._moving_term(written, loop, ivs)
            ours = dict(address.terms)
            theirs = dict(written.terms)
            if moving is None or ours != theirs:
                return False
            per_iteration = theirs[moving] * ivs[moving[1]][0]
            gap = address.const - written.const
            if gap % per_iteration:
                continue   # never the same bytes
            ahead = gap // per_iteration
            if ahead < 0:
                return False
            if ahead == 0:
                insts = self.fn.block(load.block).instructions
                if store.block != load.block or insts.index(store) < insts.index(load):
                    return False
        return True

    def _carried_address(self, phi, depth: int = 0) -> Affine | None:
        """A loop-header phi that is a load under another name: GVN keeps the `a[i + 1]` one
        iteration loads and hands it to the next one as its `a[i]` (the preheader loads the
        first), and a second phi may take that value one more iteration along (`left = mid`).
        The latch value is a load, or such a phi, from a base the loop does not change, whose
        address taken one step back is the preheader load's at the first iteration: the
        phi's address at every iteration is then that expression of the header's IV
        (returned)."""
        loop = self.cfg.loop_of.get(phi.block)
        if loop is None or loop.header != phi.block or loop.preheader is None or len(loop.latches) != 1 \
                or len(phi.incoming) != 2 or depth > 3:
            return None
        incoming = {b: v for v, b in phi.incoming}
        pre, latch = loop.preheader, loop.latches[0]
        if set(incoming) != {pre, latch}:
            return None
        entry, carried = self.fn.defs.get(incoming[pre]), self.fn.defs.get(incoming[latch])
        if entry is None or entry.opcode != "load" or entry.block != pre or entry.type != phi.type \
                or "volatile" in entry.flags or "atomic" in entry.flags or carried is None:
            return None
        if carried.opcode == "load" and "volatile" not in carried.flags and "atomic" not in carried.flags \
                and carried.type == phi.type and carried.block in loop.blocks:
            later = affine_address(self.fn, self.engine.module, carried.operands[0][1])
        elif carried.opcode == "phi" and carried.block == loop.header and carried is not phi:
            later = self._carried_address(carried, depth + 1)
        else:
            return None
        first = affine_address(self.fn, self.engine.module, entry.operands[0][1])
        if first is None or later is None or first.base != later.base \
                or self.sweep.def_block(later.base) in loop.blocks:
            return None
        ivs = self._loop_ivs(loop)
        moving = self._moving_term(later, loop, ivs)
        if moving is None:
            return None
        step, start = ivs[moving[1]]
        address = later.shifted(moving, step)   # where the previous iteration's value was read
        coeff = dict(address.terms)[moving]
        rest = tuple((t, c) for t, c in address.terms if t != moving)
        if _INT.fullmatch(start):
            expected = Affine(address.base, address.const + coeff * int(start), rest)
        else:
            expected = address.with_term(moving, (moving[0], start) + moving[2:])
        if expected != first:
            return None
        # the preheader load read the memory a snapshot copies at the end of the preheader
        after = self.fn.block(pre).instructions
        after = after[next(k for k, i in enumerate(after) if i is entry) + 1:]
        if any(self._clobbers(i, address.base, self._private_allocations()) for i in after):
            return None
        return address

    def _carried_source(self, phi):
        """The load of the loop whose value a carried-load phi holds (through a chain of phis)."""
        loop = self.cfg.loop_of[phi.block]
        v = next(v for v, b in phi.incoming if b == loop.latches[0])
        inst = self.fn.defs[v]
        return inst if inst.opcode == "load" else self._carried_source(inst)

    def _snapshot_plan(self, inst) -> tuple | None:
        """(loop, base, extent, address, at) when the load (or carried-load phi) `inst` can be
        read from a snapshot: its base is the start of a private heap block of a known size,
        and the outermost loop around it where the base is fixed and the block unwritten is
        chosen, the copy taken at its preheader (`_snapshot_loop`); or, when the base changes
        with the iterations of a loop (two buffers swapped every step) and nothing in that
        loop writes the block, at its header, once per iteration, for all the loops inside it.
        `address` is the phi's address (`_carried_address`); None for a load, which rebases
        its own. A loop whose iterations do not sweep the block (an index that is not an IV
        of the loop or of one inside it), entered per element of an outer loop, would copy
        the whole block for a few reads: the load must then sit in a loop nested inside the
        chosen one."""
        key = id(inst)
        if key in self._snapshot_plans:
            return self._snapshot_plans[key]
        self._snapshot_plans[key] = None
        if self.parallel:
            return None
        if inst.opcode == "load":
            if "volatile" in inst.flags or "atomic" in inst.flags:
                return None
            address = affine_address(self.fn, self.engine.module, inst.operands[0][1])
            carried, reader = None, inst
        else:
            address = carried = self._carried_address(inst)
            reader = self._carried_source(inst) if carried is not None else None
        if address is None:
            return None
        base = address.base
        extent = allocation_extent(self.fn, base)
        if extent is None and (extent := allocation_extent(self.fn, base, null_ok=True)) is not None:
            self._nullable_blocks.add(base)   # copied only where the pointer is not null
        private = self._private_allocations()
        chosen, at, loop = None, None, self.cfg.loop_of.get(inst.block)
        home = self.sweep.def_block(base)
        if extent is None:
            # memory of unknown size (the caller's array): a copy of the bytes the loop's reads
            # span, from the IV's first and last values -- for the reads of the loop itself
            if loop is None or (home is not None and home in loop.blocks) \
                    or id(inst) not in self._snapshot_range(loop, base):
                return None
            in_place = self._snapshot_loop(loop, base, None, private, loop.preheader)
            if in_place is None or not self._reads_ahead(reader, address if carried is None else
                                                         affine_address(self.fn, self.engine.module,
                                                                        reader.operands[0][1]), loop, in_place):
                return None
            chosen, at, loop = loop, loop.preheader, None
        while loop is not None and (home is None or home not in loop.blocks):
            in_place = self._snapshot_loop(loop, base, extent, private, loop.preheader)
            if in_place is None or not self._reads_ahead(reader, address if carried is None else
                                                         affine_address(self.fn, self.engine.module,
                                                                        reader.operands[0][1]), loop, in_place):
                break
            chosen, at, loop = loop, loop.preheader, self._parent_loop(loop)
            if in_place:
                break   # an outer loop runs this one's stores
        if loop is not None and home == loop.header and (chosen is None or not self._snapshot_loops.get(
                (chosen.header, base, chosen.preheader))) and self._snapshot_loop(loop, base, extent, private,
                                                                                  loop.header) == []:
            chosen, at = loop, loop.header   # a copy per iteration of the loop the base changes with
        if chosen is None:
            return None
        innermost = self.cfg.loop_of.get(inst.block)
        ivs = {lp.iv for lp in self.cfg.loops if lp.iv and lp.blocks <= chosen.blocks}
        swept = any(t[1] in ivs for t, _ in address.terms) or \
            any(self.fn.defs.get(t[1]) is not None and self.fn.defs[t[1]].opcode == "phi"
                and self.fn.defs[t[1]].block in chosen.blocks for t, _ in address.terms)
        if not swept and innermost is chosen:
            return None
        # worth a copy: the loop reads elements of the block again in later iterations (a
        # stencil's neighbours, kept once per read otherwise), or gathers from it through
        # indices (a sparse product: one cell per nonzero). A sweep reading each element once
        # (the fields of a body, a row of gates) keeps as many cells either way, in a record
        # laid out for the reverse loop, and the copy would only add its call and strided reads.
        if not self._rereads_elements(chosen, base):
            return None
        self._snapshot_plans[key] = (chosen, base, extent, carried, at)
        return self._snapshot_plans[key]

    def _snapshot_range(self, loop, base: str) -> dict:
        """The reads of `loop` itself (its own blocks, its header's carried-load phis) at
        `base + const + coeff * iv` for one IV of the loop (or a constant offset): instruction
        id -> (iv term or None, coeff, const, bytes read). A copy of the bytes they span over
        the loop's iterations serves them all."""
        key = ("range", loop.header, base)
        if key in self._snapshot_loops:
            return self._snapshot_loops[key]
        out: dict[int, tuple] = {}
        ivs = self._loop_ivs(loop)
        if loop.preheader is not None and len(loop.latches) == 1:
            for b in loop.blocks:
                if self.cfg.loop_of.get(b) is not loop:
                    continue
                for inst in self.fn.block(b).instructions:
                    if inst.opcode == "load" and "volatile" not in inst.flags and "atomic" not in inst.flags:
                        a = affine_address(self.fn, self.engine.module, inst.operands[0][1])
                    elif inst.opcode == "phi" and b == loop.header and inst.type != "ptr":
                        a = self._carried_address(inst)
                    else:
                        continue
                    size = type_size(self.engine.module, inst.type)
                    if a is None or a.base != base or size is None or len(a.terms) > 1 \
                            or (a.terms and a.terms[0][0][1] not in ivs):
                        continue
                    term, coeff = a.terms[0] if a.terms else (None, 0)
                    out[id(inst)] = (term, coeff, a.const, size)
        self._snapshot_loops[key] = out
        return out

    def _range_lines(self, loop, base: str, ir) -> tuple[str, str]:
        """In the preheader of `loop`: the first byte (from `base`) and the byte count of what
        the reads of `_snapshot_range` span over all iterations."""
        ivs = self._loop_ivs(loop)
        tc = self.sweep.fresh("snt")
        self.static_count(tc, loop, lambda v: v, ir.into)
        lo = hi = None
        for term, coeff, const, size in self._snapshot_range(loop, base).values():
            if term is None:
                ends = [str(const)]
            else:
                step, start = ivs[term[1]]
                first = ir.cast(term[0], term[2], start, "i64", hint="snf") if term[0] != "v" else start
                steps = ir.binop("mul", "i64", ir.binop("add", "i64", tc, "-1", hint="snk"), str(step), hint="snk")
                last = ir.binop("add", "i64", first, steps, hint="snl")
                ends = [ir.binop("add", "i64", str(const), ir.binop("mul", "i64", v, str(coeff), hint="sne"), hint="sne")
                        for v in (first, last)]
            low, high = ends[0], ends[-1]
            if len(ends) > 1:
                low = ir.call("i64", "@llvm.smin.i64", [("i64", ends[0]), ("i64", ends[1])], hint="snm")
                high = ir.call("i64", "@llvm.smax.i64", [("i64", ends[0]), ("i64", ends[1])], hint="snm")
            high = ir.binop("add", "i64", high, str(size), hint="snm")
            lo = low if lo is None else ir.call("i64", "@llvm.smin.i64", [("i64", lo), ("i64", low)], hint="snm")
            hi = high if hi is None else ir.call("i64", "@llvm.smax.i64", [("i64", hi), ("i64", high)], hint="snm")
        self.engine.declare("@llvm.smin.i64")
        self.engine.declare("@llvm.smax.i64")
        return lo, ir.binop("sub", "i64", hi, lo, hint="snb")

    def _rereads_elements(self, loop, base: str) -> bool:
        """Whether `loop` reads elements of the block `base` starts again and again: three or
        more reads (loads and carried-load phis) at addresses that differ by whole numbers of
        steps of one IV of the loop nest (a stencil's neighbours: without a copy the reverse
        sweep keeps about one cell per neighbour, with it one per element), or a load through
        an index that is no IV (a gather) in a loop nested inside `loop`. Two such reads (a
        pair `x[i]`, `x[i + 1]`) keep about as many cells either way."""
        key = ("rereads", loop.header, base)
        if key in self._snapshot_loops:
            return self._snapshot_loops[key]
        self._snapshot_loops[key] = False
        ivs = {}
        for lp in self.cfg.loops:
            if lp.blocks <= loop.blocks:
                ivs.update(self._loop_ivs(lp))
        reads = []
        for b in loop.blocks:
            for inst in self.fn.block(b).instructions:
                if inst.opcode == "phi" and inst.type != "ptr":
                    a = self._carried_address(inst)
                elif inst.opcode == "load":
                    a = affine_address(self.fn, self.engine.module, inst.operands[0][1])
                    if a is not None and a.base == base and self.cfg.loop_of.get(inst.block) is not loop \
                            and any(t[1] not in ivs for t, _ in a.terms):
                        self._snapshot_loops[key] = True   # a gather in an inner loop
                        return True
                else:
                    continue
                if a is not None and a.base == base:
                    reads.append(a)
        # IVs of one loop stepping alike from constant starts (`i` and `i + 1` kept apart by
        # indvars) are one IV and an offset
        canon: dict[str, tuple[str, int]] = {}
        for lp in self.cfg.loops:
            if lp.blocks <= loop.blocks:
                group: dict[int, tuple[str, int]] = {}
                for iv, (step, start) in self._loop_ivs(lp).items():
                    if _INT.fullmatch(start):
                        first = group.setdefault(step, (iv, int(start)))
                        canon[iv] = (first[0], int(start) - first[1])

        def normal(a: Affine) -> Affine:
            for (kind, name, *_), c in a.terms:
                if kind == "v" and name in canon and canon[name][0] != name:
                    a = Affine(a.base, a.const + c * canon[name][1], a.terms).with_term(("v", name), ("v", canon[name][0]))
            return a

        groups: dict[tuple, set[int]] = {}
        for a in map(normal, reads):
            groups.setdefault(a.terms, set()).add(a.const)
        for terms, consts in groups.items():
            for t, c in terms:
                if t[1] not in ivs:
                    continue
                stride = abs(c * ivs[t[1]][0])
                by_element: dict[int, int] = {}
                for k in consts:   # reads falling on the same element position, iterations apart
                    by_element[k % stride] = by_element.get(k % stride, 0) + 1
                if max(by_element.values()) >= 3:
                    self._snapshot_loops[key] = True
                    return True
        return False

    def _snapshot_costless(self, inst, block: str, depth: int) -> bool:
        """Whether the reverse block of `block` reads `inst` from a snapshot without a cell."""
        plan = self._snapshot_plan(inst)
        if plan is None or block not in plan[0].blocks:
            return False
        if plan[3] is None:
            return self._cheap_address(inst.operands[0][1], block, depth + 1)
        return all(self._per_iteration_free(t[1], block, depth + 1) for t, _ in plan[3].terms)

    def _cheap_address(self, value: str, block: str, depth: int) -> bool:
        """Index arithmetic whose leaves cost the reverse block no cell per iteration."""
        if depth > _REBUILD_DEPTH:
            return False
        if self._per_iteration_free(value, block, depth):
            return True
        inst = self.fn.defs.get(value)
        return inst is not None and inst.opcode in _RECOMPUTABLE and \
            all(self._cheap_address(v, block, depth + 1) for v in dict.fromkeys(inst.values()))

    def _snapshot(self, loop, base: str, extent: str, pre: str) -> dict:
        """The snapshot of `base`'s block at the end of block `pre` (the preheader of `loop`, or
        its header): the forward sweep reserves its bytes on the tape and copies the block
        there after the block's own code; the reverse of that block pops it, after the
        block's own record (pushed after it)."""
        key = (loop.header, base, pre)
        if key in self.snapshots:
            return self.snapshots[key]
        k = len(self.snapshots)
        off, lo = f"%snap.off${k}", None
        for helper in ("__enzyme_build_tape_frame", "__enzyme_build_tape_at", "__enzyme_build_tape_pop",
                       "__enzyme_build_tape_push", "__enzyme_build_tape_grow"):
            self.engine.support.add(helper)
        self.engine.declare("@llvm.memcpy.p0.p0.i64")
        self.uses_tape = True
        lines = self.snapshot_lines.setdefault(pre, [])
        ir = self.ir(lines)
        if extent is None:   # the span of the loop's reads, from its first byte
            first, count = self._range_lines(loop, base, ir)
            lo, extent = f"%snap.lo${k}", f"%snap.bytes${k}"
            ir.binop("add", "i64", first, "0", name=lo)
            ir.binop("add", "i64", count, "0", name=extent)
            src = ir.gep("i8", base, [("i64", lo)], flags="", hint="snsrc")
        elif base in self._nullable_blocks or not self._available_at(extent, pre):
            # the size computed where the block was allocated, again here (`n * 8` in the
            # branch that allocates); no bytes where the block was never allocated
            src, size, extent = base, self._rebuilt_at(extent, pre, ir), f"%snap.bytes${k}"
            if base in self._nullable_blocks:
                ir.select(ir.cmp("icmp", "eq", "ptr", base, "null", hint="snnull"), "i64", "0", size, name=extent)
            else:
                ir.binop("add", "i64", size, "0", name=extent)
        else:
            src = base
        for name in (off, lo, extent):
            if name is not None and name.startswith("%snap."):
                self.sweep.home[name] = pre
                self.types[name] = "i64"
        bytes_ = ir.binop("and", "i64", ir.binop("add", "i64", extent, "7", hint="snb"), "-8", hint="snb")
        ir.call("i64", "@__enzyme_build_tape_frame", [("ptr", TAPE), ("i64", bytes_)], name=off)
        at = ir.call("ptr", "@__enzyme_build_tape_at", [("ptr", TAPE), ("i64", off)], hint="snap")
        ir.call("void", "@llvm.memcpy.p0.p0.i64", [("ptr", at), ("ptr", src), ("i64", extent), ("i1", "false")])
        # popped in the reverse of the preheader: a later snapshot of the same preheader first
        rext = self.fetch(extent, pre) if is_local(extent) else extent
        pop: list[str] = []
        ir = self.ir(pop)
        rbytes = ir.binop("and", "i64", ir.binop("add", "i64", rext, "7", hint="snb"), "-8", hint="snb")
        ir.call("ptr", "@__enzyme_build_tape_pop", [("ptr", TAPE), ("i64", rbytes)], result=False)
        self.snapshot_pops[pre] = pop + self.snapshot_pops.get(pre, [])
        self.snapshots[key] = {"off": off, "base": base, "extent": extent, "loop": loop, "at": pre, "lo": lo}
        return self.snapshots[key]

    def _snapshot_read(self, value: str, block: str, depth: int) -> str | None:
        """A load (or carried-load phi) of the loop a snapshot covers, read back from it."""
        if depth > _REBUILD_DEPTH:
            return None
        inst = self.fn.defs.get(value)
        if inst is None or inst.opcode not in ("load", "phi"):
            return None
        plan = self._snapshot_plan(inst)
        if plan is None or block not in plan[0].blocks:
            return None
        loop, base, extent, carried, at = plan
        snap = self._snapshot(loop, base, extent, at)
        lines = self.recompute_lines.setdefault(block, [])
        roff = self.fetch(snap["off"], block, depth + 1)
        if carried is None:
            raddr = self.fetch(inst.operands[0][1], block, depth + 1)
            rbase = self.fetch(base, block, depth + 1)
            ir = self.ir(lines)
            delta = ir.binop("sub", "i64", ir.cast("ptrtoint", "ptr", raddr, "i64", hint="sna"),
                             ir.cast("ptrtoint", "ptr", rbase, "i64", hint="sna"), hint="sno")
            align = _align_of(inst)
        else:
            delta = self._affine_delta(carried, block, depth, lines)
            ir = self.ir(lines)
            align = self._carried_align(inst)
        if snap["lo"] is not None:   # a copy of the reads' span: offsets from its first byte
            rlo = self.fetch(snap["lo"], block, depth + 1)
            ir = self.ir(lines)
            delta = ir.binop("sub", "i64", delta, rlo, hint="sno")
            align = 1
        at = ir.call("ptr", "@__enzyme_build_tape_at", [("ptr", TAPE), ("i64", roff)], hint="snap")
        cell = ir.gep("i8", at, [("i64", delta)], hint="snc")
        return ir.load(inst.type, cell, align=min(align, 8), hint="sn")

    def _recompute(self, value: str, block: str, depth: int) -> str | None:
        if depth > _REBUILD_DEPTH and self.sweep.shadow_primal.get(value) not in self.reverse_local:
            return None
        lines = self.recompute_lines.setdefault(block, [])
        if value in self.header_index:
            iv, first, pre_index, latch_index = self.header_index[value]
            ivr = self.fetch(iv, block, depth + 1)
            first = self.fetch(first, block, depth + 1) if is_local(first) else first
            c, name = self.sweep.fresh("rc"), self.sweep.fresh("rc")
            self.ir(lines).cmp("icmp", "eq", self.types[iv], ivr, first, name=c)
            return self.ir(lines).select(c, "i32", str(pre_index), str(latch_index), name=name)
        if value in self.branch_index:
            # which way a join was entered, from the branch that decided it (when the
            # condition costs nothing to obtain again)
            cond, when_true, when_false = self.branch_index[value]
            if not self._costless(cond, block, depth + 1):
                return None
            c = self.fetch(cond, block, depth + 1)
            return self.ir(lines).select(c, "i32", str(when_true), str(when_false), name=self.sweep.fresh("rc"))
        primal = self.sweep.shadow_primal.get(value)
        inst = self.fn.defs.get(primal or value)
        if inst is None:
            return None
        if _rebuildable_float(inst) and primal is None:
            # float arithmetic (division too: one more division costs less than a tape cell
            # written in the forward sweep and read back in the reverse) is recomputed only
            # when none of its operands needs a cell per iteration: each comes for free or
            # from a slot filled once per execution of the loop (`in[i] / m`, m invariant)
            if not all(self._per_iteration_free(v, block, depth + 1) for v in dict.fromkeys(inst.values())):
                return None
        elif inst.opcode not in _RECOMPUTABLE:
            return None
        if inst.opcode != "getelementptr" and primal is not None:
            return None
        operands = list(dict.fromkeys(inst.values()))
        if primal is not None:
            base = inst.operands[0][1]
            sources = {v: (self.sweep.shadow(base) if v == base else v) for v in operands}
        else:
            sources = {v: v for v in operands}
        costly = [v for v in sources.values() if not self._is_free(v)
                  and (block, v) not in self.rev_names and not self._cheap(v)
                  and not self._replayed_iv(v, block)
                  and not self._per_iteration_free(v, block, depth + 1)]
        if len(costly) > 1 and primal not in self.reverse_local:
            return None
        fetched = {v: self.fetch(src, block, depth + 1) for v, src in sources.items()}
        if primal is not None and not is_local(inst.operands[0][1]):
            base = inst.operands[0][1]
            fetched[base] = self.sweep.shadow(base)     # a global's shadow
        name = self.sweep.fresh("rc")
        self.ir(lines).clone(inst, result=name, mapping=fetched, metadata=False)
        return name

    def at_hand(self, value: str, block: str) -> bool:
        """Whether the reverse block of `block` reads `value` at no further cost: the forward
        value is usable as it is, or the block already fetched it."""
        return self._is_free(value) or (block, value) in self.rev_names

    def costless(self, value: str, block: str) -> bool:
        """Whether the reverse block of `block` can obtain `value` without any cache or tape
        cell (it may take instructions: a re-read, index arithmetic, an IV's replay)."""
        return self._costless(value, block, 0)

    def _costless(self, value: str, block: str, depth: int) -> bool:
        """True when the reverse block can obtain `value` without any cache or tape cell."""
        if self._is_free(value) or (block, value) in self.rev_names or (block, value) in self._costless_seen:
            return True
        if self._replayed_iv(value, block):
            return True   # an enclosing loop's IV is replayed: checked before the depth bound
        if depth > _REBUILD_DEPTH:
            return False
        inst = self.fn.defs.get(value)
        if inst is None:
            return False
        ok = False
        if inst.opcode == "load" and (not self.split or self.sig.stable_args or self.sig.stable_globals
                                      or self._final_after(inst)):
            if self._stable is None:
                self._stable = self.stable_roots()
            addr = inst.operands[0][1]
            ok = "volatile" not in inst.flags \
                and (memory_roots(self.fn, addr) <= self._stable or self._final_after(inst)) \
                and self._costless(addr, block, depth + 1)
        elif inst.opcode in _RECOMPUTABLE or _cheap_float(inst):
            ok = all(self._costless(v, block, depth + 1) for v in dict.fromkeys(inst.values()))
        if not ok and inst.opcode == "phi" and (address := self._carried_rereadable(inst)) is not None:
            ok = self._per_iteration_free(address.base, block, depth + 1) and \
                all(self._per_iteration_free(t[1], block, depth + 1) for t, _ in address.terms)
        if not ok and inst.opcode in ("load", "phi"):
            ok = self._forward_costless(inst, block, depth)
        if not ok and inst.opcode in ("load", "phi"):
            ok = self._snapshot_costless(inst, block, depth)
        if ok:   # stays true (what the block reads only grows); a "no" may be the depth bound's
            self._costless_seen.add((block, value))
        return ok

    def _per_iteration_free(self, value: str, block: str, depth: int) -> bool:
        """Whether `value` costs the reverse block of `block` no per-iteration cell: it is
        obtained without any cache (`iv + 1`, a re-read), or it comes from outside the
        innermost loop of `block` and is hoisted (one slot per execution of the loop). A GEP
        of a hoisted base and `iv + 1` (a stencil's `u[i + 1]` and its shadow) is then
        recomputed instead of taping the pointer every iteration."""
        if not is_local(value) or value in self.params:
            return True
        if self.sweep.shadow_primal.get(value) is None and self._costless(value, block, depth):
            return True
        loop = self.cfg.loop_of.get(block)
        home = self.sweep.def_block(value)
        return self.hoist_enabled and loop is not None and home is not None \
            and home not in loop.blocks and bool(loop.exits) and self.cfg.is_natural(loop)

    def _cheap(self, value: str) -> bool:
        inst = self.fn.defs.get(self.sweep.shadow_primal.get(value, value))
        return inst is not None and inst.opcode in _RECOMPUTABLE and inst.opcode in ("sext", "zext", "trunc")

    def reuse_primal_call(self, base, fty, call_args, label) -> str | None:
        """sin'(x) = cos(x): when the primal also computes cos(x), reuse it (fetched like any
        forward value) instead of calling cos again in the reverse sweep."""
        if len(call_args) != 1 or base not in REUSABLE_MATH:
            return None
        if self._primal_calls is None:
            self._primal_calls = {}
            for inst in self.fn.of_opcode("call"):
                if inst.result and len(inst.operands) == 1:
                    found = math_rule(inst.callee or "")
                    if found is not None:
                        for name in found[0].names:
                            self._primal_calls.setdefault((name, found[1], inst.operands[0][1]), inst)
        primal_arg = self.rev_primal.get((label, call_args[0]), call_args[0])
        inst = self._primal_calls.get((base, fty, primal_arg))
        if inst is None or not self._dominates_use(inst, label):
            return None
        return self.fetch(inst.result, label)

    def _dominates_use(self, inst, label) -> bool:
        """A primal value may be read in the reverse block of `label` only if it was computed
        whenever `label` ran: its block dominates `label`."""
        return self.cfg.dominates(inst.block, label)

    def value_on_exit(self, value: str, pred: str, exit_block: str) -> str:
        """What the reverse of `exit_block` reads for a forward value as it was when the loop
        was left from `pred`: the value itself when it was computed before the loop and
        dominates the exit block (kept at its own level, e.g. hoisted out of a loop the exit
        block belongs to), otherwise a forward phi in the exit block."""
        home = self.sweep.def_block(value)
        if not is_local(value) or value in self.params or \
                (home is not None and self.cfg.dominates(home, exit_block) and home != exit_block
                 and not (self.cfg.loop_of.get(pred) and home in self.cfg.loop_of[pred].blocks)):
            return self.fetch(value, exit_block)
        return self.fetch(self._exit_value(value, pred, exit_block), exit_block)

    def iv_on_exit(self, iv: str, loop, pred: str, exit_block: str, out: list[str]) -> str:
        """An IV's last value when its loop is left: computed from the count's end for a
        counting loop left through its latch's exit test, otherwise what the exit captured."""
        latch = self.fn.block(pred)
        bound = loop.trip_count if loop.trip_count is not None else loop.bound
        counted = bound is not None and loop.latches == [pred] and abs(loop.step) == 1 \
            and exit_block in latch.terminator.targets
        if counted and loop.iv != iv and loop.iv in self.iv_loops and iv in self.iv_loops \
                and self.types.get(iv) == self.types.get(loop.iv):
            # a second IV stepping beside the counting one (a packed index `idx++` beside
            # `j`): its start plus its step times the counting IV's steps taken
            start, start_p = self._iv_start(iv, loop), self._iv_start(loop.iv, loop)
            if start is not None and start_p is not None:
                ty = self.types[iv]
                last_p = self.iv_on_exit(loop.iv, loop, pred, exit_block, out)
                ir = self.ir(out)
                first_p = self.value_on_exit(start_p, pred, exit_block) if is_local(start_p) else start_p
                taken = ir.binop("sub", ty, *((last_p, first_p) if loop.step > 0 else (first_p, last_p)), hint="ivk")
                moved = ir.binop("mul", ty, taken, self.iv_loops[iv][1], hint="ivk")
                first = self.value_on_exit(start, pred, exit_block) if is_local(start) else start
                return ir.binop("add", ty, first, moved, hint="ivl")
        if loop.iv == iv and counted:
            # the loop stops when its tested value reaches the end (the bound, clamped to the
            # first iteration's tested value for a `<` test): the IV was one step before it
            # when `iv + step` is tested (a loop to `iv + 1 == bound`, from 0 or from a
            # triangular loop's `j = i + 1`, ends at bound - 1), the end itself when the phi is
            end = self._end_bound(loop, bound, lambda v: self.value_on_exit(v, pred, exit_block)
                                  if is_local(v) else v, out)
            if loop.tested == "iv":
                return end
            return self.ir(out).binop("sub" if loop.step == 1 else "add", self.types[iv], end, "1", hint="ivl")
        return self.fetch(self._exit_value(iv, pred, exit_block), exit_block)

    def _iv_start(self, iv: str, loop) -> str | None:
        """The value a header phi of `loop` takes when the loop is entered (None when it has
        more than one)."""
        phi = self.fn.defs.get(iv)
        outside = {v for v, b in phi.incoming if b not in loop.blocks} if phi is not None else set()
        return next(iter(outside)) if len(outside) == 1 else None

    def _end_bound(self, loop, bound: str, get, out: list[str]) -> str:
        """Where a counting loop's tested value stops (read through `get`): the bound, or for a
        loop that goes on while that value is below the bound (above it, counting down) the
        bound raised (lowered) to the first iteration's tested value: such a loop runs at least
        once."""
        value = get(bound)
        if loop.clamp is None or loop.trip_count is not None:
            return value
        ir, ity = self.ir(out), self.types.get(loop.iv, "i64")
        start = get(loop.start) if loop.start is not None else "0"
        if loop.tested == "iv":
            first = start
        elif loop.start is None and loop.step > 0:
            first = str(loop.step)
        else:
            first = ir.binop("add", ity, start, str(loop.step), hint="tmin")
        beyond = ir.cmp("icmp", {"umax": "ugt", "smax": "sgt", "umin": "ult", "smin": "slt"}[loop.clamp],
                        ity, value, first, hint="tmax")
        return ir.select(beyond, ity, value, first, hint="tmax")

    def _exit_value(self, iv: str, pred: str, exit_block: str) -> str:
        """A forward phi at the top of `exit_block` holding the IV's value when the loop
        was left from `pred` (poison on the other incoming edges)."""
        name = self.sweep.fresh("ivexit")
        ty = self.types.get(iv, "ptr")
        incoming = []
        for p in self.cfg.preds[exit_block]:
            incoming += [(iv if p == pred else "poison", p)] * self.cfg.edge_count[(p, exit_block)]
        phi: list[str] = []
        self.ir(phi).phi(ty, incoming, name=name)
        self.sweep.fwd[exit_block][0:0] = phi
        self.types[name] = ty
        self.home[name] = exit_block
        return name

    def _canonical_iv(self, label, preds):
        ivs = self.canonical_ivs(label, preds)
        return ivs[0] if ivs else None

    def _replayed_iv(self, value: str, block: str) -> bool:
        """Whether `value` is an IV of a loop holding `block` that the reverse sweep replays
        (from its counter slot, or as another IV's plus a distance)."""
        entry = self.iv_loops.get(value) or self.iv_offsets.get(value)
        return entry is not None and block in entry[0].blocks

    def derive_iv(self, iv: tuple, primary: tuple, loop, steps: dict) -> bool:
        """Record `iv` (a canonical_ivs entry) as replayed from the loop's `primary` IV when
        both start at integer constants and take the same constant step: its value in every
        iteration is the primary's plus the constant distance. The class: `a[i]` and
        `a[i + 1]` indexed by two phis the optimizer kept apart (a loop reading a neighbour,
        an in-place update `a[i] = f(a[i], a[i + 1])`). Replayed from two slots, the two
        reverse counters are unrelated values to alias analysis, so a shadow store through
        one may clobber a load through the other: the zeroed cell of the in-place update
        stayed, and the vectorizer saw a loop-carried dependence through it. `steps`: each
        IV's `add` to its next value."""
        if iv[0] == primary[0] or self.types.get(iv[0]) != self.types.get(primary[0]):
            return False
        ty = self.types[iv[0]]
        bits = int(ty[1:]) if ty[1:].isdigit() else 0
        if not (_INT.fullmatch(iv[1]) and _INT.fullmatch(primary[1])) or bits < 2:
            return False
        pair = (steps[iv[0]], steps[primary[0]])   # each IV's `add` to its next value
        if pair[0].operands[1][1] != pair[1].operands[1][1]:
            return False
        distance = int(iv[1]) - int(primary[1])
        if not -(1 << (bits - 1)) <= distance < (1 << (bits - 1)):
            return False
        # neither sequence wraps (both steps `nsw`): their difference is exact in every iteration
        flags = "nsw" if all("nsw" in step.flags for step in pair) else ""
        self.iv_offsets[iv[0]] = (loop, primary[0], distance, flags)
        return True

    def canonical_ivs(self, label, preds) -> list:
        """(iv, start, index of entry pred, index of latch) when a two-predecessor loop
        header has an IV `phi [start, outside], [iv + step, latch]` (start a constant or a
        value from outside the loop, e.g. `j = i + 1` of a triangular loop): the predecessor
        is then known from the IV, so it needs no tape cell of its own."""
        loop = self.cfg.loop_of.get(label)
        if loop is None or loop.header != label or len(preds) != 2:
            return []
        found = []
        for phi in self.fn.block(label).phis():
            if not phi.type.startswith("i") or len(phi.incoming) != 2:
                continue
            start = [(v, b) for v, b in phi.incoming if b not in loop.blocks]
            back = [(v, b) for v, b in phi.incoming if b in loop.blocks]
            if len(start) != 1 or len(back) != 1 or not loop_invariant(self.fn, loop, start[0][0]):
                continue
            step = self.fn.defs.get(back[0][0])
            if step is None or step.opcode != "add" or step.operands[0][1] != phi.result \
                    or not STEP_CONSTANT.fullmatch(step.operands[1][1]) \
                    or "nuw" not in step.flags and "nsw" not in step.flags:
                continue
            found.append((phi.result, start[0][0], preds.index(start[0][1]), preds.index(back[0][1])))
        return found

    def reverse_local_allocas(self) -> dict[str, str]:
        """Split mode: local arrays that only ever hold floats get their shadow in the
        reverse piece (a fresh zeroed alloca) instead of a heap block made in the augmented
        piece: the forward sweep never writes shadow memory of float data, and the adjoint of
        memory that dies at return is zero. Every pointer derived from such an alloca must be
        a GEP/bitcast chain used only by loads, stores of floats, memory intrinsics and calls
        of derived functions that do the same with it, so the reverse sweep can recompute its
        shadow from the new base. Such a call passes poison as the shadow to the callee's
        augmented piece and the real one to its reverse piece; the callee, told so by its
        signature, treats that parameter the same way (a root whose shadow is its reverse
        piece's parameter)."""
        if not self.split:
            return {}
        roots = {inst.result: inst.result for inst in self.fn.instructions()
                 if inst.opcode == "alloca" and inst.result in self.act.shadowed and not inst.operands}
        # parameters whose shadow the caller keeps in its reverse piece too (Signature.rev_shadow_args)
        flagged = [p.name for p, f in zip(self.fn.params, self.sig.rev_shadow_args) if f]
        roots.update({name: name for name in flagged})
        derived = derived_pointers(self.fn, roots)

        def other_use_ok(inst, v) -> bool:
            name = callee_name(inst) if inst.opcode == "call" else ""
            if name.startswith(("llvm.memcpy", "llvm.memmove")):
                return v not in flagged and memcpy_element_kind(self, inst) in ("double", "float", "int")
            # a derived callee whose pieces keep this shadow in their reverse piece as well
            return passes_reverse_only_shadow(self.engine, inst, v)

        bad = float_data_misuses(self.fn, derived, other_use_ok)
        if bad & set(flagged):
            raise InternalError(f"@{self.fn.name} was asked to keep a parameter's shadow in its reverse "
                                f"piece but uses it otherwise ({sorted(bad & set(flagged))})")
        return {v: root for v, root in derived.items() if root not in bad}

    def push_lines(self, values: list[tuple[str, str]], stack: str = TAPE) -> list[str]:
        """Push (value, type) pairs as one record on the tape (or on the side table)."""
        helper = "__enzyme_build_tape_push" if stack == TAPE else "__enzyme_build_side_push"
        self.uses_tape |= stack == TAPE
        self.engine.support.add(helper)
        starts = _cell_starts(values)
        out: list[str] = []
        ir = self.ir(out)
        rec = ir.call("ptr", f"@{helper}", [("ptr", stack), ("i64", str(CELL_BYTES * starts[-1]))], hint="push")
        for j, (v, ty) in enumerate(values):
            at = rec
            if j:
                at = ir.gep("i8", rec, [("i64", str(CELL_BYTES * starts[j]))], hint="cell")
            ir.store(ty, v, at, align=8)
        return out

    def pop_lines(self, targets: list[tuple[str, str]], stack: str = TAPE) -> list[str]:
        """Pop one record into (name, type) pairs (same order as pushed)."""
        self.engine.support.add("__enzyme_build_tape_pop")
        starts = _cell_starts(targets)
        out: list[str] = []
        ir = self.ir(out)
        rec = ir.call("ptr", "@__enzyme_build_tape_pop", [("ptr", stack), ("i64", str(CELL_BYTES * starts[-1]))],
                      hint="pop")
        for j, (name, ty) in enumerate(targets):
            at = rec
            if j:
                at = ir.gep("i8", rec, [("i64", str(CELL_BYTES * starts[j]))], hint="cell")
            ir.load(ty, at, align=8, name=name)
        return out

    # ------------------------------------------------------------------ side tables
    def _side_loop_of(self, label: str):
        """The outermost loop around `label` when it is a natural loop entered at most once
        per call (its preheader in no cycle) and left only from its header or a latch (a
        `break` in the middle of an iteration leaves a partial record the stack cannot keep
        apart from the complete ones once other side records follow)."""
        for loop in self.cfg.top_loops_of(label):
            if loop.preheader is not None and not self.cfg.in_loop(loop.preheader) and all(
                    p == loop.header or p in loop.latches
                    for e in loop.exits for p in self.cfg.preds[e] if p in loop.blocks):
                return loop
        return None

    def _iteration_invariants(self, loop) -> set[str]:
        """Values `loop` computes the same in every iteration (analysis/invariance.py); loads
        count when nothing in the loop writes memory they may read."""
        if loop.header not in self._invariants:
            insts = [i for b in loop.blocks for i in self.fn.block(b).instructions]
            written, _, unknown = self._writes(insts)
            written = {w for w in written if not self._constant_global(w)}   # format strings and the like
            found = None
            if not unknown:
                found = iteration_invariant(
                    self.fn, self.cfg, loop,
                    lambda inst: self._unwritten(inst.operands[0][1], written),
                    lambda inst: math_rule(inst.callee) is not None and all(t != "ptr" for t, _ in inst.operands))
            self._invariants[loop.header] = found or set()
        return self._invariants[loop.header]

    def _unwritten(self, addr: str, written: set[str]) -> bool:
        """Whether nothing written through the roots `written` may be memory `addr` reads. A
        pointer based on `null` reaches no memory (LLVM's rule in address space 0, unless the
        function says `null_pointer_is_valid`): a std::vector's storage is `new`'d or null
        when empty, and its null root is no memory the two vectors could share."""
        roots = pointer_roots(self.fn, addr) - self._no_memory()
        return bool(roots) and all(self._distinct(r, w) for r in roots for w in written - self._no_memory())

    def _no_memory(self) -> set[str]:
        if self._null_roots is None:
            valid = "null_pointer_is_valid" in function_attributes(self.engine.module, self.fn)
            self._null_roots = set() if valid else {"null"}
        return self._null_roots

    def _constant_global(self, name: str) -> bool:
        line = self.engine.module.globals.get(name[1:].strip('"')) if name.startswith("@") else None
        return line is not None and _constant_line(line)

    def _distinct(self, r: str, w: str) -> bool:
        """Whether memory reached from root `r` can never be memory written through root `w`."""
        if r == w:
            return False
        local = self._local_allocations()
        params = {p.name: p for p in self.fn.params}

        def private(x):   # an allocation no other pointer can reach
            return x in local and x not in self._captured_allocations()

        def noalias(x):
            return x in params and ("noalias" in params[x].attrs.split() or "byval(" in params[x].attrs)

        def named(x):     # memory that existed before the call: an argument's or a global's
            return x in params or x.startswith("@")

        return private(r) or private(w) or noalias(r) or noalias(w) or \
            (w in local and named(r)) or (r in local and named(w)) or (r.startswith("@") and w.startswith("@"))

    def _captured_allocations(self) -> set[str]:
        """Allocations some pointer to which goes anywhere but into loads, stores (as the
        address), GEPs, compares, frees, memory intrinsics and derived callees that do not
        capture it. Pointers merged by phis and selects (a std::vector's storage or null, two
        buffers swapped every step) are followed: their uses count for every allocation they
        may be, and `pointer_roots` looks through the same merges to name an access's roots."""
        if self._captured is None:
            derived = self._derived_roots(self._local_allocations())
            self._captured = set()
            for inst in self.fn.instructions():
                for v in inst.values():
                    if v in derived and self._use_captures(inst, v, through_merges=True):
                        self._captured |= derived[v]
        return self._captured

    def _derived_roots(self, roots: set[str]) -> dict[str, set[str]]:
        """Each pointer derived from `roots` by GEPs, casts, phis and selects -> the roots it
        may be derived from."""
        derived: dict[str, set[str]] = {r: {r} for r in roots}
        users = self.fn.users()
        work = list(roots)
        while work:        # along def-use edges: each value is revisited only when it grows
            v = work.pop()
            for inst in users.get(v, ()):
                op = inst.opcode
                if not inst.result or op not in ("getelementptr", "bitcast", "phi", "select"):
                    continue
                sources = [x for x, _ in inst.incoming] if op == "phi" else \
                    [inst.operands[1][1], inst.operands[2][1]] if op == "select" else [inst.operands[0][1]]
                if v not in sources:   # an index or a select's condition
                    continue
                known = derived.setdefault(inst.result, set())
                if not derived[v] <= known:
                    known |= derived[v]
                    work.append(inst.result)
        return derived

    def _use_captures(self, inst, v: str, *, through_merges: bool = False) -> bool:
        """Whether the use of the pointer `v` in `inst` may let it escape: any use but a load
        from it, a compare, a GEP or bitcast of it, a store through it (of another value) and
        a call that keeps none of it (`_call_keeps_pointer`); with `through_merges`, also phis
        and selects of it, whose results the caller follows as pointers derived from it."""
        op = inst.opcode
        if op in ("load", "icmp") or (op in ("getelementptr", "bitcast") and inst.operands[0][1] == v):
            return False
        if op == "ptrtoint" and self._address_stays_integer(inst.result, set()):
            return False   # `end - begin` (a std::vector's size, a walk's count)
        if through_merges and (op == "phi" or (op == "select" and inst.operands[0][1] != v)):
            return False
        if op == "store" and inst.operands[1][1] == v and inst.operands[0][1] != v:
            return False
        return not (op == "call" and self._call_keeps_pointer(inst, v))

    _ADDRESS_ARITHMETIC = frozenset({"add", "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor", "sdiv",
                                     "udiv", "srem", "urem", "zext", "sext", "trunc", "select", "phi", "icmp"})

    def _address_stays_integer(self, value: str, seen: set) -> bool:
        """Whether an address taken as an integer (`ptrtoint`) is only computed with and
        compared, or given as a size to an allocator, a deallocator or a memory intrinsic:
        never made a pointer again (`inttoptr`, a GEP index), stored, passed to another call
        or returned."""
        if value in seen:
            return True
        seen.add(value)
        for user in self.fn.users().get(value, ()):
            if user.opcode == "call" and (user.callee in DEALLOCATORS or user.callee in ALLOCATORS or callee_name(
                    user).startswith(("llvm.memset", "llvm.memcpy", "llvm.memmove"))) \
                    and all(t != "ptr" for t, v in user.operands if v == value):
                continue   # a size: sized `operator delete(p, cap - begin)`, an allocation, a length
            if user.opcode not in self._ADDRESS_ARITHMETIC:
                return False
            if user.opcode != "icmp" and not self._address_stays_integer(user.result, seen):
                return False
        return True

    def _call_keeps_pointer(self, inst, v: str) -> bool:
        name = callee_name(inst)
        if inst.callee in DEALLOCATORS or name.startswith(("llvm.lifetime", "llvm.memset", "llvm.memcpy",
                                                           "llvm.memmove")):
            return True
        if name in self.engine.cache_masks:   # registered as keeping none of its pointers
            return True
        callee = self.engine.module.functions.get(name)
        if callee is None:
            return False
        attrs = [p.attrs for (_, a), p in zip(inst.operands, callee.params) if a == v]
        return bool(attrs) and all("captures(none)" in a or "nocapture" in a for a in attrs)

    def _side_record(self, label: str, loop, values: list[tuple[str, str]]) -> list[str]:
        """Keep values every iteration of `loop` computes alike in the loop's side table: a
        stack apart from the tape that each forward iteration refills from the start, so it
        holds one iteration's records; the reverse sweep pops them for each iteration and
        then sets the stack back to full for the one before (`_place_side_tables`). Its
        memory is one iteration's worth instead of one per iteration."""
        self.side_loops.setdefault(loop.header, loop)
        self.side_fwd.setdefault(label, []).extend(self.push_lines(values, SIDE))
        return self.pop_lines([(self.rev_names[(label, v)], ty) for v, ty in values], SIDE)

    def _place_side_statics(self, side_statics: dict[str, dict]) -> None:
        """Side-table values of a static-record loop nested in the side table's loop (a time
        loop's `r * kappa[i]` over space): one side record for all iterations of the inner
        loop, reserved on the side stack in its preheader, each iteration's values at fixed
        places indexed by the IV (columns, as static tape records), so the inner loop pushes
        nothing and stays vectorizable. The reverse sweep pops the whole record when it enters
        the inner loop through an exit (a "side static" insertion point) and keeps its address in a slot.
        Only while nothing else in the inner loop pushes on the side stack (its records would
        move the stack); otherwise each value is pushed per iteration (`_side_record`)."""
        self.side_statics: dict[str, dict] = {}   # inner loop header -> its static loop, when it got a side record
        statics = list({id(st): st for st in side_statics.values()}.values())
        records_of = {id(st): st.pop("side_records") for st in statics}
        for static in statics:
            loop, records = static["loop"], records_of[id(static)]
            others = {b for st in statics if st is not static for b in [st["loop"].preheader, *st["loop"].blocks]}
            if any(b in self.side_fwd or b in others for b in loop.blocks):   # a subloop's side records
                for label, values in records:
                    self.rev_prologue[label] += self._side_record(label, static["side_loop"], values)
                continue
            values_all = [v for _, values in records for v in values]
            starts_all = _cell_starts(values_all)
            stride = starts_all[-1] * CELL_BYTES
            rec, count = make_name("%", static["off"], "side"), self.sweep.fresh("tc")
            nbytes = self.sweep.fresh("tb")
            static["side_slot"] = make_name("%", static["off"], "sideslot")
            self.engine.support.add("__enzyme_build_side_push")
            self.engine.support.add("__enzyme_build_tape_pop")
            # after the preheader's own side records: the reverse sweep pops this one first
            side_pre = self.side_fwd.setdefault(loop.preheader, [])
            self.static_count(count, loop, lambda v: v, side_pre)
            self.ir(side_pre).binop("mul", "i64", count, str(stride), name=nbytes)
            self.ir(side_pre).call("ptr", "@__enzyme_build_side_push", [("ptr", SIDE), ("i64", nbytes)], name=rec)
            static["side_stride"] = stride
            self.side_statics[loop.header] = static
            at = 0
            for label, values in records:
                starts = _cell_starts(values)
                fwd: list[str] = []
                k = self._forward_iteration(static, fwd)
                rev, rec_r, count_r, k_r = self._reverse_iteration(static, "srec", static["side_slot"], "ptr")
                for j, (v, ty) in enumerate(values):
                    column, size = at + CELL_BYTES * starts[j], CELL_BYTES * (starts[j + 1] - starts[j])
                    for out, base, n, kk, target in ((fwd, rec, count, k, None),
                                                     (rev, rec_r, count_r, k_r, self.rev_names[(label, v)])):
                        ir = self.ir(out)
                        colpos = ir.binop("mul", "i64", n, str(column), hint="scol")
                        step = ir.binop("mul", "i64", kk, str(size), hint="soff")
                        col = ir.gep("i8", base, [("i64", colpos)], hint="scol")
                        cell = ir.gep("i8", col, [("i64", step)], hint="scell")
                        if target is None:
                            ir.store(ty, v, cell, align=8)
                        else:
                            ir.load(ty, cell, align=8, name=target)
                self.side_fwd.setdefault(label, []).extend(fwd)
                self.rev_prologue[label] += rev
                at += starts[-1] * CELL_BYTES

    def _side_type(self) -> str:
        return f"[{3 + len(self.side_loops)} x i64]"

    def _side_field(self, index: int, out: list[str]) -> str:
        """A pointer to cell `index` of the side object: 1 size, 2 capacity, 3 + k loop k's full size."""
        return self.ir(out).gep("i8", SIDE, [("i64", str(CELL_BYTES * index))], hint="sidef")

    def _place_side_tables(self) -> None:
        """Each forward iteration of a side-table loop starts its stack at the loop's base
        (the size when the loop was entered), first noting where the previous iteration
        ended (all iterations but a last one cut short by an exit fill the same amount); the
        reverse sweep, going back from one iteration to the one before, sets the size back
        to that. Split pieces pass the side object through the frame record."""
        restores: dict[str, list[str]] = {}
        for k, (header, loop) in enumerate(self.side_loops.items()):
            pre, head = [], []
            base, cur = self.sweep.fresh("sidebase"), self.sweep.fresh("sidecur")
            self.ir(pre).load("i64", self._side_field(1, pre), align=8, name=base)
            size = self._side_field(1, head)
            self.ir(head).load("i64", size, align=8, name=cur)
            self.ir(head).store("i64", cur, self._side_field(3 + k, head), align=8)
            self.ir(head).store("i64", base, size, align=8)
            self.side_fwd[loop.preheader] = pre + self.side_fwd.get(loop.preheader, [])
            self.side_fwd[header] = head + self.side_fwd.get(header, [])
            # leaving the loop, the last iteration's records stay: later side records go above
            # both where the stack is and where the last complete iteration ended (an exit
            # test in the header has just set the size back to the base; records are the same
            # in every iteration, so an exit visit's partial records may overwrite a complete
            # iteration's). From outside the loop the cell is 0 and this changes nothing.
            for exit_block in loop.exits:
                back = restores.setdefault(exit_block, [])
                full, now, top = self.sweep.fresh("sidefull"), self.sweep.fresh("sidenow"), self.sweep.fresh("sidetop")
                size_at = self._side_field(1, back)
                self.ir(back).load("i64", self._side_field(3 + k, back), align=8, name=full)
                ir = self.ir(back)
                ir.load("i64", size_at, align=8, name=now)
                ir.call("i64", "@llvm.umax.i64", [("i64", now), ("i64", full)], name=top)
                ir.store("i64", top, size_at, align=8)
                self.engine.declare("@llvm.umax.i64")
        for block, back in restores.items():
            # before anything else the block does with the side stack (the next loop's base)
            self.side_fwd[block] = back + self.side_fwd.get(block, [])
        for lines in list(self.sweep.rev_term.values()) + [lines for _, lines in self.sweep.edge_blocks]:
            out: list[str] = []
            for line in lines:
                if not isinstance(line, InsertPoint):
                    out.append(line)
                elif line.kind == "side static":
                    static = self.side_statics.get(line.key)
                    if static is not None:
                        stride = static["side_stride"]
                        count, nbytes, rec = self.sweep.fresh("scount"), self.sweep.fresh("tb"), self.sweep.fresh("srec")
                        ir = self.ir(out)
                        ir.load("i64", static["count_slot"], align=8, name=count)
                        ir.binop("mul", "i64", count, str(stride), name=nbytes)
                        ir.call("ptr", "@__enzyme_build_tape_pop", [("ptr", SIDE), ("i64", nbytes)], name=rec)
                        ir.store("ptr", rec, static["side_slot"], align=8)
                elif line.kind != "side latch":
                    out.append(line)
                elif line.key in self.side_loops:
                    k = list(self.side_loops).index(line.key)
                    full = self.sweep.fresh("sidefull")
                    self.ir(out).load("i64", self._side_field(3 + k, out), align=8, name=full)
                    self.ir(out).store("i64", full, self._side_field(1, out), align=8)
            lines[:] = out
        if self.split and self.side_loops:
            self.side_cell = self.frame_cells
            self.frame[SIDE] = self.side_cell
            self.frame_cells += 3 + len(self.side_loops)

    def side_prologue(self) -> list[str]:
        """The side object, zeroed (forward sweep; combined mode shares it with the reverse)."""
        out: list[str] = []
        if self.side_loops:
            self.ir(out).alloca(self._side_type(), align=8, name=SIDE)
        return out

    def side_zero(self) -> list[str]:
        out: list[str] = []
        if self.side_loops:
            self.ir(out).store(self._side_type(), "zeroinitializer", SIDE, align=8)
        return out

    def side_frame_lines(self, load: bool) -> list[str]:
        """Split pieces: the augmented piece saves the side object into its frame cells when
        it returns; the reverse piece starts with a copy of it in its own alloca."""
        if not self.side_loops:
            return []
        base, at, whole = self.sweep.fresh("frame"), self.sweep.fresh("fcell"), self.sweep.fresh("side")
        ty = self._side_type()
        out: list[str] = []
        ir = self.ir(out)
        if load:
            ir.alloca(ty, align=8, name=SIDE)
        ir.call("ptr", "@__enzyme_build_tape_at", [("ptr", TAPE), ("i64", FRAME_OFFSET)], name=base)
        ir.gep("i8", base, [("i64", str(CELL_BYTES * self.side_cell))], name=at)
        if load:
            ir.load(ty, at, align=8, name=whole)
            ir.store(ty, whole, SIDE, align=8)
        else:
            ir.load(ty, SIDE, align=8, name=whole)
            ir.store(ty, whole, at, align=8)
        return out

    def side_free(self) -> list[str]:
        if not self.side_loops:
            return []
        self.engine.declare("@free")
        out: list[str] = []
        ir = self.ir(out)
        data = ir.load("ptr", SIDE, align=8, hint="sided")
        ir.call("void", "@free", [("ptr", data)])
        return out

    def cache_slot(self, value: str) -> str:
        if value not in self.cache_slots:
            self.cache_slots[value] = make_name("%", value, "cache")
        return self.cache_slots[value]

    def _rebuildable(self, value: str):
        """The defining instruction of `value` when the reverse sweep may rebuild it from its
        operands (pure float arithmetic, no libm call but fused multiply-add)."""
        inst = self.fn.defs.get(value)
        if inst is None or value in self.sweep.shadow_primal:
            return None
        return inst if _rebuildable_float(inst) else None

    def _recompute_from_kept(self) -> None:
        """A min-cut in the small: a value a reverse block would read from the tape is instead
        rebuilt there when its operands are kept for that block anyway (or come for free, or
        are rebuilt the same way, up to three levels). In n-body's pair loop the record held
        d, r2, sqrt(r2), r2*sqrt(r2) and its inverse; it now holds d and the square root.
        Decided once every block's needs are known, since the reverse sweep fetches a value
        before the operands it is computed from."""
        order = {inst.result: k for k, inst in enumerate(self.fn.instructions()) if inst.result}
        for label, needed in self.needs.items():
            if len(needed) < 2:
                continue
            kept = dict.fromkeys(needed)
            pinned: set[str] = set()              # kept values a rebuilt one reads: stay kept
            lines: list[str] = []
            built: dict[str, str] = {}            # value -> name of its rebuilt copy

            def name_of(v: str) -> str | None:
                if not is_local(v) or self._is_free(v):
                    return v
                if v in kept:
                    pinned.add(v)
                    return self.rev_names[(label, v)]
                return built.get(v)

            def slot_of(v: str) -> str | None:
                """The slot an IV is replayed from or a loop-invariant value is hoisted to."""
                if v in self.iv_loops and label in self.iv_loops[v][0].blocks:
                    return self.iv_loops[v][2]
                loop = self.cfg.loop_of.get(label)
                return self.hoists.get((loop.header, v)) if loop is not None else None

            def plan(v: str, depth: int, out: list[str]) -> str | None:
                have = name_of(v)
                if have is not None:
                    return have
                slot = slot_of(v)
                if slot is not None:
                    built[v] = self.ir(out).load(self.types.get(v, "ptr"), slot, align=8, hint="rk")
                    return built[v]
                inst = self._rebuildable(v)
                if inst is None or depth > 3:
                    return None
                mapping = {}
                for o in dict.fromkeys(inst.values()):
                    got = plan(o, depth + 1, out)
                    if got is None:
                        return None
                    mapping[o] = got
                name = self.sweep.fresh("rk")
                self.ir(out).clone(inst, result=name, mapping=mapping, metadata=False)
                built[v] = name
                return name

            # defining order: a value is rebuilt before the values computed from it
            for v in sorted(needed, key=lambda x: order.get(x, -1)):
                inst = self._rebuildable(v)
                if inst is None or v not in kept or v in pinned:
                    continue
                del kept[v]
                out: list[str] = []
                saved = dict(built)
                mapping = {}
                for o in dict.fromkeys(inst.values()):
                    got = plan(o, 1, out)
                    if got is None:
                        break
                    mapping[o] = got
                else:
                    self.ir(out).clone(inst, result=self.rev_names[(label, v)], mapping=mapping, metadata=False)
                    built[v] = self.rev_names[(label, v)]
                    self.how[(label, v)] = "rebuilt from kept values"
                    lines += out
                    continue
                kept[v] = None                     # not rebuildable from what is kept: stays cached
                built.clear()
                built.update(saved)
            if lines:
                self.needs[label] = list(kept)
                self.recompute_lines[label] = lines + self.recompute_lines.get(label, [])
        plan = None   # the recursive closure refers to itself: without this, a cycle holding self

    def _unused_static_offsets(self) -> set[str]:
        """The tape offsets of static-record loops that will keep nothing (every value their
        reverse reads is free, re-read, recomputed or replayed: a sum of squares, a copy): the
        offset would be kept per iteration of the enclosing loop for no record. An inner loop
        found empty can empty its outer one (whose only kept values were inner offsets), so
        this runs to a fixpoint. Conservative: a value that may go to a record fills it."""
        offsets = {static["off"] for static in self.static_loops.values()}
        dropped: set[str] = set()
        while True:
            filled = set()
            for label, needed in self.needs.items():
                static = self._static_loop_of(label)
                if static is None:
                    continue
                blocks = static["loop"].blocks
                if any(v not in dropped and self._home[v] in blocks for v in needed):
                    filled.add(static["off"])
            empty = offsets - filled - dropped
            if not empty:
                return dropped
            dropped |= empty

    def place(self) -> None:
        self._recompute_from_kept()
        unused_offsets = self._unused_static_offsets()
        self.fwd_pushes: dict[str, list[str]] = {}
        self.pushed_counts = {}
        self.rev_prologue: dict[str, list[str]] = {}
        stores: dict[str, list[str]] = {b.label: [] for b in self.fn.blocks}
        self.side_loops: dict[str, object] = {}   # loop header -> top-level loop with a side table
        self.side_fwd: dict[str, list[str]] = {}
        self.frame: dict[str, int] = {}          # split mode: value -> cell of the frame record
        self.frame_cells = 0                     # cells the frame record holds
        frame_stores: dict[str, list[str]] = {b.label: [] for b in self.fn.blocks}
        side_statics: dict[str, dict] = {}   # label -> its static loop, whose side record keeps its values
        for block in self.fn.blocks:
            label = block.label
            pushed, prologue = [], []
            frame_reads = []
            for v in self.needs[label]:
                ty = self.types.get(v, "ptr")
                name = self.rev_names[(label, v)]
                home = self._home[v]
                if v in unused_offsets:   # its loop keeps no record: nothing is read at it
                    self.ir(prologue).binop("add", "i64", "0", "0", name=name)
                    self.how[(label, v)] = "unused: its loop keeps no record"
                    continue
                if self.split and not self.cfg.in_loop(home):
                    if v not in self.frame:
                        self.frame[v] = self.frame_cells
                        self.frame_cells += cells_of(ty)
                        frame_stores[home].append(v)
                    frame_reads.append((name, ty, self.frame[v]))
                    self.kept_in[(label, v)] = ("frame record", "")
                elif not self.split and (not self.cfg.in_loop(home) or not self.cfg.in_loop(label)):
                    slot = self.cache_slot(v)
                    where = home if not self.cfg.in_loop(home) else label
                    if v not in stores[where]:
                        stores[where].append(v)
                    self.ir(prologue).load(ty, slot, align=8, name=name)
                    self.kept_in[(label, v)] = ("cache slot", slot)
                else:
                    pushed.append((v, ty))
            side = self._side_loop_of(label) if pushed else None
            if side is not None:
                invariant = self._iteration_invariants(side)
                tabled = [(v, ty) for v, ty in pushed if v in invariant and self._home[v] in side.blocks]
                if tabled:
                    pushed = [(v, ty) for v, ty in pushed if (v, ty) not in tabled]
                    inner_static = self._static_loop_of(label)
                    if inner_static is not None and inner_static["loop"] is not side \
                            and inner_static["loop"].header in side.blocks:
                        # laid out for all iterations of the inner loop at once (`_place_side_statics`)
                        self.side_loops.setdefault(side.header, side)
                        inner_static.setdefault("side_records", []).append((label, tabled))
                        inner_static["side_loop"] = side
                        side_statics[label] = inner_static
                    else:
                        prologue += self._side_record(label, side, tabled)
                    for v, _ in tabled:
                        self.kept_in[(label, v)] = ("side table", side.header)
            static = self._static_loop_of(label)
            if pushed and static is not None:
                # values computed in this loop get the iteration's fixed cells; values from
                # outside it (invariant here, varying in an outer loop) are pushed as usual
                inner = [(v, ty) for v, ty in pushed if self._home[v] in static["loop"].blocks]
                pushed = [(v, ty) for v, ty in pushed if self._home[v] not in static["loop"].blocks]
                if inner:
                    static.setdefault("records", []).append((label, inner))
                    for v, _ in inner:
                        self.kept_in[(label, v)] = ("static record", static["loop"].header)
            for v, _ in pushed:
                self.kept_in[(label, v)] = ("tape record", label)
            if pushed:
                self.fwd_pushes[label] = self.push_lines(pushed)
                self.pushed_counts[label] = len(pushed)
                prologue = self.pop_lines([(self.rev_names[(label, v)], ty) for v, ty in reversed(pushed)]
                                           [::-1]) + prologue
            if frame_reads:
                ir = self.ir(prologue)
                base = ir.call("ptr", "@__enzyme_build_tape_at", [("ptr", TAPE), ("i64", FRAME_OFFSET)], hint="frame")
                for name, ty, cell in frame_reads:
                    at = ir.gep("i8", base, [("i64", str(CELL_BYTES * cell))], hint="fcell")
                    ir.load(ty, at, align=8, name=name)
            self.rev_prologue[label] = prologue
        self.slot_store_lines = {}
        for label, vs in stores.items():
            ir = self.ir(self.slot_store_lines.setdefault(label, []))
            for v in vs:
                ir.store(self.types.get(v, "ptr"), v, self.cache_slot(v), align=8)
        self._place_static_records()
        self._place_side_statics(side_statics)
        self._place_side_tables()
        for label, vs in frame_stores.items():
            if not vs:
                continue
            self.engine.support.add("__enzyme_build_tape_at")
            out: list[str] = []
            ir = self.ir(out)
            base = ir.call("ptr", "@__enzyme_build_tape_at", [("ptr", TAPE), ("i64", FRAME_OFFSET)], hint="frame")
            for v in vs:
                at = ir.gep("i8", base, [("i64", str(CELL_BYTES * self.frame[v]))], hint="fcell")
                ir.store(self.types.get(v, "ptr"), v, at, align=8)
            self.slot_store_lines[label] = self.slot_store_lines.get(label, []) + out
        self._reserve_for_loops()

    def _kept_on_tape(self, v: str, label: str) -> bool:
        """Whether a needed value goes into a tape record (rather than a slot or the frame)."""
        home = self._home[v]
        if self.split:
            return self.cfg.in_loop(home)
        return self.cfg.in_loop(home) and self.cfg.in_loop(label)

    def prepare_static_records(self) -> None:
        """Loops whose trip count is known when they start get one tape record for all their
        iterations, reserved in the preheader; each iteration's values go to a fixed place
        indexed by the IV (no per-iteration push/pop). The stride is only known after the
        reverse sweep: the reservation multiplies by the loop's stride value, defined at the top
        of the function once it is known (`stride_definitions`)."""
        for loop in self.cfg.loops:
            # the preheader must run exactly once per entry into the loop
            if (loop.trip_count is None and loop.bound is None) or loop.preheader is None or loop.iv is None \
                    or loop.iv not in self.iv_loops or len(loop.latches) != 1 \
                    or self.cfg.succs[loop.preheader] != [loop.header] \
                    or not any(i.result in self.act.varied for b in loop.blocks
                               if self.cfg.loop_of.get(b) is loop for i in self.fn.block(b).instructions):
                continue
            stride = f"%static.stride${len(self.static_loops)}"
            tc64, nbytes, off = self.sweep.fresh("tc"), self.sweep.fresh("tb"), f"%static.off${len(self.static_loops)}"
            # after the preheader's own tape record: the reverse sweep pops this one first
            pre = self.static_pre_lines.setdefault(loop.preheader, [])
            self.static_count(tc64, loop, lambda v: v, pre)
            self.ir(pre).binop("mul", "i64", tc64, stride, name=nbytes)
            # the record is laid out by columns: each kept value's cells of all iterations in a
            # row (iteration k of a value at byte p of the row at off + p * count + k * size),
            # so the forward sweep's stores and the reverse sweep's loads are unit-stride and
            # apart from each other (interleaved cells made the vectorizer's overlap checks
            # fail at run time); k counts from the loop's first iteration (iv - start)
            self.ir(pre).call("i64", "@__enzyme_build_tape_frame", [("ptr", TAPE), ("i64", nbytes)], name=off)
            self.types[off] = "i64"
            self.home[off] = loop.preheader
            self.uses_tape = True
            for helper in ("__enzyme_build_tape_frame", "__enzyme_build_tape_at", "__enzyme_build_tape_pop"):
                self.engine.support.add(helper)
            self.static_loops[loop.header] = {"loop": loop, "stride": stride, "off": off, "count": tc64,
                                              "slot": make_name("%", off, "slot"),
                                              "count_slot": make_name("%", off, "count"),
                                              "start_slot": make_name("%", off, "start")
                                              if loop.start is not None else None}

    def static_count(self, name: str, loop, get, out: list[str]) -> None:
        """Append the instruction defining `name` as the i64 iteration count of a static-record
        loop (its trip count, or |end - start|, plus one when the latch tests the phi itself),
        reading IR values through `get` (the identity in the forward sweep, `_fetch` in the
        reverse sweep)."""
        if loop.trip_count is not None:
            value, ty = get(loop.trip_count), self.types.get(loop.trip_count, "i64")
            if ty == "i64" or not ty.startswith("i"):
                self.ir(out).binop("add", "i64", value, "0", name=name)
            else:
                self.ir(out).cast("zext", ty, value, "i64", name=name)
            return
        ir, ity = self.ir(out), self.types.get(loop.iv, "i64")
        end = self._end_bound(loop, loop.bound, get, out)
        start = get(loop.start) if loop.start is not None else None
        size = abs(loop.step)
        rest = size > 1 or loop.tested == "iv"   # i64 steps after |end - start|
        direct = ity == "i64" and not rest       # the subtraction is the count itself
        if start is None:                        # counting up from 0
            span = end
        else:
            first, second = (end, start) if loop.step > 0 else (start, end)
            span = ir.binop("sub", ity, first, second, name=name if direct else None, hint="tc")
        if ity != "i64":
            span = ir.cast("zext", ity, span, "i64", name=None if rest else name, hint="tc")
        elif direct:
            if start is None:
                ir.binop("add", "i64", end, "0", name=name)
            return
        if size > 1:   # rounded up, in i64: the rounding cannot overflow there
            up = ir.binop("add", "i64", span, str(size - 1), hint="tc")
            span = ir.binop("udiv", "i64", up, str(size), name=None if loop.tested == "iv" else name, hint="tc")
        if loop.tested == "iv":
            ir.binop("add", "i64", span, "1", name=name)

    def stride_definitions(self) -> list[str]:
        """The stride of each static-record loop, a value defined at the top of each piece:
        the bytes one iteration keeps, known once the reverse sweep has been planned (`place`);
        the tape reservations and pops made before that use the value."""
        out: list[str] = []
        for static in self.static_loops.values():
            self.ir(out).binop("add", "i64", str(self.static_strides.get(static["stride"], 0)), "0",
                               name=static["stride"])
        return out

    def _static_loop_of(self, label: str) -> dict | None:
        """The static-record loop whose iterations run `label` (not in one of its subloops)."""
        loop = self.cfg.loop_of.get(label)
        static = self.static_loops.get(loop.header) if loop is not None else None
        return static if static is not None and static["loop"] is loop else None

    def _place_static_records(self) -> None:
        """Give each block of a static-record loop its cells: the value at byte `column` of the
        iteration's row lives at off + column * count + k * size (k = iv - start)."""
        self.static_strides: dict[str, int] = {}
        # a loop that never grows the tape keeps its record's address in a register: the
        # forward sweep's stores then index one base pointer, taken once per entry into the
        # loop, instead of reloading the tape's data pointer every iteration (which the
        # optimizer cannot hoist past stores to user memory, so such loops never vectorized)
        steady = {static["stride"] for static in self.static_loops.values()
                  if not self._tape_grows_in(static["loop"])}
        self.static_base_lines: dict[str, list[str]] = {}
        for static in self.static_loops.values():
            records = static.get("records", [])
            stride = sum(_cell_starts(values)[-1] for _, values in records) * CELL_BYTES
            self.static_strides[static["stride"]] = stride
            if not stride:
                continue
            self.uses_tape = True
            for helper in ("__enzyme_build_tape_frame", "__enzyme_build_tape_at", "__enzyme_build_tape_pop"):
                self.engine.support.add(helper)
            offset = 0
            loop = static["loop"]
            pre = self.static_base_lines.setdefault(loop.preheader, [])
            base = None
            if static["stride"] in steady:
                base = make_name("%", static["off"], "base")
                self.ir(pre).call("ptr", "@__enzyme_build_tape_at", [("ptr", TAPE), ("i64", static["off"])], name=base)
            # columns while the loop keeps few values: each column is a pointer the loop keeps
            # live; past that, a row per iteration (one pointer) spills less
            columns = sum(len(values) for _, values in records) <= MAX_COLUMNS
            for label, values in records:
                starts = _cell_starts(values)
                # per value: its byte in the iteration's row, and the bytes between iterations
                cells = [(offset + CELL_BYTES * starts[j],
                          CELL_BYTES * (starts[j + 1] - starts[j]) if columns else stride)
                         for j in range(len(values))]
                fwd: list[str] = []
                k = self._forward_iteration(static, fwd)
                # the offset of an iteration's cell, k * size, made once per size in each block
                steps: dict[int, str] = {}
                for (v, ty), (column, size) in zip(values, cells):
                    colpos = self.ir(pre).binop("mul", "i64", static["count"] if columns else "1", str(column),
                                                hint="scol")
                    if size not in steps:
                        steps[size] = self.ir(fwd).binop("mul", "i64", k, str(size), hint="soff")
                    if base is not None:
                        colbase = self.ir(pre).gep("i8", base, [("i64", colpos)], hint="scol")
                        cell = self.ir(fwd).gep("i8", colbase, [("i64", steps[size])], hint="scell")
                    else:
                        cell = self._static_cell(fwd, static["off"], colpos, steps[size])
                    self.ir(fwd).store(ty, v, cell, align=8)
                self.fwd_pushes[label] = fwd + self.fwd_pushes.get(label, [])
                # the IV is read from its replay slot here: recomputed values may need these loads
                rev, off_r, count_r, k_r = self._reverse_iteration(static, "soff", static["slot"], "i64")
                # nothing moves the tape while a reverse block reads its record: one tape
                # address for the record, one row per cell size, a column offset per value
                ir = self.ir(rev)
                record, rows = None, {}
                for (v, ty), (column, size) in zip(values, cells):
                    colpos = ir.binop("mul", "i64", count_r if columns else "1", str(column), hint="scol")
                    if size not in rows:
                        if record is None:
                            record = ir.call("ptr", "@__enzyme_build_tape_at", [("ptr", TAPE), ("i64", off_r)],
                                             hint="srec")
                        step = ir.binop("mul", "i64", k_r, str(size), hint="soff")
                        rows[size] = ir.gep("i8", record, [("i64", step)], hint="srow")
                    cell = ir.gep("i8", rows[size], [("i64", colpos)], hint="scell")
                    ir.load(ty, cell, align=8, name=self.rev_names[(label, v)])
                self.static_prologue[label] = rev
                offset += starts[-1] * CELL_BYTES

    def _forward_iteration(self, static: dict, out: list[str]) -> str:
        """Append the lines giving a static loop's iteration index in the forward sweep."""
        loop = static["loop"]
        return self._static_index(loop.iv, loop.start if static["start_slot"] is not None else None,
                                  self.types[loop.iv], out, loop.step)

    def _reverse_iteration(self, static: dict, hint: str, record_slot: str, record_type: str
                           ) -> tuple[list[str], str, str, str]:
        """The lines a reverse block of a static loop starts with to address its record: where
        the record starts (read from `record_slot`), the loop's count and the iteration index
        (the IV from its replay slot). Returns (lines, start, count, index)."""
        loop = static["loop"]
        ity = self.types[loop.iv]
        at, count, iv = self.sweep.fresh(hint), self.sweep.fresh("scount"), self.sweep.fresh("siv")
        lines: list[str] = []
        ir = self.ir(lines)
        ir.load(record_type, record_slot, align=8, name=at)
        ir.load("i64", static["count_slot"], align=8, name=count)
        ir.load(ity, self.iv_loops[loop.iv][2], align=8, name=iv)
        start = None
        if static["start_slot"] is not None:
            start = ir.load(ity, static["start_slot"], align=8, hint="sstart")
        return lines, at, count, self._static_index(iv, start, ity, lines, loop.step)

    def _tape_grows_in(self, loop) -> bool:
        """Whether the forward sweep may grow (and so move) the tape while `loop` runs: a
        record pushed, a subloop's static record reserved, or the tape handed to a callee in
        one of its blocks. Reading a cell (`__enzyme_build_tape_at`) does not move it."""
        return any(b in self.sweep.tape_handed_in or self.fwd_pushes.get(b) or self.static_pre_lines.get(b)
                   for b in loop.blocks)

    def _static_index(self, iv: str, start: str | None, ity: str, out: list[str], step: int = 1) -> str:
        """Append the lines giving the i64 iteration index of `iv` ((iv - start) / step) to
        `out`."""
        k, k64 = self.sweep.fresh("sk"), self.sweep.fresh("sk")
        ir = self.ir(out)
        if start is None:
            k = iv
        elif step > 0:
            ir.binop("sub", ity, iv, start, name=k)
        else:
            ir.binop("sub", ity, start, iv, name=k)
        if abs(step) > 1:
            k = ir.binop("udiv", ity, k, str(abs(step)), flags="exact", hint="sk")
        if ity != "i64":
            return ir.cast("zext", ity, k, "i64", name=k64)
        return k

    def _static_cell(self, out: list[str], off: str, colpos: str, step: str) -> str:
        """The tape address off + colpos + step, through the tape's data pointer, made at the
        end of `out`."""
        ir = self.ir(out)
        col = ir.binop("add", "i64", off, colpos, hint="soff")
        at = ir.binop("add", "i64", col, step, hint="soff")
        return ir.call("ptr", "@__enzyme_build_tape_at", [("ptr", TAPE), ("i64", at)], hint="scell")

    def _reserve_for_loops(self) -> None:
        """Reserve tape capacity once in the preheader of loops with a known trip count."""
        self.preheader_lines: dict[str, list[str]] = {}
        for loop in self.cfg.loops:
            if loop.trip_count is None or loop.preheader is None or loop.depth != 1 \
                    or self.cfg.succs[loop.preheader] != [loop.header]:
                continue
            # records pushed in the header (a static record's cells are reserved by its frame)
            cells = self.pushed_counts.get(loop.header, 0)
            if not cells:
                continue
            self.engine.support.add("__enzyme_build_tape_reserve")
            n = self.sweep.fresh("tc")
            bytes_ = self.sweep.fresh("tb")
            bound = loop.trip_count
            bty = self.types.get(bound, "i64")
            ir = self.ir(self.preheader_lines.setdefault(loop.preheader, []))
            if bty != "i64":
                ir.cast("zext", bty, bound, "i64", name=n)
            else:
                ir.binop("add", "i64", bound, "0", name=n)
            ir.binop("mul", "i64", n, str(CELL_BYTES * cells), name=bytes_)
            ir.call("void", "@__enzyme_build_tape_reserve", [("ptr", TAPE), ("i64", bytes_)])

    def static_slot_allocas(self) -> list[str]:
        out: list[str] = []
        ir = self.ir(out)
        for static in self.static_loops.values():
            ir.alloca("i64", align=8, name=static["slot"])
            ir.alloca("i64", align=8, name=static["count_slot"])
            if static["start_slot"] is not None:
                ir.alloca(self.types[static["loop"].iv], align=8, name=static["start_slot"])
            if "side_slot" in static:
                ir.alloca("ptr", align=8, name=static["side_slot"])
        return out

    def describe(self, name: str | None = None) -> str:
        """The cache plan as text (after `place`): for each reverse block, every forward value
        it reads that is not free and how that read is served -- kept (in which cache slot,
        frame cell, tape record, static record or side table), rebuilt from kept values,
        recomputed, re-read from memory or a snapshot, rebuilt from the store that wrote it,
        an IV replayed, or a loop-invariant slot -- and then
        what is kept per execution of each record. `ENZYME_BUILD_KEEP=dir` writes the plans of
        a build to dir/<output>.ad/cache-plan.txt."""
        mode = "split" if self.split else "combined"
        out = [f"cache plan of @{name or self.fn.name} ({mode} mode)"]
        rows = []
        for block in self.fn.blocks:
            for (label, v), how in self.how.items():
                if label != block.label:
                    continue
                if how == "kept":
                    kind, where = self.kept_in.get((label, v), ("kept", "?"))
                    how = f"kept: {kind} {_where(kind, where)}" if kind != "frame record" else \
                        f"kept: frame record cell {self.frame[v]}"
                d = self.fn.defs.get(v)
                if d is None:   # shadows, predecessor indices, tape offsets: values of the sweep
                    what = "parameter" if v in self.params else "sweep value"
                else:
                    what = f"{d.opcode} {d.callee}" if d.opcode == "call" and d.callee else d.opcode
                rows.append(("%" + label, v, what, how))
        if rows:
            widths = [max(len(r[k]) for r in rows) for k in range(3)]
            for r in rows:
                out.append("  " + "  ".join(r[k].ljust(widths[k]) for k in range(3)) + "  " + r[3])
        else:
            out.append("  (the reverse sweep reads no forward value that is not free)")
        counts: dict[str, int] = {}
        for how in self.how.values():
            counts[how] = counts.get(how, 0) + 1
        out.append("reads: " + (", ".join(f"{n} {how}" for how, n in sorted(counts.items())) or "none"))
        records: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for (label, v), (kind, where) in self.kept_in.items():
            records.setdefault((kind, where), []).append((v, self.types.get(v, "ptr")))
        for (kind, where), values in sorted(records.items()):
            if kind == "cache slot":
                continue
            size = sum(cells_of(ty) for _, ty in dict.fromkeys(values)) * CELL_BYTES
            per = {"static record": "per iteration of loop", "tape record": "per execution of block",
                   "side table": "per iteration of loop (one iteration kept)",
                   "frame record": "per call"}.get(kind, "")
            names = ", ".join(v for v, _ in dict.fromkeys(values))
            out.append(f"{kind}{' ' + _where(kind, where) if where else ''}: {size} B {per} ({names})")
        for snap in self.snapshots.values():
            where, per = ("header", "iteration") if snap["at"] == snap["loop"].header else ("preheader", "entry")
            out.append(f"snapshot of {snap['base']} at the {where} of loop %{snap['loop'].header}: "
                       f"{snap['extent']} bytes per {per} of the loop")
        slots = sorted({where for kind, where in self.kept_in.values() if kind == "cache slot"})
        if slots:
            out.append(f"cache slots (one value each, per call): {len(slots)}")
        return "\n".join(out) + "\n"

    @staticmethod
    def announce(text: str) -> None:
        """Hand a plan to whoever listens (`listening_to_plans`)."""
        for listener in _plan_listeners:
            listener(text)

    def iv_slot_allocas(self) -> list[str]:
        out: list[str] = []
        for iv, (_, _, slot, _) in self.iv_loops.items():
            self.ir(out).alloca(self.types[iv], align=8, name=slot)
        return out


class PrimalTypes(MutableMapping):
    """The sweep's types with integer views of floats back at their IR types; names the
    planner adds go into the sweep's types."""

    def __init__(self, base: dict[str, str], primal: dict[str, str]):
        self._base, self._primal = base, primal

    def __getitem__(self, key: str) -> str:
        return self._primal[key] if key in self._primal else self._base[key]

    def __setitem__(self, key: str, value: str) -> None:
        self._primal.pop(key, None)
        self._base[key] = value

    def __delitem__(self, key: str) -> None:
        del self._base[key]

    def __iter__(self):
        return iter(self._base)

    def __len__(self) -> int:
        return len(self._base)

    def __contains__(self, key) -> bool:
        return key in self._base or key in self._primal


def cells_of(ty: str) -> int:
    """Tape cells a value of type ty occupies (x86 long double: 10 bytes, two cells)."""
    return 2 if ty == "x86_fp80" else 1


def _cell_starts(values) -> list[int]:
    """First cell of each (value, type) of a record, then the record's total cell count."""
    starts = [0]
    for _, ty in values:
        starts.append(starts[-1] + cells_of(ty))
    return starts
