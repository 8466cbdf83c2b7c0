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
OpenMP region captured), a remaining forward byte-copy loop `d[i] = s[i]` becomes a call
of `@__enzyme_build_copy_bytes(d, s, n)`, which does exactly what the loop does with
memory intrinsics whose derivatives the engine knows: a `memmove` when `d` does not lie
inside `(s, s + n)` (the loop and memmove agree there), else, since the loop then reads
bytes it wrote `k = d - s` bytes before, chunks of `k` bytes copied one after another by
`memcpy` (each chunk apart from its source). Loops of wider integers, backward loops and
loops doing anything else keep the engine's clear error.
"""
from __future__ import annotations

import re

from ..ir.model import LOCAL as _V, make_name, parse_module

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
# what `for (i = 0; i < n; i++) d[i] = s[i]` over bytes does, through memory intrinsics
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
_COPY_BYTES_DECLS = {
    "llvm.memmove.p0.p0.i64": "declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1 immarg)",
    "llvm.memcpy.p0.p0.i64": "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1 immarg)",
    "llvm.umin.i64": "declare i64 @llvm.umin.i64(i64, i64)",
}


def copy_loops_to_calls(text: str, names: set[str]) -> str | None:
    """The forward byte-copy loops of the named functions as calls of
    `@__enzyme_build_copy_bytes` (None when there is none). A loop qualifies when it is one
    block holding only its counter (from `start`, step 1, leaving at `end`), an `i8` load at
    `s + i` and the store of it at `d + i`, with nothing of it used after the loop."""
    module = parse_module(text)
    lines = module.lines
    edits: list[tuple[int, int, list[str]]] = []
    for name in names:
        fn = module.functions.get(name[1:].strip('"'))
        if fn is None:
            continue
        for block in fn.blocks:
            found = _forward_byte_copy(fn, block)
            if found is None:
                continue
            dst, src, start, end, exit_label, dbg = found
            counter = block.instructions[0].result
            first, last = block.instructions[0].first_line, block.terminator.line
            count = end if start == "0" else counter
            new = [] if start == "0" else [f"  {counter} = sub i64 {end}, {start}"]
            new.append(f"  call void {COPY_BYTES}(ptr {dst}, ptr {src}, i64 {count})" + (f", !dbg {dbg}" if dbg else ""))
            new.append(f"  br label {make_name('%', exit_label)}")
            edits.append((first, last, new))
    if not edits:
        return None
    for first, last, new in sorted(edits, reverse=True):
        lines[first:last + 1] = new
    extra = [] if any(line.startswith(f"define internal void {COPY_BYTES}(") for line in lines) else [_COPY_BYTES_IR]
    extra += [decl for callee, decl in _COPY_BYTES_DECLS.items() if callee not in module.declarations]
    return "\n".join(lines + extra) + "\n"


def _forward_byte_copy(fn, block):
    """(d, s, start, end, exit label, !dbg) when `block` is a forward byte-copy loop."""
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
    if set(incoming) - {block.label} == set() or block.label not in incoming:
        return None
    nxt = incoming[block.label]
    start = next(v for blk, v in incoming.items() if blk != block.label)
    if nxt != step.result or step.operands != [("i64", iv.result), ("i64", "1")] or start in here:
        return None
    if load.type != "i8" or "volatile" in load.text or "atomic" in load.text or "volatile" in store.text \
            or "atomic" in store.text or store.operands[0] != ("i8", load.result):
        return None

    def address(ptr):
        gep = fn.defs.get(ptr)
        if gep is None or gep.opcode != "getelementptr" or gep.block != block.label or gep.source_type != "i8" \
                or len(gep.operands) != 2 or gep.operands[1] != ("i64", iv.result) or gep.operands[0][1] in here:
            return None
        return gep.operands[0][1]

    src, dst = address(load.operands[0][1]), address(store.operands[1][1])
    if src is None or dst is None or load.operands[0][1] == store.operands[1][1]:
        return None
    # the counter leaves at `end`: `icmp eq next, end` taken out, or `icmp ne` staying in
    out = [t for t in term.targets if t != block.label]
    if len(out) != 1 or cmp.result != term.operands[0][1] or len(cmp.operands) != 2:
        return None
    a, b = cmp.operands[0][1], cmp.operands[1][1]
    end = b if a == nxt else a if b == nxt else None
    leaves = term.targets[0] == out[0]
    if end is None or end in here or (cmp.predicate, leaves) not in (("eq", True), ("ne", False)):
        return None
    users = fn.users()
    if any(u.block != block.label for v in here for u in users.get(v, [])):
        return None
    return dst, src, start, end, out[0], store.metadata.get("!dbg")
