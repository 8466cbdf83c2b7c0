"""A small model of textual LLVM IR: Module -> Function -> Block -> Instruction.

Read from llvmlite's printer after `instnamer` (every value and block has a name).
Instructions keep their original text; parsed specifics (operands with types, callee,
phi incoming, predicates, metadata) are attached for the analyses and the AD engine.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from ..errors import InternalError

# a local or global name: %x, %.lr.ph, %"a b", @f, @"quoted"
NAME = r'[%@](?:"[^"]*"|[-a-zA-Z$._0-9]+)'
# a local value's name as one regex group, for line patterns of the AD stage's text passes
LOCAL = r'(%[-\w$.]+|%"[^"]*")'
# `%a = inttoptr i64 %b to ptr` and `%a = ptrtoint ptr %b to i64`: (result, operand)
INTTOPTR_RE = re.compile(r'^  ' + LOCAL + r' = inttoptr i64 ' + LOCAL + r' to ptr$')
PTRTOINT_RE = re.compile(r'^  ' + LOCAL + r' = ptrtoint ptr ' + LOCAL + r' to i64$')
_NAME_RE = re.compile(NAME)
_RESULT_RE = re.compile(r'^\s*(' + NAME + r')\s*=\s*(.*)$')
_META_ATTACH_RE = re.compile(r',\s*(![-a-zA-Z._0-9]+)\s+(![0-9]+|!\{[^}]*\})')
_FLOAT_TYPES = ("double", "float", "half", "x86_fp80", "fp128", "bfloat")
BINARY_OPS = {"fadd", "fsub", "fmul", "fdiv", "frem", "add", "sub", "mul", "udiv", "sdiv",
              "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor"}
CAST_OPS = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp",
            "sitofp", "ptrtoint", "inttoptr", "bitcast", "addrspacecast"}
_FLAG_WORDS = {"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc", "nuw",
               "nsw", "exact", "disjoint", "nneg", "inbounds", "samesign", "tail",
               "musttail", "notail", "volatile", "atomic", "inrange", "nusw"}


def is_float_type(ty: str) -> bool:
    return ty.strip() in _FLOAT_TYPES


_ARRAY_TYPE = re.compile(r'\[(\d+) x (.+)\]')


def aggregate_elements(ty: str) -> list[str] | None:
    """Element types of a literal struct or array type, or None."""
    ty = ty.strip()
    if ty.startswith("{") and ty.endswith("}"):
        return split_top(ty[1:-1])
    m = _ARRAY_TYPE.fullmatch(ty) if ty.startswith("[") else None
    if m:
        return [m.group(2)] * int(m.group(1))
    return None


def is_float_aggregate(ty: str) -> bool:
    """A literal struct/array whose elements are all floats (e.g. `{ double, double }`)."""
    elems = aggregate_elements(ty)
    return bool(elems) and all(is_float_type(e) or is_float_aggregate(e) for e in elems)


def is_active_type(ty: str) -> bool:
    """Types whose values can carry adjoints: floats and aggregates of floats."""
    return is_float_type(ty) or is_float_aggregate(ty)


FAST_MATH_FLAGS = ("fast", "reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn")


def fast_math_flags(inst) -> str:
    """The fast-math flags of a floating-point instruction or call (`fast`, `reassoc nsz`…),
    in the order written; "" when it has none."""
    flags = inst.flags
    if not flags:
        return ""
    return " ".join(w for w in flags.split() if w in FAST_MATH_FLAGS)


def is_local(value: str) -> bool:
    return value.startswith("%")


_SPLIT_MARKS: dict[str, re.Pattern] = {}
_NESTING = re.compile(r'[(\[{<"]')


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside (), [], {}, <> and quotes."""
    if _NESTING.search(text) is None:
        parts = [q.strip() for q in text.split(sep)]
        return parts if all(parts) else [p for p in parts if p]
    marks = _SPLIT_MARKS.get(sep)
    if marks is None:   # only the characters that matter are visited
        marks = _SPLIT_MARKS[sep] = re.compile('[][(){}<>"' + re.escape(sep) + ']')
    parts, depth, start, quote = [], 0, 0, False
    for m in marks.finditer(text):
        ch = m.group()
        if ch == '"':
            quote = not quote
        elif not quote:
            if ch in "([{<":
                depth += 1
            elif ch in ")]}>":
                depth -= 1
            elif ch == sep and depth == 0:
                parts.append(text[start:m.start()].strip())
                start = m.end()
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def split_type_value(text: str) -> tuple[str, str]:
    """'double noundef %x' -> ('double', '%x'); 'ptr align 8 %p' -> ('ptr', '%p').

    The type is the first balanced token; the value is the last balanced token
    (attributes in between are dropped). Constant expressions stay whole."""
    text = text.strip()
    ty, sep, rest = text.partition(" ")
    if sep and ty.isalnum() and ty.islower() and rest and "(" not in rest and '"' not in rest:
        # the common cases: 'double %x', 'ptr noundef nonnull %p' (a plain type word,
        # attribute words, the value)
        if " " not in rest:
            return ty, rest
        if "\t" not in rest and not _NESTING.search(rest):
            words = rest.split()
            if not _CONSTEXPR_WORDS.intersection(words):
                return ty, words[-1]
    ty, rest = take_type(text)
    rest = rest.strip()
    if " " not in rest:   # the common case: no attributes, no constant expression
        return ty, rest
    # value = last top-level token
    tokens = split_top(rest, " ")
    if not tokens:
        return ty, ""
    # constant expressions like 'getelementptr inbounds (i8, ptr @g, i64 8)' stay whole
    for i, tok in enumerate(tokens):
        if tok in _CONSTEXPR_WORDS:
            return ty, " ".join(tokens[i:])
    return ty, tokens[-1]


