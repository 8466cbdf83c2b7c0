"""Mutable globals the differentiated function only reads: re-read by the reverse sweep.

The class: data a program keeps in globals and fills before it asks for a gradient -- an
image a convolution kernel is fitted to, training samples, a coefficient table set at
start-up -- read inside the loops of the differentiated function and never written there.
In combined mode the reverse sweep runs in the same call, so nothing can change such a
global in between; the cache planner used to keep every value loaded from it on the tape
anyway (only constant globals counted as unchanging), which made a 5x5 convolution over a
64x64 global image 3.0x its primal instead of 1.8x.

The planner now re-reads them (ad/cache.py: `CachePlanner._stable_globals`) unless some
write may reach them: a store to the global, a store through a pointer that may point into
it (a parameter without `noalias`, a pointer loaded from memory), an atomic, or a call that
may write more than its pointer arguments. Each program is checked in reverse and forward
mode against central differences; the plan of the read-only ones must re-read every load,
and the ones whose globals change must still be right.
"""
from __future__ import annotations

import pytest

from ad_helpers import CXX_FD_HEAD, CXX_FD_MAIN, FD_HEAD, LEVELS, cache_plan, check_fd_rows, fd_main, fd_rows

READ_ONLY = {
    # a kernel fitted to a global image (filled at start-up), leaky ReLU, sum of squares
    "image_kernel": r"""
static double img[10][10];
__attribute__((constructor)) static void load_image(void) {
  for (int i = 0; i < 10; i++) for (int j = 0; j < 10; j++) img[i][j] = sin(0.3 * i + 0.7 * j) + 0.1 * j;
}
double f(const double *x) {
  double s = 0;
  for (int i = 0; i + 2 <= 10; i++)
    for (int j = 0; j + 2 <= 10; j++) {
      double a = x[0] * img[i][j] + x[1] * img[i][j + 1] + x[2] * img[i + 1][j] + x[3] * img[i + 1][j + 1];
      a = a > 0 ? a : 0.05 * a;
      s += a * a;
    }
  return s;
}
""",
    # training samples in global arrays: logistic loss
    "training_samples": r"""
double samples[32][4], labels[32];
__attribute__((constructor)) static void load_samples(void) {
  for (int i = 0; i < 32; i++) {
    for (int j = 0; j < 4; j++) samples[i][j] = cos(1.3 * i + j) * (j + 1) * 0.5;
    labels[i] = (i % 3) ? 1.0 : -1.0;
  }
}
double f(const double *w) {
  double loss = 0;
  for (int i = 0; i < 32; i++) {
    double z = 0;
    for (int j = 0; j < 4; j++) z += samples[i][j] * w[j];
    loss += log1p(exp(-labels[i] * z));
  }
  return loss;
}
""",
    # a coefficient table set at start-up, a struct of globals, a helper reading them
    "coefficient_table": r"""
struct poly { double c[5]; double scale; } table[3];
static volatile double unit = 0.1;   /* read at start-up: the compiler cannot fold the table */
__attribute__((constructor)) static void set_table(void) {
  for (int k = 0; k < 3; k++) { for (int d = 0; d < 5; d++) table[k].c[d] = unit * (k + 1) / (d + 1); table[k].scale = 1 + k; }
}
static double horner(const struct poly *p, double t) {
  double v = 0;
  for (int d = 4; d >= 0; d--) v = v * t + p->c[d];
  return v * p->scale;
}
double f(const double *x) {
  double s = 0;
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 4; i++) s += sin(horner(&table[k], x[i])) * x[(i + k) % 4];
  return s;
}
""",
    # weights written at start-up and read through a global pointer to them: accepted
    # (refuse_aliased_global_pointer_loads only stops reads of arrays f writes derivatives into)
    "weights_behind_a_global_pointer": r"""
static double w[8];
static const double *wp;
static volatile double unit = 0.1;
static volatile int count = 8;
__attribute__((constructor)) static void set_weights(void) {
  for (int i = 0; i < 8; i++) w[i] = unit * i + 0.2;
  wp = w;
}
double f(const double *x) {
  double s = 0;
  int n = count;
  for (int i = 0; i < n; i++) s += sin(wp[i] * x[i % 4]) * x[(i + 1) % 4];
  return s;
}
""",
    # data behind pointers set at start-up: a global pointer, a struct of pointers
    "pointers_set_at_start_up": r"""
static double *samples;                          /* 24 x 4, malloc'd at start-up */
static struct { const double *y; int n; } labels;
static volatile int count = 24;
__attribute__((constructor)) static void load_data(void) {
  int n = count;
  samples = malloc(sizeof(double) * 4 * n);
  double *y = malloc(sizeof(double) * n);
  for (int i = 0; i < 4 * n; i++) samples[i] = sin(0.7 * i);
  for (int i = 0; i < n; i++) y[i] = cos(0.3 * i);
  labels.y = y;
  labels.n = n;
}
double f(const double *w) {
  double loss = 0;
  for (int i = 0; i < labels.n; i++) {
    const double *a = samples + 4 * i;
    double z = a[0] * w[0] + a[1] * w[1] + a[2] * w[2] + a[3] * w[3];
    double e = tanh(z) - labels.y[i];
    loss += e * e * (1 + w[i % 4] * w[i % 4]);
  }
  return loss;
}
""",
}

