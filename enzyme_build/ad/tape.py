"""The tape and the engine's IR support functions (emitted once per module as text).

A tape is a stack object `{ptr data, i64 size, i64 capacity}` (24 bytes). Each block of
a derived function that must remember values pushes them together in one reserved
record of 8-byte cells (`__enzyme_build_tape_push` returns the record's address); the
reverse sweep pops records in exactly the opposite order. `reserve` grows capacity
once before a loop whose trip count is known. Combined mode keeps the tape object in
an alloca; split mode mallocs it (or uses the caller's buffer) and frees it after the
reverse pass. All helpers are internal and alwaysinline, so O3 sees plain loads/stores.
A finished tape's data block is kept per thread (the largest one) and taken by the next
tape's first growth when it is big enough, so repeated gradients do not map fresh pages.
"""
from __future__ import annotations

import re

TAPE_TYPE = "{ ptr, i64, i64 }"
TAPE_OBJECT_BYTES = 24
CELL_BYTES = 8

def _memcpy_adjoint(suffix: str, ty: str, log2_size: int, align: int) -> str:
    """The reverse of a memcpy of floats of one type: src' += dst'; dst' = 0, elementwise
    (the ranges do not overlap: that would be undefined for memcpy)."""
    return f"""\
define internal void @__enzyme_build_memcpy_adjoint_{suffix}(ptr %dst, ptr %src, i64 %bytes) {{
entry:
  %n = lshr i64 %bytes, {log2_size}
  %any = icmp ne i64 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %dp = getelementptr inbounds {ty}, ptr %dst, i64 %i
  %sp = getelementptr inbounds {ty}, ptr %src, i64 %i
  %d = load {ty}, ptr %dp, align {align}
  %s = load {ty}, ptr %sp, align {align}
  %sum = fadd {ty} %s, %d
  store {ty} %sum, ptr %sp, align {align}
  store {ty} 0.0, ptr %dp, align {align}
  %next = add nuw i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}"""


def _memmove_adjoint(suffix: str, ty: str, log2_size: int, align: int) -> str:
    """The reverse of a memmove of floats of one type, whose ranges may overlap: the walk
    goes away from the overlap -- upwards when dst lies above src, downwards when below --
    so each dst' is read before an earlier step changed it and no src' sum is zeroed
    afterwards (the same as copying dst' aside first). A move onto itself changes nothing."""
    return f"""\
define internal void @__enzyme_build_memmove_adjoint_{suffix}(ptr %dst, ptr %src, i64 %bytes) {{
entry:
  %n = lshr i64 %bytes, {log2_size}
  %some = icmp ne i64 %n, 0
  %moved = icmp ne ptr %dst, %src
  %any = and i1 %some, %moved
  %down = icmp ult ptr %dst, %src
  br i1 %any, label %pick, label %done
pick:
  br i1 %down, label %back, label %loop
loop:
  %i = phi i64 [ 0, %pick ], [ %next, %loop ]
  %dp = getelementptr inbounds {ty}, ptr %dst, i64 %i
  %sp = getelementptr inbounds {ty}, ptr %src, i64 %i
  %d = load {ty}, ptr %dp, align {align}
  %s = load {ty}, ptr %sp, align {align}
  %sum = fadd {ty} %s, %d
  store {ty} 0.0, ptr %dp, align {align}
  store {ty} %sum, ptr %sp, align {align}
  %next = add nuw i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
back:
  %j = phi i64 [ %n, %pick ], [ %k, %back ]
  %k = sub nuw i64 %j, 1
  %bdp = getelementptr inbounds {ty}, ptr %dst, i64 %k
  %bsp = getelementptr inbounds {ty}, ptr %src, i64 %k
  %bd = load {ty}, ptr %bdp, align {align}
  %bs = load {ty}, ptr %bsp, align {align}
  %bsum = fadd {ty} %bs, %bd
  store {ty} 0.0, ptr %bdp, align {align}
  store {ty} %bsum, ptr %bsp, align {align}
  %bmore = icmp ne i64 %k, 0
  br i1 %bmore, label %back, label %done
done:
  ret void
}}"""


