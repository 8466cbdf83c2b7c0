"""Loops that walk pointers, given an integer counter before AD.

C++ iterates with pointers: a range-for over a `std::vector`, `std::accumulate`,
`std::max_element`, `std::inner_product`, `std::transform` and C's `for (p = a; p != end; p++)`
all become, after optimization, a loop whose IV is a pointer

    %p = phi ptr [ %begin, %pre ], [ %p.next, %latch ]
    %p.next = getelementptr inbounds i8, ptr %p, i64 8
    %done = icmp eq ptr %p.next, %end

with no integer counting the iterations. The cache planner counts loops by integer IVs
(analysis/cfg.py `_trip_count`): without one, every value the reverse sweep needs from such
a loop went on the tape through a record pushed per iteration, together with the iteration's
shadow pointer (the pointer IV's shadow is a phi the reverse sweep cannot rebuild), and the
tape's capacity was checked every iteration. The C++ GMM of the benchmark's algorithm written
with `std::vector` scratch and `<algorithm>`/`<numeric>` helpers ran its gradient at 4.2x the
primal; the index-loop versions of the same code run at about 2x.

`counted_pointer_loops` rewrites each such loop before synthesis: the loop gets the counter
`k` (0, 1, ...), its exit test becomes `k + 1 == (end - begin) / step` (computed where the
loop is entered; the division is exact, because a walk that steps over `end` never ends),
and every pointer the header steps by a constant, the tested one and any walking beside it
(`std::transform` over two vectors), becomes `begin + k * step`: an address affine in the
counter, which the engine replays in the reverse sweep like `a[i]` (no tape, shadow pointer
rebuilt). The loop's trip count is known on entry, so its records are static. The post-AD
pipeline's loop strength reduction turns the addresses back into pointer increments.

Only the exact shape above is rewritten (one latch, a preheader, an `==`/`!=` test of the
stepped pointer against a loop-invariant end that leaves the loop when they are equal);
anything else is left as it was and is handled as before.
"""
from __future__ import annotations

import re

from ..analysis.cfg import analyze_cfg, loop_invariant
from ..analysis.memtypes import type_size
from ..ir.model import make_name, parse_function

_CONSTANT = re.compile(r'-?\d+')


def counted_pointer_loops(text: str) -> str:
    """The module text with every pointer-walking loop counted by an integer (see above)."""
    if not re.search(r'= icmp [a-z]+ ptr ', text):
        return text
    lines = text.split("\n")
    before: dict[int, list[str]] = {}     # line index -> lines inserted before it
    replace: dict[int, list[str]] = {}    # line index -> its replacement (possibly none)
    i = 0
    while i < len(lines):
        if lines[i].startswith("define "):
            fn, end = parse_function(lines, i)
            if any(inst.opcode == "icmp" and inst.operands and inst.operands[0][0] == "ptr"
                   for inst in fn.of_opcode("icmp")):
                _count_walks(fn, lines, before, replace)
            i = end
        i += 1
    if not replace:
        return text
    out: list[str] = []
    for k, line in enumerate(lines):
        out.extend(before.get(k, ()))
        out.extend(replace.get(k, (line,)))
    text = "\n".join(out)
    if "@llvm.smax.i64(" in text and not re.search(r'^declare [^\n]*@llvm\.smax\.i64\(', text, re.M):
        text += "\ndeclare i64 @llvm.smax.i64(i64, i64)\n"
    return text


_SWAPPED = {"eq": "eq", "ne": "ne", "ult": "ugt", "ugt": "ult", "ule": "uge", "uge": "ule",
            "slt": "sgt", "sgt": "slt", "sle": "sge", "sge": "sle"}
_INVERSE = {"eq": "ne", "ne": "eq", "ult": "uge", "uge": "ult", "ugt": "ule", "ule": "ugt",
            "slt": "sge", "sge": "slt", "sgt": "sle", "sle": "sgt"}


def _count_walks(fn, lines: list[str], before: dict, replace: dict) -> None:
    cfg = analyze_cfg(fn)
    taken = set(fn.defs)
    for loop in sorted(cfg.loops, key=lambda l: l.depth):   # outer first: its addresses come first
        if loop.iv is not None or loop.preheader is None or len(loop.latches) != 1:
            continue   # counted by an integer already, or not a simple loop
        latch = fn.block(loop.latches[0])
        term = latch.terminator
        if term.opcode != "br" or len(term.targets) != 2 or not term.operands:
            continue
        cond = fn.defs.get(term.operands[0][1])
        if cond is None or cond.opcode != "icmp" or cond.predicate not in _SWAPPED \
                or cond.block != latch.label or cond.operands[0][0] != "ptr" \
                or len(fn.users().get(cond.result, ())) != 1:
            continue
        exit_on_true = term.targets[0] not in loop.blocks
        if exit_on_true == (term.targets[1] not in loop.blocks):
            continue
        a, b = cond.operands[0][1], cond.operands[1][1]
        walk, end, predicate = _walk(fn, loop, a), b, cond.predicate
        if walk is None:
            walk, end, predicate = _walk(fn, loop, b), a, _SWAPPED[cond.predicate]
        if walk is None or not _invariant(fn, loop, end) \
                or fn.block(loop.preheader).terminator.synthetic:   # an invoke's edge: no room before it
            continue
        going_on = _INVERSE[predicate] if exit_on_true else predicate   # `stepped <going_on> end`
        stride = walk[2]
        if going_on != "ne" and going_on not in (("ult", "slt") if stride > 0 else ("ugt", "sgt")):
            continue   # not a walk that ends at `end` (or passes it, testing `<`)
        walks = [w for phi in fn.block(loop.header).phis() if phi.type == "ptr"
                 for w in [_walk(fn, loop, _latch_value(phi, loop))] if w is not None and w[0] is phi]
        _rewrite(fn, loop, walk, end, going_on == "ne", exit_on_true, walks, cond, lines, before, replace, taken)