_CONSTEXPR_WORDS = {"getelementptr", "bitcast", "ptrtoint", "inttoptr", "addrspacecast", "trunc",
                    "sub", "add", "mul", "xor", "shl", "icmp", "fcmp", "select", "extractelement",
                    "insertelement", "shufflevector", "blockaddress", "dso_local_equivalent",
                    "no_cfi", "ptrauth", "splat"}
_ATTR_WORDS = {"noundef", "nonnull", "noalias", "nocapture", "readonly", "writeonly", "zeroext",
               "signext", "inreg", "returned", "immarg", "nofree", "noesc"}


_TYPE_TOKEN = re.compile(r'(%"[^"]*"|%[-a-zA-Z$._0-9]+|[a-z0-9_]+)')
_ADDRSPACE = re.compile(r'\s*addrspace\(\d+\)')


def take_type(text: str) -> tuple[str, str]:
    """Split a leading type off `text`; returns (type, rest)."""
    text = text.lstrip()
    if not text:
        return "", ""
    if text[0] in "[{<":
        depth = 0
        i = 0
        # packed struct <{ ... }>
        while i < len(text):
            ch = text[i]
            if ch in "[{<(":
                depth += 1
            elif ch in "]}>)":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        ty, rest = text[:i + 1], text[i + 1:]
    else:
        m = _TYPE_TOKEN.match(text)
        if not m:
            return "", text
        ty, rest = m.group(1), text[m.end():]
    # function pointer types / pointers with address spaces: 'ptr addrspace(1)'
    m = _ADDRSPACE.match(rest) if "addrspace" in rest else None
    if m:
        ty += m.group(0)
        rest = rest[m.end():]
    return ty, rest


# the attachments of an instruction without any (most of them): one shared, read-only mapping
NO_METADATA: Mapping[str, str] = MappingProxyType({})


@dataclass(slots=True)
class Instruction:
    text: str                     # original text (may span lines for switch); "" when made by
                                  # the builder (ir/builder.py), which prints it from its fields
    opcode: str
    result: str | None = None     # '%name' or None
    type: str = ""               # result type (or the stored/operated type)
    # the list fields hold a shared empty tuple until set (no six empty lists made per
    # instruction: a large function's model stays small enough to be walked quickly); whoever
    # fills one assigns a list
    operands: list[tuple[str, str]] = ()  # (type, value)
    flags: str = ""
    predicate: str = ""           # icmp/fcmp
    callee: str | None = None     # '@f' for direct calls
    call_type: str = ""           # explicit function type of a call, if printed
    incoming: list[tuple[str, str]] = ()  # phi: (value, block)
    targets: list[str] = ()       # successor labels (without %)
    metadata: Mapping[str, str] = field(default_factory=lambda: NO_METADATA)   # !tbaa, !dbg, ...
    source_type: str = ""         # gep source / alloca allocated type / load type
    block: str = ""
    first_line: int = 0           # lines of the module text the instruction spans
    line: int = 0
    arg_texts: list[str] = ()     # call: each argument as written
    invoke_normal: str | None = None   # an invoke split into call + br: its destinations
    invoke_unwind: str | None = None
    omp_fork: str | None = None   # an OpenMP fork seen as a call of its outlined function (ad/openmp.py)
    callee_name: str | None = None     # the callee without '@' and quotes (analysis/activity.callee_name)
    indices: list[int] = ()    # extractvalue/insertvalue: the constant indices
    cases: list[tuple[str, str]] = ()  # switch: (case value, label)
    synthetic: bool = False       # made by the parser (the `br` an invoke's normal edge becomes)
    align: int | None = None      # made by the builder: load/store/atomicrmw alignment
    operation: str = ""          # made by the builder: atomicrmw's operation (fadd, xchg, ...)
    ordering: str = ""           # made by the builder: atomicrmw's ordering (monotonic, ...)
    # values(), computed once: whoever changes operands or incoming sets it back to None
    _values: tuple[str, ...] | None = field(default=None, repr=False, compare=False)

    def values(self) -> tuple[str, ...]:
        """Local names this instruction reads (conservative for unknown opcodes)."""
        if self._values is None:
            self._values = tuple(self._read_values())
        return self._values

    def _read_values(self) -> list[str]:
        if self.opcode == "phi":
            return [v for v, _ in self.incoming if is_local(v)]
        if self.operands or self.opcode in _PARSED:
            out = []
            for _, v in self.operands:
                if "%" not in v:
                    continue
                if v[0] == "%" and " " not in v and "(" not in v and "," not in v:
                    out.append(v)   # one local name
                else:
                    out.extend(n for n in _NAME_RE.findall(v) if n.startswith("%"))
            return out
        body = self.text.split("=", 1)[1] if self.result else self.text
        body = re.sub(r'label\s+' + NAME, "", body)
        return [n for n in _NAME_RE.findall(body) if n.startswith("%")]

    def is_terminator(self) -> bool:
        return self.opcode in ("br", "switch", "ret", "unreachable", "indirectbr", "invoke",
                               "resume", "callbr")