def _push(name: str, grow: str) -> str:
    """Reserve `bytes` on a stack object `{data, size, capacity}` (growing it through `grow`
    when full) and return the reserved record's address."""
    return f"""\
define internal ptr @{name}(ptr %tape, i64 %bytes) alwaysinline {{
entry:
  %sizep = getelementptr inbounds {{ ptr, i64, i64 }}, ptr %tape, i32 0, i32 1
  %capp = getelementptr inbounds {{ ptr, i64, i64 }}, ptr %tape, i32 0, i32 2
  %size = load i64, ptr %sizep, align 8
  %cap = load i64, ptr %capp, align 8
  %new = add i64 %size, %bytes
  %full = icmp ugt i64 %new, %cap
  br i1 %full, label %grow, label %done, !prof !{{!"branch_weights", i32 1, i32 2000}}
grow:
  call void @{grow}(ptr %tape, i64 %new)
  br label %done
done:
  %data = load ptr, ptr %tape, align 8
  store i64 %new, ptr %sizep, align 8
  %at = getelementptr inbounds i8, ptr %data, i64 %size
  ret ptr %at
}}"""


def _grow(name: str, spare: bool) -> str:
    """Grow a stack object to at least `need` bytes (doubling, 1 KiB at least; abort when out
    of memory). With `spare`, a fresh one first takes the per-thread spare block if it fits."""
    take_spare = """\
  %fresh = icmp eq ptr %data, null
  br i1 %fresh, label %spare, label %grow
spare:
  %sp = load ptr, ptr @__enzyme_build_tape_spare, align 8
  %spcapp = getelementptr inbounds { ptr, i64 }, ptr @__enzyme_build_tape_spare, i32 0, i32 1
  %spcap = load i64, ptr %spcapp, align 8
  %fits = icmp uge i64 %spcap, %need
  br i1 %fits, label %take, label %grow
take:
  store { ptr, i64 } zeroinitializer, ptr @__enzyme_build_tape_spare, align 8
  store ptr %sp, ptr %tape, align 8
  store i64 %spcap, ptr %capp, align 8
  ret void
""" if spare else "  br label %grow\n"
    return f"""\
define internal void @{name}(ptr %tape, i64 %need) noinline {{
entry:
  %capp = getelementptr inbounds {{ ptr, i64, i64 }}, ptr %tape, i32 0, i32 2
  %cap = load i64, ptr %capp, align 8
  %twice = shl i64 %cap, 1
  %a = call i64 @llvm.umax.i64(i64 %twice, i64 %need)
  %newcap = call i64 @llvm.umax.i64(i64 %a, i64 1024)
  %data = load ptr, ptr %tape, align 8
{take_spare}grow:
  %nd = call ptr @realloc(ptr %data, i64 %newcap)
  %bad = icmp eq ptr %nd, null
  br i1 %bad, label %oom, label %ok
oom:
  call void @abort()
  unreachable
ok:
  store ptr %nd, ptr %tape, align 8
  store i64 %newcap, ptr %capp, align 8
  ret void
}}"""


# the per-thread spare shadow blocks (__enzyme_build_shadow_alloc / _free): how many, and the
# sizes kept (smaller blocks come from malloc's own free lists anyway; larger ones are not
# held on to: at most SHADOW_SPARES * SHADOW_SPARE_MAX bytes per thread)
SHADOW_SPARES = 4
SHADOW_SPARE_MIN = 64 << 10
SHADOW_SPARE_MAX = 32 << 20

