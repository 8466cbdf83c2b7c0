"""OpenMP parallel regions (clang's `-fopenmp` lowering onto libomp's `__kmpc_*` ABI).

clang outlines a `#pragma omp parallel [for]` body into `@f.omp_outlined(ptr gtid, ptr btid,
captures...)` and calls `__kmpc_fork_call(ident, n, @outlined, captures...)`; every thread of
the team runs the outlined function, which splits the loop with `__kmpc_for_static_init_*`
or `__kmpc_dispatch_*` and combines `reduction(+:…)` clauses through `__kmpc_reduce*`.

How the engine differentiates them (docs/openmp.md):

- `prepare_module` (text, before the pre-AD pipeline): each `reduction(+:…)` is made to take
  clang's atomic path (`__kmpc_reduce*` answers 2, so the private partial sum is added with
  `atomicrmw fadd`); a blocking `__kmpc_reduce` keeps its barrier.
- `pass_firstprivate_by_address` (text, before the engine): a `double` captured by value
  (`firstprivate`, and clang's by-value capture of scalars) reaches the outlined function
  as the i64 of its bits; it is passed through a read-only stack slot instead, so it is an
  ordinary pointer argument with a shadow.
- `prepare` (IR model): a fork call is seen by the sweeps as a call of the outlined function
  (`fork_ident(inst)` tells them it is a fork). Activity, signatures and classification are
  then those of any call with a body; only the emission differs:
  * reverse, forward sweep: every thread runs `augmented_<outlined>` on its own tape (an
    array of tape objects, one per thread, slot 0 keeps the team size), through the fork of
    a small wrapper; reverse sweep: the fork (same team size) of a wrapper running
    `reverse_<outlined>` on the tapes of the threads it stands for, so the reverse loop is
    parallel and each thread undoes exactly the iterations it ran (static and dynamic);
  * forward mode: the fork of `fwddiffe_<outlined>` (the microtask shape is unchanged).
- inside a parallel region (`parallel_functions`), adjoints accumulated into memory that is
  not the thread's own use `atomicrmw fadd` (other threads may add to the same element);
  a thread's own allocas, and elements indexed by the worksharing loop's counter when every
  access to that array uses the same index, keep plain adds. Barriers are replayed in the
  reverse sweep.
- what is not supported is refused naming the construct (`refuse_unsupported`).
"""
from __future__ import annotations

import re

from ..analysis.activity import atomic_fadd_operands  # noqa: F401  (the sweeps read it here)
from ..errors import EnzymeBuildError
from ..ir.model import Instruction, is_float_type, is_local, make_name, split_top
from .diagnostics import OPENMP_SUPPORTED, demangled

FORK = "__kmpc_fork_call"
# one tape object (24 bytes) per thread, each on its own cache line: pushes update them
SLOT = "[64 x i8]"

# runtime entry points the engine cannot differentiate through, with what the user wrote
_REFUSED = {
    "__kmpc_critical": "`#pragma omp critical`",
    "__kmpc_critical_with_hint": "`#pragma omp critical`",
    "__kmpc_end_critical": "`#pragma omp critical`",
    "omp_set_lock": "an OpenMP lock (omp_set_lock)",
    "omp_unset_lock": "an OpenMP lock (omp_unset_lock)",
    "omp_test_lock": "an OpenMP lock (omp_test_lock)",
    "omp_set_nest_lock": "an OpenMP lock (omp_set_nest_lock)",
    "omp_unset_nest_lock": "an OpenMP lock (omp_unset_nest_lock)",
    "__kmpc_omp_task_alloc": "`#pragma omp task`",
    "__kmpc_omp_task": "`#pragma omp task`",
    "__kmpc_omp_task_with_deps": "`#pragma omp task depend(…)`",
    "__kmpc_omp_taskwait": "`#pragma omp taskwait`",
    "__kmpc_taskgroup": "`#pragma omp taskgroup`",
    "__kmpc_taskloop": "`#pragma omp taskloop`",
    "__kmpc_ordered": "`#pragma omp ordered`",
    "__kmpc_copyprivate": "`copyprivate(…)`",
    "__kmpc_fork_teams": "`#pragma omp teams`",
    "__kmpc_reduce": "a reduction other than `+` on a scalar",
    "__kmpc_reduce_nowait": "a reduction other than `+` on a scalar",
    "__kmpc_omp_reg_task_with_affinity": "`#pragma omp task affinity(…)`",
}



def fork_ident(inst: Instruction) -> str | None:
    """The `ident_t` operand of a fork call the sweeps see as a call of its outlined function."""
    return inst.omp_fork


# ------------------------------------------------------------------ text passes
_REDUCE_RE = re.compile(r'^(\s*)(%[-\w$.]+) = (?:tail )?call i32 @(__kmpc_reduce(?:_nowait)?)\((.*)\)(.*)$')
_END_REDUCE_RE = re.compile(r'^(\s*)call void @__kmpc_end_reduce\(ptr (?:nonnull )?([^,]+), i32 (?:noundef )?([^,]+), .*$')


def prepare_module(text: str) -> str:
    """reduction(+:…) through clang's atomic path: `__kmpc_reduce*` is replaced by its answer
    2 where the switch on it has that case (clang emits it when every reduction can be an
    atomic update); the optimizer then deletes the other path and the reduction list. A
    blocking `__kmpc_reduce` keeps its synchronization as a barrier."""
    if "@__kmpc_reduce" not in text:
        return text
    lines = text.split("\n")
    out = []
    forced_blocking = False
    for i, line in enumerate(lines):
        m = _REDUCE_RE.match(line)
        if m:
            res = m.group(2)
            window = "\n".join(lines[i + 1:i + 12])
            sw = re.search(r'switch i32 ' + re.escape(res) + r', label %([-\w$.]+) \[([^\]]*)\]', window, re.S)
            case = re.search(r'i32 2, label %([-\w$.]+)', sw.group(2)) if sw else None
            if case and _plain_atomic_block(lines, i, case.group(1), sw.group(1)):
                out.append(f"{m.group(1)}{res} = add i32 0, 2")
                forced_blocking = forced_blocking or m.group(3) == "__kmpc_reduce"
                continue
        if forced_blocking:
            e = _END_REDUCE_RE.match(line)
            if e:
                out.append(f"{e.group(1)}call void @__kmpc_barrier(ptr {e.group(2)}, i32 {e.group(3)})")
                continue
        out.append(line)
    text = "\n".join(out)
    if forced_blocking and "declare void @__kmpc_barrier(" not in text:
        text += "\ndeclare void @__kmpc_barrier(ptr, i32)\n"
    return text


