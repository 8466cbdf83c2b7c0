"""IR as values: one builder creates instructions as model objects, one printer prints them.

- `Value` is a value's IR spelling (a local name, a global, a constant) with its type. It is
  a `str`, so code that passes names around keeps working while it moves to the builder.
- `IRBuilder` creates every instruction of derived code as an `ir.model.Instruction` (its
  declared fields only, `text` empty) and appends it where it builds: a block's instruction
  list, or, for a sweep that still assembles text, a list of lines it prints into. Uses of a
  value come from the function's users index once the function is indexed
  (`Function.users`), as for parsed IR.
- `print_instruction` / `print_block` are the printer. An instruction the builder made is
  printed from its fields; one parsed from the input (a primal instruction copied into derived
  code) from its text, without the metadata attachments derived code must not carry.

Usage:
    body: list[Instruction] = []
    ir = IRBuilder(fresh, body)
    s = ir.binop("fmul", "double", x, y)               # -> Value '%t$1', type double
    ir.store(s, "%p", align=8)
    text = "\\n".join(print_instruction(i) for i in body)
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable

from ..errors import InternalError
from .model import BINARY_OPS, CAST_OPS, Instruction, make_name, split_type_value, substitute_values

_DBG_ATTACHMENT = re.compile(r',\s*!dbg\s+!\d+')
_ATTACHMENTS = re.compile(r',\s*![-a-zA-Z._0-9]+\s+!\d+')


class Value(str):
    """A value's spelling with its IR type: `value("%x", "double")` (`.type`, `.typed()`)."""

    type: str

    def typed(self) -> str:
        """'double %x', as an operand is written."""
        return f"{self.type} {self}"


def value(name: str, ty: str) -> Value:
    """The value `name` of type `ty` (a plain function: no constructor call per value made)."""
    v = Value(name)
    v.type = ty
    return v


class FreshNames:
    """Fresh local names `%<hint>$<n>`, numbered in the order they are made. A generator
    hands this object (not a bound method of its own) to its builder, so the builder it
    keeps holds no reference back to it: no cycle for the collector."""

    __slots__ = ("count", "default")

    def __init__(self, default: str = "t"):
        self.count = 0
        self.default = default

    def __call__(self, hint: str | None = None) -> str:
        self.count += 1
        return f"%{hint or self.default}${self.count}"


class InsertPoint:
    """A place in derived code that a later step of the same sweep fills, because what goes
    there is not known when the surrounding code is made (what a loop's exit edge stores
    depends on values hoisted after the edge was made; a split piece's frame record is laid
    out only after both sweeps). It sits in the list of instructions as an object, never as
    text: the step that owns its kind finds it by identity, puts the instructions before it
    (`fill_at`) and removes it. Printing a list that still holds one fails."""

    __slots__ = ("kind", "key")

    def __init__(self, kind: str, key: str = ""):
        self.kind = kind    # "exit edge", "side latch", "side static", "frame push"
        self.key = key      # what it belongs to (a loop header)

    def __repr__(self) -> str:
        return f"InsertPoint({self.kind!r}, {self.key!r})"


def fill_at(lines: list, point: InsertPoint, new: list) -> None:
    """Put `new` just before `point` in `lines` (the point stays, for later fills)."""
    at = next(i for i, item in enumerate(lines) if item is point)
    lines[at:at] = new