_SUPPORT = {
    "__enzyme_build_tape_push": _push("__enzyme_build_tape_push", "__enzyme_build_tape_grow"),
    "__enzyme_build_tape_grow": _grow("__enzyme_build_tape_grow", spare=True),
    # a side table (ad/cache.py): a tape-like stack kept apart from the tape, grown by plain
    # realloc (it never takes or gives the per-thread spare block)
    "__enzyme_build_side_push": _push("__enzyme_build_side_push", "__enzyme_build_side_grow"),
    "__enzyme_build_side_grow": _grow("__enzyme_build_side_grow", spare=False),
    # the data block of the last finished tape, kept for the next one (per thread): a gradient
    # called in a loop reuses memory already mapped instead of faulting fresh pages in each time
    "__enzyme_build_tape_spare": """\
@__enzyme_build_tape_spare = internal thread_local global { ptr, i64 } zeroinitializer, align 8""",
    "__enzyme_build_tape_reserve": """\
define internal void @__enzyme_build_tape_reserve(ptr %tape, i64 %bytes) alwaysinline {
entry:
  %sizep = getelementptr inbounds { ptr, i64, i64 }, ptr %tape, i32 0, i32 1
  %capp = getelementptr inbounds { ptr, i64, i64 }, ptr %tape, i32 0, i32 2
  %size = load i64, ptr %sizep, align 8
  %cap = load i64, ptr %capp, align 8
  %new = add i64 %size, %bytes
  %full = icmp ugt i64 %new, %cap
  br i1 %full, label %grow, label %done
grow:
  call void @__enzyme_build_tape_grow(ptr %tape, i64 %new)
  br label %done
done:
  ret void
}""",
    # a frame record: reserve cells now, fill them later by offset (the data may move)
    "__enzyme_build_tape_frame": """\
define internal i64 @__enzyme_build_tape_frame(ptr %tape, i64 %bytes) alwaysinline {
entry:
  %sizep = getelementptr inbounds { ptr, i64, i64 }, ptr %tape, i32 0, i32 1
  %size = load i64, ptr %sizep, align 8
  %at = call ptr @__enzyme_build_tape_push(ptr %tape, i64 %bytes)
  ret i64 %size
}""",
    "__enzyme_build_tape_at": """\
define internal ptr @__enzyme_build_tape_at(ptr %tape, i64 %offset) alwaysinline {
entry:
  %data = load ptr, ptr %tape, align 8
  %at = getelementptr inbounds i8, ptr %data, i64 %offset
  ret ptr %at
}""",
    # shadow of realloc(old, n): zeroed new block (usable size) + copy of the old shadow
    "__enzyme_build_shadow_realloc": """\
define internal ptr @__enzyme_build_shadow_realloc(ptr %old, i64 %n) {
entry:
  %new = call ptr @__enzyme_build_shadow_alloc(i64 %n)
  %copied = call i64 @__enzyme_build_shadow_copied(ptr %old, i64 %n)
  call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %old, i64 %copied, i1 false)
  ret ptr %new
}""",
    # shadow of an allocation: zeroed over its whole usable size, so a later realloc of it
    # copies zeros beyond the data. A large one is taken from the thread's spare shadow blocks
    # when one fits (its usable size at least n and at most twice n): the blocks of an
    # objective's large scratch arrays and their shadows, freed together at the end of every
    # call, would otherwise shrink the heap each time (glibc trims a free top chunk above its
    # trim threshold) and fault every page in again at the next call. Not inlined, and
    # `noalias` like malloc: the block is nobody else's (a taken spare's slot is emptied), and
    # the optimizer keeps knowing that only through the call (inlined, the result would be a
    # merge of a loaded pointer and malloc's, which may alias anything).
    "__enzyme_build_shadow_alloc": f"""\
define internal noalias ptr @__enzyme_build_shadow_alloc(i64 %n) noinline {{
entry:
  %large = icmp uge i64 %n, {SHADOW_SPARE_MIN}
  br i1 %large, label %look, label %fresh
look:
  %i = phi i64 [ 0, %entry ], [ %i.next, %next ]
  %slot = getelementptr inbounds [{SHADOW_SPARES} x ptr], ptr @__enzyme_build_shadow_spare, i64 0, i64 %i
  %p = load ptr, ptr %slot, align 8
  %none = icmp eq ptr %p, null
  br i1 %none, label %next, label %measure
measure:
  %size = call i64 @malloc_usable_size(ptr %p)
  %small = icmp ult i64 %size, %n
  %twice = shl i64 %n, 1
  %waste = icmp ugt i64 %size, %twice
  %miss = or i1 %small, %waste
  br i1 %miss, label %next, label %take
take:
  store ptr null, ptr %slot, align 8
  call void @llvm.memset.p0.i64(ptr %p, i8 0, i64 %size, i1 false)
  ret ptr %p
next:
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, {SHADOW_SPARES}
  br i1 %done, label %fresh, label %look
fresh:
  %new = call ptr @malloc(i64 %n)
  %usable = call i64 @malloc_usable_size(ptr %new)
  call void @llvm.memset.p0.i64(ptr %new, i8 0, i64 %usable, i1 false)
  ret ptr %new
}}""",
    # the release of a shadow block the engine made: a large one (up to SHADOW_SPARE_MAX
    # bytes) is kept in a free spare slot of this thread, anything else is freed. Its
    # argument is `captures(none)` as free's is: the block is dead to the caller once
    # released, and a kept one comes back only through shadow_alloc's `noalias` result.
    # Without it a shadow block counts as escaped in every function that releases it, so
    # the optimizer must assume it may alias every pointer argument (the adjoint loops of
    # a malloc'd work array got run-time overlap checks and loop versions, or were left
    # scalar). Not inlined, so the store into the spare slot stays out of the caller's view.
    "__enzyme_build_shadow_free": f"""\
define internal void @__enzyme_build_shadow_free(ptr captures(none) %p) noinline {{
entry:
  %null = icmp eq ptr %p, null
  br i1 %null, label %out, label %measure
measure:
  %size = call i64 @malloc_usable_size(ptr %p)
  %small = icmp ult i64 %size, {SHADOW_SPARE_MIN}
  %huge = icmp ugt i64 %size, {SHADOW_SPARE_MAX}
  %unkept = or i1 %small, %huge
  br i1 %unkept, label %release, label %look
look:
  %i = phi i64 [ 0, %measure ], [ %i.next, %next ]
  %slot = getelementptr inbounds [{SHADOW_SPARES} x ptr], ptr @__enzyme_build_shadow_spare, i64 0, i64 %i
  %q = load ptr, ptr %slot, align 8
  %free.slot = icmp eq ptr %q, null
  br i1 %free.slot, label %keep, label %next
keep:
  store ptr %p, ptr %slot, align 8
  ret void
next:
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, {SHADOW_SPARES}
  br i1 %done, label %release, label %look
release:
  call void @free(ptr %p)
  br label %out
out:
  ret void
}}""",
    "__enzyme_build_shadow_spare": f"""\
@__enzyme_build_shadow_spare = internal thread_local global [{SHADOW_SPARES} x ptr] zeroinitializer, align 8""",
    "__enzyme_build_shadow_copied": """\
define internal i64 @__enzyme_build_shadow_copied(ptr %old, i64 %n) {
entry:
  %oldsize = call i64 @malloc_usable_size(ptr %old)
  %lt = icmp ult i64 %oldsize, %n
  %copied = select i1 %lt, i64 %oldsize, i64 %n
  ret i64 %copied
}""",
    "__enzyme_build_tape_pop": """\
define internal ptr @__enzyme_build_tape_pop(ptr %tape, i64 %bytes) alwaysinline {
entry:
  %sizep = getelementptr inbounds { ptr, i64, i64 }, ptr %tape, i32 0, i32 1
  %size = load i64, ptr %sizep, align 8
  %new = sub i64 %size, %bytes
  store i64 %new, ptr %sizep, align 8
  %data = load ptr, ptr %tape, align 8
  %at = getelementptr inbounds i8, ptr %data, i64 %new
  ret ptr %at
}""",
    "__enzyme_build_tape_free_data": """\
define internal void @__enzyme_build_tape_free_data(ptr %tape) alwaysinline {
entry:
  %data = load ptr, ptr %tape, align 8
  %capp = getelementptr inbounds { ptr, i64, i64 }, ptr %tape, i32 0, i32 2
  %cap = load i64, ptr %capp, align 8
  %spcapp = getelementptr inbounds { ptr, i64 }, ptr @__enzyme_build_tape_spare, i32 0, i32 1
  %spcap = load i64, ptr %spcapp, align 8
  %bigger = icmp ugt i64 %cap, %spcap
  br i1 %bigger, label %keep, label %drop
keep:
  %old = load ptr, ptr @__enzyme_build_tape_spare, align 8
  call void @free(ptr %old)
  store ptr %data, ptr @__enzyme_build_tape_spare, align 8
  store i64 %cap, ptr %spcapp, align 8
  ret void
drop:
  call void @free(ptr %data)
  ret void
}""",
    # ad/passes.py: memmoves_out_of_line (a MemCpyOpt bug of LLVM 22)
    "__enzyme_build_memmove": """\
define internal void @__enzyme_build_memmove(ptr %dst, ptr %src, i64 %n) noinline {
entry:
  call void @llvm.memmove.p0.p0.i64(ptr %dst, ptr %src, i64 %n, i1 false)
  ret void
}""",
    "__enzyme_build_tape_new": """\
define internal ptr @__enzyme_build_tape_new() alwaysinline {
entry:
  %t = call ptr @calloc(i64 1, i64 24)
  ret ptr %t
}""",
    "__enzyme_build_memcpy_adjoint_f64": _memcpy_adjoint("f64", "double", 3, 8),
    "__enzyme_build_memcpy_adjoint_f32": _memcpy_adjoint("f32", "float", 2, 4),
    "__enzyme_build_memmove_adjoint_f64": _memmove_adjoint("f64", "double", 3, 8),
    "__enzyme_build_memmove_adjoint_f32": _memmove_adjoint("f32", "float", 2, 4),
    # psi(x): shift x up with psi(x) = psi(x+1) - 1/x, then the asymptotic series
    "__enzyme_build_digamma": """\
define internal double @__enzyme_build_digamma(double %x) {
entry:
  br label %shift
shift:
  %v = phi double [ %x, %entry ], [ %v1, %step ]
  %acc = phi double [ 0.0, %entry ], [ %acc1, %step ]
  %small = fcmp olt double %v, 1.000000e+01
  br i1 %small, label %step, label %series
step:
  %inv = fdiv double 1.000000e+00, %v
  %acc1 = fsub double %acc, %inv
  %v1 = fadd double %v, 1.000000e+00
  br label %shift
series:
  %l = call double @llvm.log.f64(double %v)
  %iv = fdiv double 1.000000e+00, %v
  %iv2 = fmul double %iv, %iv
  %c8 = fmul double %iv2, 0x3F71111111111111
  %c6 = fsub double 0x3F70410410410410, %c8
  %c6b = fmul double %iv2, %c6
  %c4 = fsub double 0x3F81111111111111, %c6b
  %c4b = fmul double %iv2, %c4
  %c2 = fsub double 0x3FB5555555555555, %c4b
  %c2b = fmul double %iv2, %c2
  %half = fmul double %iv, 5.000000e-01
  %r0 = fsub double %l, %half
  %r1 = fsub double %r0, %c2b
  %r = fadd double %r1, %acc
  ret double %r
}""",
}