_PARSED = {"load", "store", "getelementptr", "call", "phi", "select", "fcmp", "icmp", "br",
           "switch", "ret", "alloca", "fneg", "extractvalue", "insertvalue", "freeze",
           "extractelement", "insertelement", "shufflevector"} | BINARY_OPS | CAST_OPS


@dataclass
class Block:
    label: str
    instructions: list[Instruction] = field(default_factory=list)

    @property
    def terminator(self) -> Instruction:
        return self.instructions[-1]

    def phis(self) -> list[Instruction]:
        return [i for i in self.instructions if i.opcode == "phi"]


@dataclass
class Param:
    type: str
    name: str
    attrs: str = ""


@dataclass
class Function:
    name: str                      # without '@'
    return_type: str
    params: list[Param]
    header: str                    # the full 'define ...' line
    blocks: list[Block] = field(default_factory=list)
    first_line: int = 0
    last_line: int = 0
    dbg: str | None = None         # !dbg of the function (DISubprogram id)
    # indexes (index()): value -> defining instruction, label -> block, value -> users
    defs: dict[str, Instruction] = field(default_factory=dict, repr=False, compare=False)
    _blocks_by_label: dict[str, Block] = field(default_factory=dict, repr=False, compare=False)
    _users: dict[str, list[Instruction]] | None = field(default=None, repr=False, compare=False)
    # every instruction in block order, once parsing is done (index()): the engine walks
    # them a few dozen times per function
    _instructions: tuple[Instruction, ...] | None = field(default=None, repr=False, compare=False)
    # the same instructions by opcode (index()): the many walks that look only at calls or
    # allocas need not touch every instruction of a large function
    _by_opcode: dict[str, list[Instruction]] | None = field(default=None, repr=False, compare=False)

    def block(self, label: str) -> Block:
        return self._blocks_by_label[label]

    def index(self) -> None:
        self._blocks_by_label = {b.label: b for b in self.blocks}
        self.defs = {}
        self._users = None
        self._instructions = tuple(inst for b in self.blocks for inst in b.instructions)
        self._by_opcode = by_opcode = {}
        for b in self.blocks:
            for inst in b.instructions:
                inst.block = b.label
                if inst.result:
                    self.defs[inst.result] = inst
                found = by_opcode.get(inst.opcode)
                if found is None:
                    by_opcode[inst.opcode] = [inst]
                else:
                    found.append(inst)

    def users(self) -> dict[str, list[Instruction]]:
        """Local value -> the instructions reading it (each once, in program order): the one
        users index every analysis and sweep asks, built on first use."""
        if self._users is None:
            users: dict[str, list[Instruction]] = {}
            for inst in self.instructions():
                for v in dict.fromkeys(inst.values()):
                    users.setdefault(v, []).append(inst)
            self._users = users
        return self._users

    def instructions(self):
        """The instructions in block order (an iterable; a tuple once the function is indexed)."""
        if self._instructions is not None:
            return self._instructions
        return (inst for b in self.blocks for inst in b.instructions)

    def of_opcode(self, *opcodes: str):
        """The instructions with one of these opcodes (an invoke is parsed as a call and a br):
        in block order for one opcode, grouped by opcode for several."""
        if self._by_opcode is None:
            return [inst for inst in self.instructions() if inst.opcode in opcodes]
        if len(opcodes) == 1:
            return self._by_opcode.get(opcodes[0], ())
        return [inst for op in opcodes for inst in self._by_opcode.get(op, ())]


@dataclass
class Module:
    lines: list[str]
    functions: Mapping[str, Function]     # defined functions by name (no '@'), parsed lazily
    declarations: dict[str, str]          # declared function name -> 'declare' line
    globals: dict[str, str]               # global variable name -> line
    metadata: dict[str, str]              # '!12' -> text after '='
    _attribute_groups: dict[str, str] | None = field(default=None, repr=False, compare=False)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def attribute_groups(self) -> dict[str, str]:
        """'#3' -> the body of `attributes #3 = { ... }` (built on first use)."""
        if self._attribute_groups is None:
            table = {}
            for line in self.lines:
                if line.startswith("attributes #"):
                    key, _, body = line.partition(" = ")
                    table[key[len("attributes "):]] = body
            self._attribute_groups = table
        return self._attribute_groups


# ----------------------------------------------------------------------------------------
# parsing

def strip_name(name: str) -> str:
    """'%"a b"' -> 'a b', '@f' -> 'f'."""
    name = name[1:]
    if name.startswith('"'):
        name = name[1:-1]
    return name


def entry_point_name(callee: str) -> str:
    """The __enzyme_* function a call names, as the user spelled it (without the per-site
    `.siteN` suffix the AD stage adds)."""
    return re.sub(r'\.site\d+$', "", strip_name(callee))


_PLAIN_NAME = re.compile(r'[-a-zA-Z$._][-a-zA-Z$._0-9]*')


@lru_cache(maxsize=1 << 16)   # the sweeps ask for the same shadow and slot names many times
def make_name(sigil: str, *parts: str) -> str:
    """Build a valid local/global name from parts joined by '$'."""
    raw = "$".join(strip_name(p) if p[:1] in "%@" else p for p in parts)
    if _PLAIN_NAME.fullmatch(raw):
        return sigil + raw
    return sigil + '"' + raw + '"'


