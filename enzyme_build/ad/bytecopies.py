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
Loops it cannot turn into a memcpy (source and destination may overlap) keep the engine's
clear error.
"""
from __future__ import annotations

import re

from ..ir.model import LOCAL as _V

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
    return run_opt(module, llvm, IDIOM, keep=keep, what="turning byte-copy loops into memcpy",
                   hint="copy floating-point data with memcpy or as double/float values")
