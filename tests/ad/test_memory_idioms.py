"""Memory idioms with AD before optimization (and, for the same programs, after).

Three classes that worked once optimized but were refused with
`ENZYME_BUILD_AD_BEFORE_OPT=1` (conformance rev-24, rev-27, rev-28), each tried in
several forms:

- **byte-copy loops** (`char`/`uint16_t`/`uint32_t` pieces) of doubles: turned into
  `memcpy` before AD (enzyme_build/ad/bytecopies.py), as the optimizing pipeline does;
- **records mixing pointers and floats** copied by assignment or `memcpy`: the forward
  sweep copies the pointer fields' shadows, the reverse moves the float fields' adjoints
  (`memcpy_record_type(with_pointers=True)`);
- **realloc growth** where the new block is stored into a struct field and the doubles are
  written through the field loaded again: the memory type analysis follows a pointer
  stored into a field to the loads of that field.

Each program is checked in reverse and forward mode against central differences.
"""
from __future__ import annotations


import pytest

from ad_helpers import FD_HEAD, LEVELS, check_fd_rows, fd_main, fd_rows


PROGRAMS = {
    "byte_copy_helper": r"""
static void bytecopy(void *dst, const void *src, size_t len) {
  char *d = dst; const char *s = src;
  for (size_t i = 0; i < len; i++) d[i] = s[i];
}
__attribute__((noinline)) double f(const double *x) {
  double v[4], w[4];
  for (int i = 0; i < 4; i++) v[i] = x[i] * x[i];
  bytecopy(w, v, sizeof v);
  double s = 0;
  for (int i = 0; i < 4; i++) s += w[i] * (i + 1);
  return s;
}""",
    # a noinline byte-copy helper: the optimizer keeps its loop (and the call) at -O2 too
    "byte_copy_noinline_helper": r"""
__attribute__((noinline)) static void ic_bytes(void *d, const void *s, int n) {
  char *dd = d; const char *ss = s;
  for (int i = 0; i < n; i++) dd[i] = ss[i];
}
__attribute__((noinline)) double f(const double *x) {
  double a[4], b[4];
  for (int i = 0; i < 4; i++) { a[i] = cos(x[i]) * x[(i + 2) % 4]; b[i] = 0; }
  ic_bytes(&b[1], &a[0], 24);
  return b[1] * b[2] + b[3] * a[3];
}""",
    "byte_copy_inline_malloc": r"""
__attribute__((noinline)) double f(const double *x) {
  double *v = malloc(4 * sizeof(double)), *w = malloc(4 * sizeof(double));
  for (int i = 0; i < 4; i++) v[i] = sin(x[i]) * x[(i + 1) % 4];
  unsigned char *d = (unsigned char *)w; const unsigned char *s = (const unsigned char *)v;
  for (int i = 0; i < 32; i++) d[i] = s[i];
  double r = w[0] * w[1] + w[2] - w[3] * w[3];
  free(v); free(w);
  return r;
}""",
    "halfword_copy_struct": r"""
struct pt { double a, b; };
static void copy16(void *dst, const void *src, size_t n) {
  uint16_t *d = dst; const uint16_t *s = src;
  for (size_t i = 0; i < n / 2; i++) d[i] = s[i];
}
__attribute__((noinline)) double f(const double *x) {
  struct pt p = {x[0] * x[1], exp(x[2])}, q;
  copy16(&q, &p, sizeof p);
  return q.a * x[3] + q.b * q.b;
}""",
    "record_with_pointer_assign": r"""
struct view { double *p; int n; double scale; };
__attribute__((noinline)) static void fill(struct view v, const double *x) { for (int i = 0; i < v.n; i++) v.p[i] = x[i] * x[i] * v.scale; }
__attribute__((noinline)) static double total(const struct view *v) { double s = v->scale; for (int i = 0; i < v->n; i++) s += v->p[i] * v->p[(i + 1) % v->n]; return s; }
__attribute__((noinline)) double f(const double *x) {
  double buf[4];
  struct view a = {buf, 4, x[3]}, b, c;
  b = a;
  memcpy(&c, &b, sizeof c);
  fill(c, x);
  return total(&b) + total(&c);
}""",
    "record_with_pointer_array": r"""
struct seg { double w; double *at; };
__attribute__((noinline)) static double sum_segs(const struct seg *s, int n) { double r = 0; for (int k = 0; k < n; k++) r += s[k].at[0] * s[k].at[1] * s[k].w; return r; }
__attribute__((noinline)) double f(const double *x) {
  double store[4];
  struct seg s[2], t[2];
  s[0].w = x[0]; s[0].at = store; s[1].w = x[1] * x[1]; s[1].at = store + 2;
  memcpy(t, s, sizeof s);
  for (int k = 0; k < 2; k++) { t[k].at[0] = t[k].w * x[2]; t[k].at[1] = t[k].w + x[3]; }
  return sum_segs(t, 2) + t[1].w;
}""",
    "realloc_push_field": r"""
struct dynarr { double *data; size_t len, cap; };
__attribute__((noinline)) static void push(struct dynarr *a, double v) {
  if (a->len == a->cap) { a->cap = a->cap ? 2 * a->cap : 1; a->data = realloc(a->data, a->cap * sizeof(double)); }
  a->data[a->len++] = v;
}
__attribute__((noinline)) double f(const double *x) {
  struct dynarr a = {NULL, 0, 0};
  for (int k = 0; k < 3; k++) for (int i = 0; i < 4; i++) push(&a, x[i] * (k + 1));
  double s = 0;
  for (size_t i = 0; i < a.len; i++) s += a.data[i] * a.data[(i + 5) % a.len];
  free(a.data);
  return s;
}""",
    "realloc_grow_inline": r"""
__attribute__((noinline)) double f(const double *x) {
  struct { double *v; int n; } h = {NULL, 0};
  for (int i = 0; i < 4; i++) {
    h.v = realloc(h.v, (h.n + 2) * sizeof(double));
    h.v[h.n++] = x[i];
    h.v[h.n++] = cos(x[i]);
  }
  double s = 0;
  for (int i = 0; i + 1 < h.n; i++) s += h.v[i] * h.v[i + 1];
  free(h.v);
  return s;
}""",
}

