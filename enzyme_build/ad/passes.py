"""Text passes of the AD stage over the whole module, each with one job: before the engine
runs (thread-local addresses as globals, callbacks specialized into copies), between
nested-AD passes (derived names freed, shadow blocks and tapes made plain for the next
pass), and after it (marker globals defined).
"""
from __future__ import annotations

import re

from ..ir.model import make_name, parse_module, strip_name
from .abi import marker_kind
from .tape import DECLARATIONS, TAPE_HELPERS, cells_support, leveled_name, leveled_support


_HELPER_REF = re.compile("@(" + "|".join(re.escape(n) for n in TAPE_HELPERS) + r")(?![-\w$.])")
_LEVEL_SUFFIX = re.compile(r'@__enzyme_build_(?:tape|side)_[a-z_]+\.n(\d+)(?![-\w$.])')
_FRAME_CALL = (r'^(\s*)(%[-a-zA-Z$._0-9]+ = call i64 (@__enzyme_build_tape_frame\.n{level})'
               r'\(ptr (%[-a-zA-Z$._0-9]+), i64 ([^)]+)\))')


def level_tape_helpers(text: str) -> str:
    """Between nested-AD passes: the tape helpers the pass just emitted (and every call of
    them) become level-specific plain variants (ad/tape.py: leveled_support), ordinary code
    for the next pass, which emits fresh helpers of its own. The next level's number is one
    above the highest already in the module."""
    defined = set(re.findall(r'^define [^@\n]*@(__enzyme_build_(?:tape|side)_[a-z_]+)\(', text, re.M))
    used = set(_HELPER_REF.findall(text))
    if not used:
        return text
    level = 1 + max((int(n) for n in _LEVEL_SUFFIX.findall(text)), default=0)
    lines, out, skipping = text.split("\n"), [], False
    for line in lines:   # the base definitions go; their level variants are appended below
        if not skipping and line.startswith("define "):
            m = re.match(r'define [^@]*@(__enzyme_build_(?:tape|side)_[a-z_]+)\(', line)
            skipping = bool(m and m.group(1) in TAPE_HELPERS)
        if skipping:
            skipping = not line.startswith("}")
            continue
        out.append(line)
    text = _HELPER_REF.sub(lambda m: "@" + leveled_name(m.group(1), level), "\n".join(out))
    needed = used | (defined & set(TAPE_HELPERS))
    # a frame grows the tape inside a call the outer pass sees as integer-only: reserve the
    # room first, through a call it differentiates, so the tangent tapes grow with it
    frame_call = re.compile(_FRAME_CALL.format(level=level), re.M)   # this level's frames only
    if frame_call.search(text):
        reserve = "@" + leveled_name("__enzyme_build_tape_reserve", level)
        text = frame_call.sub(lambda m: f"{m.group(1)}call void {reserve}(ptr {m.group(4)}, i64 {m.group(5)})\n"
                                         f"{m.group(1)}{m.group(2)}", text)
        needed.add("__enzyme_build_tape_reserve")
    texts, decls = leveled_support(needed, level)
    cells, cell_decls = cells_support()
    texts += [t for sym, t in cells.items() if not re.search(r'^(?:define [^@\n]*)?@' + re.escape(sym) + r'\b', text, re.M)]
    declarations = {d: DECLARATIONS[d] for d in decls} | cell_decls
    for d, line in sorted(declarations.items()):
        if not re.search(r'^(?:declare|define)[^@\n]*' + re.escape(d) + r'\(', text, re.M):
            text += line + "\n"
    return text + "\n" + "\n\n".join(texts) + "\n"


def _plain_shadow_allocations(text: str) -> str:
    """A reverse pass's shadow blocks (`__enzyme_build_shadow_alloc`, released by
    `__enzyme_build_shadow_free`) are calloc'd blocks released by free to the next pass:
    adjoints accumulated there carry tangents when forward mode runs over a gradient, so the
    allocation must be one the engine knows (it gets a shadow of its own)."""
    if "@__enzyme_build_shadow_alloc(i64 " not in text and "@__enzyme_build_shadow_free(ptr " not in text:
        return text
    text = re.sub(r'call ptr @__enzyme_build_shadow_alloc\(i64 ', 'call ptr @calloc(i64 1, i64 ', text)
    text = re.sub(r'call void @__enzyme_build_shadow_free\(ptr ', 'call void @free(ptr ', text)
    for callee in ("@calloc", "@free"):
        if f"{callee}(" in text and not re.search(r'^(?:declare|define)[^@\n]*' + callee + r'\(', text, re.M):
            text += DECLARATIONS[callee] + "\n"
    return text