_TYPED_POINTER_RE = re.compile(r'(ptr\s+)(' + NAME + ')')


def substitute_values(text: str, mapping: dict[str, str]) -> str:
    """Replace each whole local/global name in `text` (`%x`, `@g`, quoted names) that is a key
    of `mapping` by its value, in one pass (no pattern per name); other keys (constants) are
    replaced where they stand alone."""
    changed = {k: v for k, v in mapping.items() if k != v}
    if not changed:
        return text
    if all(k[:1] in "%@" for k in changed):
        return _NAME_RE.sub(lambda m: changed.get(m.group(0), m.group(0)), text)
    pattern = re.compile("(" + "|".join(re.escape(v) for v in sorted(changed, key=len, reverse=True))
                         + r")(?![-\w$.])")
    return pattern.sub(lambda m: changed[m.group(1)], text)


def replace_pointer_operand(text: str, value: str, new: str) -> str:
    """`ptr VALUE` -> `ptr NEW` at the first place VALUE is a whole pointer operand."""
    for m in _TYPED_POINTER_RE.finditer(text):
        if m.group(2) == value:
            return text[:m.start(2)] + new + text[m.end(2):]
    return text


def _strip_comment(line: str) -> str:
    # comments start with ';' outside quotes
    if ";" not in line:
        return line.rstrip()
    quote = False
    for i, ch in enumerate(line):
        if ch == '"':
            quote = not quote
        elif ch == ";" and not quote:
            return line[:i].rstrip()
    return line.rstrip()


_METADATA_ATTACHMENT = re.compile(r',\s*(![-a-zA-Z._0-9]+)\s+(![0-9]+|!\{[^}]*\}|distinct\s+![0-9]+)\s*$')


def split_metadata_attachments(text: str) -> tuple[str, Mapping[str, str]]:
    """An instruction's text without its trailing metadata attachments, and those
    attachments (name -> node)."""
    md = {}
    # attachments come at the very end: ', !tbaa !5, !dbg !12'
    while True:
        m = _METADATA_ATTACHMENT.search(text) if "!" in text else None
        if not m:
            break
        md[m.group(1)] = m.group(2)
        text = text[:m.start()]
    return text, md or NO_METADATA


_TRAILING_ATTRIBUTE_GROUPS = re.compile(r'(?:\s*#\d+)+$')
_NAME_AT_END = re.compile(NAME + r'$')
_PLAIN_CALLEE = re.compile(r'[%@][-a-zA-Z$._0-9]+')
_CALL_WORD = re.compile(r'^\s*(tail|musttail|notail)?\s*call\s*')
_FUNCTION_TYPE_AT_END = re.compile(r'\s*(\([^()]*\))$')


def _parse_call(inst: Instruction, body: str) -> None:
    # body: [tail] call [fast-math flags] [cc] [ret attrs] TYPE [fnty] CALLEE(args) [#N]
    end = body.rstrip()
    if "#" in end:
        end = _TRAILING_ATTRIBUTE_GROUPS.sub("", end)
    # the argument list: the parenthesis matching the last ')'
    start = end.rfind("(", 0, len(end) - 1) if end.endswith(")") else -1
    if start >= 0 and ")" in end[start + 1:-1]:
        depth, start = 0, -1
        for i in range(len(end) - 1, -1, -1):
            ch = end[i]
            if ch == ")":
                depth += 1
            elif ch == "(":
                depth -= 1
                if depth == 0:
                    start = i
                    break
    before = end[:start].rstrip() if start >= 0 else ""
    # the callee is the last word (found without scanning when it is a plain name)
    at = before.rfind(" ") + 1
    if before[at:at + 1] in ("@", "%") and _PLAIN_CALLEE.fullmatch(before, at):
        callee, head = before[at:], before[:at]
    else:
        cm = _NAME_AT_END.search(before)
        if cm is None and "asm" not in before:
            raise InternalError(f"cannot parse call: {inst.text}")
        callee, head = (cm.group(0), before[:cm.start()]) if cm else (None, before)
    args_text = end[start + 1:-1]
    inst.callee = callee if callee and callee.startswith("@") else None   # %f: indirect
    head = _CALL_WORD.sub("", head, count=1)
    words = [w for w in split_top(head, " ") if w not in _FLAG_WORDS and not w.startswith("#")]
    # remaining: [cc/attrs...] type [fnty]
    rest = " ".join(words)
    fm = _FUNCTION_TYPE_AT_END.search(rest) if rest.endswith(")") else None
    if fm:
        ret_words = split_top(rest[:fm.start()], " ")
        inst.type = ret_words[-1] if ret_words else "void"
        inst.call_type = inst.type + " " + fm.group(1)
    else:
        inst.type = words[-1] if words else "void"
    if args_text.strip():
        inst.arg_texts = split_top(args_text)
        inst.operands = [split_type_value(a) for a in inst.arg_texts]