@pytest.mark.parametrize("config", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_memory_idiom(tmp_path, name, config):
    flags, env = LEVELS[config]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(), flags, env), 4)


# Byte-copy loops between memory the optimizer cannot prove apart (two pointer parameters,
# pointers loaded from a struct or an array, a buffer an OpenMP region captured):
# loop-idiom leaves the loop, whose i8 pieces of doubles no derivative can follow; it becomes
# a call of `@__enzyme_build_copy_bytes`, a memmove or (when the destination lies inside the
# source range ahead of it, where the loop re-reads bytes it wrote) memcpy chunks. Found as
# fuzz-16 (an OpenMP region's buffer); each member below was refused before.
MAY_OVERLAP = {
    "parameters": r"""
__attribute__((noinline)) static void ic_bytes(void *d, const void *s, int n) {
  char *dd = d; const char *ss = s;
  for (int i = 0; i < n; i++) dd[i] = ss[i];
}
__attribute__((noinline)) static void fill_copy(double *u, double *w, const double *x) {
  for (int i = 0; i < 4; i++) u[i] = sin(x[i]) * x[(i + 1) % 4];
  ic_bytes(w, u, 32);
}
__attribute__((noinline)) double f(const double *x) {
  double u[4], w[4];
  fill_copy(u, w, x);
  double s = 0;
  for (int i = 0; i < 4; i++) s += w[i] * w[i] + u[i] * x[i];
  return s;
}""",
    "struct_fields": r"""
struct bufs { double *a, *b; int n; };
__attribute__((noinline)) static void move(struct bufs *p) {
  unsigned char *d = (unsigned char *)p->b; const unsigned char *s = (const unsigned char *)p->a;
  long n = p->n * (long)sizeof(double);
  for (long i = 0; i < n; i++) d[i] = s[i];
}
__attribute__((noinline)) static void setup(struct bufs *p) {
  p->a = malloc(4 * sizeof(double)); p->b = malloc(4 * sizeof(double)); p->n = 4;
}
__attribute__((noinline)) double f(const double *x) {
  struct bufs p;
  setup(&p);   /* the fields are loads after an opaque call: they may be the same block */
  for (int i = 0; i < 4; i++) p.a[i] = exp(x[i] * 0.5) * x[3 - i];
  move(&p);
  double r = p.b[0] * p.b[1] + p.b[2] * p.b[3] - p.a[1];
  free(p.a); free(p.b);
  return r;
}""",
    "pointer_array": r"""
__attribute__((noinline)) static void set_rows(double **rows, double *u, double *w) { rows[0] = u; rows[1] = w; }
__attribute__((noinline)) static void copy_rows(double **rows) {
  char *d = (char *)rows[1]; const char *s = (const char *)rows[0];
  for (int i = 8; i < 40; i++) d[i] = s[i];          /* bytes 8..39: doubles 1..4 */
}
__attribute__((noinline)) double f(const double *x) {
  double u[6] = {0}, w[6] = {0};
  double *rows[2];
  set_rows(rows, u, w);
  for (int i = 0; i < 4; i++) u[i + 1] = x[i] * x[(i + 3) % 4];
  copy_rows(rows);
  return w[1] * w[2] + cos(w[3]) * w[4] + u[2];
}""",
    # counting down (`i-- > 0`) between two parameters
    "down_parameters": r"""
__attribute__((noinline)) static void back_bytes(void *d, const void *s, long n) {
  char *dd = d; const char *ss = s;
  for (long i = n; i-- > 0;) dd[i] = ss[i];
}
__attribute__((noinline)) static void fill_copy(double *u, double *w, const double *x) {
  for (int i = 0; i < 4; i++) u[i] = cos(x[i]) * x[(i + 2) % 4];
  back_bytes(w, u, 32);
}
__attribute__((noinline)) double f(const double *x) {
  double u[4], w[4];
  fill_copy(u, w, x);
  return w[0] * w[1] + w[2] * w[3] * u[0] + x[1];
}""",
    # a hand-written memmove: forward when the destination is below the source, else backward
    "memmove_by_hand": r"""
__attribute__((noinline)) static void move(void *dst, const void *src, size_t n) {
  char *d = dst; const char *s = src;
  if (d < s) { for (size_t i = 0; i < n; i++) d[i] = s[i]; }
  else { for (size_t i = n; i-- > 0;) d[i] = s[i]; }
}
__attribute__((noinline)) static void shift_both(double *v) {
  move(v + 1, v, 4 * sizeof(double));       /* right by one: the backward loop */
  move(v + 2, v + 3, 2 * sizeof(double));   /* left by one: the forward loop */
}
__attribute__((noinline)) double f(const double *x) {
  double v[6] = {x[0], x[1] * x[2], sin(x[2]), x[3], 0, 0};
  shift_both(v);
  return v[0] * v[1] + v[2] * v[3] + v[4] * x[0] + v[5];
}""",
    # destination ahead of the source inside its range: the forward loop re-reads what it
    # wrote (every element becomes v[0]); memcpy chunks of 8 bytes do the same
    "smear_ahead": r"""
__attribute__((noinline)) static void shift(char *d, const char *s, size_t n) { for (size_t i = 0; i < n; i++) d[i] = s[i]; }
__attribute__((noinline)) double f(const double *x) {
  double v[5] = {x[0] * x[1], x[1], x[2], x[3], 0};
  shift((char *)(v + 1), (const char *)v, 8 * 4);
  return v[1] * v[2] + v[4] * x[2] + v[0];
}""",
    # destination behind the source: the loop is a memmove
    "shift_back": r"""
__attribute__((noinline)) static void shift(char *d, const char *s, size_t n) { for (size_t i = 0; i < n; i++) d[i] = s[i]; }
__attribute__((noinline)) double f(const double *x) {
  double v[5] = {x[0], x[1] * x[2], x[2], sin(x[3]), 1};
  shift((char *)v, (const char *)(v + 1), 8 * 4);
  return v[0] * v[1] + v[2] * v[3] + v[4];
}""",
}