# Nested-AD tapes. A growing tape moves its data with realloc, and a copy of cells of mixed
# types (doubles, pointers, integers) has no derivative the engine could follow. The tape of
# code that a later pass differentiates therefore reserves its capacity once, as zeroed
# address space that is never moved (`__enzyme_build_cells_alloc`: mmap with MAP_NORESERVE,
# so only the pages written are backed by memory); the library table knows it as an
# allocator whose shadows are blocks of the same kind. A tape outgrowing it stops the
# program with a message.
CELLS_CAPACITY = 1 << 34   # 16 GiB of address space per nested tape and per shadow of one
_CELLS_MESSAGE = "enzyme-build: a nested-AD tape outgrew its 16 GiB reservation (or none could be made)\n"
_CELLS = {
    "__enzyme_build_cells_alloc": f"""\
define internal ptr @__enzyme_build_cells_alloc(i64 %n) noinline {{
entry:
  %p = call ptr @mmap(ptr null, i64 %n, i32 3, i32 16418, i32 -1, i64 0)
  %bad = icmp eq ptr %p, inttoptr (i64 -1 to ptr)
  br i1 %bad, label %fail, label %ok
fail:
  call void @__enzyme_build_cells_full()
  unreachable
ok:
  ret ptr %p
}}""",
    "__enzyme_build_cells_free": f"""\
define internal void @__enzyme_build_cells_free(ptr %p) noinline {{
entry:
  %none = icmp eq ptr %p, null
  br i1 %none, label %done, label %unmap
unmap:
  %r = call i32 @munmap(ptr %p, i64 {CELLS_CAPACITY})
  br label %done
done:
  ret void
}}""",
    "__enzyme_build_cells_message": (
        f"@__enzyme_build_cells_message = private unnamed_addr constant [{len(_CELLS_MESSAGE)} x i8] "
        + 'c"' + _CELLS_MESSAGE.replace("\n", "\\0A") + '"'),
    "__enzyme_build_cells_full": f"""\
define internal void @__enzyme_build_cells_full() noinline noreturn cold {{
entry:
  %w = call i64 @write(i32 2, ptr @__enzyme_build_cells_message, i64 {len(_CELLS_MESSAGE)})
  call void @abort()
  unreachable
}}""",
}
_CELLS_DECLARATIONS = {
    "@mmap": "declare ptr @mmap(ptr, i64, i32, i32, i32, i64)",
    "@munmap": "declare i32 @munmap(ptr, i64)",
    "@write": "declare i64 @write(i32, ptr, i64)",
    "@abort": "declare void @abort()",
}