def _plain_atomic_block(lines: list[str], start: int, label: str, default: str) -> bool:
    """Whether clang's atomic path of a reduction is one block of atomic adds going straight
    to the end (`+`); `max`, `*`, ... loop on cmpxchg or lock a critical section."""
    i = start
    while i < len(lines) and lines[i] != "}" and not lines[i].startswith(label + ":"):
        i += 1
    if i >= len(lines) or lines[i] == "}":
        return False
    adds = 0
    for line in lines[i + 1:]:
        body = re.sub(r',\s*!dbg !\d+', "", line.split(";")[0]).strip()
        if not body or body.startswith("#dbg_") or body.startswith("call void @llvm.dbg."):
            continue
        if body.startswith("br "):
            return adds > 0 and body == f"br label %{default}"
        if re.search(r'= atomicrmw (?:volatile )?f?add ptr', body):
            adds += 1
        elif not re.search(r'= (?:load|getelementptr|bitcast|sext|zext|trunc) |call void @(?:llvm\.lifetime|__kmpc_end_reduce\()', body):
            return False
    return False


_DBG = r'(?:,\s*!dbg !\d+)?'
_NAME = r'%[-\w$.]+'
_DOUBLE_BITS = re.compile(rf'^\s*({_NAME}) = bitcast double ({_NAME}|[-+0-9.eEx]+) to i64{_DBG}\s*$')
_FLOAT_BITS = re.compile(rf'^\s*({_NAME}) = bitcast float ({_NAME}|[-+0-9.eEx]+) to i32{_DBG}\s*$')
_WIDEN = re.compile(rf'^\s*({_NAME}) = zext i32 ({_NAME}) to i64{_DBG}\s*$')


def pass_firstprivate_by_address(text: str) -> str:
    """A double or float captured by value (`firstprivate`, clang's by-value captures) reaches
    the outlined function as an i64 of its bits (`bitcast double %c to i64`, or `bitcast float`
    to i32 then `zext` to i64, in the caller; the reverse in the callee). Both sides are
    rewritten to pass the address of a stack copy instead, so the value is an ordinary
    read-only pointer argument whose shadow gathers its adjoint."""
    if "@__kmpc_fork_call(" not in text:
        return text
    lines = text.split("\n")
    funcs: dict[str, tuple[int, int]] = {}
    i = 0
    while i < len(lines):
        if lines[i].startswith("define "):
            m = re.search(r'@("[^"]+"|[-\w$.]+)\(', lines[i])
            j = i
            while j < len(lines) and lines[j] != "}":
                j += 1
            if m:
                funcs[m.group(1).strip('"')] = (i, j)
            i = j
        i += 1
    edits: dict[int, list[str]] = {}
    entry_inserts: dict[int, list[str]] = {}
    by_address: dict[str, set[int]] = {}   # outlined function -> argument positions now pointers
    for name, (start, end) in funcs.items():
        captured = _float_bits(lines, start + 1, end)
        if not captured:
            continue
        for k in range(start + 1, end):
            line = lines[k]
            if "@__kmpc_fork_call(" not in line:
                continue
            args = _call_args(line)
            outlined = args[2].split()[-1].lstrip("@").strip('"') if len(args) >= 3 else ""
            if outlined not in funcs:
                continue
            ostart, oend = funcs[outlined]
            params = _header_params(lines[ostart])
            new_line = line
            for pos, arg in enumerate(args[3:]):
                parts = arg.split()
                if parts[0] != "i64" or parts[-1] not in captured or pos + 2 >= len(params):
                    continue
                slot, pname = parts[-1], params[pos + 2].split()[-1]
                ty, value, defs = captured[slot]
                unpacked = _unpacked(lines, ostart + 1, oend, pname, ty)
                caller_uses, caller_records = _uses(lines, start + 1, end, slot)
                if unpacked is None or caller_uses != sorted([defs[-1], k]):
                    continue
                edits.update(unpacked)
                for n in caller_records:   # debug records of the i64 would not type-check
                    edits[n] = []
                for n in defs[:-1]:
                    edits[n] = []
                edits[defs[-1]] = [f"  store {ty} {value}, ptr {slot}, align 8"]
                entry_inserts.setdefault(start, []).append(f"  {slot} = alloca {ty}, align 8")
                new_line = new_line.replace(f"i64 {slot}", f"ptr {slot}", 1) if f"i64 {slot}" in new_line \
                    else new_line.replace(arg, f"ptr {slot}", 1)
                lines[ostart] = re.sub(r'\bi64 ((?:noundef )?)' + re.escape(pname) + r'(?![-\w$.])',
                                       r'ptr \1' + pname, lines[ostart], count=1)
                by_address.setdefault(outlined, set()).add(pos)
            if new_line != line:
                edits[k] = [new_line]
    if not edits:
        return text
    # the outlined function now takes those arguments by address at every fork of it: a fork
    # not rewritten above (one whose i64 is a constant, or bits from elsewhere; in a caller
    # the optimizer inlined the function into) passes the address of a stack copy of its i64
    fixes = 0
    for name, (start, end) in funcs.items():
        for k in range(start + 1, end):
            line = edits[k][0] if k in edits and len(edits[k]) == 1 else lines[k]
            if "@__kmpc_fork_call(" not in line:
                continue
            args = _call_args(line)
            outlined = args[2].split()[-1].lstrip("@").strip('"') if len(args) >= 3 else ""
            new_line, stores = line, []
            for pos in sorted(by_address.get(outlined, ())):
                if 3 + pos >= len(args) or not args[3 + pos].startswith("i64 "):
                    continue
                fixes += 1
                slot = f"%fp.copy{fixes}"
                entry_inserts.setdefault(start, []).append(f"  {slot} = alloca i64, align 8")
                stores.append(f"  store {args[3 + pos]}, ptr {slot}, align 8")
                new_line = new_line.replace(args[3 + pos], f"ptr {slot}", 1)
            if stores:
                edits[k] = stores + [new_line]
    out = []
    for n, line in enumerate(lines):
        if n in edits:
            out.extend(edits[n])
        else:
            out.append(line)
        if n in entry_inserts:
            # after the define line (the entry block's label, if printed, comes first)
            nxt = lines[n + 1] if n + 1 < len(lines) else ""
            if re.match(r'^[-\w$.]+:', nxt):
                continue
            out.extend(entry_inserts[n])
        elif n - 1 in entry_inserts and re.match(r'^[-\w$.]+:', line):
            out.extend(entry_inserts[n - 1])
    return "\n".join(out)


def _float_bits(lines: list[str], first: int, last: int) -> dict[str, tuple[str, str, list[int]]]:
    """The i64 values of a function body that carry the bits of a double or a float:
    name -> (float type, the float value, the lines computing it, the i64 last)."""
    out, floats = {}, {}
    for n in range(first, last):
        if m := _DOUBLE_BITS.match(lines[n]):
            out[m.group(1)] = ("double", m.group(2), [n])
        elif m := _FLOAT_BITS.match(lines[n]):
            floats[m.group(1)] = (m.group(2), n)
        elif (m := _WIDEN.match(lines[n])) and m.group(2) in floats:
            value, at = floats[m.group(2)]
            if _uses(lines, first, last, m.group(2))[0] == [at, n]:
                out[m.group(1)] = ("float", value, [at, n])
    return out


