"""Hand-written byte-copy loops of float data, turned into `memcpy` before AD.

`char *d = dst; const char *s = src; for (i = 0; i < n; i++) d[i] = s[i];` copying
doubles moves each double in eight `i8` pieces; no single piece has a derivative, so the
engine can only refuse it (reverse mode cannot add adjoints byte by byte).  The optimizing
pipeline turns such a loop into `llvm.memcpy` (inlining, then loop-idiom recognition),
whose derivative the engine knows, but only where it inlines the helper: a copy helper
marked `noinline` keeps its loop, and with AD before optimization
(`ENZYME_BUILD_AD_BEFORE_OPT=1`) only SROA runs. This step does those two things for the
functions that hold such loops and nothing else: it inlines them (up to
`MAX_INLINED_LINES` lines each) into their callers, then runs `loop-idiom` (with the loop
canonicalization it needs) on the functions that hold the loops afterwards, every other
function kept out.

Loop-idiom turns a loop into a memcpy only where source and destination cannot overlap.
Where it cannot tell (pointers loaded from memory, two pointer parameters, a buffer an
OpenMP region captured), a remaining byte-copy loop `d[i] = s[i]` counting up (down)
becomes a call of `@__enzyme_build_copy_bytes(d, s, n)` (`_down`), which does exactly
what the loop does with memory intrinsics whose derivatives the engine knows: a `memmove`
where the loop and memmove agree, else, since the loop then reads bytes it wrote
`k = |d - s|` bytes before, chunks of `k` bytes copied one after another by `memcpy` in
the loop's order (each chunk apart from its source). Loops of wider integers, other steps
and loops doing anything else keep the engine's clear error.
"""
from __future__ import annotations

import re

from ..ir.model import LOCAL as _V, make_name, parse_module
from .tape import DECLARATIONS

_LOAD_NARROW = re.compile(r'^  ' + _V + r' = load (i8|i16|i32), ptr ')
_STORE_NARROW = re.compile(r'^  store (i8|i16|i32) ' + _V + r', ptr ')
MAX_INLINED_LINES = 200
IDIOM = ("function(simplifycfg,loop-simplify,lcssa,loop(loop-rotate,indvars,loop-idiom),"
         "simplifycfg,instcombine<no-verify-fixpoint>)")


def byte_copy_functions(text: str) -> set[str]:
    """Functions with an integer narrower than any float-sized word loaded and stored
    again unchanged (a copy piece)."""
    from .boundaries import _functions
    found = set()
    for name, _, body in _functions(text):
        loaded = {m.group(1): m.group(2) for line in body if (m := _LOAD_NARROW.match(line))}
        if loaded and any((m := _STORE_NARROW.match(line)) and loaded.get(m.group(2)) == m.group(1)
                          for line in body):
            found.add(name)
    return found


def loops_to_memcpy(module, llvm, exclude=frozenset()):
    from .boundaries import _functions, mark_always_inline
    from .optrun import defined_functions, run_opt
    names = {n for n in byte_copy_functions(module.text()) if n[1:].strip('"') not in exclude}
    if not names:
        return module
    text = module.text()
    small = {name for name, _, body in _functions(text) if len(body) <= MAX_INLINED_LINES}
    called = {n for n in names & small if re.search(r'\bcall\b[^@]*' + re.escape(n) + r'\(', text)}
    if called:
        module = llvm.parse_assembly(mark_always_inline(text, called), module.name)
        llvm.run_named_passes(module, ["always-inline", "sroa"])
        text = module.text()
    names = {n for n in byte_copy_functions(text) if n[1:].strip('"') not in exclude}
    if not names:
        return module
    keep = set(defined_functions(text)) - names
    module = run_opt(module, llvm, IDIOM, keep=keep, what="turning byte-copy loops into memcpy",
                     hint="copy floating-point data with memcpy or as double/float values")
    names = {n for n in byte_copy_functions(module.text()) if n[1:].strip('"') not in exclude}
    if not names:
        return module
    llvm.run_named_passes(module, ["instnamer"])   # the rewrite removes values: no numbered ones
    text = copy_loops_to_calls(module.text(), names)
    return llvm.parse_assembly(text, module.name) if text is not None else module