class IRBuilder:
    """Creates instructions into `into` (a list of Instructions, or of text lines when `text`).

    Every method returns the new value (a `Value`) or None for instructions without a result;
    `name` gives the result a fixed name, else `fresh(hint)` makes one."""

    __slots__ = ("fresh", "into", "text")

    def __init__(self, fresh: Callable[[str], str], into: list | None = None, text: bool = False):
        self.fresh = fresh
        self.into = [] if into is None else into
        self.text = text

    # ------------------------------------------------------------------ plumbing
    def insert(self, inst: Instruction) -> Instruction:
        self.into.append(print_instruction(inst) if self.text else inst)
        return inst

    def _result(self, inst: Instruction, name: str | None, hint: str) -> Value:
        inst.result = name or self.fresh(hint)
        self.insert(inst)
        return value(inst.result, inst.type)

    def _line(self, name: str | None, hint: str, ty: str, body: str) -> Value:
        """Text mode: the line `name = body`, printed as it is made."""
        if name is None:
            name = self.fresh(hint)
        self.into.append(f"  {name} = {body}")
        return value(name, ty)

    def copy(self, inst: Instruction) -> Instruction:
        """A parsed instruction copied as it is (printed without its `!dbg`)."""
        self.insert(inst)
        return inst

    def clone(self, inst: Instruction, result: str | None = None, mapping: dict[str, str] | None = None,
              metadata: bool = True) -> Instruction | None:
        """A copy of a parsed instruction whose result is named `result` and whose operands are
        remapped through `mapping` (LLVM's clone and RemapInstruction); printed like the
        original, without its `!dbg`, and without any metadata when `metadata` is False (a
        value the reverse sweep recomputes: its `!tbaa` or `!range` said nothing there).
        Returns the copy (None in text mode, which prints it without making the object)."""
        mapping = dict(mapping or {})
        if result is not None and inst.result:
            mapping[inst.result] = result
        text = inst.text if metadata else _ATTACHMENTS.sub("", inst.text)
        if self.text:
            self.into.append(_without_dbg(substitute_values(text, mapping)))
            return None
        callee = mapping.get(inst.callee, inst.callee) if inst.callee else inst.callee
        copy = replace(inst, text=substitute_values(text, mapping), result=result or inst.result,
                       operands=[(t, mapping.get(v, v)) for t, v in inst.operands], _values=None,
                       metadata=dict(inst.metadata) if metadata else {}, callee=callee,
                       callee_name=inst.callee_name if callee == inst.callee else None)
        self.insert(copy)
        return copy

    def rename_last(self, start: int, value: str, name: str) -> bool:
        """Give the value the last instruction made (at or after position `start`) the fixed
        name `name` (a tangent phis refer to before its definition); False when the last
        instruction does not define `value`."""
        if len(self.into) <= start:
            return False
        last = self.into[-1]
        if self.text:
            head = f"  {value} = "
            if not last.startswith(head):
                return False
            self.into[-1] = f"  {name} = " + last[len(head):]
            return True
        if last.result != value:
            return False
        last.result = name
        return True

    # ------------------------------------------------------------------ arithmetic
    # (each method: in text mode the line is printed straight from the arguments by the same
    # format function the printer uses for the made instruction, without making the object)
    def binop(self, opcode: str, ty: str, a: str, b: str, flags: str = "", name: str | None = None,
              hint: str = "t") -> Value:
        if name is None and opcode in _INTEGER_FOLDS:
            folded = fold_integer(opcode, ty, a, b, flags)
            if folded is not None:
                return value(folded, ty)
        if self.text:
            return self._line(name, hint, ty, _binop(opcode, flags, ty, a, b))
        return self._result(Instruction(text="", opcode=opcode, type=ty, operands=[(ty, a), (ty, b)],
                                        flags=flags), name, hint)

    def fneg(self, ty: str, a: str, flags: str = "", name: str | None = None, hint: str = "t") -> Value:
        if self.text:
            return self._line(name, hint, ty, _fneg(flags, ty, a))
        return self._result(Instruction(text="", opcode="fneg", type=ty, operands=[(ty, a)], flags=flags),
                            name, hint)

    def cmp(self, opcode: str, predicate: str, ty: str, a: str, b: str, name: str | None = None,
            hint: str = "c") -> Value:
        """fcmp / icmp: an i1."""
        if self.text:
            return self._line(name, hint, "i1", _cmp(opcode, predicate, ty, a, b))
        inst = Instruction(text="", opcode=opcode, type="i1", operands=[(ty, a), (ty, b)], predicate=predicate)
        return self._result(inst, name, hint)

    def select(self, cond: str, ty: str, a: str, b: str, name: str | None = None, hint: str = "t") -> Value:
        if self.text:
            return self._line(name, hint, ty, _select(cond, ty, a, b))
        return self._result(Instruction(text="", opcode="select", type=ty,
                                        operands=[("i1", cond), (ty, a), (ty, b)]), name, hint)

    def cast(self, opcode: str, src_ty: str, value: str, ty: str, name: str | None = None,
             hint: str = "t") -> Value:
        if self.text:
            return self._line(name, hint, ty, _cast(opcode, src_ty, value, ty))
        return self._result(Instruction(text="", opcode=opcode, type=ty, operands=[(src_ty, value)]),
                            name, hint)

    # ------------------------------------------------------------------ memory
    def load(self, ty: str, ptr: str, align: int | None = None, name: str | None = None,
             hint: str = "t") -> Value:
        if self.text:
            return self._line(name, hint, ty, _load(ty, ptr, align))
        return self._result(Instruction(text="", opcode="load", type=ty, source_type=ty,
                                        operands=[("ptr", ptr)], align=align), name, hint)

    def store(self, ty: str, value: str, ptr: str, align: int | None = None) -> None:
        if self.text:
            self.into.append("  " + _store(ty, value, ptr, align))
            return
        self.insert(Instruction(text="", opcode="store", type=ty, operands=[(ty, value), ("ptr", ptr)],
                                align=align))

    def alloca(self, ty: str, align: int | None = None, name: str | None = None, hint: str = "a") -> Value:
        if self.text:
            return self._line(name, hint, "ptr", _alloca(ty, align))
        return self._result(Instruction(text="", opcode="alloca", type="ptr", source_type=ty, align=align),
                            name, hint)

    def gep(self, source_type: str, ptr: str, indices: list[tuple[str, str]], flags: str = "inbounds",
            name: str | None = None, hint: str = "p") -> Value:
        if name is None and len(indices) == 1 and indices[0][1] == "0":
            return value(ptr, "ptr")   # p + 0 is p
        if self.text:
            return self._line(name, hint, "ptr", _gep(flags, source_type, [("ptr", ptr), *indices]))
        return self._result(Instruction(text="", opcode="getelementptr", type="ptr", source_type=source_type,
                                        operands=[("ptr", ptr), *indices], flags=flags), name, hint)

    def atomicrmw(self, operation: str, ptr: str, ty: str, value: str, ordering: str = "monotonic",
                  align: int | None = None, name: str | None = None, hint: str = "at") -> Value:
        return self._result(Instruction(text="", opcode="atomicrmw", type=ty, operands=[("ptr", ptr), (ty, value)],
                                        operation=operation, ordering=ordering, align=align), name, hint)

    # ------------------------------------------------------------------ calls
    def call(self, ty: str, callee: str, args: list, name: str | None = None,
             hint: str = "t", call_type: str = "", result: bool | None = None) -> Value | None:
        """`call ty callee(args)`; a result unless the type is void (or `result` is False).
        An argument is (type, value), or an operand as written with its attributes
        (`"ptr byval(%S) %x"`, kept as the model's `arg_texts`)."""
        void = result is False or (result is None and ty == "void")
        texts = [a if isinstance(a, str) else f"{a[0]} {a[1]}" for a in args]
        if self.text:
            body = _call(call_type or ty, callee, texts)
            if void:
                self.into.append("  " + body)
                return None
            return self._line(name, hint, ty, body)
        inst = Instruction(text="", opcode="call", type=ty, callee=callee, call_type=call_type, arg_texts=texts,
                           operands=[split_type_value(a) if isinstance(a, str) else a for a in args])
        if void:
            self.insert(inst)
            return None
        return self._result(inst, name, hint)

    # ------------------------------------------------------------------ aggregates
    def extractvalue(self, aty: str, agg: str, indices: list[int], ty: str = "", name: str | None = None,
                     hint: str = "t") -> Value:
        if self.text:
            return self._line(name, hint, ty, _aggregate("extractvalue", [(aty, agg)], indices))
        return self._result(Instruction(text="", opcode="extractvalue", type=ty, operands=[(aty, agg)],
                                        indices=list(indices)), name, hint)

    def insertvalue(self, aty: str, agg: str, ety: str, elem: str, indices: list[int],
                    name: str | None = None, hint: str = "t") -> Value:
        if self.text:
            return self._line(name, hint, aty, _aggregate("insertvalue", [(aty, agg), (ety, elem)], indices))
        return self._result(Instruction(text="", opcode="insertvalue", type=aty,
                                        operands=[(aty, agg), (ety, elem)], indices=list(indices)), name, hint)

    def extractelement(self, vty: str, vector: str, ity: str, index: str, ty: str = "",
                       name: str | None = None, hint: str = "t") -> Value:
        return self._result(Instruction(text="", opcode="extractelement", type=ty,
                                        operands=[(vty, vector), (ity, index)]), name, hint)

    def insertelement(self, vty: str, vector: str, ety: str, elem: str, ity: str, index: str,
                      name: str | None = None, hint: str = "t") -> Value:
        return self._result(Instruction(text="", opcode="insertelement", type=vty,
                                        operands=[(vty, vector), (ety, elem), (ity, index)]), name, hint)

    # ------------------------------------------------------------------ control flow
    def phi(self, ty: str, incoming: list[tuple[str, str]], name: str | None = None, hint: str = "t") -> Value:
        """incoming: (value, block label without '%')."""
        if self.text:
            return self._line(name, hint, ty, _phi(ty, incoming))
        return self._result(Instruction(text="", opcode="phi", type=ty, incoming=list(incoming)), name, hint)

    def ret(self, ty: str = "void", value: str | None = None) -> None:
        if self.text:
            self.into.append("  " + _ret(ty, value))
            return
        self.insert(Instruction(text="", opcode="ret", type=ty,
                                operands=[(ty, value)] if value is not None else []))

    def br(self, target: str) -> None:
        if self.text:
            self.into.append("  " + _br(target))
            return
        self.insert(Instruction(text="", opcode="br", targets=[target]))

    def cond_br(self, cond: str, then: str, otherwise: str) -> None:
        self.insert(Instruction(text="", opcode="br", operands=[("i1", cond)], targets=[then, otherwise]))

    def switch(self, ty: str, value: str, default: str, cases: list[tuple[str, str]]) -> None:
        """cases: (constant, label); labels without '%' as for `br`."""
        if self.text:
            self.into.append("  " + _switch(ty, value, default, cases))
            return
        self.insert(Instruction(text="", opcode="switch", type=ty, operands=[(ty, value)], cases=list(cases),
                                targets=[default] + [label for _, label in cases]))