def _unpacked(lines: list[str], first: int, last: int, pname: str, ty: str) -> dict[int, list[str]] | None:
    """Edits of the outlined function turning every unpacking of the bits parameter `pname`
    into a load of `ty` through it (None when the parameter has another use)."""
    uses, records = _uses(lines, first, last, pname)
    edits: dict[int, list[str]] = {n: [] for n in records}
    p = re.escape(pname)
    for n in uses:
        if ty == "double":
            m = re.match(rf'^\s*({_NAME}) = bitcast i64 {p} to double{_DBG}\s*$', lines[n])
            if m is None:
                return None
            edits[n] = [f"  {m.group(1)} = load double, ptr {pname}, align 8"]
            continue
        m = re.match(rf'^\s*({_NAME}) = trunc i64 {p} to i32{_DBG}\s*$', lines[n])
        if m is None:
            return None
        edits[n] = []
        narrow, narrow_records = _uses(lines, first, last, m.group(1))
        for u in narrow_records:
            edits[u] = []
        for u in narrow:
            if u == n:
                continue
            f = re.match(rf'^\s*({_NAME}) = bitcast i32 {re.escape(m.group(1))} to float{_DBG}\s*$', lines[u])
            if f is None:
                return None
            edits[u] = [f"  {f.group(1)} = load float, ptr {pname}, align 4"]
    return edits if uses else None