# G, filled at start-up from a value the compiler cannot see, and a loop count it cannot either
CHANGED_PRELUDE = r"""
double G[4];
static volatile double unit = 0.1;   /* read at start-up: the compiler cannot fold G */
static volatile int count = 4;       /* loops of unknown length: their values need caching */
__attribute__((constructor)) static void fill(void) { for (int i = 0; i < 4; i++) G[i] = 4 * unit * (i + 1); }
"""


def _scaled_between_reads(declaration: str, read: str, write: str) -> str:
    """A program reading G as `read` in two loops, tripling it as `write` between them and
    putting it back after."""
    return CHANGED_PRELUDE + declaration + f"""double f(const double *x) {{
  double s = 0;
  int n = count;
  for (int i = 0; i < n; i++) s += sin(x[i] * {read}[i]);
  for (int i = 0; i < n; i++) {write}[i] = {write}[i] * 3.0;
  for (int i = 0; i < n; i++) s += x[(i + 1) % n] * x[i] * {read}[i];
  for (int i = 0; i < n; i++) {write}[i] = {write}[i] / 3.0;
  return s;
}}
"""

CHANGED = {
    # the function writes the global itself between two reads
    "written_inside": CHANGED_PRELUDE + r"""
double f(const double *x) {
  double s = 0;
  int n = count;
  for (int i = 0; i < n; i++) s += sin(x[i] * G[i]);
  for (int i = 0; i < 4; i++) G[i] = G[i] * 0.5 + 0.1;
  for (int i = 0; i < n; i++) s += x[(i + 1) % n] * x[i] * G[i];
  for (int i = 0; i < 4; i++) G[i] = 4 * unit * (i + 1);
  return s;
}
""",
    # a helper that stays a call rewrites the global between the reads
    "written_by_callee": CHANGED_PRELUDE + r"""
__attribute__((noinline)) void rescale(double by) { for (int i = 0; i < 4; i++) G[i] *= by; }
double f(const double *x) {
  double s = 0;
  int n = count;
  for (int i = 0; i < n; i++) s += sin(x[i] * G[i]);
  rescale(3.0);
  for (int i = 0; i < n; i++) s += x[(i + 1) % n] * x[i] * G[i];
  rescale(1.0 / 3.0);
  return s;
}
""",
    # the function writes the global under a second name (an alias)
    "written_through_alias": _scaled_between_reads('extern double G2[4] __attribute__((alias("G")));\n', "G", "G2"),
    # a global pointer into a global the function writes: the pointer's target changes
    "pointer_into_written_global": _scaled_between_reads("static double *view = G;\n", "view", "G"),
    # the function writes through the pointer it loaded from a global
    "written_through_loaded_pointer": _scaled_between_reads("static double *view = G;\n", "G", "view"),
}