# the tape helpers of code a later pass differentiates: capacity reserved once, never moved
_PLAIN = {
    "__enzyme_build_tape_grow": f"""\
define internal void @__enzyme_build_tape_grow(ptr %tape, i64 %need) noinline {{
entry:
  %capp = getelementptr inbounds {{ ptr, i64, i64 }}, ptr %tape, i32 0, i32 2
  %data = load ptr, ptr %tape, align 8
  %fits = icmp ule i64 %need, {CELLS_CAPACITY}
  br i1 %fits, label %check, label %full
check:
  %fresh = icmp eq ptr %data, null
  br i1 %fresh, label %reserve, label %full
reserve:
  %nd = call ptr @__enzyme_build_cells_alloc(i64 {CELLS_CAPACITY})
  store ptr %nd, ptr %tape, align 8
  store i64 {CELLS_CAPACITY}, ptr %capp, align 8
  ret void
full:
  call void @__enzyme_build_cells_full()
  unreachable
}}""",
    "__enzyme_build_tape_free_data": """\
define internal void @__enzyme_build_tape_free_data(ptr %tape) alwaysinline {
entry:
  %data = load ptr, ptr %tape, align 8
  call void @__enzyme_build_cells_free(ptr %data)
  ret void
}""",
}


# The helpers an AD pass calls to keep its tape. To the pass that emits them they are the
# engine's own (push/pop are inactive library calls); to the next nested-AD pass they are
# ordinary code that moves active values, so between passes they get a level of their own
# (`@__enzyme_build_tape_push.n1`, …): plain variants that never touch the per-thread spare
# block (a global without a shadow), while the next pass emits fresh base helpers for its
# own tape. No level shares a definition with another, so any depth of nesting works.
TAPE_HELPERS = ("__enzyme_build_tape_push", "__enzyme_build_tape_pop", "__enzyme_build_tape_grow",
                "__enzyme_build_tape_reserve", "__enzyme_build_tape_frame", "__enzyme_build_tape_at",
                "__enzyme_build_tape_free_data", "__enzyme_build_tape_new",
                "__enzyme_build_side_push", "__enzyme_build_side_grow")