_LOCAL_WITH_DOLLAR = re.compile(r'(?<![-a-zA-Z$._0-9"])(%|^)([-a-zA-Z._0-9]*\$[-a-zA-Z$._0-9]*)(?=[:\s,)\]}]|$)', re.M)
# the same names as LLVM prints them (quoted, since they hold `$`): `%"x$t"`, `"rev$bb":`
_QUOTED_WITH_DOLLAR = re.compile(r'(?<![-a-zA-Z$._0-9@])(%|^)"([^"\n]*\$[^"\n]*)"')


def _free_derived_names(text: str) -> str:
    """Double the `$` in local names an AD pass made (`%x$t` -> `%x$$t`), so the next pass,
    which names tangents and shadows `<name>$t` / `<name>$sh`, cannot collide with them."""
    # only code lines: constants (`c"%1$s"` formats) and metadata stay as they are
    return "\n".join(line if line.startswith(("@", "!", "attributes ", "declare ", ";"))
                     else _QUOTED_WITH_DOLLAR.sub(lambda m: m.group(1) + '"' + m.group(2).replace("$", "$$") + '"',
                                                  _LOCAL_WITH_DOLLAR.sub(lambda m: m.group(1) + m.group(2).replace("$", "$$"), line))
                     for line in text.split("\n"))


_TLS_ADDRESS = re.compile(r'^\s*(%[-a-zA-Z$._0-9]+) = (?:tail |notail |musttail )?call (?:align \d+ |[a-z]+(?:\(\d+\))? )*'
                          r'ptr @llvm\.threadlocal\.address\.p0\(ptr (?:align \d+ |[a-z]+(?:\(\d+\))? )*'
                          r'(@[-a-zA-Z$._0-9]+)\)')
_LOCAL_NAME = re.compile(r'%[-a-zA-Z$._0-9]+(?![-a-zA-Z$._0-9])')


def lower_threadlocal_addresses(text: str) -> str:
    """`%p = call ptr @llvm.threadlocal.address.p0(ptr @g)` -> uses of @g itself (the calling
    thread's instance, as the IR meant before the intrinsic): thread-local accumulators are
    then globals like any other, and their shadows are thread-local too (see shadow_linkage)."""
    if "@llvm.threadlocal.address" not in text:
        return text
    out: list[str] = []
    body: list[str] = []
    mapping: dict[str, str] = {}

    def flush() -> None:
        if mapping:
            out.extend(_LOCAL_NAME.sub(lambda m: mapping.get(m.group(0), m.group(0)), line) for line in body)
        else:
            out.extend(body)
        body.clear()
        mapping.clear()

    for line in text.split("\n"):
        if line.startswith("define "):
            flush()
        m = _TLS_ADDRESS.match(line)
        if m:
            mapping[m.group(1)] = m.group(2)
            continue
        body.append(line)
        if line.startswith("}"):
            flush()
    flush()
    return "\n".join(out)


_DBG_ATTACHMENT = re.compile(r',? !dbg !\d+')


def specialize_callback_arguments(text: str, keep: set[str] = frozenset()) -> str:
    """`__enzyme_*(simpson, enzyme_const, integrand, …)` where simpson calls its parameter:
    differentiate a copy of simpson with that parameter replaced by the function passed,
    so the calls through it are direct (quadrature, root finders and ODE solvers taking
    their integrand as a callback). The copy keeps the signature; the parameter is unused.
    Functions in `keep` (with custom rules, or inactive) are left as they are."""
    return _specialize_callback_arguments(text, keep)[0]