COPY_BYTES = "@__enzyme_build_copy_bytes"
COPY_BYTES_DOWN = "@__enzyme_build_copy_bytes_down"
# what `for (i = 0; i < n; i++) d[i] = s[i]` over bytes does, through memory intrinsics:
# a memmove unless d lies inside (s, s + n), where the loop re-reads bytes it wrote k = d - s
# earlier; there, chunks of k bytes copied in order (each chunk apart from its source)
_COPY_BYTES_IR = """\
define internal void @__enzyme_build_copy_bytes(ptr %d, ptr %s, i64 %n) {
entry:
  %di = ptrtoint ptr %d to i64
  %si = ptrtoint ptr %s to i64
  %k = sub i64 %di, %si
  %inside = icmp ult i64 %k, %n
  %moved = icmp ne i64 %k, 0
  %rereads = and i1 %inside, %moved
  br i1 %rereads, label %chunk, label %whole
whole:
  call void @llvm.memmove.p0.p0.i64(ptr %d, ptr %s, i64 %n, i1 false)
  ret void
chunk:
  %j = phi i64 [ 0, %entry ], [ %next, %chunk ]
  %left = sub i64 %n, %j
  %len = call i64 @llvm.umin.i64(i64 %k, i64 %left)
  %dj = getelementptr i8, ptr %d, i64 %j
  %sj = getelementptr i8, ptr %s, i64 %j
  call void @llvm.memcpy.p0.p0.i64(ptr %dj, ptr %sj, i64 %len, i1 false)
  %next = add i64 %j, %k
  %more = icmp ult i64 %next, %n
  br i1 %more, label %chunk, label %done
done:
  ret void
}"""
# the same for `for (i = n; i-- > 0;) d[i] = s[i]`: it re-reads what it wrote when s lies
# inside (d, d + n); there, chunks of k = s - d bytes from the top down
_COPY_BYTES_DOWN_IR = """\
define internal void @__enzyme_build_copy_bytes_down(ptr %d, ptr %s, i64 %n) {
entry:
  %di = ptrtoint ptr %d to i64
  %si = ptrtoint ptr %s to i64
  %k = sub i64 %si, %di
  %inside = icmp ult i64 %k, %n
  %moved = icmp ne i64 %k, 0
  %rereads = and i1 %inside, %moved
  br i1 %rereads, label %chunk, label %whole
whole:
  call void @llvm.memmove.p0.p0.i64(ptr %d, ptr %s, i64 %n, i1 false)
  ret void
chunk:
  %j = phi i64 [ %n, %entry ], [ %low, %chunk ]
  %len = call i64 @llvm.umin.i64(i64 %k, i64 %j)
  %low = sub i64 %j, %len
  %dj = getelementptr i8, ptr %d, i64 %low
  %sj = getelementptr i8, ptr %s, i64 %low
  call void @llvm.memcpy.p0.p0.i64(ptr %dj, ptr %sj, i64 %len, i1 false)
  %more = icmp ne i64 %low, 0
  br i1 %more, label %chunk, label %done
done:
  ret void
}"""
_HELPERS = {COPY_BYTES: _COPY_BYTES_IR, COPY_BYTES_DOWN: _COPY_BYTES_DOWN_IR}
# what the helpers call (declared in the module unless it declares them already)
_COPY_BYTES_CALLS = ("@llvm.memmove.p0.p0.i64", "@llvm.memcpy.p0.p0.i64", "@llvm.umin.i64")


def copy_loops_to_calls(text: str, names: set[str]) -> str | None:
    """The byte-copy loops of the named functions as calls of `@__enzyme_build_copy_bytes`
    (counting up) or `@__enzyme_build_copy_bytes_down` (counting down); None when there is
    none. A loop qualifies when it is one block holding only its counter (step 1 or -1), an
    `i8` load at `s + i` and the store of it at `d + i` (`i` the counter before or after the
    step), and the exit test of the counter, with nothing of it used after the loop."""
    module = parse_module(text)
    lines = module.lines
    edits: list[tuple[int, int, list[str]]] = []
    used: set[str] = set()
    for name in names:
        fn = module.functions.get(name[1:].strip('"'))
        if fn is None:
            continue
        for block in fn.blocks:
            found = _byte_copy_loop(fn, block)
            if found is None:
                continue
            helper, dst, src, new, count, exit_label, dbg = found
            first, last = block.instructions[0].first_line, block.terminator.line
            new.append(f"  call void {helper}(ptr {dst}, ptr {src}, i64 {count})" + (f", !dbg {dbg}" if dbg else ""))
            new.append(f"  br label {make_name('%', exit_label)}")
            edits.append((first, last, new))
            used.add(helper)
    if not edits:
        return None
    for first, last, new in sorted(edits, reverse=True):
        lines[first:last + 1] = new
    extra = [ir for helper, ir in _HELPERS.items()
             if helper in used and not any(line.startswith(f"define internal void {helper}(") for line in lines)]
    extra += [DECLARATIONS[callee] for callee in _COPY_BYTES_CALLS if callee[1:] not in module.declarations]
    return "\n".join(lines + extra) + "\n"