def parse_instruction(text: str) -> Instruction:
    source = _strip_comment(text) if "\n" not in text else " ".join(text.split())
    body, md = split_metadata_attachments(source)
    result = None
    m = _RESULT_RE.match(body)
    if m:
        result, body = m.group(1), m.group(2)
    body = body.strip()
    words = body.split(None, 1)
    opcode = words[0]
    rest = words[1] if len(words) > 1 else ""
    if opcode in ("tail", "musttail", "notail"):
        parts = body.split(None, 2)
        opcode, rest = parts[1], (parts[2] if len(parts) > 2 else "")   # `tail call fast …`
    inst = Instruction(text=text, opcode=opcode, result=result, metadata=md)
    # flags
    flag_list = []
    while True:
        w = rest.split(None, 1)
        if w and w[0] in _FLAG_WORDS:
            flag_list.append(w[0])
            rest = w[1] if len(w) > 1 else ""
        else:
            break
    inst.flags = " ".join(flag_list)
    if opcode in BINARY_OPS:
        ty, rest2 = take_type(rest)
        a, b = split_top(rest2)
        inst.type = ty
        inst.operands = [(ty, a), (ty, b)]
    elif opcode == "fneg" or opcode == "freeze":
        ty, rest2 = take_type(rest)
        inst.type = ty
        inst.operands = [(ty, rest2.strip())]
    elif opcode in CAST_OPS:
        src, _, dst = rest.rpartition(" to ")
        inst.operands = [split_type_value(src)]
        inst.type = dst.strip()
    elif opcode in ("icmp", "fcmp"):
        pred, rest2 = rest.split(None, 1)
        while pred in _FLAG_WORDS:
            pred, rest2 = rest2.split(None, 1)
        inst.predicate = pred
        ty, rest3 = take_type(rest2)
        a, b = split_top(rest3)
        inst.operands = [(ty, a), (ty, b)]
        inst.type = "i1"
    elif opcode == "select":
        parts = split_top(rest)
        inst.operands = [split_type_value(p) for p in parts]
        inst.type = inst.operands[1][0]
    elif opcode == "phi":
        ty, rest2 = take_type(rest)
        inst.type = ty
        inst.incoming = [(v.strip(), strip_name(blk.strip()))
                         for v, blk in (part.strip()[1:-1].rsplit(",", 1) for part in split_top(rest2))]
    elif opcode == "load":
        parts = split_top(rest)
        inst.type = parts[0]
        inst.source_type = parts[0]
        inst.operands = [split_type_value(parts[1])]
    elif opcode == "store":
        parts = split_top(rest)
        inst.operands = [split_type_value(parts[0]), split_type_value(parts[1])]
        inst.type = inst.operands[0][0]
    elif opcode == "getelementptr":
        parts = split_top(rest)
        inst.source_type = parts[0]
        inst.operands = [split_type_value(p) for p in parts[1:]]
        inst.type = "ptr"
    elif opcode == "alloca":
        parts = split_top(rest)
        inst.source_type = parts[0]
        inst.operands = [split_type_value(p) for p in parts[1:] if not p.startswith("align")
                         and not p.startswith("addrspace")]
        inst.type = "ptr"
    elif opcode == "call":
        _parse_call(inst, body)
    elif opcode == "br":
        parts = split_top(rest)
        if len(parts) == 1:
            inst.targets = [strip_name(parts[0].split()[-1])]
        else:
            inst.operands = [split_type_value(parts[0])]
            inst.targets = [strip_name(p.split()[-1]) for p in parts[1:]]
    elif opcode == "switch":
        flat = " ".join(body.split())
        m2 = re.match(r'switch\s+(\S+)\s+(\S+),\s*label\s+(' + NAME + r')\s*\[(.*)\]', flat)
        if not m2:
            raise InternalError(f"cannot parse switch: {text}")
        inst.operands = [(m2.group(1), m2.group(2))]
        inst.type = m2.group(1)
        inst.targets = [strip_name(m2.group(3))]
        inst.cases = []
        for cm in re.finditer(r'(\S+)\s+(-?\w+),\s*label\s+(' + NAME + ')', m2.group(4)):
            inst.cases.append((cm.group(2), strip_name(cm.group(3))))
            inst.targets.append(strip_name(cm.group(3)))
    elif opcode == "ret":
        if rest.strip() != "void":
            inst.operands = [split_type_value(rest)]
            inst.type = inst.operands[0][0]
        else:
            inst.type = "void"
    elif opcode in ("extractvalue", "insertvalue"):
        parts = split_top(rest)
        inst.operands = [split_type_value(p) for p in parts if not re.fullmatch(r'\d+', p.strip())]
        inst.indices = [int(p) for p in parts if re.fullmatch(r'\d+', p.strip())]
        inst.type = inst.operands[0][0] if opcode == "insertvalue" else _element_type(
            inst.operands[0][0], inst.indices)
    elif opcode in ("extractelement", "insertelement", "shufflevector"):
        inst.operands = [split_type_value(p) for p in split_top(rest)]
        vec = inst.operands[0][0]
        m = re.fullmatch(r'<\s*(\d+)\s+x\s+(.+?)\s*>', vec.strip())
        if opcode == "insertelement":
            inst.type = vec
        elif m and opcode == "extractelement":
            inst.type = m.group(2)
        elif m and len(inst.operands) > 2:
            mask = re.match(r'<\s*(\d+)\s+x', inst.operands[2][0])
            inst.type = f"<{mask.group(1)} x {m.group(2)}>" if mask else ""
    elif opcode in ("indirectbr", "invoke", "callbr"):
        inst.targets = [strip_name(n) for n in re.findall(r'label\s+(' + NAME + ')', body)]
    return inst


def _element_type(ty: str, indices: list[int]) -> str:
    for i in indices:
        elems = aggregate_elements(ty)
        if not elems or i >= len(elems):
            return ""
        ty = elems[i]
    return ty


