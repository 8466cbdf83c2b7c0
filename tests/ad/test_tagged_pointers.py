"""Pointers with flags in their low bits (tagged pointers), kept in memory as integers.

The class: a list whose `next` word carries a flag (`(uintptr_t)next | flag`, read back as
`(node *)(w & ~1)`), a pointer-and-int pair packing a small tag into alignment bits
(LLVM's `PointerIntPair`), a value word that is either a tagged pointer to a boxed double
or a shifted integer. The pointer crossed memory as integer arithmetic the engine did not
follow: the rebuilt pointer had no shadow, so the doubles read through it counted as
constants and every gradient through them was 0, silently, at -O0, -O2 and with AD before
optimization. The AD stage now writes `inttoptr` of arithmetic on one pointer read back as an
integer as a GEP of a pointer load of the same word by the difference, and a store of
arithmetic on one `ptrtoint` as a store of the GEP (`stage.integer_pointer_arithmetic`): the
same bits, which the engine follows to the allocation and its shadow; a helper that makes
or reads such a word (`box(double *)`, `PointerIntPair` by value) is inlined into its callers
first (`boundaries._integer_pointer_params`). Each program is checked in reverse and forward
mode against central differences at -O0, -O2 and with AD before optimization (5 of 9 builds
silently wrong before). The last four programs are words merged from a pointer and a plain
integer by a conditional before they are stored (`stage._merged_pointer_words`).
"""
from __future__ import annotations

import pytest
from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows, level_params

# value words of boxed_values and copied_values: a tagged pointer to a boxed double, or an
# integer shifted left by one
BOXES = r"""
typedef uintptr_t value;
static value box(double *d) { return (uintptr_t)d | 1; }
static value small(long i) { return (uintptr_t)(i << 1); }
static double as_double(value v) { return (v & 1) ? *(double *)(v & ~(uintptr_t)1) : (double)((long)v >> 1); }
"""