# the function writes through a pointer argument the caller points at the global it reads
# (values without derivative: the question is only which G the reverse sweep reads)
THROUGH_ARGUMENT = FD_HEAD + r"""
double G[4];
static void fill(void) { for (int i = 0; i < 4; i++) G[i] = 0.4 * (i + 1); }
double f(const double *x, double *out) {
  double s = 0;
  for (int i = 0; i < 4; i++) s += sin(x[i] * G[i]);
  for (int i = 0; i < 4; i++) out[i] = 0.25 * (i + 2);
  for (int i = 0; i < 4; i++) s += x[(i + 1) % 4] * G[i] * G[i];
  return s;
}
static double value(const double *x) { fill(); return f(x, G); }
int main(void) {
  double x[4] = {0.5, -1.25, 1.5, 0.75};
  for (int i = 0; i < 4; i++) {
    double g[4] = {0}, e[4] = {0};
    fill();
    __enzyme_autodiff((void *)f, enzyme_dup, x, g, enzyme_const, G);
    e[i] = 1;
    fill();
    double t = __enzyme_fwddiff((void *)f, enzyme_dup, x, e, enzyme_const, G);
    double xp[4], xm[4];
    for (int k = 0; k < 4; k++) { xp[k] = x[k]; xm[k] = x[k]; }
    xp[i] += 1e-6; xm[i] -= 1e-6;
    printf("%.15g %.15g %.15g\n", g[i], t, (value(xp) - value(xm)) / 2e-6);
  }
  return 0;
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(READ_ONLY) + sorted(CHANGED))
def test_globals_read_by_the_function(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = FD_HEAD + {**READ_ONLY, **CHANGED}[name] + fd_main(4)
    check_fd_rows(fd_rows(tmp_path, text, flags, env), 4)


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_global_written_through_an_argument(level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, THROUGH_ARGUMENT, flags, env), 4)


def _plan(tmp_path, text: str, head: str = "cache plan of @diffe_f (combined mode)") -> str:
    return cache_plan(tmp_path, text, head)


@pytest.mark.parametrize("name", sorted(READ_ONLY))
def test_read_only_globals_are_read_again(name, tmp_path):
    plan = _plan(tmp_path, FD_HEAD + READ_ONLY[name] + fd_main(4))
    loads = [line for line in plan.splitlines() if " load " in line]
    assert loads, plan
    assert "re-read from memory" in plan, plan
    assert not [line for line in loads if "kept" in line], plan


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_changed_globals_are_kept(name, tmp_path):
    plan = _plan(tmp_path, FD_HEAD + CHANGED[name] + fd_main(4))
    assert [line for line in plan.splitlines() if " load " in line and "kept" in line], plan


def test_writing_only_arguments_reads_memory_attributes():
    from enzyme_build.ad.cache import _writes_only_arguments
    assert _writes_only_arguments("#0 = { memory(argmem: readwrite) nounwind }")
    assert _writes_only_arguments("memory(none)")
    assert _writes_only_arguments("memory(read, argmem: write)")
    # errno (sqrt without -fno-math-errno) and an allocator's state are no one's data
    assert _writes_only_arguments("memory(argmem: read, errnomem: write)")
    assert _writes_only_arguments("memory(argmem: readwrite, inaccessiblemem: readwrite)")
    assert not _writes_only_arguments("memory(write, argmem: readwrite)")
    assert not _writes_only_arguments("memory(readwrite, inaccessiblemem: none)")
    assert not _writes_only_arguments("nounwind uwtable")


# A helper that stays a call reads the global data; its split pieces run around code of the
# caller. The caller vouches for the globals nothing it runs writes (`Signature.stable_globals`).
HELPER = r"""
static double feats[12][4];
static volatile double unit = 0.1;
static volatile int count = 4;
__attribute__((constructor)) static void load_features(void) {
  for (int i = 0; i < 12; i++) for (int j = 0; j < 4; j++) feats[i][j] = unit * sin(i + 2.0 * j);
}
__attribute__((noinline)) static double sample_loss(const double *w, int i, int n) {
  double z = 0;
  for (int j = 0; j < n; j++) z += feats[i][j] * w[j] * (1.0 + 0.1 * sin(w[(j + 1) % n]));
  return tanh(z) * tanh(z);
}
"""
SPLIT_PROGRAMS = {
    "helper_reads_data": HELPER + r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 12; i++) s += sample_loss(x, i, count);
  return s;
}
""",
    # the caller doubles the data between two rounds of calls and halves it back
    "caller_changes_data": HELPER + r"""
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 12; i++) s += sample_loss(x, i, count);
  for (int i = 0; i < 12; i++) for (int j = 0; j < 4; j++) feats[i][j] *= 2.0;
  for (int i = 0; i < 12; i++) s += x[i % 4] * sample_loss(x, i, count);
  for (int i = 0; i < 12; i++) for (int j = 0; j < 4; j++) feats[i][j] *= 0.5;
  return s;
}
""",
}
SPLIT_HEAD = "cache plan of @augmented_sample_loss / @reverse_sample_loss (split mode)"


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(SPLIT_PROGRAMS))
def test_helpers_reading_globals(name, level, tmp_path):
    flags, env = LEVELS[level]
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + SPLIT_PROGRAMS[name] + fd_main(4), flags, env), 4)