DEFINE_RE = re.compile(r'^define\s+(.*?)(' + NAME + r')\((.*)\)(.*)\{\s*$')


def parse_params(text: str) -> list[Param]:
    params = []
    for part in split_top(text):
        if part == "...":
            params.append(Param("...", ""))
            continue
        ty, rest = take_type(part)
        names = [n for n in _NAME_RE.findall(rest) if n.startswith("%")]
        params.append(Param(ty, names[-1] if names else "", rest))
    return params


def parse_function(lines: list[str], start: int) -> tuple[Function, int]:
    header = lines[start]
    m = DEFINE_RE.match(header)
    if not m:
        raise InternalError(f"cannot parse function header: {header}")
    prefix, name, params_text, tail = m.groups()
    ret_type = header_return_type(prefix)   # the last word that is a type (attributes precede it)
    fn = Function(name=strip_name(name), return_type=ret_type, params=parse_params(params_text),
                  header=header, first_line=start)
    dm = re.search(r'!dbg\s+(![0-9]+)', tail)
    fn.dbg = dm.group(1) if dm else None
    i = start + 1
    block: Block | None = None
    count = len(lines)
    while i < count:
        line = lines[i]
        stripped = line.strip()
        if stripped == "}":
            break
        if not stripped or stripped[0] == ";":
            i += 1
            continue
        if line[0] != " ":
            label = _strip_comment(line).rstrip(":").strip()
            if label.startswith('"'):
                label = label[1:-1]
            block = Block(label)
            fn.blocks.append(block)
            i += 1
            continue
        if stripped[0] == "#" and stripped.startswith("#dbg_"):
            i += 1
            continue
        if block is None:
            raise InternalError(f"function @{fn.name} has an unnamed entry block; run instnamer first")
        text = line
        first = i
        if "switch" in stripped and (stripped.startswith("switch") or (" switch " in stripped and stripped.endswith("["))):
            while not lines[i].strip().startswith("]") and not lines[i].rstrip().endswith("]"):
                i += 1
                text += "\n" + lines[i]
        # continuation lines: invoke's 'to label … unwind label …', landingpad clauses
        while i + 1 < count and lines[i + 1].lstrip().startswith(_CONTINUATIONS):
            i += 1
            text += "\n" + lines[i]
        inst = parse_instruction(text)
        inst.first_line, inst.line = first, i
        if inst.opcode == "invoke":
            block.instructions.extend(_split_invoke(inst, first, i))
        else:
            block.instructions.append(inst)
        i += 1
    fn.last_line = i
    _drop_unreachable_blocks(fn)
    fn.index()
    return fn, i


_CONTINUATIONS = ("to label", "cleanup", "catch ", "filter ")


def _split_invoke(inst: Instruction, first: int, last: int) -> list[Instruction]:
    """An invoke becomes its call plus `br label %normal`: derived functions never unwind
    (an exception thrown during AD ends the program), so unwind paths are dropped."""
    flat = " ".join(inst.text.split())
    m = re.match(r'^(.*?)\binvoke\b(.*?)\s+to\s+label\s+(' + NAME + r')\s+unwind\s+label\s+(' + NAME
                 + r')(.*)$', flat)
    if not m:
        raise InternalError(f"cannot parse invoke: {inst.text}")
    call = parse_instruction("  " + m.group(1) + "call" + m.group(2) + m.group(5))
    call.invoke_normal, call.invoke_unwind = strip_name(m.group(3)), strip_name(m.group(4))
    call.first_line, call.line = first, last
    br = parse_instruction(f"  br label {m.group(3)}")
    br.first_line = br.line = last
    br.synthetic = True
    return [call, br]


def _drop_unreachable_blocks(fn: Function) -> None:
    """Remove blocks unreachable from the entry (landing pads once invokes are calls) and
    their phi entries."""
    if not fn.blocks:
        return
    by_label = {b.label: b for b in fn.blocks}
    seen, work = set(), [fn.blocks[0].label]
    while work:
        b = work.pop()
        if b in seen or b not in by_label:
            continue
        seen.add(b)
        work.extend(by_label[b].terminator.targets)
    if len(seen) == len(fn.blocks):
        return
    fn.blocks = [b for b in fn.blocks if b.label in seen]
    for b in fn.blocks:
        for inst in b.phis():
            kept = [(v, blk) for v, blk in inst.incoming if blk in seen]
            if len(kept) != len(inst.incoming):
                inst.incoming, inst._values = kept, None
                entries = ", ".join(f"[ {v}, {make_name('%', blk)} ]" for v, blk in kept)
                inst.text = f"  {inst.result} = phi {inst.type} {entries}"


def header_return_type(prefix: str) -> str:
    """The return type in a `define`/`declare` header's text before the function's name
    (linkage, visibility and return attributes skipped)."""
    words = split_top(prefix.strip(), " ")
    skip = {"internal", "private", "dso_local", "external", "linkonce_odr", "weak_odr", "weak",
            "linkonce", "available_externally", "hidden", "protected", "default", "local_unnamed_addr",
            "unnamed_addr", "noundef", "nonnull", "noalias", "zeroext", "signext", "inreg",
            "fastcc", "ccc", "coldcc", "dllexport", "nofpclass", "dereferenceable"}
    cands = [w for w in words if w not in skip and not w.startswith("range(")
             and not w.startswith("align") and not w.startswith("dereferenceable")
             and not w.startswith("nofpclass") and not w.startswith("#")]
    return cands[-1] if cands else "void"


