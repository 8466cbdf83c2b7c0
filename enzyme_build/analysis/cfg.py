"""Control-flow facts of one function: predecessors, dominators, loops and simple trip counts.

`analyze_cfg(fn)` returns a `CFG`; `print_cfg(fn)` renders it for tests and debugging.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ir.model import Function


@dataclass
class Loop:
    header: str
    blocks: set[str]
    latches: list[str]
    exits: list[str]                 # blocks outside the loop reached from inside
    preheader: str | None = None     # the unique outside predecessor of the header
    trip_count: str | None = None    # IR value (or constant) of the iteration count, if simple
    iv: str | None = None            # the counting IV (0, 1, … trip_count-1) when trip_count is known
    depth: int = 1
    # a loop counting from a value other than 0 (`for (j = i + 1; j < d; j++)`): its IV (in
    # `iv`), first value and bound; the trip count `bound - start` is known at its entry
    start: str | None = None
    bound: str | None = None
    # the general counting loop (start None for 0): an IV stepping by the constant `step`,
    # whose latch tests `tested` ("next", iv + step, or "iv", the phi itself) against
    # `bound`. With an `==` exit the loop ends when the tested value reaches the bound; with a
    # `<` test (`>` counting down) it runs at least once, and `clamp` ("umax", "smax",
    # "umin", "smin") raises (lowers) the bound to the first iteration's tested value. The
    # count is |end - start| / |step|, rounded up, plus one when the phi itself is tested
    # (`CachePlanner.static_count`).
    clamp: str | None = None
    step: int = 1
    tested: str = "next"


@dataclass
class CFG:
    order: list[str]                                  # blocks in layout order
    succs: dict[str, list[str]]
    preds: dict[str, list[str]]                       # unique, in first-edge order
    edge_count: dict[tuple[str, str], int]            # how many terminator edges P->B
    idom: dict[str, str | None]
    loops: list[Loop] = field(default_factory=list)
    loop_of: dict[str, Loop] = field(default_factory=dict)  # innermost loop of a block
    returns: list[str] = field(default_factory=list)

    def in_loop(self, block: str) -> bool:
        return block in self.loop_of

    def in_layout_order(self, blocks) -> list[str]:
        """`blocks` (reachable or not) sorted as they appear in the function."""
        if self._position is None:
            self._position = {b: i for i, b in enumerate(self.order)}
        return sorted(blocks, key=self._position.__getitem__)

    def is_natural(self, loop: Loop) -> bool:
        """Whether `loop` is one of the natural loops (not an irreducible cycle's stand-in)."""
        if self._natural is None:
            self._natural = {id(l) for l in self.loops}
        return id(loop) in self._natural

    def top_loops_of(self, block: str) -> list[Loop]:
        """The outermost (depth 1) natural loops holding `block`, in `loops` order."""
        if self._top_loops is None:
            self._top_loops = {}
            for loop in self.loops:
                if loop.depth == 1:
                    for b in loop.blocks:
                        self._top_loops.setdefault(b, []).append(loop)
        return self._top_loops.get(block, [])

    def reducible(self) -> bool:
        """Whether every cycle is a natural loop's: the reachable graph without its back
        edges (the edges to a block dominating their source) has no cycle."""
        if self._reducible is None:
            reached = [b for b in self.order if b in self.idom]
            forward = {b: [s for s in self.succs[b] if s in self.idom and not self.dominates(s, b)]
                       for b in reached}
            self._reducible = not _cyclic_sccs(reached, forward)
        return self._reducible

    # dominator-tree interval of each reachable block (DFS entry and exit numbers), built on
    # the first query: a dominates b iff b's interval nests in a's, O(1) per query
    _tree_in: dict[str, int] | None = field(default=None, repr=False, compare=False)
    _natural: set[int] | None = field(default=None, repr=False, compare=False)
    _position: dict[str, int] | None = field(default=None, repr=False, compare=False)
    _top_loops: dict[str, list[Loop]] | None = field(default=None, repr=False, compare=False)
    _reducible: bool | None = field(default=None, repr=False, compare=False)
    _tree_out: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def dominates(self, a: str, b: str) -> bool:
        """Whether every path from the entry to b passes through a (a block dominates itself;
        an unreachable block is dominated by itself only)."""
        if a == b:
            return True
        if self._tree_in is None:
            self._number_dominator_tree()
        ina = self._tree_in.get(a)
        inb = self._tree_in.get(b)
        if ina is None or inb is None:
            return False
        return ina < inb and self._tree_out[b] <= self._tree_out[a]

    def _number_dominator_tree(self) -> None:
        children: dict[str, list[str]] = {}
        roots = []
        for b in self.order:
            if b not in self.idom:
                continue
            parent = self.idom[b]
            if parent is None:
                roots.append(b)
            else:
                children.setdefault(parent, []).append(b)
        tree_in: dict[str, int] = {}
        tree_out: dict[str, int] = {}
        clock = 0
        for root in roots:
            stack = [(root, iter(children.get(root, ())))]
            tree_in[root] = clock
            clock += 1
            while stack:
                node, it = stack[-1]
                child = next(it, None)
                if child is None:
                    tree_out[node] = clock
                    clock += 1
                    stack.pop()
                else:
                    tree_in[child] = clock
                    clock += 1
                    stack.append((child, iter(children.get(child, ()))))
        self._tree_in, self._tree_out = tree_in, tree_out


def returning_blocks(fn: Function) -> set[str]:
    """The blocks from which some way leads to a `ret`. The others end in `unreachable` (a
    `throw`, `abort`, a failed length check): the function never returns normally from them,
    so no derivative is asked of what runs there -- the reverse sweep runs only after a
    return, and a tangent leaves only through one."""
    preds: dict[str, list[str]] = {}
    for b in fn.blocks:
        for t in b.terminator.targets:
            preds.setdefault(t, []).append(b.label)
    todo = [b.label for b in fn.blocks if b.terminator.opcode == "ret"]
    out: set[str] = set()
    while todo:
        b = todo.pop()
        if b not in out:
            out.add(b)
            todo.extend(preds.get(b, ()))
    return out


def analyze_cfg(fn: Function) -> CFG:
    order = [b.label for b in fn.blocks]
    succs = {b.label: list(b.terminator.targets) for b in fn.blocks}
    preds: dict[str, list[str]] = {label: [] for label in order}
    edges: dict[tuple[str, str], int] = {}
    for label in order:
        for s in succs[label]:
            edges[(label, s)] = edges.get((label, s), 0) + 1
            if label not in preds[s]:
                preds[s].append(label)
    idom = _dominators(order, succs, preds)
    cfg = CFG(order, succs, preds, edges, idom)
    cfg.returns = [b.label for b in fn.blocks if b.terminator.opcode == "ret"]
    _find_loops(cfg)
    for loop in cfg.loops:
        loop.trip_count = _trip_count(fn, cfg, loop)
    return cfg


class PostDominators:
    """Post-dominance over a function's blocks: a post-dominates b when every path from b to
    the function's end (a `ret`, an `unreachable`, a `resume`) passes through a. Blocks that
    never reach an end (an endless loop) post-dominate nothing and are post-dominated by
    nothing but themselves."""

    EXIT = "<exit>"

    def __init__(self, fn: Function):
        succs = {b.label: list(b.terminator.targets) for b in fn.blocks}
        preds: dict[str, list[str]] = {label: [] for label in succs}
        for label, targets in succs.items():
            for t in targets:
                if label not in preds.setdefault(t, []):
                    preds[t].append(label)
        ends = [b.label for b in fn.blocks if not b.terminator.targets]
        rsuccs = {self.EXIT: ends, **preds}
        rpreds = {label: targets or [self.EXIT] for label, targets in succs.items()}
        rpreds[self.EXIT] = []
        self.ipdom = _dominators([self.EXIT, *succs], rsuccs, rpreds)
        # the post-dominator tree's DFS intervals: a query is two comparisons
        children: dict[str, list[str]] = {}
        for b, parent in self.ipdom.items():
            if parent is not None:
                children.setdefault(parent, []).append(b)
        self._in: dict[str, int] = {}
        self._out: dict[str, int] = {}
        clock, stack = 0, [(self.EXIT, iter(children.get(self.EXIT, ())))]
        self._in[self.EXIT] = clock
        while stack:
            node, it = stack[-1]
            child = next(it, None)
            clock += 1
            if child is None:
                self._out[node] = clock
                stack.pop()
            else:
                self._in[child] = clock
                stack.append((child, iter(children.get(child, ()))))

    def post_dominates(self, a: str, b: str) -> bool:
        if a == b:
            return True
        ina, inb = self._in.get(a), self._in.get(b)
        if ina is None or inb is None:
            return False
        return ina < inb and self._out[b] <= self._out[a]


def _reverse_postorder(entry: str, succs: dict[str, list[str]]) -> list[str]:
    seen, post = set(), []
    stack = [(entry, iter(succs[entry]))]
    seen.add(entry)
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            post.append(node)
            stack.pop()
        elif nxt not in seen:
            seen.add(nxt)
            stack.append((nxt, iter(succs[nxt])))
    return post[::-1]


def _dominators(order, succs, preds) -> dict[str, str | None]:
    """Cooper-Harvey-Kennedy iterative dominators over reachable blocks."""
    rpo = _reverse_postorder(order[0], succs)
    index = {b: i for i, b in enumerate(rpo)}
    idom: dict[str, str | None] = {rpo[0]: rpo[0]}
    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            new = None
            for p in preds[b]:
                if p in idom:
                    new = p if new is None else _intersect(p, new, idom, index)
            if idom.get(b) != new:
                idom[b] = new
                changed = True
    idom[rpo[0]] = None
    return idom


def _intersect(a, b, idom, index):
    while a != b:
        while index[a] > index[b]:
            a = idom[a]
        while index[b] > index[a]:
            b = idom[b]
    return a


def _find_loops(cfg: CFG) -> None:
    """Natural loops from back edges (latch -> header where header dominates latch)."""
    by_header: dict[str, Loop] = {}
    for b in cfg.order:
        if b not in cfg.idom:
            continue
        for s in cfg.succs[b]:
            if cfg.dominates(s, b):
                body = {s}
                work = [b]
                while work:
                    x = work.pop()
                    if x not in body:
                        body.add(x)
                        work.extend(p for p in cfg.preds[x] if p in cfg.idom)
                loop = by_header.setdefault(s, Loop(s, set(), [], []))
                loop.blocks |= body
                loop.latches.append(b)
    loops = sorted(by_header.values(), key=lambda l: len(l.blocks))
    position = {b: i for i, b in enumerate(cfg.order)}
    containing: dict[str, list[Loop]] = {}   # header -> the loops holding it
    for loop in loops:
        for b in loop.blocks:
            if b in by_header:
                containing.setdefault(b, []).append(loop)
    for loop in loops:
        outside = [p for p in cfg.preds[loop.header] if p not in loop.blocks]
        loop.preheader = outside[0] if len(outside) == 1 else None
        loop.exits = sorted({s for b in loop.blocks for s in cfg.succs[b] if s not in loop.blocks},
                            key=position.__getitem__)
        # the loops strictly containing this one hold its header (only those are compared)
        loop.depth = 1 + sum(1 for other in containing[loop.header]
                             if other is not loop and loop.blocks < other.blocks)
    for loop in reversed(loops):  # big to small: the innermost wins
        for b in loop.blocks:
            cfg.loop_of[b] = loop
    cfg.loops = loops
    # blocks in irreducible cycles are not in natural loops; catch them via SCCs
    for comp in _cyclic_sccs(cfg.order, cfg.succs):
        for b in comp:
            if b not in cfg.loop_of:
                cfg.loop_of[b] = Loop(b, set(comp), [], [])


def _cyclic_sccs(order: list[str], succs: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected components of the graph that hold a cycle (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        work = [(v, iter(succs[v]))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == node:
                            break
                    if len(comp) > 1 or node in succs[node]:
                        out.append(comp)
            elif w not in index:
                index[w] = low[w] = counter[0]
                counter[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(succs[w])))
            elif w in on:
                low[node] = min(low[node], index[w])

    for b in order:
        if b not in index:
            strong(b)
    return out


# the exit test as `value <pred> bound` with the exit taken when it is true
_INVERSE = {"eq": "ne", "ne": "eq", "ult": "uge", "uge": "ult", "ule": "ugt", "ugt": "ule",
            "slt": "sge", "sge": "slt", "sle": "sgt", "sgt": "sle"}
_SWAPPED = {"eq": "eq", "ne": "ne", "ult": "ugt", "ugt": "ult", "ule": "uge", "uge": "ule",
            "slt": "sgt", "sgt": "slt", "sle": "sge", "sge": "sle"}
# exit predicates of a loop that goes on while the tested value is below the bound (counting
# up) or above it (counting down): the clamp of its end, and the flag on the increment that
# rules out wrapping when the incremented value is tested from a start other than 0
_CLAMPED = {(1, "uge"): ("umax", "nuw"), (1, "sge"): ("smax", "nsw"),
            (-1, "sle"): ("smin", "nsw"), (-1, "ule"): ("umin", None)}


# the constant an IV steps by (any but 0)
STEP_CONSTANT = re.compile(r'-?[1-9]\d*')


def deciding_branch(fn: Function, cfg: CFG, block: str) -> tuple[str, str, str] | None:
    """For a block entered from two predecessors, a branch whose condition says which one
    control came from: (condition, predecessor when it is true, predecessor when it is
    false), or None. The branching block dominates the block, so the condition's latest
    value there is the one the branch tested (a new value computed after the branch would
    give a way to the block around the branching block). Two shapes:

    - a diamond: both predecessors' only predecessor is one block D ending in
      `br c, A, B` with {A, B} the two predecessors;
    - a guard: one predecessor P ends in `br c, block, S` (or `br c, S, block`), or only
      goes on to the block and has one predecessor ending in `br c, P, S`; that branching
      block dominates the other predecessor, Q, and every way from `block` back to Q passes
      through it (the block is in no loop, or in a loop holding it; the function's cycles
      are all natural loops). Control that reaches the block through Q then left the branch,
      last time, towards S: a loop's guarded inner loop (`if (n > 0) { preheader … exit }`
      joining the skipped path), an `if` without `else`."""
    preds = cfg.preds.get(block, [])
    if len(preds) != 2 or block in preds or any(cfg.edge_count[(p, block)] != 1 for p in preds):
        return None

    def branch_on(label: str):
        term = fn.block(label).terminator
        if term.opcode != "br" or len(term.targets) != 2 or term.targets[0] == term.targets[1]:
            return None
        c = term.operands[0][1]
        if not c.startswith("%") or term.operands[0][0] != "i1":
            return None
        return c, term.targets[0], term.targets[1]

    a, b = preds
    if cfg.preds[a] == cfg.preds[b] and len(cfg.preds[a]) == 1:
        found = branch_on(cfg.preds[a][0])
        if found is not None and {found[1], found[2]} == {a, b}:
            return found
    for p, q in ((a, b), (b, a)):
        # the branch in p itself, or in p's only predecessor when p just goes on to the block
        # (a path jump threading split off: `br c, %then, %skip.thread`, `skip.thread: br %join`)
        found = branch_on(p)
        if found is not None and block in found[1:]:
            decider, via = p, block
        elif cfg.succs[p] == [block] and len(cfg.preds[p]) == 1:
            decider, via = cfg.preds[p][0], p
            found = branch_on(decider)
            if found is None or via not in found[1:]:
                continue
        else:
            continue
        if not cfg.dominates(decider, q):
            continue
        loop = cfg.loop_of.get(block)
        if loop is not None and (decider not in loop.blocks or not cfg.reducible()):
            continue
        c, if_true, _ = found
        return (c, p, q) if if_true == via else (c, q, p)
    return None


def _counting_iv(fn: Function, loop: Loop, value: str):
    """(phi, increment, what is tested) when `value` is a header phi stepping by a constant
    each iteration (`iv`) or that step (`next`); None otherwise."""
    inst = fn.defs.get(value)
    if inst is None:
        return None
    if inst.opcode == "phi":
        phi, tested = inst, "iv"
        back = [v for v, blk in phi.incoming if blk == loop.latches[0]]
        step = fn.defs.get(back[0]) if len(back) == 1 else None
    elif inst.opcode == "add":
        step, tested = inst, "next"
        phi = fn.defs.get(inst.operands[0][1])
    else:
        return None
    if phi is None or phi.opcode != "phi" or phi.block != loop.header or step is None \
            or step.opcode != "add" or step.operands[0][1] != phi.result \
            or not STEP_CONSTANT.fullmatch(step.operands[1][1]) \
            or [v for v, blk in phi.incoming if blk == loop.latches[0]] != [step.result]:
        return None
    return phi, step, tested


def constant_step_ivs(fn: Function, loop: Loop) -> dict:
    """The header phis of `loop` stepping by a nonzero integer constant each iteration,
    `phi [start, %preheader], [iv + step, %latch]`: iv -> (step, start, the `add`). Empty
    for a loop without a preheader or with several latches."""
    out = {}
    if loop.preheader is None or len(loop.latches) != 1:
        return out
    pre, latch = loop.preheader, loop.latches[0]
    for phi in fn.block(loop.header).phis():
        inc = {b: v for v, b in phi.incoming}
        nxt = fn.defs.get(inc.get(latch, ""))
        if set(inc) == {pre, latch} and nxt is not None and nxt.opcode == "add":
            (_, x), (_, y) = nxt.operands
            step = y if x == phi.result else (x if y == phi.result else None)
            if step is not None and STEP_CONSTANT.fullmatch(step):
                out[phi.result] = (int(step), inc[pre], nxt)
    return out


def loop_invariant(fn: Function, loop: Loop, value: str) -> bool:
    """A constant, an argument or a value computed outside the loop."""
    if not (value.startswith("%") or re.fullmatch(r'-?\d+', value)):
        return False
    inst = fn.defs.get(value)
    return inst is None or inst.block not in loop.blocks


def _trip_count(fn: Function, cfg: CFG, loop: Loop) -> str | None:
    """Iterations of a counting loop: an IV `phi [start, pre], [iv ± 1, latch]` whose latch
    leaves the loop when the IV or its step equals a loop-invariant bound, or goes on while it
    is below the bound (above it, counting down; unsigned or signed, either branch or operand
    order). Returns the trip count as an IR constant or value name for the canonical shape O2
    produces (from 0, up by 1, leaving when `iv + 1 == bound`); otherwise records `iv`,
    `start` (None for 0), `bound`, `step`, `tested` and `clamp` on the loop and returns None
    (the count is computed where the loop is entered, `CachePlanner.static_count`)."""
    if loop.preheader is None or len(loop.latches) != 1:
        return None
    latch = fn.block(loop.latches[0])
    term = latch.terminator
    if term.opcode != "br" or not term.operands:
        return None
    cond = fn.defs.get(term.operands[0][1])
    if cond is None or cond.opcode != "icmp" or cond.predicate not in _INVERSE:
        return None
    exit_on_true = term.targets[0] not in loop.blocks
    if exit_on_true == (term.targets[1] not in loop.blocks):
        return None
    predicate = cond.predicate if exit_on_true else _INVERSE[cond.predicate]
    value, bound = cond.operands[0][1], cond.operands[1][1]
    found = _counting_iv(fn, loop, value)
    if found is None:
        value, bound, predicate = bound, value, _SWAPPED[predicate]
        found = _counting_iv(fn, loop, value)
    if found is None:
        return None
    iv, step, tested = found
    stride = int(step.operands[1][1])
    direction = 1 if stride > 0 else -1
    starts = [v for v, blk in iv.incoming if blk == loop.preheader]
    if len(starts) != 1 or not loop_invariant(fn, loop, starts[0]) \
            or not loop_invariant(fn, loop, bound):
        return None
    start = None if starts == ["0"] and direction == 1 else starts[0]
    if predicate == "eq":
        if stride == 1 and tested == "next":
            if start is None:
                loop.iv = iv.result
                return bound
            if iv.type != "i64":
                return None
    elif (direction, predicate) in _CLAMPED:
        clamp, flag = _CLAMPED[direction, predicate]
        # the IV must not wrap before its tested value passes the bound: counting up by 1 it
        # cannot from 0, nor when the phi is tested (iv < bound, so iv + 1 <= bound);
        # otherwise the increment's no-wrap flag says so (an unsigned count down tested after
        # its step could wrap below 0)
        if (abs(stride) > 1 or (tested == "next" and (start is not None or direction == -1))) \
                and (flag is None or flag not in step.flags):
            return None
        loop.clamp = clamp
    else:
        return None
    loop.iv, loop.start, loop.bound, loop.step, loop.tested = iv.result, start, bound, stride, tested
    return None


def print_cfg(fn: Function) -> str:
    cfg = analyze_cfg(fn)
    out = [f"function @{fn.name}"]
    for b in cfg.order:
        loop = cfg.loop_of.get(b)
        out.append(f"  {b}: preds={cfg.preds[b]} idom={cfg.idom.get(b)}"
                   + (f" loop={loop.header}" if loop else ""))
    for loop in cfg.loops:
        out.append(f"  loop {loop.header}: blocks={sorted(loop.blocks)} latches={loop.latches} "
                   f"exits={loop.exits} preheader={loop.preheader} trip={loop.trip_count} depth={loop.depth}"
                   + (f" count={_count_text(loop)}" if loop.bound is not None else ""))
    return "\n".join(out)


def _count_text(loop: Loop) -> str:
    """The iteration count of a loop without a plain trip count, as the printer shows it."""
    start, size = loop.start or "0", abs(loop.step)
    first = start if loop.tested == "iv" else str(loop.step) if loop.start is None \
        else f"{start} {'+' if loop.step > 0 else '-'} {size}"
    end = f"{loop.clamp}({loop.bound}, {first})" if loop.clamp else loop.bound
    count = (end if loop.start is None else f"{end} - {start}") if loop.step > 0 else f"{start} - {end}"
    if size > 1:
        count = f"ceil(({count}) / {size})"
    return count + (" + 1" if loop.tested == "iv" else "")