def leveled_name(name: str, level: int) -> str:
    return f"{name}.n{level}"


def leveled_support(names: set[str], level: int) -> tuple[list[str], set[str]]:
    """(function texts, declarations needed) of the level-`level` variants of the tape
    helpers in `names` and of the helpers they call, every reference renamed to that level."""
    done, decls = _closure({n for n in names if n in TAPE_HELPERS}, TAPE_HELPERS)
    decls.discard("@__enzyme_build_tape_spare")
    decls.discard("@realloc")
    rename = re.compile("@(" + "|".join(re.escape(n) for n in TAPE_HELPERS) + r")(?![-\w$.])")
    texts = []
    for n in sorted(done):
        body = _PLAIN.get(n, _SUPPORT[n])
        texts.append(rename.sub(lambda m: "@" + leveled_name(m.group(1), level), body))
    return texts, decls


def cells_support() -> tuple[dict[str, str], dict[str, str]]:
    """({symbol: text}, {callee: declaration}) of the fixed-capacity blocks nested tapes use."""
    return dict(_CELLS), dict(_CELLS_DECLARATIONS)


# what each support function needs declared
_NEEDS = {
    "__enzyme_build_tape_push": ["__enzyme_build_tape_grow"],
    "__enzyme_build_tape_frame": ["__enzyme_build_tape_push"],
    "__enzyme_build_side_push": ["__enzyme_build_side_grow"],
    "__enzyme_build_side_grow": ["@llvm.umax.i64", "@realloc", "@abort"],
    "__enzyme_build_shadow_realloc": ["__enzyme_build_shadow_copied", "__enzyme_build_shadow_alloc",
                                      "@llvm.memcpy.p0.p0.i64"],
    "__enzyme_build_shadow_copied": ["@malloc_usable_size"],
    "__enzyme_build_shadow_alloc": ["@malloc", "@malloc_usable_size", "@llvm.memset.p0.i64",
                                    "__enzyme_build_shadow_spare"],
    "__enzyme_build_shadow_free": ["@free", "@malloc_usable_size", "__enzyme_build_shadow_spare"],
    "__enzyme_build_tape_reserve": ["__enzyme_build_tape_grow"],
    "__enzyme_build_tape_grow": ["@llvm.umax.i64", "@realloc", "@abort", "__enzyme_build_tape_spare"],
    "__enzyme_build_tape_free_data": ["@free", "__enzyme_build_tape_spare"],
    "__enzyme_build_tape_new": ["@calloc"],
    "__enzyme_build_memmove": ["@llvm.memmove.p0.p0.i64"],
    "__enzyme_build_digamma": ["@llvm.log.f64"],
}