_HEADER_NAME = re.compile(r'@(?:"(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)\(')


def header_signature(line: str) -> tuple[str, str, list[str]] | None:
    """(name as written, without '@'; return type; parameter texts) of a `define` or
    `declare` line, or None when the line names no function. The parameter list is the
    balanced group after the name, so attributes with parentheses after it do not matter."""
    m = _HEADER_NAME.search(line)
    if m is None:
        return None
    depth, quote, close = 0, False, len(line)
    for i in range(m.end() - 1, len(line)):
        ch = line[i]
        if ch == '"':
            quote = not quote
        elif not quote and ch in "([{<":
            depth += 1
        elif not quote and ch in ")]}>":
            depth -= 1
            if depth == 0:
                close = i
                break
    head = line[:m.start()].split(None, 1)
    return (m.group(0)[1:-1], header_return_type(head[1] if len(head) > 1 else ""),
            split_top(line[m.end():close]))


def global_initializer(line: str) -> str | None:
    """The initializer of a global variable's line (`@g = internal constant [2 x ptr] [ptr @f,
    ptr @h], align 8` -> `[ptr @f, ptr @h]`), without the value type and trailing fields;
    None for an external declaration."""
    rest = line.split(" = ", 1)[1] if " = " in line else ""
    kw = re.search(r"\b(global|constant)\b", rest)
    if not kw or re.search(r"\b(external|extern_weak)\b", rest[:kw.start()]):
        return None
    value_type, initializer = take_type(rest[kw.end():])
    initializer = initializer.strip().split(", align ")[0].split(", section ")[0]
    initializer = re.split(r", !(?:dbg|\w+) ", initializer)[0]
    return initializer or None


def aggregate_items(constant: str) -> list[str] | None:
    """The elements of an array or struct constant (`[ptr @f, ptr @g]`, `{ ptr @f, i32 1 }`,
    `<{ … }>`), or None when `constant` is not one."""
    text = constant.strip()
    if not text[:1] in "[{<":
        return None
    whole, _ = take_type(text)
    inner = whole[2:-2] if whole.startswith("<{") else whole[1:-1]
    return split_top(inner)


class LazyFunctions(Mapping):
    """Defined functions by name, each parsed on first access (most of a whole-program
    module is never differentiated, so most bodies are never parsed)."""

    def __init__(self, lines: list[str], starts: dict[str, int]):
        self._lines, self._starts, self._parsed = lines, starts, {}
        self._ends: dict[str, int] = {}

    def __getitem__(self, name: str) -> Function:
        if name not in self._parsed:
            self._parsed[name] = parse_function(self._lines, self._starts[name])[0]
        return self._parsed[name]

    def __iter__(self):
        return iter(self._starts)

    def release(self) -> None:
        """Forget the parsed bodies (a later access parses the text again, without changes
        made to the parsed instructions)."""
        self._parsed.clear()

    def __len__(self) -> int:
        return len(self._starts)

    def __contains__(self, name) -> bool:
        return name in self._starts

    def header(self, name: str) -> str:
        """The `define` line of a function, without parsing its body."""
        return self._lines[self._starts[name]]

    def body_lines(self, name: str) -> list[str]:
        """The raw text lines of a function (header to closing brace), without parsing."""
        start = self._starts[name]
        end = self._ends.get(name)
        if end is None:
            end = start
            while end < len(self._lines) and self._lines[end] != "}":
                end += 1
            self._ends[name] = end
        return self._lines[start:end + 1]

    def body_mentions(self, name: str, word: str) -> bool:
        """Whether `word` occurs in the function's body (after its `define` line), unparsed."""
        return word in "\n".join(self.body_lines(name)[1:])