def _inside_parens(text: str, start: int) -> str:
    """The text between the parenthesis opening at `start` - 1 and its partner."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{<":
            depth += 1
        elif text[i] in ")]}>":
            if depth == 0:
                return text[start:i]
            depth -= 1
    return text[start:]


def _uses(lines: list[str], first: int, last: int, name: str) -> tuple[list[int], list[int]]:
    """Lines in [first, last) naming `name`: instructions, and debug records apart."""
    pattern = re.compile(re.escape(name) + r'(?![-\w$.])')
    found = [n for n in range(first, last) if pattern.search(lines[n])]
    records = [n for n in found if lines[n].lstrip().startswith("#dbg_")]
    return [n for n in found if n not in records], records


def _call_args(line: str) -> list[str]:
    """The arguments of the fork call on a line."""
    return split_top(_inside_parens(line, line.index("@__kmpc_fork_call(") + len("@__kmpc_fork_call(")))


def _header_params(header: str) -> list[str]:
    m = re.search(r'@(?:"[^"]+"|[-\w$.]+)\(', header)
    return split_top(_inside_parens(header, m.end())) if m else []


# ------------------------------------------------------------------ the IR model view
def prepare(engine, fn) -> None:
    """Fork calls of `fn` become, for the sweeps, calls of their outlined functions with the
    two thread-id pointers first (null: the derived microtasks get the runtime's own)."""
    for inst in fn.of_opcode("call"):
        if fork_ident(inst) is not None:
            continue
        if (inst.callee or "").lstrip("@").strip('"') != FORK:
            continue
        if len(inst.operands) < 3:
            continue
        ident, outlined = inst.operands[0][1], inst.operands[2][1]
        if not outlined.startswith("@") or outlined.lstrip("@").strip('"') not in engine.module.functions:
            raise EnzymeBuildError(f"cannot differentiate a parallel region whose body is not a function of "
                                   f"the program (in @{fn.name})", location=engine.location(inst))
        if fn.name in parallel_functions(engine):
            raise EnzymeBuildError(
                f"nested parallelism (a `#pragma omp parallel` inside the parallel region of "
                f"{_region_name(fn.name)}) is not supported by enzyme-build's OpenMP differentiation",
                location=_where(engine, inst, fn),
                hint="make the inner region a plain loop (or `omp for` of the outer region)")
        inst.omp_fork = ident
        inst.callee = outlined
        inst.callee_name = outlined.lstrip("@").strip('"')
        inst.operands = [("ptr", "null"), ("ptr", "null")] + list(inst.operands[3:])
        inst._values = None


def refuse_unsupported(engine, fn, mode: str) -> None:
    """Constructs of a parallel region the engine does not differentiate: an error naming the
    construct and where it is (the debug location, else the region's `ident_t` string)."""
    for inst in fn.instructions():
        if inst.opcode != "call":
            continue
        name = (inst.callee or "").lstrip("@").strip('"')
        what = _REFUSED.get(name)
        if what is None:
            continue
        raise EnzymeBuildError(
            f"{what} in the parallel region of {_region_name(fn.name)} cannot be differentiated "
            f"({mode} mode; it calls {name})", location=_where(engine, inst, fn),
            hint=OPENMP_SUPPORTED + " (docs/openmp.md)")


def _region_name(name: str) -> str:
    """The user's name of the function a parallel region belongs to (C++ names demangled)."""
    base = name.split(".omp_outlined")[0]
    if not base:
        return f"@{name}"
    shown = demangled([base]).get(base, base)
    return shown if "(" in shown else f"{shown}()"


def _where(engine, inst, fn) -> str:
    loc = engine.location(inst)
    if loc:
        return loc
    # clang's ident_t strings carry ";file;function;line;col;;" when built with -g
    for _, v in inst.operands[:1]:
        g = engine.module.globals.get(v.lstrip("@"))
        if g:
            ref = re.search(r'ptr (@[-\w$.]+)\s*}', g)
            s = engine.module.globals.get(ref.group(1).lstrip("@"), "") if ref else ""
            m = re.search(r'c";([^;]*);([^;]*);(\d+);(\d+);', s)
            if m and m.group(1) != "unknown":
                return f"{m.group(1)}:{m.group(3)}"
    return f"@{fn.name}"


def fork_targets(engine) -> set[str]:
    """The outlined functions the module's fork calls run."""
    key = ("omp-fork-targets",)
    if key not in engine.memo:
        targets: set[str] = set()
        for line in engine.module.lines:
            if "@__kmpc_fork_call(" in line and not line.startswith("declare"):
                args = _call_args(line)
                if len(args) >= 3:
                    targets.add(args[2].split()[-1].lstrip("@").strip('"'))
        engine.memo[key] = targets
    return engine.memo[key]


def parallel_functions(engine) -> set[str]:
    """Functions that run inside a parallel region: the outlined functions of every fork
    call of the module and the functions they call."""
    key = ("omp-parallel-functions",)
    if key not in engine.memo:
        seen, todo = set(), sorted(fork_targets(engine))
        call = re.compile(r'\bcall\b[^@]*@("[^"]+"|[-a-zA-Z$._0-9]+)\(')
        while todo:
            name = todo.pop()
            if name in seen or name not in engine.module.functions:
                continue
            seen.add(name)
            for line in engine.module.functions.body_lines(name)[1:]:
                for callee in call.findall(line):
                    todo.append(callee.strip('"'))
        engine.memo[key] = seen
    return engine.memo[key]


# ------------------------------------------------------------------ emission
def _wrapper(engine, piece: str, rest: list[str]) -> tuple[str, int, list[str], str]:
    """The microtask running the split piece `piece` for the captures `rest`: its name, how
    many arrays the piece keeps address ranges of, its capture parameters and define line."""
    name = f"{piece}.omp_task"
    n = 1
    while name in engine.used_names:
        name = f"{piece}.omp_task.{n}"
        n += 1
    engine.used_names.add(name)
    params = [f"{_split_typed(a)[0]} %a{k}" for k, a in enumerate(rest)]
    head = (f"define internal void @{name}(ptr noalias %gtid, ptr noalias %btid, ptr %tapes"
            + "".join(", " + p for p in params) + ") {")
    return name, footprint_arrays(engine, piece), params, head


def _declare_runtime(engine) -> None:
    for decl in ("declare i32 @omp_get_thread_num()", "declare i32 @omp_get_num_threads()",
                 "declare i32 @omp_get_max_threads()", "declare i32 @__kmpc_global_thread_num(ptr)",
                 "declare void @__kmpc_push_num_threads(ptr, i32, i32)",
                 "declare void @__kmpc_fork_call(ptr, i32, ptr, ...)",
                 "declare ptr @aligned_alloc(i64, i64)", "declare void @free(ptr)"):
        name = re.search(r'@([-\w$.]+)\(', decl).group(1)
        engine.declare("@" + name, decl)


def _split_typed(arg: str) -> tuple[str, str]:
    ty, _, v = arg.rpartition(" ")
    return ty, v


def _refuse_by_value(engine, inst, fn, args: list[str]) -> None:
    for a in args:
        ty = _split_typed(a)[0].split()[0]
        if ty in ("double", "float", "half", "x86_fp80", "fp128"):
            raise EnzymeBuildError(
                f"an active {ty} captured by value by the parallel region of {_region_name(fn.name)} "
                f"is not supported", location=_where(engine, inst, fn),
                hint="share it (the default), or keep it in memory the region reads")


def augmented_fork(gen, inst, sig, aug: str, args: list[str], lines: list[str]) -> str:
    """Forward sweep of a fork call: allocate one tape object per thread (slot 0 keeps the
    team size), fork a wrapper that runs `aug` on its thread's tape. Returns the name of the
    tape array (a forward value the reverse sweep reads)."""
    engine = gen.engine
    _declare_runtime(engine)
    rest = args[2:]
    _refuse_by_value(engine, inst, gen.fn, rest)
    ident = fork_ident(inst)
    wrapper, arrays, params, head = _wrapper(engine, aug, rest)
    engine.texts.append("\n".join([
        head,
        "entry:",
        "  %tid = call i32 @omp_get_thread_num()",
        "  %first = icmp eq i32 %tid, 0",
        "  br i1 %first, label %count, label %run",
        "count:",
        "  %team = call i32 @omp_get_num_threads()",
        "  store i32 %team, ptr %tapes, align 8",
        "  br label %run",
        "run:",
        "  %cap.at0 = getelementptr inbounds i8, ptr %tapes, i64 4",
        "  %cap0 = load i32, ptr %cap.at0, align 4",
        "  %fits = icmp slt i32 %tid, %cap0",
        "  br i1 %fits, label %go, label %overflow",
        "overflow:",
        "  call void @__enzyme_build_omp_team_overflow()",
        "  unreachable",
        "go:",
        "  %k = add i32 %tid, 1",
        f"  %slot = getelementptr inbounds {SLOT}, ptr %tapes, i32 %k",
        *_record_lines(arrays, "%tid"),
        f"  call void @{aug}(ptr %gtid, ptr %btid" + "".join(", " + p for p in params) + ", ptr %slot)",
        *([f"  store ptr null, ptr {_RECORD}, align 8"] if arrays else []),
        "  ret void",
        "}"]))
    _support(engine, "__enzyme_build_omp_team_overflow", _OVERFLOW)
    engine.declare("@write", "declare i64 @write(i32, ptr, i64)")
    engine.declare("@abort", "declare void @abort()")
    # room for the team: the runtime's default, or the num_threads(...) pushed just before
    team = gen.fresh("omp_team")
    lines.append(f"  {team} = call i32 @omp_get_max_threads()")
    pushed = _pushed_threads(gen.fn, inst)
    if pushed is not None:
        bigger = gen.fresh("omp_team")
        lines.append(f"  {bigger} = call i32 @llvm.smax.i32(i32 {team}, i32 {pushed})")
        engine.declare("@llvm.smax.i32", "declare i32 @llvm.smax.i32(i32, i32)")
        team = bigger
    count, tapes = gen.fresh("omp_slots"), gen.fresh("omp_tapes")
    lines.append(f"  {count} = add i32 {team}, 1")
    wide, ranges = gen.fresh("omp_slots"), gen.fresh("omp_slots")
    lines.append(f"  {wide} = zext i32 {count} to i64")
    # tape objects (slot 0: team size, capacity), then each thread's address ranges, each
    # slot on a cache line of its own (pushes update the tape objects)
    lines.append(f"  {ranges} = mul i64 {wide}, {64 * (1 + (16 * arrays + 63) // 64)}")
    lines.append(f"  {tapes} = call ptr @aligned_alloc(i64 64, i64 {ranges})")
    lines.append(f"  call void @llvm.memset.p0.i64(ptr {tapes}, i8 0, i64 {ranges}, i1 false)")
    engine.declare("@llvm.memset.p0.i64")
    cap = gen.fresh("omp_slots")
    lines.append(f"  {cap} = getelementptr inbounds i8, ptr {tapes}, i64 4")
    lines.append(f"  store i32 {team}, ptr {cap}, align 4")
    lines.append(f"  call void (ptr, i32, ptr, ...) @__kmpc_fork_call(ptr {ident}, i32 {len(rest) + 1}, "
                 f"ptr @{wrapper}, ptr {tapes}" + "".join(", " + a for a in rest) + ")")
    return tapes


_OVERFLOW_TEXT = ("enzyme-build: a parallel region being differentiated got a larger team than "
                  "omp_get_max_threads() announced (set the team size with num_threads(...) "
                  "right before the region, or OMP_NUM_THREADS)\n")
_OVERFLOW = f"""@__enzyme_build_omp_overflow_text = private unnamed_addr constant [{len(_OVERFLOW_TEXT)} x i8] c"{_OVERFLOW_TEXT[:-1]}\\0A"
define internal void @__enzyme_build_omp_team_overflow() cold noinline {{
  %w = call i64 @write(i32 2, ptr @__enzyme_build_omp_overflow_text, i64 {len(_OVERFLOW_TEXT)})
  call void @abort()
  unreachable
}}"""


def _ranges_lines(arrays: int) -> list[str]:
    """%ranges: where the threads' address ranges start in the tape array."""
    return ["  %cap.at = getelementptr inbounds i8, ptr %tapes, i64 4",
            "  %cap = load i32, ptr %cap.at, align 4",
            "  %cap1 = add i32 %cap, 1",
            f"  %ranges = getelementptr inbounds {SLOT}, ptr %tapes, i32 %cap1"]


def _record_lines(arrays: int, tid: str) -> list[str]:
    if not arrays:
        return []
    return _ranges_lines(arrays) + [
        f"  %rec.i = mul i32 {tid}, {arrays}",
        "  %rec = getelementptr inbounds { i64, i64 }, ptr %ranges, i32 %rec.i",
        f"  store ptr %rec, ptr {_RECORD}, align 8"]


def _private_lines(arrays: int) -> list[str]:
    if not arrays:
        return []
    return _ranges_lines(arrays) + [
        f"  call void @__enzyme_build_omp_private_ranges(ptr %ranges, i32 {arrays}, i32 %t, i32 %forward, ptr %mine)",
        f"  store ptr %mine, ptr {_RECORD}, align 8"]


def _pushed_threads(fn, inst) -> str | None:
    """The `num_threads(k)` pushed for this fork: a `__kmpc_push_num_threads` before it in its
    block or in the chain of single predecessors above (clang pushes before an `if(…)`
    clause's branch)."""
    preds: dict[str, list[str]] = {}
    for b in fn.blocks:
        for t in b.terminator.targets:
            preds.setdefault(t, []).append(b.label)
    block, seen = fn.block(inst.block), set()
    before = block.instructions[:block.instructions.index(inst)]
    while True:
        for prev in reversed(before):
            if prev.opcode == "call" and (prev.callee or "") == "@__kmpc_push_num_threads":
                return prev.operands[2][1]
            if prev.opcode == "call" and (fork_ident(prev) is not None or (prev.callee or "") == f"@{FORK}"):
                return None
        seen.add(block.label)
        up = preds.get(block.label, [])
        if len(up) != 1 or up[0] in seen:
            return None
        block = fn.block(up[0])
        before = block.instructions


def reverse_fork(gen, inst, rev: str, args: list[str], tapes: str, lines: list[str]) -> None:
    """Reverse sweep of a fork call: a team of the forward team's size runs `rev` on every
    forward thread's tape (thread t takes tapes t, t + team, ...), then the tapes go."""
    engine = gen.engine
    _declare_runtime(engine)
    rest = args[2:]
    ident = fork_ident(inst)
    wrapper, arrays, params, head = _wrapper(engine, rev, rest)
    engine.support.add("__enzyme_build_tape_free_data")
    engine.texts.append("\n".join([
        head,
        "entry:",
        "  %tid = call i32 @omp_get_thread_num()",
        "  %team = call i32 @omp_get_num_threads()",
        "  %forward = load i32, ptr %tapes, align 8",
        *([f"  %mine = alloca [{arrays} x {{ i64, i64 }}], align 8"] if arrays else []),
        "  br label %head",
        "head:",
        "  %t = phi i32 [ %tid, %entry ], [ %next, %body ]",
        "  %more = icmp slt i32 %t, %forward",
        "  br i1 %more, label %body, label %done",
        "body:",
        "  %k = add i32 %t, 1",
        f"  %slot = getelementptr inbounds {SLOT}, ptr %tapes, i32 %k",
        *_private_lines(arrays),
        f"  call void @{rev}(ptr %gtid, ptr %btid" + "".join(", " + p for p in params) + ", ptr %slot)",
        *([f"  store ptr null, ptr {_RECORD}, align 8"] if arrays else []),
        "  call void @__enzyme_build_tape_free_data(ptr %slot)",
        "  %next = add i32 %t, %team",
        "  br label %head",
        "done:",
        "  ret void",
        "}"]))
    team, gtid = gen.fresh("omp_team"), gen.fresh("omp_gtid")
    lines.append(f"  {team} = load i32, ptr {tapes}, align 8")
    lines.append(f"  {gtid} = call i32 @__kmpc_global_thread_num(ptr {ident})")
    lines.append(f"  call void @__kmpc_push_num_threads(ptr {ident}, i32 {gtid}, i32 {team})")
    lines.append(f"  call void (ptr, i32, ptr, ...) @__kmpc_fork_call(ptr {ident}, i32 {len(rest) + 1}, "
                 f"ptr @{wrapper}, ptr {tapes}" + "".join(", " + a for a in rest) + ")")
    lines.append(f"  call void @free(ptr {tapes})")


def forward_fork(engine, inst, fn, name: str, args: list[tuple[str, str]], ir) -> None:
    """Forward mode: the tangent microtask has the outlined function's shape (thread-id
    pointers first), so the fork just runs it instead (`args`: (type, value) of the
    derived function's; `ir` the generator's IRBuilder)."""
    _declare_runtime(engine)
    rest = args[2:]
    _refuse_by_value(engine, inst, fn, [f"{t} {v}" for t, v in rest])
    ir.call("void", "@__kmpc_fork_call", [("ptr", fork_ident(inst)), ("i32", str(len(rest))), ("ptr", f"@{name}"),
                                           *rest], call_type="void (ptr, i32, ptr, ...)")


# ------------------------------------------------------------------ race-free adjoints
def accumulate_shared(gen, shadow_ptr: str, ty: str, contrib: str, lines: list[str], primal: str | None,
                      label: str | None = None) -> bool:
    """The adjoint `contrib` of a load of `primal` in a function every thread of a team runs.
    Memory of the thread's own (`PrivateAccesses.private`) takes the ordinary add (returns
    False). A shared scalar the region only reads (a coefficient captured by reference) is
    summed per thread in a slot and added once, atomically, when the thread's reverse ends
    (`flush_partials`). An element of an array the region's own function reads and writes
    only directly gets a plain add when it lies in the thread's private address range
    (`Footprint`), an atomic one otherwise. Anything else is added atomically."""
    if primal is not None and gen.private_memory.private(primal):
        return False
    if primal is not None and shadow_ptr in gen.params and is_float_type(ty) \
            and gen.private_memory.read_only_parameter(primal):
        key = make_name("%", primal, "omp.partial")
        gen.types[key] = ty
        slot = gen.diffe_slot(key)
        ir = gen.ir(lines)
        old = ir.load(ty, slot, align=8, hint="dp")
        new = ir.binop("fadd", ty, old, contrib, hint="dp")
        ir.store(ty, new, slot, align=8)
        gen.omp_partials = getattr(gen, "omp_partials", {})
        gen.omp_partials[key] = (shadow_ptr, ty)
        return True
    footprint = getattr(gen, "footprint", None)
    if primal is not None and label is not None and footprint is not None and footprint.tracked(primal) \
            and ty in ("double", "float"):
        # plain add when no other thread of the team touched this element (`Footprint`)
        at, inside = gen.fresh("fpa"), gen.fresh("fpin")
        lo, hi = gen.fresh("fpin"), gen.fresh("fpin")
        address = gen.cache.fetch(primal, label)
        ir = gen.ir(lines)
        ir.cast("ptrtoint", "ptr", address, "i64", name=at)
        ir.cmp("icmp", "uge", "i64", at, footprint.low, name=lo)
        ir.cmp("icmp", "ule", "i64", at, footprint.high, name=hi)
        ir.binop("and", "i1", lo, hi, name=inside)
        ir.call("void", f"@__enzyme_build_omp_add_{ty}", [("ptr", shadow_ptr), (ty, contrib), ("i1", inside)])
        _support(gen.engine, f"__enzyme_build_omp_add_{ty}", _ADD.format(ty=ty))
        return True
    gen.ir(lines).atomicrmw("fadd", shadow_ptr, ty, contrib, "monotonic", align=8, hint="dm")
    return True


def flush_partials(gen) -> list[str]:
    """The end of a thread's reverse sweep: its partial sums go into the shared shadows."""
    out = []
    for key, (shadow_ptr, ty) in getattr(gen, "omp_partials", {}).items():
        v = gen.fresh("dp")
        gen.ir(out).load(ty, gen.diffe_slot(key), align=8, name=v)
        gen.ir(out).atomicrmw("fadd", shadow_ptr, ty, v, "monotonic", align=8, hint="dp")
    return out


class PrivateAccesses:
    """Which memory adjoints of a function run by every thread of a team can be added to
    without atomics: the function's own allocas (each thread has its own frame), and an
    array whose every access in the function is `base[i]` with the same `i`, the counter
    of a worksharing loop (each iteration runs on one thread only)."""

    def __init__(self, fn, pointer_roots):
        self.fn, self.roots = fn, pointer_roots
        self._private: dict[str, bool] = {}
        self._accesses: dict[str, list[str]] | None = None
        self._lb_slots: set[str] | None = None

    def private(self, ptr: str) -> bool:
        if ptr not in self._private:
            self._private[ptr] = self._decide(ptr)
        return self._private[ptr]

    def _decide(self, ptr: str) -> bool:
        roots = self.roots(self.fn, ptr)
        if not roots:
            return False
        if all((d := self.fn.defs.get(r)) is not None and d.opcode == "alloca" for r in roots):
            return True
        if any(not is_local(r) for r in roots):   # globals: other functions may reach them by name
            return False
        index = self._index(ptr)
        if index is None or not self._is_loop_counter(index):
            return False
        if self._accesses is None:
            self._accesses = self._collect()
        for r in roots:
            if any(i != index for i in self._accesses.get(r, [None])):
                return False
        return True

    def read_only_parameter(self, ptr: str) -> bool:
        """A parameter the function reads through directly and never writes through (calls
        may read it: their own adjoints are added atomically)."""
        if ptr not in {p.name for p in self.fn.params}:
            return False
        for inst in self.fn.instructions():
            if inst.opcode == "store" and ptr in self.roots(self.fn, inst.operands[1][1]):
                return False
            if inst.opcode in ("atomicrmw", "cmpxchg") and ptr in inst.values():
                return False
            if inst.opcode == "call" and ptr in inst.values() and not (inst.callee or "").startswith("@llvm.lifetime"):
                return False
        return True

    def _index(self, ptr: str) -> str | None:
        d = self.fn.defs.get(ptr) if is_local(ptr) else None
        if d is None or d.opcode != "getelementptr" or len(d.operands) != 2:
            return None
        idx = d.operands[1][1]
        base = d.operands[0][1]
        bd = self.fn.defs.get(base) if is_local(base) else None
        if bd is not None and bd.opcode == "getelementptr":
            return None
        # look through sext/zext of the counter
        di = self.fn.defs.get(idx) if is_local(idx) else None
        while di is not None and di.opcode in ("sext", "zext"):
            idx = di.operands[0][1]
            di = self.fn.defs.get(idx) if is_local(idx) else None
        return idx

    def _is_loop_counter(self, v: str) -> bool:
        d = self.fn.defs.get(v)
        if d is None or d.opcode != "phi":
            return False
        steps = [x for x, _ in d.incoming if is_local(x) and self.fn.defs.get(x) is not None
                 and self.fn.defs[x].opcode == "add"
                 and any(o[1] == v for o in self.fn.defs[x].operands)
                 and any(o[1] == "1" for o in self.fn.defs[x].operands)]
        starts = [x for x, _ in d.incoming if x not in steps]
        return bool(steps) and bool(starts) and all(self._lower_bound(x) for x in starts)

    def _lower_bound(self, v: str) -> bool:
        """Whether `v` is the thread's lower bound as the worksharing runtime call wrote it."""
        d = self.fn.defs.get(v) if is_local(v) else None
        while d is not None and d.opcode in ("sext", "zext"):
            v = d.operands[0][1]
            d = self.fn.defs.get(v) if is_local(v) else None
        if d is None or d.opcode != "load":
            return False
        if self._lb_slots is None:
            self._lb_slots = set()
            for inst in self.fn.instructions():
                name = (inst.callee or "").lstrip("@")
                if inst.opcode == "call" and name.startswith("__kmpc_for_static_init_") and len(inst.operands) > 4:
                    self._lb_slots.add(inst.operands[4][1])
                elif inst.opcode == "call" and name.startswith("__kmpc_dispatch_next_") and len(inst.operands) > 3:
                    self._lb_slots.add(inst.operands[3][1])
        return d.operands[0][1] in self._lb_slots

    def _collect(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for inst in self.fn.instructions():
            ptrs = []
            if inst.opcode == "load":
                ptrs = [inst.operands[0][1]]
            elif inst.opcode == "store":
                ptrs = [inst.operands[1][1]]
            elif inst.opcode == "call" or inst.opcode == "atomicrmw" or inst.opcode == "cmpxchg":
                ptrs = [v for t, v in inst.operands if t == "ptr"] if inst.operands else \
                    re.findall(r'ptr (%[-\w$.]+)', inst.text)
            for p in ptrs:
                if not is_local(p):
                    continue
                idx = self._index(p)
                for r in self.roots(self.fn, p):
                    out.setdefault(r, []).append(idx)
        return out


# ------------------------------------------------------------------ footprints
_RECORD = "@__enzyme_build_omp_record"
_ADD = """define internal void @__enzyme_build_omp_add_{ty}(ptr %p, {ty} %v, i1 %mine) alwaysinline {{
entry:
  br i1 %mine, label %plain, label %atomic
plain:
  %old = load {ty}, ptr %p
  %new = fadd {ty} %old, %v
  store {ty} %new, ptr %p
  ret void
atomic:
  %x = atomicrmw fadd ptr %p, {ty} %v monotonic, align 8
  ret void
}}"""
# the private range of thread t for array k: its own [lo, hi] minus every other thread's
# range of every array (widened by 8 bytes: accesses of other sizes overlap at their starts);
# an empty range is (lo > hi)
_PRIVATE_RANGES = """define internal void @__enzyme_build_omp_private_ranges(ptr %ranges, i32 %arrays, i32 %t, i32 %team, ptr %out) {
entry:
  br label %arr
arr:
  %k = phi i32 [ 0, %entry ], [ %k.next, %arr.done ]
  %more.k = icmp slt i32 %k, %arrays
  br i1 %more.k, label %arr.body, label %done
arr.body:
  %own.i = mul i32 %t, %arrays
  %own.j = add i32 %own.i, %k
  %own = getelementptr inbounds { i64, i64 }, ptr %ranges, i32 %own.j
  %own.v = load { i64, i64 }, ptr %own, align 8
  %lo0 = extractvalue { i64, i64 } %own.v, 0
  %hi0 = extractvalue { i64, i64 } %own.v, 1
  br label %other
other:
  %u = phi i32 [ 0, %arr.body ], [ %u.next, %other.next ]
  %lo = phi i64 [ %lo0, %arr.body ], [ %lo.u, %other.next ]
  %hi = phi i64 [ %hi0, %arr.body ], [ %hi.u, %other.next ]
  %more.u = icmp slt i32 %u, %team
  br i1 %more.u, label %other.body, label %arr.done
other.body:
  %self = icmp eq i32 %u, %t
  br i1 %self, label %other.next0, label %other.arrays
other.arrays:
  %j = phi i32 [ 0, %other.body ], [ %j.next, %other.arrays ]
  %plo = phi i64 [ %lo, %other.body ], [ %nlo, %other.arrays ]
  %phi = phi i64 [ %hi, %other.body ], [ %nhi, %other.arrays ]
  %r.i = mul i32 %u, %arrays
  %r.j = add i32 %r.i, %j
  %r = getelementptr inbounds { i64, i64 }, ptr %ranges, i32 %r.j
  %r.v = load { i64, i64 }, ptr %r, align 8
  %rlo = extractvalue { i64, i64 } %r.v, 0
  %rhi = extractvalue { i64, i64 } %r.v, 1
  %ulo = call i64 @llvm.usub.sat.i64(i64 %rlo, i64 8)
  %uhi = call i64 @llvm.uadd.sat.i64(i64 %rhi, i64 8)
  %a = icmp ule i64 %ulo, %phi
  %b = icmp uge i64 %uhi, %plo
  %used = icmp ule i64 %rlo, %rhi
  %ab = and i1 %a, %b
  %overlap = and i1 %ab, %used
  %below = icmp ule i64 %ulo, %plo
  %above = icmp uge i64 %uhi, %phi
  %cut.lo = and i1 %overlap, %below
  %nbelow = xor i1 %below, true
  %cut.hi0 = and i1 %overlap, %nbelow
  %cut.hi = and i1 %cut.hi0, %above
  %nabove = xor i1 %above, true
  %inside0 = and i1 %cut.hi0, %nabove
  %lo.cut = add i64 %uhi, 1
  %lo.1 = select i1 %cut.lo, i64 %lo.cut, i64 %plo
  %nlo = select i1 %inside0, i64 -1, i64 %lo.1
  %hi.cut = sub i64 %ulo, 1
  %nhi = select i1 %cut.hi, i64 %hi.cut, i64 %phi
  %j.next = add i32 %j, 1
  %more.j = icmp slt i32 %j.next, %arrays
  br i1 %more.j, label %other.arrays, label %other.next
other.next0:
  br label %other.next
other.next:
  %lo.u = phi i64 [ %lo, %other.next0 ], [ %nlo, %other.arrays ]
  %hi.u = phi i64 [ %hi, %other.next0 ], [ %nhi, %other.arrays ]
  %u.next = add i32 %u, 1
  br label %other
arr.done:
  %out.k = getelementptr inbounds { i64, i64 }, ptr %out, i32 %k
  store i64 %lo, ptr %out.k, align 8
  %out.hi = getelementptr inbounds i8, ptr %out.k, i64 8
  store i64 %hi, ptr %out.hi, align 8
  %k.next = add i32 %k, 1
  br label %arr
done:
  ret void
}"""


def _support(engine, name: str, text: str) -> None:
    """A helper function emitted once per module."""
    key = ("omp-support", name)
    if key not in engine.memo:
        engine.memo[key] = True
        engine.texts.append(text)


class Footprint:
    """Which elements of the shared arrays a thread may add adjoints to without atomics.

    In the augmented piece of an outlined function, every load and store records the lowest
    and highest address it touched per array (the array is the access's one pointer root);
    the piece leaves the ranges in its thread's record (`_RECORD`, set by the fork wrapper).
    Before the reverse piece runs, the wrapper turns the ranges of the whole team into each
    thread's private range per array: its own minus every other thread's range of any array.
    The reverse piece adds plainly to an element inside it, atomically outside (the static
    schedule gives each thread one block of rows: only the rows at its edges are shared).
    Only functions whose every access to shared memory is such a direct load or store (no
    calls, memcpy or atomics on shared pointers, one root per pointer) take part."""

    def __init__(self, gen):
        self.gen = gen
        self.roots: list[str] = []
        self.low, self.high = "%omp.private.lo", "%omp.private.hi"
        self.enabled = self._eligible()
        self._used = False

    def _eligible(self) -> bool:
        fn, roots_of = self.gen.fn, self._roots
        for inst in fn.instructions():
            if inst.opcode in ("load", "store"):
                # globals (named directly, in a constant expression or as a pointer's root) may be
                # reached by callees or under another name: accesses the ranges would not see
                p = inst.operands[0][1] if inst.opcode == "load" else inst.operands[1][1]
                if not is_local(p) or len(roots_of(p)) != 1 or not all(is_local(r) for r in roots_of(p)):
                    return False
            elif inst.opcode == "call":
                name = (inst.callee or "").lstrip("@")
                for t, v in inst.operands:
                    if t == "ptr" and is_local(v) and not name.startswith("llvm.lifetime") \
                            and not all(self._is_alloca(r) for r in roots_of(v)):
                        return False
            elif inst.opcode in ("atomicrmw", "cmpxchg"):
                if not re.search(r'ptr (%[-\w$.]+)', inst.text):
                    return False
            elif inst.opcode not in _NO_MEMORY and inst.opcode != "alloca":
                return False
        return True

    def _roots(self, p: str) -> set[str]:
        from ..analysis.activity import pointer_roots
        return pointer_roots(self.gen.fn, p)

    def _is_alloca(self, r: str) -> bool:
        d = self.gen.fn.defs.get(r)
        return d is not None and d.opcode == "alloca"

    def _index(self, p: str) -> int | None:
        if not self.enabled or not is_local(p):
            return None
        roots = self._roots(p)
        if len(roots) != 1:
            return None
        r = next(iter(roots))
        if self._is_alloca(r):
            return None
        if r not in self.roots:
            self.roots.append(r)
        return self.roots.index(r)

    def tracked(self, p: str) -> bool:
        k = self._index(p)
        if k is None:
            return False
        self._used = True
        self.low, self.high = f"%omp.private.lo{k}", f"%omp.private.hi{k}"
        return True

    # the augmented piece
    def record(self, inst: Instruction, lines: list[str]) -> None:
        if not self.enabled:
            return
        if inst.opcode == "load":
            p = inst.operands[0][1]
        elif inst.opcode == "store":
            p = inst.operands[1][1]
        elif inst.opcode == "atomicrmw":
            m = re.search(r'ptr (%[-\w$.]+)', inst.text)
            p = m.group(1) if m else ""
        else:
            return
        k = self._index(p)
        if k is None:
            return
        g = self.gen
        a, lo, hi, nlo, nhi = g.fresh("fp"), g.fresh("fp"), g.fresh("fp"), g.fresh("fp"), g.fresh("fp")
        ir = g.ir(lines)
        ir.cast("ptrtoint", "ptr", p, "i64", name=a)
        ir.load("i64", f"%omp.range.lo{k}", align=8, name=lo)
        ir.call("i64", "@llvm.umin.i64", [("i64", lo), ("i64", a)], name=nlo)
        ir.store("i64", nlo, f"%omp.range.lo{k}", align=8)
        ir.load("i64", f"%omp.range.hi{k}", align=8, name=hi)
        ir.call("i64", "@llvm.umax.i64", [("i64", hi), ("i64", a)], name=nhi)
        ir.store("i64", nhi, f"%omp.range.hi{k}", align=8)
        g.engine.declare("@llvm.umin.i64")
        g.engine.declare("@llvm.umax.i64", "declare i64 @llvm.umax.i64(i64, i64)")

    def entry_lines(self) -> list[str]:
        out: list[str] = []
        ir = self.gen.ir(out)
        if self.roots:
            ir.alloca(f"[{len(self.roots)} x {{ i64, i64 }}]", align=8, name="%omp.range.sink")
        for k in range(len(self.roots)):
            ir.alloca("i64", align=8, name=f"%omp.range.lo{k}")
            ir.store("i64", "-1", f"%omp.range.lo{k}", align=8)
            ir.alloca("i64", align=8, name=f"%omp.range.hi{k}")
            ir.store("i64", "0", f"%omp.range.hi{k}", align=8)
        return out

    def _record(self, out: list[str], fallback: str) -> str:
        """The thread's record, or `fallback` when no fork wrapper set one (the region's
        function called directly: `parallel if(0)` runs it on the encountering thread)."""
        rec, has, at = self.gen.fresh("fprec"), self.gen.fresh("fprec"), self.gen.fresh("fprec")
        ir = self.gen.ir(out)
        ir.load("ptr", _RECORD, align=8, name=rec)
        ir.cmp("icmp", "ne", "ptr", rec, "null", name=has)
        return ir.select(has, "ptr", rec, fallback, name=at)

    def before_returns(self, body: list[str]) -> list[str]:
        if not self.roots:
            return body
        out = []
        for line in body:
            if line.startswith("  ret "):
                rec = self._record(out, "%omp.range.sink")
                for k in range(len(self.roots)):
                    lo, hi, r0, r1, at = (self.gen.fresh("fp") for _ in range(5))
                    ir = self.gen.ir(out)
                    ir.load("i64", f"%omp.range.lo{k}", align=8, name=lo)
                    ir.load("i64", f"%omp.range.hi{k}", align=8, name=hi)
                    ir.insertvalue("{ i64, i64 }", "poison", "i64", lo, [0], name=r0)
                    ir.insertvalue("{ i64, i64 }", r0, "i64", hi, [1], name=r1)
                    ir.gep("{ i64, i64 }", rec, [("i32", str(k))], name=at)
                    ir.store("{ i64, i64 }", r1, at, align=8)
            out.append(line)
        return out

    # the reverse piece
    def reverse_entry_lines(self) -> list[str]:
        if not self._used:
            return []
        n = len(self.roots)
        # without a record every range is empty (lo > hi): every adjoint is added atomically
        out: list[str] = []
        pair = "{ i64, i64 }"
        self.gen.ir(out).alloca(f"[{n} x {pair}]", align=8, name="%omp.private.none")
        for k in range(n):
            at = self._at("%omp.private.none", k, out)
            self.gen.ir(out).store(pair, "{ i64 1, i64 0 }", at, align=8)
        rec = self._record(out, "%omp.private.none")
        for k in range(n):
            v = self.gen.fresh("fp")
            self.gen.ir(out).load(pair, self._at(rec, k, out), align=8, name=v)
            self.gen.ir(out).extractvalue(pair, v, [0], "i64", name=f"%omp.private.lo{k}")
            self.gen.ir(out).extractvalue(pair, v, [1], "i64", name=f"%omp.private.hi{k}")
        return out

    def _at(self, base: str, k: int, out: list[str]) -> str:
        return self.gen.ir(out).gep("{ i64, i64 }", base, [("i32", str(k))], hint="fp")


_NO_MEMORY = {"getelementptr", "phi", "select", "br", "switch", "ret", "icmp", "fcmp", "fneg", "freeze",
              "extractvalue", "insertvalue", "unreachable", "ptrtoint", "inttoptr", "bitcast"} \
    | {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor",
       "fadd", "fsub", "fmul", "fdiv", "frem", "trunc", "zext", "sext", "fptrunc", "fpext", "fptoui",
       "fptosi", "uitofp", "sitofp"}


def note_footprint(engine, names: dict[str, str], arrays: int) -> None:
    """The split pieces `names` of an outlined function record and read ranges of `arrays`
    arrays (the fork wrappers make room for them)."""
    for name in names.values():
        engine.memo[("omp-footprint", name)] = arrays
    if arrays:
        _support(engine, _RECORD, f"{_RECORD} = internal thread_local global ptr null, align 8")
        _support(engine, "__enzyme_build_omp_private_ranges", _PRIVATE_RANGES)
        engine.declare("@llvm.usub.sat.i64", "declare i64 @llvm.usub.sat.i64(i64, i64)")
        engine.declare("@llvm.uadd.sat.i64", "declare i64 @llvm.uadd.sat.i64(i64, i64)")


def footprint_arrays(engine, name: str) -> int:
    """How many arrays the piece `name` records ranges of (0: none)."""
    return engine.memo.get(("omp-footprint", name), 0)