def _byte_copy_loop(fn, block):
    """(helper, d + low, s + low, the lines computing them and the byte count, the count,
    exit label, !dbg) when `block` is a byte-copy loop. The count is that of the iterations:
    the loop leaves in the iteration where the tested value `c` (the counter before or after
    the step) reaches its bound `L` (`icmp eq c, L` leaving), or where it stops being short of
    it (`c < L` counting up, `c > L` counting down, staying; at least one iteration)."""
    insts = block.instructions
    term = insts[-1]
    if term.opcode != "br" or len(term.targets) != 2 or block.label not in term.targets \
            or len(insts) != 8 or insts[0].opcode != "phi" or len(insts[0].incoming) != 2:
        return None
    iv = insts[0]
    if iv.type != "i64" or any(i.opcode == "phi" for i in insts[1:]):
        return None
    by_op: dict[str, list] = {}
    for inst in insts[1:-1]:
        by_op.setdefault(inst.opcode, []).append(inst)
    if sorted((op, len(v)) for op, v in by_op.items()) != [("add", 1), ("getelementptr", 2), ("icmp", 1),
                                                           ("load", 1), ("store", 1)]:
        return None
    (load,), (store,), (step,), (cmp,) = by_op["load"], by_op["store"], by_op["add"], by_op["icmp"]
    here = {inst.result for inst in insts if inst.result}
    incoming = {blk: v for v, blk in iv.incoming}
    if block.label not in incoming or len(incoming) != 2:
        return None
    nxt = incoming[block.label]
    start = next(v for blk, v in incoming.items() if blk != block.label)
    if nxt != step.result or start in here or step.operands[0] != ("i64", iv.result) \
            or step.operands[1] not in (("i64", "1"), ("i64", "-1")):
        return None
    up = step.operands[1][1] == "1"
    if load.type != "i8" or "volatile" in load.text or "atomic" in load.text or "volatile" in store.text \
            or "atomic" in store.text or store.operands[0] != ("i8", load.result):
        return None
    addresses = []
    for ptr in (load.operands[0][1], store.operands[1][1]):
        gep = fn.defs.get(ptr)
        if gep is None or gep.opcode != "getelementptr" or gep.block != block.label or gep.source_type != "i8" \
                or len(gep.operands) != 2 or gep.operands[1][0] != "i64" or gep.operands[0][1] in here:
            return None
        addresses.append((gep.operands[0][1], gep.operands[1][1]))
    (src, index), (dst, index2) = addresses
    if index != index2 or index not in (iv.result, nxt) or load.operands[0][1] == store.operands[1][1]:
        return None
    out = [t for t in term.targets if t != block.label]
    if len(out) != 1 or cmp.result != term.operands[0][1] or len(cmp.operands) != 2:
        return None
    leaves = term.targets[0] == out[0]
    a, b = cmp.operands[0][1], cmp.operands[1][1]
    pred = cmp.predicate
    flip = {"ult": "ugt", "ugt": "ult", "slt": "sgt", "sgt": "slt"}
    if a in (iv.result, nxt) and b not in here:
        c, bound = a, b
    elif b in (iv.result, nxt) and a not in here:
        c, bound, pred = b, a, flip.get(pred, pred)
    else:
        return None
    short = "lt" if up else "gt"     # the side the tested value comes from
    if (pred, leaves) in (("eq", True), ("ne", False)):
        clamp = None
    elif not leaves and pred in ("u" + short, "s" + short):
        clamp = pred
    else:
        return None
    users = fn.users()
    if any(u.block != block.label for v in here for u in users.get(v, [])):
        return None
    # the lines: first tested value, iterations, lowest byte, the two addresses, the count
    def name(tag: str) -> str:
        return make_name("%", iv.result, tag)

    sign = "" if up else "-"
    hi, lo = (bound, name("c1")) if up else (name("c1"), bound)
    lines = [f"  {name('c1')} = add i64 {start}, {0 if c == iv.result else sign + '1'}",
             f"  {name('first')} = add i64 {start}, {0 if index == iv.result else sign + '1'}",
             f"  {name('dist')} = sub i64 {hi}, {lo}",
             f"  {name('span')} = add i64 {name('dist')}, 1"]
    count = name("span")
    if clamp is not None:
        lines += [f"  {name('more')} = icmp {clamp} i64 {name('c1')}, {bound}",
                  f"  {name('n')} = select i1 {name('more')}, i64 {name('span')}, i64 1"]
        count = name("n")
    if up:
        low = name("first")
    else:
        lines += [f"  {name('below')} = sub i64 {name('first')}, {count}",
                  f"  {name('low')} = add i64 {name('below')}, 1"]
        low = name("low")
    lines += [f"  {name('dst')} = getelementptr i8, ptr {dst}, i64 {low}",
              f"  {name('src')} = getelementptr i8, ptr {src}, i64 {low}"]
    return (COPY_BYTES if up else COPY_BYTES_DOWN), name("dst"), name("src"), lines, count, out[0], \
        store.metadata.get("!dbg")