def parse_module(text: str) -> Module:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    starts, decls, globs, md = {}, {}, {}, {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("define "):
            m = DEFINE_RE.match(line)
            if not m:
                raise InternalError(f"cannot parse function header: {line}")
            starts[strip_name(m.group(2))] = i
            while i < len(lines) and lines[i] != "}":
                i += 1
            i += 1
            continue
        if line.startswith("declare "):
            m = re.search(r'(' + NAME + r')\(', line)
            if m:
                decls[strip_name(m.group(1))] = line
        elif line.startswith("@"):
            m = re.match(r'(' + NAME + r')\s*=', line)
            if m:
                globs[strip_name(m.group(1))] = line
        elif line.startswith("!"):
            m = re.match(r'(![0-9]+)\s*=\s*(.*)$', line)
            if m:
                md[m.group(1)] = m.group(2)
        i += 1
    functions = LazyFunctions(lines, starts)
    return Module(lines, functions, decls, globs, md)


# ----------------------------------------------------------------------------------------
# small queries shared by the analyses and the engines

def byval_attributes(param) -> str:
    """`byval(T) align N` of a parameter passed by value in memory, or ''. The derived function
    keeps it (on the shadows too): the callee may write its private copy."""
    start = param.attrs.find("byval(")
    if start < 0:
        return ""
    depth, i = 0, start + len("byval")
    while i < len(param.attrs):
        depth += {"(": 1, ")": -1}.get(param.attrs[i], 0)
        if depth == 0:
            break
        i += 1
    align = re.search(r'\balign\s+\d+', param.attrs)
    return param.attrs[start:i + 1] + (f" {align.group(0)}" if align else "")


def function_attributes(module: Module, fn: Function) -> str:
    """The header of a definition with its attribute groups (`#0`) spelled out, where
    `memory(...)` and friends usually live."""
    table = module.attribute_groups()
    groups = re.findall(r'(#\d+)', fn.header.rsplit(")", 1)[-1])
    return " ".join([fn.header] + [table.get(g, "") for g in groups])


_TYPE_DEF_RE = re.compile(r'^(%(?:"[^"]*"|[-a-zA-Z$._0-9]+)) = type (.*)$')


def named_types(module: Module) -> dict[str, str]:
    """'%struct.vec4' -> '{ [4 x double] }' for the module's identified types ('opaque' for
    opaque ones), read from the module once."""
    table = getattr(module, "_type_bodies", None)
    if table is None:
        table = {}
        for line in module.lines:
            if line.startswith("%"):
                m = _TYPE_DEF_RE.match(line)
                if m:
                    table[m.group(1)] = m.group(2).strip()
        module._type_bodies = table
    return table


def named_type_body(module: Module, name: str) -> str | None:
    """The body of a named type (`%struct.V = type { double, i32 }` -> `{ double, i32 }`);
    None for opaque or unknown types."""
    body = named_types(module).get(name.strip())
    return None if body in (None, "opaque") else body


def float_leaves(module: Module, ty: str, path: tuple[int, ...] = ()):
    """(GEP index path, float type, count) of every float stored in a value of type `ty`;
    a float array is one leaf (path to its first element, count = its length)."""
    return _leaves(module, ty, is_float_type, path)


def pointer_leaves(module: Module, ty: str, path: tuple[int, ...] = ()):
    """(GEP index path, "ptr", count) of every pointer stored in a value of type `ty`, as
    `float_leaves` does for floats."""
    return _leaves(module, ty, lambda t: t == "ptr", path)


def _leaves(module: Module, ty: str, want, path: tuple[int, ...]):
    ty = ty.strip()
    if want(ty):
        yield path, ty, 1
        return
    if ty.startswith("%"):
        body = named_type_body(module, ty)
        if body is not None:
            yield from _leaves(module, body, want, path)
        return
    m = re.fullmatch(r'\[(\d+) x (.+)\]', ty)
    if m:
        n, elem = int(m.group(1)), m.group(2)
        if want(elem.strip()):
            yield path + (0,), elem.strip(), n
        else:
            for k in range(n):
                yield from _leaves(module, elem, want, path + (k,))
        return
    if ty.startswith("<{") and ty.endswith("}>"):
        elems = split_top(ty[2:-2])
    elif ty.startswith("{") and ty.endswith("}"):
        elems = split_top(ty[1:-1])
    else:
        return
    for k, e in enumerate(elems):
        yield from _leaves(module, e, want, path + (k,))


def source_location(module: Module, dbg: str | None) -> str | None:
    """'file.c:12' for a !dbg id (DILocation or DISubprogram), when debug info is present."""
    if not dbg:
        return None
    node = module.metadata.get(dbg, "")
    line = re.search(r'line:\s*(\d+)', node)
    seen = 0
    scope = dbg
    while seen < 20:
        seen += 1
        node = module.metadata.get(scope, "")
        fm = re.search(r'file:\s*(![0-9]+)', node)
        if fm:
            fnode = module.metadata.get(fm.group(1), "")
            name = re.search(r'filename:\s*"([^"]*)"', fnode)
            if name:
                return f"{name.group(1)}:{line.group(1)}" if line else name.group(1)
        sm = re.search(r'scope:\s*(![0-9]+)', node)
        if not sm:
            break
        scope = sm.group(1)
    return None


def tbaa_type(module: Module, tag: str | None) -> str | None:
    """The scalar type name of a !tbaa access tag ('double', 'float', 'int', 'any pointer'…)."""
    if not tag:
        return None
    node = module.metadata.get(tag, "")
    m = re.match(r'!\{(![0-9]+),\s*(![0-9]+),\s*i64\s+(\d+)', node)
    if not m:
        return None
    base, access, offset = m.groups()
    acc = module.metadata.get(access, "")
    nm = re.match(r'!\{!"([^"]*)"', acc)
    if not nm:
        return None
    name = nm.group(1)
    if name.startswith("p") and name[1:2].isdigit():
        return "any pointer"
    return name


def merged_values(fn: Function, value: str) -> list[str]:
    """The values `value` may be through phis and selects (each once, loops cut): itself when
    it is neither."""
    out, seen, todo = [], set(), [value]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        inst = fn.defs.get(v)
        if inst is not None and inst.opcode == "phi":
            todo += [x for x, _ in reversed(inst.incoming)]
        elif inst is not None and inst.opcode == "select":
            todo += [inst.operands[2][1], inst.operands[1][1]]
        else:
            out.append(v)
    return out


def by_function(text: str, rewrite) -> str:
    """Apply a line rewrite to each function body of module text (and to the text before
    the first one) separately: value names are local to a function."""
    lines = text.split("\n")
    out: list[str] = []
    start = 0
    for i in range(len(lines) + 1):
        if i == len(lines) or (lines[i].startswith("define") and i > start):
            out.extend(rewrite(lines[start:i]))
            start = i
    return "\n".join(out)