@pytest.mark.parametrize("config", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(MAY_OVERLAP))
def test_byte_copy_between_memory_that_may_overlap(tmp_path, name, config):
    flags, env = LEVELS[config]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + MAY_OVERLAP[name] + fd_main(), flags, env), 4)


@pytest.mark.parametrize("config", sorted(LEVELS))
def test_byte_copy_of_a_buffer_an_openmp_region_wrote(tmp_path, config):
    """fuzz-16's class: the region captures `b` by address, so the pointer is loaded again
    after the fork and may point anywhere the region could store."""
    flags, env = LEVELS[config]
    text = FD_HEAD + r"""
__attribute__((noinline)) static void ic_bytes(void *d, const void *s, int n) {
  char *dd = d; const char *ss = s;
  for (int i = 0; i < n; i++) dd[i] = ss[i];
}
__attribute__((noinline)) double f(const double *x) {
  double a[6];
  double *b = malloc(6 * sizeof(double));
  for (int i = 0; i < 6; i++) { a[i] = x[i % 4] * x[(i + 1) % 4]; b[i] = cos(x[(i + 2) % 4]); }
  #pragma omp parallel for num_threads(2)
  for (int k = 0; k < 6; k++) b[k] = b[k] + 0.5 * a[k];
  ic_bytes(&b[2], &a[3], 24);
  ic_bytes(&a[0], &b[1], 16);
  double out = 0;
  for (int i = 0; i < 6; i++) out += a[i] * b[i] + b[i];
  free(b);
  return out;
}""" + fd_main()
    check_fd_rows(fd_rows(tmp_path, text, flags, env, extra=("-fopenmp",)), 4)