def _specialize_callback_arguments(text: str, keep: set[str]):
    """specialize_callback_arguments, plus the parsed module when the text is unchanged
    (None when there was nothing to parse or the text changed)."""
    if "__enzyme_" not in text:
        return text, None
    module = parse_module(text)
    extra: list[str] = []
    lines = list(module.lines)
    clones: dict[tuple, str] = {}
    for name in module.functions:
        if not module.functions.body_mentions(name, "__enzyme_"):
            continue
        for inst in module.functions[name].instructions():
            if inst.opcode != "call" or not marker_kind(inst.callee) or not inst.operands:
                continue
            m = re.search(r'@("[^"]*"|[-a-zA-Z$._0-9]+)', inst.operands[0][1])
            primal = module.functions.get(strip_name("@" + m.group(1))) if m else None
            if primal is None or not re.fullmatch(r'[-a-zA-Z$._0-9]+', primal.name) or primal.name in keep:
                continue
            indirect = [i.text.split("=", 1)[-1] for i in primal.of_opcode("call") if i.callee is None]
            called = [p.name for p in primal.params
                      if any(re.search(re.escape(p.name) + r'\(', t) for t in indirect)] if indirect else []
            passed = [v for t, v in inst.operands[1:] if t == "ptr" and v.startswith("@")
                      and strip_name(v) in module.functions]
            if not called or len(passed) != len(called):
                continue
            key = (primal.name, tuple(passed))
            if key not in clones:
                clone = make_name("@", primal.name, "cb" + str(len(clones)))
                clones[key] = clone
                mapping = dict(zip(called, passed))
                body = module.functions.body_lines(primal.name)
                head = re.sub(r'^define\s+(?:(?:private|internal|external|linkonce_odr|linkonce|weak_odr|weak|'
                              r'available_externally|dso_local|hidden|protected|default)\s+)*', "define internal ",
                              body[0])
                # the copy has no debug info of its own (a subprogram belongs to one function)
                extra.append(_DBG_ATTACHMENT.sub("", head.replace("@" + primal.name + "(", clone + "(", 1)))
                extra += [_DBG_ATTACHMENT.sub("", _LOCAL_NAME.sub(lambda x: mapping.get(x.group(0), x.group(0)), ln))
                          for ln in body[1:] if not ln.lstrip().startswith("#dbg_")]
            target = inst.operands[0][1]
            line = lines[inst.first_line]
            lines[inst.first_line] = line.replace(target, target.replace("@" + m.group(1), clones[key]), 1)
    if not clones:
        return text, module
    return "\n".join(lines + extra) + "\n", None


_MARKER_DECLARATION = re.compile(r'^(@enzyme_[A-Za-z0-9_]+) = external (?:[a-z_]+ )*global i32(.*)$')


def _define_marker_global(line: str) -> str:
    """`@enzyme_dup = external global i32` -> a weak definition, so the final link never fails."""
    if not line.startswith("@enzyme_"):
        return line
    m = _MARKER_DECLARATION.match(line)
    if m:
        return f"{m.group(1)} = weak global i32 0{m.group(2)}"
    return line


_MEMMOVE_CALL = re.compile(r'\bcall void @llvm\.memmove\.p0\.p0\.i(32|64)\((ptr [^,]*, ptr [^,]*), i(?:32|64) ([^,()]+), '
                           r'i1 false\)')
OUT_OF_LINE_MEMMOVE = "__enzyme_build_memmove"


def memmoves_out_of_line(derived_text: str) -> str:
    """Every `llvm.memmove` of a derived function goes through `@__enzyme_build_memmove`, a
    `noinline` function holding the memmove. LLVM 22's MemCpyOpt deletes a memmove whose
    source lies partly beyond a memset of its destination that comes right before it (it
    checks the memset's size against the memmove's, not against the memmove's offset:
    llvm/llvm-project#206451, fixed after LLVM 22). Derived code makes that pattern where the
    program does not: a shadow copied from a zeroed block becomes such a memset, followed by
    the shadow of the program's own memmove — a lost tangent (fuzz seed 6036, forward mode at
    -O2/-O3). Out of line, MemCpyOpt never sees the memmove; the copy itself is unchanged."""
    if "@llvm.memmove" not in derived_text:
        return derived_text
    return _MEMMOVE_CALL.sub(
        lambda m: f"call void @{OUT_OF_LINE_MEMMOVE}({m.group(2)}, i64 {m.group(3)})" if m.group(1) == "64"
        else m.group(0), derived_text)


# ------------------------------------------------------------------ counters masked twice
# `and v, 2^k - 1` (or `urem`/`srem v, 2^k`): a counter taken modulo a power of two
_MASK = re.compile(r'= (and|urem|srem) (?:(?:nuw|nsw|exact|disjoint) )*i\d+ ([^,]+), (\d+)\s*(?:,|$)', re.M)
_METADATA_DEF = re.compile(r'^!(\d+) = ', re.M)
VECTORIZE_OFF = '!{!"llvm.loop.vectorize.enable", i1 false}'


def _mask_of(opcode: str, constant: int) -> int | None:
    """The low-bit mask an `and`/`urem`/`srem` by `constant` takes of its operand."""
    if opcode == "and":
        return constant if constant > 0 and constant & (constant + 1) == 0 else None
    return constant - 1 if constant > 1 and constant & (constant - 1) == 0 else None


def masked_twice(lines) -> bool:
    """Whether the lines take some value modulo two different powers of two (a cheap test of
    text, before `masked_counter_latches` parses anything)."""
    masks = {_mask_of(m.group(1), int(m.group(3))) for line in lines for m in _MASK.finditer(line)}
    return len(masks - {None}) >= 2


