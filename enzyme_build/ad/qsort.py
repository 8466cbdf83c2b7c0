"""qsort of active data: calls of libc's `qsort` get a definition the engine can differentiate.

libc's qsort has no body in the program, so a sort of records holding derivatives (a rank-
weighted loss, an order statistic, a median) was refused: "cannot differentiate through
'qsort'". Its derivative is the permutation it applies: each element's adjoint goes back to
where the element came from, and the comparator only decides the permutation (it returns an
integer). So a call whose element size and comparator are constants (`qsort(a, n,
sizeof *a, cmp)`: what C programs write) goes to a heapsort written here in IR, specialized
for that size and comparator before the pre-AD pipeline: swaps are constant-length memcpys
through a stack record, which the optimizer and the memory type analysis see through like the
program's own struct copies, and the comparator is called directly. Heapsort: in place, no
allocation, O(n log n) comparisons like glibc's, not stable (neither is qsort: equal elements
may end up in any order, and they may here in another one than glibc's).

Other calls (a size or comparator only known at run time) stay libc's, refused as before when
they touch active data.
"""
from __future__ import annotations

import re

from ..ir.model import make_name

PREFIX = "__enzyme_build_qsort"
# call void @qsort(ptr <base>, i64 <n>, i64 <size>, ptr @cmp): the constant size and function
_CALL = re.compile(r'\bcall void @qsort\(ptr(?: [a-z_()0-9]+)* (%[-\w$.]+|@[-\w$.]+|"[^"]*"), '
                   r'i64(?: [a-z_()0-9]+)* ([^,]+), i64(?: [a-z_()0-9]+)* (\d+), '
                   r'ptr(?: [a-z_()0-9]+)* (@[-\w$.]+|@"[^"]*")\)')

_SORT = """
define internal void @{sort}(ptr %base, i64 %n) {{
entry:
  %tmp = alloca [{size} x i8], align 16
  %half = lshr i64 %n, 1
  br label %heapify
heapify:
  %start = phi i64 [ %half, %entry ], [ %start.next, %heapify.body ]
  %more = icmp ugt i64 %start, 0
  br i1 %more, label %heapify.body, label %sortdown
heapify.body:
  %start.next = sub i64 %start, 1
  call void @{sift}(ptr %base, i64 %start.next, i64 %n, ptr %tmp)
  br label %heapify
sortdown:
  %end = phi i64 [ %n, %heapify ], [ %end.next, %sortdown.body ]
  %again = icmp ugt i64 %end, 1
  br i1 %again, label %sortdown.body, label %done
sortdown.body:
  %end.next = sub i64 %end, 1
  %last.at = mul i64 %end.next, {size}
  %last = getelementptr inbounds i8, ptr %base, i64 %last.at
{swap_ends}
  call void @{sift}(ptr %base, i64 0, i64 %end.next, ptr %tmp)
  br label %sortdown
done:
  ret void
}}

define internal void @{sift}(ptr %base, i64 %root0, i64 %end, ptr %tmp) {{
entry:
  br label %loop
loop:
  %root = phi i64 [ %root0, %entry ], [ %child, %swap ]
  %twice = shl i64 %root, 1
  %left = add i64 %twice, 1
  %has.left = icmp ult i64 %left, %end
  br i1 %has.left, label %pick, label %done
pick:
  %right = add i64 %left, 1
  %has.right = icmp ult i64 %right, %end
  br i1 %has.right, label %kids, label %compare
kids:
  %left.at = mul i64 %left, {size}
  %left.p = getelementptr inbounds i8, ptr %base, i64 %left.at
  %right.at = mul i64 %right, {size}
  %right.p = getelementptr inbounds i8, ptr %base, i64 %right.at
  %kids.order = call i32 {cmp}(ptr %left.p, ptr %right.p)
  %right.larger = icmp slt i32 %kids.order, 0
  %larger = select i1 %right.larger, i64 %right, i64 %left
  br label %compare
compare:
  %child = phi i64 [ %left, %pick ], [ %larger, %kids ]
  %root.at = mul i64 %root, {size}
  %root.p = getelementptr inbounds i8, ptr %base, i64 %root.at
  %child.at = mul i64 %child, {size}
  %child.p = getelementptr inbounds i8, ptr %base, i64 %child.at
  %order = call i32 {cmp}(ptr %root.p, ptr %child.p)
  %below = icmp slt i32 %order, 0
  br i1 %below, label %swap, label %done
swap:
{swap_down}
  br label %loop
done:
  ret void
}}
"""
_MEMCPY_DECL = "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)"


def _swap(a: str, b: str, size: str) -> str:
    """The three copies exchanging the records at %a and %b through the stack record %tmp."""
    copy = "  call void @llvm.memcpy.p0.p0.i64(ptr align 1 %{}, ptr align 1 %{}, i64 " + size + ", i1 false)"
    return "\n".join(copy.format(d, s) for d, s in (("tmp", a), (a, b), (b, "tmp")))


def define_qsort(text: str) -> str:
    """Calls of qsort with a constant element size and comparator go to a heapsort defined
    for that pair (one per pair); the rest of the module is unchanged."""
    if "@qsort(" not in text:
        return text
    made: dict[tuple[str, str], str] = {}

    def specialize(m: re.Match) -> str:
        base, n, size, cmp = m.groups()
        if int(size) == 0:
            return m.group(0)
        key = (size, cmp)
        if key not in made:
            made[key] = make_name("@", f"{PREFIX}.{size}.{cmp[1:].strip(chr(34))}")[1:]
        return f"call void @{made[key]}(ptr {base}, i64 {n})"

    lines = text.split("\n")
    for k, line in enumerate(lines):
        if line.startswith("  ") and "@qsort(" in line:
            lines[k] = _CALL.sub(specialize, line)
    if not made:
        return text
    out = "\n".join(lines)
    for (size, cmp), sort in made.items():
        sift = make_name("@", f"{PREFIX}_sift.{size}.{cmp[1:].strip(chr(34))}")[1:]
        out += _SORT.format(sort=sort, sift=sift, size=size, cmp=cmp, swap_ends=_swap("base", "last", size),
                            swap_down=_swap("root.p", "child.p", size))
    if not re.search(r'^declare [^@]*@llvm\.memcpy\.p0\.p0\.i64\(', out, re.M):
        out += _MEMCPY_DECL + "\n"
    return out