def test_pieces_read_vouched_globals_again(tmp_path):
    plan = _plan(tmp_path, FD_HEAD + SPLIT_PROGRAMS["helper_reads_data"] + fd_main(4), SPLIT_HEAD)
    loads = [line for line in plan.splitlines() if " load " in line]
    assert loads and not [line for line in loads if "kept" in line], plan


def test_pieces_keep_globals_their_caller_changes(tmp_path):
    plan = _plan(tmp_path, FD_HEAD + SPLIT_PROGRAMS["caller_changes_data"] + fd_main(4), SPLIT_HEAD)
    assert [line for line in plan.splitlines() if " load " in line and "kept" in line], plan


# __enzyme_augmentfwd and __enzyme_reverse called by the user: the data changes in between,
# and the gradient must be the one of the data the forward pass read
USER_SPLIT = FD_HEAD + HELPER + r"""
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
double f(const double *x) {
  double s = 0;
  for (int i = 0; i < 12; i++) s += sample_loss(x, i, count);
  return s;
}
int main(void) {
  double x[4] = {0.5, -1.25, 1.5, 0.75}, g[4] = {0}, gs[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
  void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, gs);
  for (int i = 0; i < 12; i++) for (int j = 0; j < 4; j++) feats[i][j] *= 3.0;
  __enzyme_reverse((void *)f, enzyme_dup, x, gs, 1.0, tape);
  for (int i = 0; i < 4; i++) printf("%.15g %.15g\n", g[i], gs[i]);
  return 0;
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_user_split_calls_vouch_for_no_global(level, tmp_path):
    flags, env = LEVELS[level]
    rows = fd_rows(tmp_path, USER_SPLIT, flags, env)
    assert len(rows) == 4 and any(abs(r[0]) > 1e-3 for r in rows), rows
    for combined, split in rows:
        assert split == pytest.approx(combined, rel=1e-12, abs=1e-14), rows


# Read-only global data seen through a global struct's pointer members (loads from
# `getelementptr (i8, ptr @D, i64 8)`: -O2 folds a member's address into a constant
# expression) by a function that also fills scratch memory that may be null (a std::vector's
# data pointer until it allocates: its fill writes through `phi [null, new]`). Each of the
# two used to make the planner keep every loaded value on the tape.
READ_ONLY_SCRATCH = {
    # C: a struct of global data pointers, a scratch row that is NULL when empty
    "struct_members_and_nullable_scratch": r"""