# ---------------------------------------------------------------------- printer
# one format per kind of instruction, from the fields (the builder's text mode uses them too)
_INTEGER_FOLDS = frozenset(("add", "sub", "mul", "shl", "or", "xor"))


def _integer_constant(text: str) -> int | None:
    digits = text[1:] if text[:1] == "-" else text
    return int(text) if digits.isdigit() else None


def fold_integer(opcode: str, ty: str, a: str, b: str, flags: str = "") -> str | None:
    """What an integer `add`/`sub`/`mul`/`shl`/`or`/`xor` of `a` and `b` is when no
    instruction is needed (LLVM's IRBuilder folds the same way as it creates): an identity
    (`x + 0`, `x * 1`, `x << 0`, …) gives the other operand, `x * 0` gives 0, and two
    constants give their result when it is representable without wrapping (a result that
    would wrap, or a `nuw` operation on a negative constant, keeps its instruction). None:
    make the instruction."""
    if ty[:1] != "i" or not ty[1:].isdigit():
        return None
    ca, cb = _integer_constant(a), _integer_constant(b)
    if ca is None and cb is None:
        return None
    if cb == 0 and opcode != "mul":
        return a                                   # x + 0, x - 0, x << 0, x | 0, x ^ 0
    if ca == 0 and opcode in ("add", "or", "xor"):
        return b
    if opcode == "mul":
        if ca == 0 or cb == 0:
            return "0"
        if cb == 1:
            return a
        if ca == 1:
            return b
    if ca is None or cb is None:
        return None
    bits = int(ty[1:])
    if opcode == "add":
        r = ca + cb
    elif opcode == "sub":
        r = ca - cb
    elif opcode == "mul":
        r = ca * cb
    elif opcode == "shl" and 0 <= cb < bits:
        r = ca << cb
    else:
        return None                                # or/xor of two nonzero constants: rare
    if not -(1 << (bits - 1)) <= r < (1 << (bits - 1)):
        return None
    if "nuw" in flags and (ca < 0 or cb < 0 or r < 0):
        return None
    return str(r)