def _invariant(fn, loop, value: str) -> bool:
    """A pointer computed outside the loop: a local defined there, a global, or a constant
    expression over globals (the end of a global array); not null, undef or poison."""
    if value.startswith("%"):
        return loop_invariant(fn, loop, value)
    return value.startswith("@") or (value.startswith("getelementptr") and "@" in value and "%" not in value)


def _latch_value(phi, loop) -> str:
    values = [v for v, blk in phi.incoming if blk == loop.latches[0]]
    return values[0] if len(values) == 1 else ""


def _walk(fn, loop, stepped: str):
    """(phi, start, byte stride, inbounds) when `stepped` is a header phi's pointer plus a
    constant, fed back on the latch; None otherwise."""
    gep = fn.defs.get(stepped) if stepped.startswith("%") else None
    if gep is None or gep.opcode != "getelementptr" or len(gep.operands) != 2 \
            or not _CONSTANT.fullmatch(gep.operands[1][1]):
        return None
    size = type_size(None, gep.source_type)
    phi = fn.defs.get(gep.operands[0][1])
    if size is None or phi is None or phi.opcode != "phi" or phi.block != loop.header \
            or phi.type != "ptr" or len(phi.incoming) != 2:
        return None
    incoming = dict((blk, v) for v, blk in phi.incoming)
    start = incoming.get(loop.preheader)
    if incoming.get(loop.latches[0]) != gep.result or start is None or not _invariant(fn, loop, start):
        return None
    stride = size * int(gep.operands[1][1])
    if stride == 0:
        return None
    return phi, start, stride, "inbounds" in gep.flags.split()


def _fresh(taken: set, *parts: str) -> str:
    name = make_name("%", *parts)
    n = 0
    while name in taken:
        n += 1
        name = make_name("%", *parts[:-1], f"{parts[-1]}{n}")
    taken.add(name)
    return name


def _rewrite(fn, loop, walk, end, exact, exit_on_true, walks, cond, lines, before, replace, taken) -> None:
    """Count the loop: `k` from 0, its exit test on `k + 1` against the number of iterations
    (for a `!=` walk (end - begin) / step, exactly; for a `<` (`>`) walk that many rounded
    up, and at least one: the body runs before the first test), every constant-step pointer
    phi of the header `begin + k * step`."""
    phi, start, stride, _ = walk
    base = phi.result[1:].strip('"') + ".walk"
    counter, nxt = _fresh(taken, base + "count"), _fresh(taken, base + "next")
    s_int, e_int = _fresh(taken, base + "begin"), _fresh(taken, base + "end")
    dist, trips = _fresh(taken, base + "bytes"), _fresh(taken, base + "trips")
    pre, latch = make_name("%", loop.preheader), make_name("%", loop.latches[0])
    entry = fn.block(loop.preheader).terminator.first_line
    count = [f"  {s_int} = ptrtoint ptr {start} to i64",
             f"  {e_int} = ptrtoint ptr {end} to i64"]
    if exact:
        count += [f"  {dist} = sub i64 {e_int}, {s_int}",
                  f"  {trips} = sdiv exact i64 {dist}, {stride}"]
    else:   # ceil(|end - begin| / |step|), at least 1
        size = abs(stride)
        up, rounded = _fresh(taken, base + "up"), _fresh(taken, base + "rounded")
        count += [f"  {dist} = sub i64 {e_int if stride > 0 else s_int}, {s_int if stride > 0 else e_int}",
                  f"  {up} = add i64 {dist}, {size - 1}",
                  f"  {rounded} = sdiv i64 {up}, {size}",
                  f"  {trips} = call i64 @llvm.smax.i64(i64 {rounded}, i64 1)"]
    before.setdefault(entry, []).extend(count)
    header_phis = fn.block(loop.header).phis()
    replace[header_phis[0].first_line] = [f"  {counter} = phi i64 [ 0, {pre} ], [ {nxt}, {latch} ]",
                                          lines[header_phis[0].first_line]]
    addresses: list[str] = []
    for p, p_start, p_stride, inbounds in walks:
        offset = _fresh(taken, p.result[1:].strip('"') + ".walkoffset")
        addresses += [f"  {offset} = mul nsw i64 {counter}, {p_stride}",
                      f"  {p.result} = getelementptr {'inbounds ' if inbounds else ''}i8, ptr {p_start}, i64 {offset}"]
        if p.first_line == header_phis[0].first_line:
            replace[p.first_line] = replace[p.first_line][:1]
        else:
            replace[p.first_line] = []
    after_phis = next(inst for inst in fn.block(loop.header).instructions if inst.opcode != "phi")
    before.setdefault(after_phis.first_line, []).extend(addresses)
    # k + 1 reaches the count (at least 1) exactly where the walk's test fails
    replace[cond.first_line] = [f"  {nxt} = add nuw nsw i64 {counter}, 1",
                                f"  {cond.result} = icmp {'eq' if exit_on_true else 'ne'} i64 {nxt}, {trips}"]