static struct { int n; const double *w; const double *y; } D;
static volatile int count = 12;
__attribute__((constructor)) static void load(void) {
  int n = count;
  double *w = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) { w[i] = 0.3 + 0.05 * i; y[i] = sin(0.4 * i); }
  D.n = n; D.w = w; D.y = y;
}
double f(const double *x) {
  int n = D.n;
  double *r = n ? malloc(sizeof(double) * n) : NULL;
  double s = 0;
  for (int i = 0; i < n; i++) r[i] = D.w[i] * x[i % 4] - D.y[i];
  for (int i = 0; i < n; i++) s += r[i] * r[i] * D.w[(i + 1) % n];
  free(r);
  return s;
}
""",
}

READ_ONLY_SCRATCH_CXX = {
    # C++: std::vector members of a global object, a local std::vector of residuals
    "vector_members_and_local_vector": r"""
#include <vector>
struct Data { std::vector<double> w, y; };
static volatile int count = 12;
static Data load() {
  Data d;
  for (int i = 0; i < count; i++) { d.w.push_back(0.3 + 0.05 * i); d.y.push_back(std::sin(0.4 * i)); }
  return d;
}
static Data DATA = load();   // dynamic initialization, before main
double f(const double *x) {
  std::vector<double> r(DATA.w.size());
  for (size_t i = 0; i < r.size(); i++) r[i] = DATA.w[i] * x[i % 4] - DATA.y[i];
  double s = 0;
  for (size_t i = 0; i < r.size(); i++) s += r[i] * r[i] * DATA.w[(i + 1) % r.size()];
  return s;
}
""",
    # C++: a finite-element assembly: a global mesh's index vectors, a local accumulation
    # vector scattered into through them
    "mesh_index_vectors": r"""
#include <vector>
struct Mesh { std::vector<int> tri, slot; std::vector<double> area; int nodes = 0, slots = 0; };
static Mesh build() {
  Mesh m;
  m.nodes = 6;
  int t[] = {0, 1, 2, 1, 3, 2, 2, 3, 4, 3, 5, 4};
  m.tri.assign(t, t + 12);
  for (int e = 0; e < 4; e++) { m.area.push_back(0.5 + 0.1 * e); for (int a = 0; a < 3; a++) m.slot.push_back(m.tri[3 * e + a]); }
  m.slots = 6;
  return m;
}
static Mesh MESH = build();
double f(const double *x) {
  std::vector<double> acc(MESH.slots, 0.0);
  for (int e = 0; e < 4; e++) {
    double u = 0;
    for (int a = 0; a < 3; a++) u += x[MESH.tri[3 * e + a] % 4];
    for (int a = 0; a < 3; a++) acc[MESH.slot[3 * e + a]] += MESH.area[e] * u * u;
  }
  double s = 0;
  for (int k = 0; k < MESH.slots; k++) s += std::sin(acc[k]) * (k + 1);
  return s;
}
""",
}


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(READ_ONLY_SCRATCH) + sorted(READ_ONLY_SCRATCH_CXX))
def test_global_data_beside_scratch(name, level, tmp_path):
    flags, env = LEVELS[level]
    if name in READ_ONLY_SCRATCH:
        rows = fd_rows(tmp_path, FD_HEAD + READ_ONLY_SCRATCH[name] + fd_main(4), flags, env)
    else:
        rows = fd_rows(tmp_path, CXX_FD_HEAD + READ_ONLY_SCRATCH_CXX[name] + CXX_FD_MAIN, flags, env, cxx=True)
    check_fd_rows(rows, 4)


@pytest.mark.parametrize("name", sorted(READ_ONLY_SCRATCH) + sorted(READ_ONLY_SCRATCH_CXX))
def test_global_data_beside_scratch_is_read_again(name, tmp_path):
    if name in READ_ONLY_SCRATCH:
        plan = cache_plan(tmp_path, FD_HEAD + READ_ONLY_SCRATCH[name] + fd_main(4))
    else:
        plan = cache_plan(tmp_path, CXX_FD_HEAD + READ_ONLY_SCRATCH_CXX[name] + CXX_FD_MAIN, cxx=True)
    loads = [line for line in plan.splitlines() if " load " in line]
    assert loads and "re-read from memory" in plan, plan
    # integer loads (sizes, indices) and the data: none kept per iteration
    assert not [line for line in loads if "kept: static record" in line or "kept: tape" in line], plan