class LoopIds:
    """Fresh loop-id metadata for a module: numbered after the highest id its metadata
    lines define."""

    def __init__(self, metadata_lines):
        self.defs: dict[str, str] = {}
        top = 0
        for line in metadata_lines:
            m = _METADATA_DEF.match(line)
            if m:
                self.defs["!" + m.group(1)] = line
                top = max(top, int(m.group(1)))
        self.next = top + 1
        self.lines: list[str] = []
        self.off: str | None = None

    def unvectorized(self, old: str | None) -> str | None:
        """A loop id with the operands of `old` and vectorization off; None when `old`
        already turns it off."""
        operands = []
        if old is not None:
            line = self.defs.get(old, "")
            inner = line[line.find("!{") + 2:line.rfind("}")] if "!{" in line else ""
            operands = [o.strip() for o in inner.split(",")][1:] if inner else []
            if any(VECTORIZE_OFF in self.defs.get(o, "") for o in operands) or VECTORIZE_OFF in line:
                return None
        if self.off is None:
            self.off = f"!{self.next}"
            self.next += 1
            self.lines.append(f"{self.off} = {VECTORIZE_OFF}")
            self.defs[self.off] = self.lines[-1]
        new = f"!{self.next}"
        self.next += 1
        self.lines.append(f"{new} = distinct !{{{', '.join([new] + operands + [self.off])}}}")
        self.defs[new] = self.lines[-1]
        return new


def masked_counter_latches(fn) -> list:
    """The latch terminators of the loops in which one counter is taken modulo two different
    powers of two (`tab[j % 16] * x[j % 4]`): LLVM 22's loop vectorizer lets the no-wrap
    check of the wider mask stand for the narrower one (llvm/llvm-project#191382, fixed after
    LLVM 22), so the vector loop reads `x[4]` where the program reads `x[0]` -- plain clang
    -O2 computes a wrong primal, and derived code wrong derivatives (fuzz seed 23978). The
    counter is followed through constant offsets, extensions and truncations, and a reload of
    the same slot counts as the same counter (the reverse sweep's replayed IVs)."""
    from ..analysis.cfg import analyze_cfg

    def root(v: str, depth: int = 0) -> str:
        inst = fn.defs.get(v)
        if inst is None or depth > 6:
            return v
        if inst.opcode in ("add", "sub", "or", "xor") and len(inst.operands) == 2 \
                and re.fullmatch(r'-?\d+', inst.operands[1][1]):
            return root(inst.operands[0][1], depth + 1)
        if inst.opcode in ("zext", "sext", "trunc", "freeze") and inst.operands:
            return root(inst.operands[0][1], depth + 1)
        if inst.opcode == "load" and inst.operands:
            return "load " + inst.operands[0][1]
        return v

    cfg = None
    masks: dict[tuple[str, str], set[int]] = {}   # (loop header, counter) -> masks
    for inst in fn.instructions():
        if inst.opcode not in ("and", "urem", "srem") or len(inst.operands) != 2 \
                or not re.fullmatch(r'\d+', inst.operands[1][1]):
            continue
        mask = _mask_of(inst.opcode, int(inst.operands[1][1]))
        if mask is None:
            continue
        cfg = cfg or analyze_cfg(fn)
        loop = cfg.loop_of.get(inst.block)
        if loop is not None:
            masks.setdefault((loop.header, root(inst.operands[0][1])), set()).add(mask)
    marked = {header for (header, _), found in masks.items() if len(found) >= 2}
    if not marked:
        return []
    latches = []
    for loop in cfg.loops:   # the loops holding such a counter and every loop around them
        if any(h in loop.blocks for h in marked):
            latches += [fn.block(b).terminator for b in loop.latches]
    return list({id(t): t for t in latches}.values())


def unvectorize_latch(line: str, ids: LoopIds) -> str:
    """A latch terminator's last line with a loop id that turns vectorization off."""
    m = re.search(r', !llvm\.loop (![0-9]+)', line)
    new = ids.unvectorized(m.group(1) if m else None)
    if new is None:
        return line
    return line[:m.start()] + f", !llvm.loop {new}" + line[m.end():] if m else line + f", !llvm.loop {new}"


def latch_rewrites(fn, lines: list[str], ids: LoopIds) -> dict[int, str]:
    """The lines of `lines` (the text `fn` was parsed from) that `masked_counter_latches`
    marks, by index, rewritten by `unvectorize_latch`."""
    return {t.line: unvectorize_latch(lines[t.line], ids) for t in masked_counter_latches(fn)}


def unvectorize_masked_counters(text: str, ids: LoopIds) -> str:
    """`masked_counter_latches` applied to the functions of a derived text."""
    if not masked_twice([text]):
        return text
    from ..ir.model import parse_function
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("define "):
            fn, end = parse_function(lines, i)
            for k, line in latch_rewrites(fn, lines, ids).items():
                lines[k] = line
            i = end
        i += 1
    return "\n".join(lines)