def _align(align: int | None) -> str:
    return f", align {align}" if align is not None else ""


def _label(label: str) -> str:
    return make_name("%", label)


def _args(operands) -> str:
    return ", ".join(f"{t} {v}" for t, v in operands)


def _without_dbg(text: str) -> str:
    """A parsed instruction's text without its debug location."""
    return _DBG_ATTACHMENT.sub("", text) if "!dbg" in text else text


def _ret(ty: str, value: str | None) -> str:
    return f"ret {ty} {value}" if value is not None else "ret void"


def _br(target: str) -> str:
    return f"br label {_label(target)}"


def _alloca(ty: str, align: int | None) -> str:
    return f"alloca {ty}{_align(align)}"


def _gep(flags: str, source_type: str, operands) -> str:
    return f"getelementptr {flags} {source_type}, {_args(operands)}" if flags else \
        f"getelementptr {source_type}, {_args(operands)}"


def _switch(ty: str, value: str, default: str, cases) -> str:
    listed = " ".join(f"{ty} {c}, label {_label(label)}" for c, label in cases)
    return f"switch {ty} {value}, label {_label(default)} [ {listed} ]"


def _binop(op: str, flags: str, ty: str, a: str, b: str) -> str:
    return f"{op} {flags} {ty} {a}, {b}" if flags else f"{op} {ty} {a}, {b}"