PROGRAMS = {
    # a singly linked list whose next words carry a flag in bit 0
    "flagged_list": r"""
typedef struct node { double v; uintptr_t next_and_flag; } node;
static node *next_of(const node *p) { return (node *)(p->next_and_flag & ~(uintptr_t)1); }
static int flag_of(const node *p) { return p->next_and_flag & 1; }
double f(const double *x) {
  node *nodes = malloc(6 * sizeof(node));
  for (int i = 0; i < 6; i++) {
    nodes[i].v = x[i % 4] * (i + 1);
    nodes[i].next_and_flag = (uintptr_t)(i < 5 ? &nodes[i + 1] : 0) | (uintptr_t)(i % 2);
  }
  double s = 0;
  int k = 0;
  for (node *p = nodes; p; p = next_of(p)) s += (flag_of(p) ? 2.0 : 1.0) * p->v * p->v * (++k);
  free(nodes);
  return s;
}
""",
    # pointer-int pairs: a 2-bit tag in the alignment bits of a pointer to a 16-byte cell
    "pointer_int_pairs": r"""
typedef struct { double a, b; } cell;
typedef struct { uintptr_t bits; } pip;
static pip make(cell *c, unsigned tag) { pip p = {(uintptr_t)c | (tag & 3u)}; return p; }
static cell *ptr_of(pip p) { return (cell *)(p.bits & ~(uintptr_t)3); }
static unsigned tag_of(pip p) { return (unsigned)(p.bits & 3u); }
double f(const double *x) {
  cell *cells = aligned_alloc(16, 4 * sizeof(cell));
  pip *refs = malloc(8 * sizeof(pip));
  for (int i = 0; i < 4; i++) { cells[i].a = x[i]; cells[i].b = x[(i + 1) % 4] * x[i]; }
  for (int i = 0; i < 8; i++) refs[i] = make(&cells[(i * 3) % 4], (unsigned)i);
  double s = 0;
  for (int i = 0; i < 8; i++) { cell *c = ptr_of(refs[i]); s += (tag_of(refs[i]) + 1) * (c->a * c->b + sin(c->a)); }
  free(refs); free(cells);
  return s;
}
""",
    # value words: a tagged pointer to a boxed double, or an integer shifted left by one
    "boxed_values": BOXES + r"""
double f(const double *x) {
  double *heap = malloc(4 * sizeof(double));
  value *vals = malloc(8 * sizeof(value));
  for (int i = 0; i < 4; i++) heap[i] = x[i] * x[(i + 2) % 4];
  for (int i = 0; i < 8; i++) vals[i] = i % 2 ? box(&heap[(i / 2) % 4]) : small(i);
  double s = 0;
  for (int i = 0; i < 8; i++) s += as_double(vals[i]) * as_double(vals[(i + 1) % 8]);
  free(vals); free(heap);
  return s;
}
""",
    # the class of boxed_values: a word merged from a pointer and a plain integer before it
    # is stored. Before optimization the merge is a phi (stage._merged_pointer_words).
    # an optional box: a tagged pointer or 0 (absent)
    "optional_boxes": r"""
typedef uintptr_t slot;
double f(const double *x) {
  double *heap = malloc(4 * sizeof(double));
  slot *slots = malloc(8 * sizeof(slot));
  for (int i = 0; i < 4; i++) heap[i] = x[i] * x[i] + x[(i + 1) % 4];
  for (int i = 0; i < 8; i++) slots[i] = (i % 3) ? ((uintptr_t)&heap[i % 4] | 2) : 0;
  double s = 0;
  for (int i = 0; i < 8; i++) {
    slot w = slots[i];
    s += w ? *(double *)(w & ~(uintptr_t)3) * (i + 1) : 1.0;
  }
  free(slots); free(heap);
  return s;
}
""",
    # untagged pointers beside integers tagged in bit 0 (the other way round from boxed_values)
    "untagged_pointers": r"""
typedef uintptr_t value;
static value ref(double *d) { return (uintptr_t)d; }
static value num(long i) { return ((uintptr_t)i << 1) | 1; }
static double get(value v) { return (v & 1) ? (double)((long)v >> 1) : *(double *)v; }
double f(const double *x) {
  double *heap = malloc(4 * sizeof(double));
  value *vals = malloc(6 * sizeof(value));
  for (int i = 0; i < 4; i++) heap[i] = x[i] * (x[(i + 1) % 4] + 2.0);
  for (int i = 0; i < 6; i++) vals[i] = i % 3 == 2 ? num(i) : ref(&heap[(i * 3) % 4]);
  double s = 0;
  for (int i = 0; i < 6; i++) s += get(vals[i]) * get(vals[(i + 2) % 6]) + get(vals[i]);
  free(vals); free(heap);
  return s;
}
""",
    # a word copied from another table of tagged words, or made fresh (a loaded word merged)
    "copied_values": BOXES + r"""
double f(const double *x) {
  double *heap = malloc(4 * sizeof(double));
  value *a = malloc(8 * sizeof(value)), *b = malloc(8 * sizeof(value));
  for (int i = 0; i < 4; i++) heap[i] = sin(x[i]) + x[(i + 3) % 4] * x[i];
  for (int i = 0; i < 8; i++) a[i] = box(&heap[i % 4]);
  for (int i = 0; i < 8; i++) b[i] = (i % 3 == 1) ? small(i) : a[(i * 5) % 8];
  double s = 0;
  for (int i = 0; i < 8; i++) s += as_double(b[i]) * as_double(a[i]);
  free(b); free(a); free(heap);
  return s;
}
""",
}


# Before optimization the boxed and the small value of boxed_values meet in a phi of integers
# before the store (`i % 2 ? box(...) : small(i)`), not arithmetic on one pointer: the word was
# stored without a shadow and both gradients were 0 until the merge was made over pointers
# (stage._merged_pointer_words). Nothing is known wrong now.
KNOWN_WRONG: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("level,name", level_params(PROGRAMS, KNOWN_WRONG))
def test_tagged_pointers(tmp_path, name, level):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(4), flags, env), 4, agree=1e-9)
