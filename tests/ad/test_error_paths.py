"""Inputs read again by the reverse sweep when the only writes that could change them lie on
ways that never return.

The class: a function with an error path that reports through a routine the engine knows
nothing of (`syslog`, a logging library's handler) and then ends the program (`exit`,
`abort`) or throws. Such a call may write any memory, so the cache planner used to take every
input as possibly written and kept each value the reverse sweep needs of it, one cell per
iteration. A write on a way that never returns cannot come before the reverse sweep,
which runs only once the function has returned (ad/cache.py, `stable_roots`,
`_returning_blocks`); the inputs are read again instead. A way that writes and then returns
still counts.

Each member is checked against central differences in reverse and forward mode at -O0, -O2
and with AD before optimization, and its cache plan at -O2 must read the input again.
"""
from __future__ import annotations

import pytest

from ad_helpers import FD_HEAD, LEVELS, cache_plan, check_fd_rows, fd_main, fd_rows

# syslog: a routine the engine knows nothing of, which may write any memory
PRELUDE = "#include <syslog.h>\nstatic volatile int count = 12;\n"

PROGRAMS = {
    # a length read from configuration checked before use, the program ended on failure
    "length_checked": PRELUDE + r"""
double f(const double *x) {
  int n = count;
  if (n > 64) { syslog(LOG_ERR, "too many terms: %d", n); exit(1); }
  double s = 0;
  for (int i = 0; i < n; i++) s += sin(x[i % 4] * x[(i + 1) % 4]) * (1 + 0.1 * i);
  return s;
}
""",
    # a NaN check of the data inside the loop
    "nan_checked": PRELUDE + r"""
double f(const double *x) {
  int n = count;
  double s = 0;
  for (int i = 0; i < n; i++) {
    double v = x[i % 4] * x[(i + 2) % 4];
    if (isnan(v)) { syslog(LOG_ERR, "nan at %d", i); abort(); }
    s += exp(0.1 * v) * x[(i + 1) % 4];
  }
  return s;
}
""",
}

# a way that calls the unknown routine and then returns: the input is not read again
WRITES_AND_RETURNS = PRELUDE + r"""
static volatile int fail = 0;
double f(const double *x) {
  int n = count;
  double s = 0;
  if (fail) { syslog(LOG_ERR, "reset"); return 0; }
  for (int i = 0; i < n; i++) s += sin(x[i % 4] * x[(i + 1) % 4]);
  return s;
}
"""


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("name", sorted(PROGRAMS) + ["writes_and_returns"])
def test_programs_of_the_class(name, level, tmp_path):
    flags, env = LEVELS[level]
    text = PROGRAMS.get(name, WRITES_AND_RETURNS)
    check_fd_rows(fd_rows(tmp_path, FD_HEAD + text + fd_main(4), flags, env), 4)


def _loads(plan: str) -> list[list[str]]:
    return [r for r in (line.split() for line in plan.splitlines() if line.startswith("  %")) if r[2] == "load"]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_input_is_read_again(name, tmp_path):
    loads = _loads(cache_plan(tmp_path, FD_HEAD + PROGRAMS[name] + fd_main(4)))
    assert loads and all("re-read from memory" in " ".join(r) for r in loads), loads


def test_a_way_that_returns_keeps_its_writes(tmp_path):
    loads = _loads(cache_plan(tmp_path, FD_HEAD + WRITES_AND_RETURNS + fd_main(4)))
    assert loads and not any("re-read from memory" in " ".join(r) for r in loads), loads