DECLARATIONS = {
    "@llvm.umax.i64": "declare i64 @llvm.umax.i64(i64, i64)",
    "@llvm.umin.i64": "declare i64 @llvm.umin.i64(i64, i64)",
    "@llvm.smin.i64": "declare i64 @llvm.smin.i64(i64, i64)",
    "@llvm.smax.i64": "declare i64 @llvm.smax.i64(i64, i64)",
    "@realloc": "declare ptr @realloc(ptr, i64)",
    "@abort": "declare void @abort()",
    "@free": "declare void @free(ptr)",
    "@calloc": "declare ptr @calloc(i64, i64)",
    "@malloc": "declare ptr @malloc(i64)",
    "@malloc_usable_size": "declare i64 @malloc_usable_size(ptr)",
    "@llvm.log.f64": "declare double @llvm.log.f64(double)",
    "@llvm.memset.p0.i64": "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1 immarg)",
    "@llvm.memcpy.p0.p0.i64": "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1 immarg)",
    "@llvm.memmove.p0.p0.i64": "declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1 immarg)",
    # defined by the module once a nested-AD pass has run (cells_support): never emitted there
    "@__enzyme_build_cells_alloc": "declare ptr @__enzyme_build_cells_alloc(i64)",
    "@__enzyme_build_cells_free": "declare void @__enzyme_build_cells_free(ptr)",
}


def _closure(names: set[str], within=None) -> tuple[set[str], set[str]]:
    """(support functions, declarations) that `names` need, transitively (only support
    functions in `within` followed, when given)."""
    todo, done, decls = list(names), set(), set()
    while todo:
        n = todo.pop()
        if n in done:
            continue
        done.add(n)
        for dep in _NEEDS.get(n, []):
            if dep.startswith("@"):
                decls.add(dep)
            elif within is None or dep in within:
                todo.append(dep)
    return done, decls


def support_closure(names: set[str]) -> tuple[list[str], set[str]]:
    """(function texts, declarations needed) for the given support functions and their deps."""
    done, decls = _closure(set(names))
    return [_SUPPORT[n] for n in sorted(done)], decls