def _fneg(flags: str, ty: str, a: str) -> str:
    return f"fneg {flags} {ty} {a}" if flags else f"fneg {ty} {a}"


def _cmp(op: str, predicate: str, ty: str, a: str, b: str) -> str:
    return f"{op} {predicate} {ty} {a}, {b}"


def _select(cond: str, ty: str, a: str, b: str) -> str:
    return f"select i1 {cond}, {ty} {a}, {ty} {b}"


def _cast(op: str, src_ty: str, value: str, ty: str) -> str:
    return f"{op} {src_ty} {value} to {ty}"


def _load(ty: str, ptr: str, align: int | None) -> str:
    return f"load {ty}, ptr {ptr}{_align(align)}"


def _store(ty: str, value: str, ptr: str, align: int | None) -> str:
    return f"store {ty} {value}, ptr {ptr}{_align(align)}"


def _call(ty: str, callee: str, texts: list[str]) -> str:
    return f"call {ty} {callee}({', '.join(texts)})"


def _aggregate(op: str, operands, indices) -> str:
    return f"{op} {_args(operands)}, {', '.join(map(str, indices))}"


def _phi(ty: str, incoming) -> str:
    return f"phi {ty} " + ", ".join(f"[ {v}, {_label(b)} ]" for v, b in incoming)


def _print_made(inst: Instruction) -> str:
    op, ty, ops = inst.opcode, inst.type, inst.operands
    if op in BINARY_OPS:
        body = _binop(op, inst.flags, ty, ops[0][1], ops[1][1])
    elif op == "fneg":
        body = _fneg(inst.flags, ty, ops[0][1])
    elif op in ("fcmp", "icmp"):
        body = _cmp(op, inst.predicate, ops[0][0], ops[0][1], ops[1][1])
    elif op == "select":
        body = _select(ops[0][1], ty, ops[1][1], ops[2][1])
    elif op in CAST_OPS:
        body = _cast(op, ops[0][0], ops[0][1], ty)
    elif op == "load":
        body = _load(ty, ops[0][1], inst.align)
    elif op == "store":
        body = _store(ops[0][0], ops[0][1], ops[1][1], inst.align)
    elif op == "alloca":
        body = _alloca(inst.source_type, inst.align)
    elif op == "getelementptr":
        body = _gep(inst.flags, inst.source_type, ops)
    elif op == "atomicrmw":
        body = f"atomicrmw {inst.operation} {_args(ops)} {inst.ordering}{_align(inst.align)}"
    elif op == "call":
        body = _call(inst.call_type or ty, inst.callee, inst.arg_texts)
    elif op in ("extractvalue", "insertvalue"):
        body = _aggregate(op, ops, inst.indices)
    elif op in ("extractelement", "insertelement"):
        body = f"{op} {_args(ops)}"
    elif op == "phi":
        body = _phi(ty, inst.incoming)
    elif op == "ret":
        body = _ret(ops[0][0], ops[0][1]) if ops else _ret("void", None)
    elif op == "br":
        body = _br(inst.targets[0]) if not ops else \
            f"br i1 {ops[0][1]}, label {_label(inst.targets[0])}, label {_label(inst.targets[1])}"
    elif op == "switch":
        body = _switch(ty, ops[0][1], inst.targets[0], inst.cases)
    else:
        raise ValueError(f"the IR builder does not make '{op}'")
    return f"  {inst.result} = {body}" if inst.result else f"  {body}"


def print_instruction(inst: Instruction) -> str:
    """An instruction as IR text: from its fields when the builder made it, else its parsed
    text without `!dbg` (derived code carries no debug locations of the primal)."""
    if isinstance(inst, InsertPoint):
        raise InternalError(f"derived code printed with an unfilled {inst.kind} insertion point")
    if not inst.text:
        return _print_made(inst)
    return _without_dbg(inst.text)


def print_block(label: str, instructions: list[Instruction]) -> list[str]:
    """A block's lines: its label, then its instructions."""
    return [f"{make_name('%', label)[1:]}:"] + [print_instruction(i) for i in instructions]
