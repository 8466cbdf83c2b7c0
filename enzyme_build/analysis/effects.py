"""Functions that cannot affect any derivative (logging, counters, checks), found from their bodies.

Such a function returns nothing a derivative can flow through (void or an integer) and
writes no float or pointer anywhere but its own stack: it may read active data, print it,
count calls in integer globals. Calls to it are then inactive — which also lets variadic
logging helpers (`log_msg(const char *fmt, ...)` over `vfprintf`) sit inside
differentiated code.
"""
from __future__ import annotations

import re

from ..ir.model import Function, Module, tbaa_type
from .activity import ALLOCATORS, DEALLOCATORS, callee_name, is_inactive_call, pointer_roots
from .library import FILLS_BUFFERS, VA_OUTPUT

# intrinsics that only touch the function's own va_list
_VA_INTRINSICS = ("llvm.va_start", "llvm.va_end", "llvm.va_copy")
# integer stores no wider than this cannot hold a float or pointer's bits
_NARROW_INT = re.compile(r"i(1|8|16|32)")
# !tbaa scalar names of integer data (a wide integer store tagged so is not a bit copy)
_INT_TBAA = re.compile(r"(unsigned |signed )?(char|short|int|long|long long|_Bool|bool)")
_NON_MEMORY = {"load", "alloca", "getelementptr", "phi", "select", "icmp", "fcmp", "br", "switch",
               "ret", "unreachable", "extractvalue", "insertvalue", "freeze", "fneg",
               "extractelement", "insertelement", "shufflevector"}


def _returns_inert(ty: str) -> bool:
    return ty == "void" or re.fullmatch(r"i\d+", ty) is not None


def _own_stack(fn: Function, ptr: str) -> bool:
    roots = pointer_roots(fn, ptr)
    return bool(roots) and all(r in fn.defs and fn.defs[r].opcode == "alloca" for r in roots)


def _store_inert(module: Module, fn: Function, inst) -> bool:
    (vty, v), (_, ptr) = inst.operands
    if _own_stack(fn, ptr):
        return True
    if not re.fullmatch(r"i\d+", vty):
        return False
    # an integer moved from memory (or out of a float) may be a float's bits: `d[i] = s[j]`
    # over uint64_t copies doubles; computed integers (`calls++`) are plain integers
    d = fn.defs.get(v)
    if d is not None and d.opcode in ("load", "bitcast", "phi", "select", "freeze", "call", "extractvalue"):
        return False
    if v in {p.name for p in fn.params}:
        return False
    if _NARROW_INT.fullmatch(vty):
        return True
    name = tbaa_type(module, inst.metadata.get("tbaa"))
    return bool(name) and _INT_TBAA.fullmatch(name) is not None


def derivative_free(module: Module, name: str, is_pure_math, memo: dict[str, bool]) -> bool:
    """True when @name has a body, returns void/an integer, and (with its callees) writes
    nothing a derivative could live in. `is_pure_math(callee)` says a call only computes
    (libm / math intrinsics); `memo` is shared between queries (recursion counts as inert
    until proven otherwise)."""
    if name in memo:
        return memo[name]
    fn = module.functions.get(name) if name in module.functions else None
    if fn is None or not _returns_inert(fn.return_type):
        memo[name] = False
        return False
    memo[name] = True       # optimistic for recursion; corrected below
    ok = all(_inert(module, fn, inst, is_pure_math, memo) for inst in fn.instructions())
    if ok and fn.return_type != "void":
        # an integer result may carry a float's bits (a {float, int} struct returned in one
        # register): only results that cannot are inert
        ok = not any(_may_carry_float_bits(i) for i in fn.instructions())
    memo[name] = ok
    return ok


def _may_carry_float_bits(inst) -> bool:
    if inst.opcode == "bitcast" and inst.operands and inst.operands[0][0] in ("float", "double", "half", "x86_fp80"):
        return True
    if inst.opcode == "load" and re.fullmatch(r"i(32|64|128)", inst.type or ""):
        return True
    if inst.opcode == "call" and inst.result and re.fullmatch(r"i(32|64|128)", inst.type or "") \
            and not (inst.callee or "").startswith("@llvm."):
        return True     # a callee's integer result could carry bits too
    return False


def _inert(module, fn, inst, is_pure_math, memo) -> bool:
    op = inst.opcode
    if op in _NON_MEMORY or op in ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl",
                                   "lshr", "ashr", "and", "or", "xor", "fadd", "fsub", "fmul",
                                   "fdiv", "frem", "trunc", "zext", "sext", "fptrunc", "fpext",
                                   "fptoui", "fptosi", "uitofp", "sitofp", "ptrtoint",
                                   "inttoptr", "bitcast", "addrspacecast"):
        return True
    if op == "store":
        return _store_inert(module, fn, inst)
    if op in ("call", "invoke"):
        if inst.callee is None:
            return False
        name = callee_name(inst)
        if "llvm.memset" in name or "llvm.memcpy" in name or "llvm.memmove" in name:
            return _own_stack(fn, inst.operands[0][1])
        if name.startswith(_VA_INTRINSICS) or is_pure_math(inst.callee):
            return True
        if inst.callee in ALLOCATORS or inst.callee in DEALLOCATORS or name in FILLS_BUFFERS:
            return False   # shadows of freed blocks and of filled buffers stay the engine's business
        if is_inactive_call(inst) or name in VA_OUTPUT:
            return True
        return derivative_free(module, name, is_pure_math, memo)
    return False


