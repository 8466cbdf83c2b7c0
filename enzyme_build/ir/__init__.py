"""The engine's IR model: textual LLVM IR parsed into Module -> Function -> Block -> Instruction.

Usage: `parse_module(text)` on llvmlite's printout after the `instnamer` pass. Instructions
keep their original text (`inst.text`) so cloning is a copy; `inst.operands` holds
(type, value) pairs, `inst.values()` the local names read; calls have `callee`, phis
`incoming`, terminators `targets`, memory ops `source_type` and `metadata` (!tbaa, !dbg).
`make_name('%', base, 'suffix')` builds fresh valid names (the engine uses `$` in them,
which clang never emits).
"""
from .model import (Block, Function, Instruction, Module, Param, is_float_type,  # noqa: F401
                    make_name, parse_instruction, parse_module, source_location, split_top,
                    strip_name, tbaa_type)
