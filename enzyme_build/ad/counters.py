"""Loops given the integer counters the cache planner reads, before AD.

The cache planner counts a loop, replays its IVs in the reverse sweep and sees addresses as
affine functions of them when the loop steps integer phis by constants (analysis/cfg.py
`_trip_count`, ad/cache.py). Two shapes the optimizer leaves do not look like that:

**Loops that walk pointers** (`counted_pointer_loops`). C++ iterates with pointers: a
range-for over a `std::vector`, `std::accumulate`, `std::max_element`, `std::inner_product`,
`std::transform` and C's `for (p = a; p != end; p++)` all become, after optimization, a loop
whose IV is a pointer

    %p = phi ptr [ %begin, %pre ], [ %p.next, %latch ]
    %p.next = getelementptr inbounds i8, ptr %p, i64 8
    %done = icmp eq ptr %p.next, %end

with no integer counting the iterations. Without one, every value the reverse sweep needed
from such a loop went on the tape through a record pushed per iteration, together with the
iteration's shadow pointer (the pointer IV's shadow is a phi the reverse sweep cannot
rebuild), and the tape's capacity was checked every iteration. Each such loop now gets the
counter `k` (0, 1, ...), its exit test becomes `k + 1 == count` (computed where the loop is
entered: `(end - begin) / step` for a `!=` test, exactly, because a walk that steps over
`end` never ends; for a `<` (`>`) test that many rounded up, and at least one, since the body
runs before the first test), and every pointer the header steps by a constant, the tested one
and any walking beside it (`std::transform` over two vectors), becomes `begin + k * step`:
an address affine in the counter, which the engine replays like `a[i]` (no tape, shadow
pointer rebuilt); the loop's records are static. The post-AD pipeline's loop strength
reduction turns the addresses back into pointer increments. Only that shape is rewritten
(one latch, a preheader, the stepped pointer tested against a loop-invariant end so that the
loop ends when it reaches, or for `<`, passes it); anything else is left as it was.

**IVs that lag one iteration behind another** (`lagging_ivs`). For `for (i = 1; i + 1 < n;
i++) ... u[i - 1], u[i], u[i + 1]` the optimizer may make `i + 1` the IV `j` and keep `i` as
`phi [1, %pre], [j, %latch]`: the previous iteration's `j`. That phi is no IV to the planner:
the reverse sweep kept it in a record per iteration, and the addresses through it and
through `j` looked unrelated (a stencil's three neighbours were not seen as re-reads of the
same elements, so no snapshot of the buffer was taken). Such a phi becomes `j - step`.
"""
from __future__ import annotations

import re

from ..analysis.cfg import analyze_cfg, constant_step_ivs, loop_invariant
from ..analysis.memtypes import type_size
from ..ir.model import make_name, parse_function
from .boundaries import _functions

_CONSTANT = re.compile(r'-?\d+')
_PTR_ICMP = re.compile(r' = icmp [a-z]+ ptr ')
_INT_PHI = re.compile(r'^  (%(?:"[^"]*"|[-\w$.]+)) = phi i\d+ (.*)$')
_INCOMING = re.compile(r'\[ ([^,\]]+), ')


def _functions_with(text: str, wanted):
    """The define lines of the functions whose body lines pass `wanted(body)`: a scan of the
    text, so that only those functions are parsed (a large program has hundreds of others)."""
    return [start for _, start, body in _functions(text) if wanted(body)]


def _spliced(lines: list[str], before: dict, replace: dict) -> str:
    """`lines` as text, with `before[k]` inserted before line k and line k replaced by
    `replace[k]` (none, one or several lines)."""
    out: list[str] = []
    for k, line in enumerate(lines):
        out.extend(before.get(k, ()))
        out.extend(replace.get(k, (line,)))
    return "\n".join(out)


def _may_walk(body: list[str]) -> bool:
    return any(" = phi ptr " in line for line in body) and any(_PTR_ICMP.search(line) for line in body)


def _may_lag(body: list[str]) -> bool:
    """An integer phi takes another integer phi's value."""
    phis = {m.group(1): m.group(2) for line in body if (m := _INT_PHI.match(line))}
    return any(v in phis for incoming in phis.values() for v in _INCOMING.findall(incoming))


def counted_pointer_loops(text: str) -> str:
    """The module text with every pointer-walking loop counted by an integer (see above)."""
    if not _PTR_ICMP.search(text):
        return text
    starts = _functions_with(text, _may_walk)
    lines = text.split("\n")
    before: dict[int, list[str]] = {}     # line index -> lines inserted before it
    replace: dict[int, list[str]] = {}    # line index -> its replacement (possibly none)
    for start in starts:
        _count_walks(parse_function(lines, start)[0], lines, before, replace)
    if not replace:
        return text
    text = _spliced(lines, before, replace)
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


def lagging_ivs(text: str) -> str:
    """The module text with every header phi that holds the previous iteration's value of an
    IV (`phi [start, %pre], [j, %latch]` where `j` steps by `s` from `start + s`) computed as
    `j - s` (see above)."""
    if " = phi i" not in text:
        return text
    starts = _functions_with(text, _may_lag)
    lines = text.split("\n")
    before: dict[int, list[str]] = {}
    replace: dict[int, list[str]] = {}
    for start in starts:
        _lagging_in(parse_function(lines, start)[0], before, replace)
    return _spliced(lines, before, replace) if replace else text


def _lagging_in(fn, before: dict, replace: dict) -> None:
    cfg = analyze_cfg(fn)
    for loop in cfg.loops:
        if loop.preheader is None or len(loop.latches) != 1:
            continue
        pre, latch = loop.preheader, loop.latches[0]
        phis = fn.block(loop.header).phis()
        ivs = {iv: found for iv, found in constant_step_ivs(fn, loop).items() if fn.defs[iv].type.startswith("i")}
        lagging = []
        for phi in phis:
            inc = {blk: v for v, blk in phi.incoming}
            if set(inc) != {pre, latch} or len(phi.incoming) != 2 or inc[latch] not in ivs \
                    or phi.result in ivs:
                continue
            step, start, add = ivs[inc[latch]]
            if fn.defs.get(inc[latch]).type != phi.type or not _starts_one_step_before(fn, inc[pre], start, step):
                continue
            flags = "nsw " if "nsw" in add.flags.split() else ""
            lagging.append((phi, f"  {phi.result} = add {flags}{phi.type} {inc[latch]}, {-step}"))
        if not lagging:
            continue
        for phi, _ in lagging:
            replace[phi.first_line] = []
        after_phis = next(inst for inst in fn.block(loop.header).instructions if inst.opcode != "phi")
        before.setdefault(after_phis.first_line, []).extend(line for _, line in lagging)


def _starts_one_step_before(fn, first: str, start: str, step: int) -> bool:
    """Whether `first` is `start - step`: two integer constants, or `start` computed as
    `first + step`."""
    if _CONSTANT.fullmatch(first) and _CONSTANT.fullmatch(start):
        return int(first) == int(start) - step
    add = fn.defs.get(start)
    return add is not None and add.opcode == "add" and _CONSTANT.fullmatch(add.operands[1][1] or "") is not None \
        and int(add.operands[1][1]) == step and add.operands[0][1] == first
