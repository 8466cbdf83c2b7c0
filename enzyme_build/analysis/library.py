"""What the engine knows about library functions (libc, libm, libstdc++), in one table each for
functions and for math, and the views the analyses and sweeps ask for.

`LIBRARY` maps a function name to its facts: allocates (which arguments multiply to the new
block's size), frees, inactive (no derivative flows through it), writes through its pointer
arguments, fills data buffers, formatted output through a va_list. `MATH` maps a libm base
name (`sin`, with `sinf`/`sinl` and `llvm.sin.f64`/`.f32` spellings) to its arity, whether
LLVM has an intrinsic of that name, whether libm has the function at all, and whether the
reverse sweep may reuse a primal call of it. The derivative rules themselves live in
ad/rules/table.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class LibraryFunction:
    allocates: tuple[int, ...] | None = None  # arguments whose product is the size of the new block
    frees: bool = False
    inactive: bool = False        # carries no derivative (I/O, sizes, string helpers, integer results)
    writes_args: bool = False     # writes through its pointer arguments (buffers, out-parameters)
    fills_buffers: bool = False   # writes data (possibly floats) the engine must see into a buffer
    va_output: bool = False       # formatted output through a va_list: reads its arguments only
    # the shadow of a block it allocates is allocated by the same function (its blocks come
    # zeroed) and released by this deallocator instead of malloc/free
    released_by: str | None = None
    # links (or walks) the nodes of a node-based container (std::map/std::set's red-black
    # tree, std::list) in compiled libstdc++ code: nodes holding differentiated data have
    # shadow nodes, which the same call on the shadows links (or walks) alike
    # (ad/sweep.py: mirror_node_call)
    links_nodes: bool = False


_ALLOC = LibraryFunction
_INACTIVE = LibraryFunction(inactive=True)
_FREE = LibraryFunction(frees=True, inactive=True)
_NODE_LINKER = LibraryFunction(inactive=True, writes_args=True, links_nodes=True)
_NODE_WALKER = LibraryFunction(inactive=True, links_nodes=True)

LIBRARY: dict[str, LibraryFunction] = {
    # ---- allocation
    "malloc": _ALLOC(allocates=(0,)),
    "calloc": _ALLOC(allocates=(0, 1)),
    "realloc": _ALLOC(allocates=(1,)),
    "aligned_alloc": _ALLOC(allocates=(1,)),
    "memalign": _ALLOC(allocates=(1,)), "valloc": _ALLOC(allocates=(0,)), "pvalloc": _ALLOC(allocates=(0,)),
    "_Znwm": _ALLOC(allocates=(0,)),                         # operator new(size)
    "_Znam": _ALLOC(allocates=(0,)),                         # operator new[](size)
    "_ZnwmSt11align_val_t": _ALLOC(allocates=(0,)),          # operator new(size, align)
    "_ZnamSt11align_val_t": _ALLOC(allocates=(0,)),
    # the nothrow forms (std::get_temporary_buffer: std::stable_sort's and inplace_merge's buffer)
    "_ZnwmRKSt9nothrow_t": _ALLOC(allocates=(0,)),           # operator new(size, nothrow)
    "_ZnamRKSt9nothrow_t": _ALLOC(allocates=(0,)),
    "_ZnwmSt11align_val_tRKSt9nothrow_t": _ALLOC(allocates=(0,)),
    "_ZnamSt11align_val_tRKSt9nothrow_t": _ALLOC(allocates=(0,)),
    # the engine's own fixed-capacity blocks (nested-AD tapes, ad/tape.py): zeroed address
    # space reserved once and never moved, so no derivative has to follow a copy of them
    "__enzyme_build_cells_alloc": _ALLOC(allocates=(0,), released_by="__enzyme_build_cells_free"),
    "__enzyme_build_cells_free": _FREE,
    "__enzyme_build_cells_full": _INACTIVE,
    # ---- deallocation
    "free": _FREE,
    "_ZdlPv": _FREE, "_ZdaPv": _FREE, "_ZdlPvm": _FREE, "_ZdaPvm": _FREE,
    # over-aligned deletes free like the others (not listed as inactive before: kept so)
    "_ZdlPvSt11align_val_t": LibraryFunction(frees=True),
    "_ZdlPvmSt11align_val_t": LibraryFunction(frees=True),
    "_ZdaPvSt11align_val_t": LibraryFunction(frees=True),
    "_ZdaPvmSt11align_val_t": LibraryFunction(frees=True),
    "_ZdlPvRKSt9nothrow_t": _FREE, "_ZdaPvRKSt9nothrow_t": _FREE,
    "_ZdlPvSt11align_val_tRKSt9nothrow_t": _FREE, "_ZdaPvSt11align_val_tRKSt9nothrow_t": _FREE,
    # ---- I/O
    "printf": _INACTIVE, "fprintf": _INACTIVE, "puts": _INACTIVE, "fputs": _INACTIVE,
    "putchar": _INACTIVE, "fputc": _INACTIVE, "fflush": _INACTIVE, "fwrite": _INACTIVE,
    "fopen": _INACTIVE, "fclose": _INACTIVE, "perror": _INACTIVE,
    "sprintf": LibraryFunction(inactive=True, writes_args=True),
    "snprintf": LibraryFunction(inactive=True, writes_args=True),
    "fread": LibraryFunction(inactive=True, writes_args=True, fills_buffers=True),
    "vprintf": LibraryFunction(va_output=True), "vfprintf": LibraryFunction(va_output=True),
    "vsnprintf": LibraryFunction(va_output=True), "vsprintf": LibraryFunction(va_output=True),
    "vdprintf": LibraryFunction(va_output=True), "dprintf": LibraryFunction(va_output=True),
    # ---- process, time, randomness, environment
    "exit": _INACTIVE, "abort": _INACTIVE, "__assert_fail": _INACTIVE, "assert": _INACTIVE,
    "time": LibraryFunction(inactive=True, writes_args=True), "clock": _INACTIVE,
    "rand": _INACTIVE, "srand": _INACTIVE, "getenv": _INACTIVE, "__stack_chk_fail": _INACTIVE,
    "__errno_location": _INACTIVE, "malloc_usable_size": _INACTIVE,
    "__cxa_guard_acquire": LibraryFunction(inactive=True, writes_args=True),
    "__cxa_guard_release": LibraryFunction(inactive=True, writes_args=True),
    # ---- strings and conversions
    "strlen": _INACTIVE, "strcmp": _INACTIVE, "strncmp": _INACTIVE, "memcmp": _INACTIVE,
    # LLVM turns `memcmp(a, b, n) == 0` into bcmp
    "bcmp": _INACTIVE, "strnlen": _INACTIVE, "memchr": _INACTIVE,
    "strcasecmp": _INACTIVE, "strncasecmp": _INACTIVE,
    "strcpy": LibraryFunction(inactive=True, writes_args=True),
    "atoi": _INACTIVE, "atof": _INACTIVE,
    "strtod": LibraryFunction(inactive=True, writes_args=True),
    "strtol": LibraryFunction(inactive=True, writes_args=True),
    # ---- classification and libm results that are integers: no derivative flows through them
    "isnan": _INACTIVE, "isinf": _INACTIVE, "__isnan": _INACTIVE, "__isinf": _INACTIVE,
    "__fpclassify": _INACTIVE, "__isnanf": _INACTIVE, "__isinff": _INACTIVE, "__finite": _INACTIVE,
    "__finitef": _INACTIVE, "finite": _INACTIVE, "__signbit": _INACTIVE, "__signbitf": _INACTIVE,
    "lround": _INACTIVE, "lroundf": _INACTIVE, "lrint": _INACTIVE, "lrintf": _INACTIVE,
    "llround": _INACTIVE, "llroundf": _INACTIVE, "llrint": _INACTIVE, "llrintf": _INACTIVE,
    "ilogb": _INACTIVE, "ilogbf": _INACTIVE,
    # ---- more process, time and randomness (random numbers carry no derivative of the inputs)
    "gettimeofday": LibraryFunction(inactive=True, writes_args=True),
    "clock_gettime": LibraryFunction(inactive=True, writes_args=True),
    "nanosleep": _INACTIVE, "usleep": _INACTIVE, "sleep": _INACTIVE,
    "random": _INACTIVE, "srandom": _INACTIVE, "drand48": _INACTIVE, "srand48": _INACTIVE,
    "rand_r": LibraryFunction(inactive=True, writes_args=True),
    "__cxa_atexit": _INACTIVE, "atexit": _INACTIVE,
    "strchr": _INACTIVE, "strrchr": _INACTIVE, "strstr": _INACTIVE, "strncpy": LibraryFunction(
        inactive=True, writes_args=True), "strcat": LibraryFunction(inactive=True, writes_args=True),
    "strdup": _INACTIVE, "toupper": _INACTIVE, "tolower": _INACTIVE,
    # ---- libstdc++: iostream inserters (operator<< of numbers, strings, endl, flush)
    **{f"_ZNSo9_M_insertI{t}EERSoT_": _INACTIVE for t in ("d", "e", "l", "m", "x", "y", "b", "PKv")},
    **{f"_ZNSols{t}": _INACTIVE for t in ("Ei", "Es", "Ej", "Et", "Ed", "Ef", "Ee", "El", "Em", "Ex",
                                         "Ey", "Eb", "EPKv", "EPFRSoS_E", "EPFRSt8ios_baseS0_E")},
    "_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc": _INACTIVE,
    "_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_c": _INACTIVE,
    "_ZStlsIcSt11char_traitsIcESaIcEERSt13basic_ostreamIT_T0_ES7_RKNSt7__cxx1112basic_stringIS4_S5_T1_EE":
        _INACTIVE,
    "_ZNSo3putEc": _INACTIVE, "_ZNSo5flushEv": _INACTIVE, "_ZNSo5writeEPKcl": _INACTIVE,
    "_ZSt16__ostream_insertIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_PKS3_l": _INACTIVE,
    "_ZSt4endlIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_": _INACTIVE,
    "_ZNKSt5ctypeIcE13_M_widen_initEv": _INACTIVE, "_ZNSt9basic_iosIcSt11char_traitsIcEE5clearESt12_Ios_Iostate": _INACTIVE,
    "_ZNSt8ios_base4InitC1Ev": _INACTIVE, "_ZNSt8ios_base4InitD1Ev": _INACTIVE,
    "_ZNSt6localeC1Ev": _INACTIVE, "_ZNSt6localeD1Ev": _INACTIVE,
    # ---- libstdc++: hashing and the hash tables' rehash policy (integers only)
    "_ZSt11_Hash_bytesPKvmm": _INACTIVE, "_ZSt15_Fnv_hash_bytesPKvmm": _INACTIVE,
    "_ZNKSt8__detail20_Prime_rehash_policy14_M_need_rehashEmmm": _INACTIVE,
    "_ZNKSt8__detail20_Prime_rehash_policy11_M_next_bktEm": _INACTIVE,
    "_ZNSt8__detail15_List_node_base7_M_hookEPS0_": _NODE_LINKER,
    "_ZNSt8__detail15_List_node_base9_M_unhookEv": _NODE_LINKER,
    "_ZSt18_Rb_tree_incrementPSt18_Rb_tree_node_base": _NODE_WALKER,
    "_ZSt18_Rb_tree_decrementPSt18_Rb_tree_node_base": _NODE_WALKER,
    "_ZSt18_Rb_tree_incrementPKSt18_Rb_tree_node_base": _NODE_WALKER,
    "_ZSt18_Rb_tree_decrementPKSt18_Rb_tree_node_base": _NODE_WALKER,
    "_ZSt29_Rb_tree_insert_and_rebalancebPSt18_Rb_tree_node_baseS0_RS_": _NODE_LINKER,
    "_ZSt28_Rb_tree_rebalance_for_erasePSt18_Rb_tree_node_baseRS_": _NODE_LINKER,
    # ---- libstdc++: std::string (characters only; they write into the string object)
    **{f"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE{m}": LibraryFunction(
        inactive=True, writes_args=True) for m in (
        "9_M_createERmm", "9_M_mutateEmmPKcm", "10_M_replaceEmmPKcm", "9_M_appendEPKcm",
        "9_M_assignERKS4_", "7reserveEm", "8_M_eraseEmm", "4swapERS4_", "14_M_replace_auxEmmmc",
        "12_M_constructEmc", "6resizeEmc")},
    **{f"_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE{m}": _INACTIVE for m in (
        "7compareEPKc", "7compareERKS4_", "4findEPKcmm", "4findEcm", "5rfindEcm", "6substrEmm")},
    # ---- libstdc++: exceptions and their helpers (control flow, no values)
    "__cxa_allocate_exception": _INACTIVE, "__cxa_free_exception": _INACTIVE,
    "__cxa_throw": _INACTIVE, "__cxa_rethrow": _INACTIVE, "__cxa_begin_catch": _INACTIVE,
    "__cxa_end_catch": _INACTIVE, "__cxa_call_unexpected": _INACTIVE, "_Unwind_Resume": _INACTIVE,
    "__cxa_pure_virtual": _INACTIVE, "_ZSt9terminatev": _INACTIVE,
    **{name: _INACTIVE for name in (
        "_ZSt17__throw_bad_allocv", "_ZSt20__throw_length_errorPKc", "_ZSt19__throw_logic_errorPKc",
        "_ZSt20__throw_out_of_rangePKc", "_ZSt24__throw_out_of_range_fmtPKcz",
        "_ZSt28__throw_bad_array_new_lengthv", "_ZSt16__throw_bad_castv",
        "_ZSt25__throw_bad_function_callv", "_ZSt21__throw_runtime_errorPKc",
        "_ZSt24__throw_invalid_argumentPKc", "_ZSt20__throw_system_errori")},
    # ---- _FORTIFY_SOURCE's checked forms mean what the unchecked ones mean (the memory
    # copies are lowered to the llvm.mem* intrinsics by the AD stage, with their check kept)
    "__printf_chk": _INACTIVE, "__fprintf_chk": _INACTIVE, "__puts_chk": _INACTIVE,
    "__sprintf_chk": LibraryFunction(inactive=True, writes_args=True),
    "__snprintf_chk": LibraryFunction(inactive=True, writes_args=True),
    "__strcpy_chk": LibraryFunction(inactive=True, writes_args=True),
    "__strncpy_chk": LibraryFunction(inactive=True, writes_args=True),
    "__strcat_chk": LibraryFunction(inactive=True, writes_args=True),
    "__fread_chk": LibraryFunction(inactive=True, writes_args=True, fills_buffers=True),
    "__vprintf_chk": LibraryFunction(va_output=True), "__vfprintf_chk": LibraryFunction(va_output=True),
    "__vsnprintf_chk": LibraryFunction(va_output=True), "__vsprintf_chk": LibraryFunction(va_output=True),
    "__vdprintf_chk": LibraryFunction(va_output=True), "__dprintf_chk": LibraryFunction(va_output=True),
    "__chk_fail": _INACTIVE, "__enzyme_build_check_size": _INACTIVE,
    # ---- the engine's own tape helpers (nested AD renames them when they carry tangents)
    "__enzyme_build_tape_push": _INACTIVE, "__enzyme_build_tape_pop": _INACTIVE,
}

# std::string::_M_create (makes a string's heap buffer; an extern-template member without a
# body) and the definition of it the AD stage gives the program (ad/stage.py)
STRING_CREATE = "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm"
STRING_CREATE_DEFINED = "__enzyme_build_string_create"
# the type tags of libstdc++'s strings of characters (basic_string<char>, <wchar_t>, <char8_t>,
# <char16_t>, <char32_t>): a pointer loaded from offset 0 of one (its data pointer) points to
# characters, in its own inline buffer or on the heap
STRING_TBAA_TYPES = tuple(f"_ZTSNSt7__cxx1112basic_stringI{c}St11char_traitsI{c}E"
                          for c in ("c", "w", "Du", "Ds", "Di"))

# Families of functions by mangled-name prefix: libstdc++'s std::string (basic_string<char>),
# std::allocator<char> and char_traits<char> members move characters and sizes only, and
# may write the string object they are given. At -O0 they are calls to extern-template
# instantiations with no body (`_M_local_data`, `_M_set_length`, the constructors); a string
# built inside differentiated code must not stop it.
# std::to_string and the vsnprintf-based formatter behind its floating-point overloads
# (`__gnu_cxx::__to_xstring`, variadic) write characters into the string they return: a
# value formatted into a message carries no derivative.
INACTIVE_WRITING_PREFIXES = ("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE",
                             "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE",
                             "_ZNSt11char_traitsIcE", "_ZNSaIcE", "_ZNSt15__new_allocatorIcE",
                             "_ZNKSt15__new_allocatorIcE", "_ZNSt7__cxx119to_stringE",
                             "_ZN9__gnu_cxx12__to_xstringINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEcEE")


def writes_through_args(name: str) -> bool:
    """Whether the library function `name` (no @) may write memory its pointer arguments reach."""
    return name in WRITES_THROUGH_ARGS or name.startswith(INACTIVE_WRITING_PREFIXES)


# LLVM intrinsics that carry no derivative (by name prefix)
INACTIVE_INTRINSIC_PREFIXES = ("llvm.lifetime", "llvm.dbg", "llvm.assume", "llvm.experimental.noalias",
                               "llvm.stacksave", "llvm.stackrestore", "llvm.invariant",
                               "llvm.prefetch", "llvm.umax", "llvm.umin", "llvm.smax", "llvm.smin",
                               "llvm.abs", "llvm.ctlz", "llvm.cttz", "llvm.ctpop", "llvm.bswap",
                               "llvm.is.fpclass", "llvm.objectsize", "llvm.trap", "llvm.expect",
                               "llvm.sadd", "llvm.uadd", "llvm.ssub", "llvm.usub", "llvm.smul", "llvm.umul",
                               "llvm.fshl", "llvm.fshr", "llvm.lround", "llvm.llround", "llvm.lrint",
                               "llvm.llrint", "llvm.fptosi.sat", "llvm.fptoui.sat")


@dataclass(frozen=True)
class MathFunction:
    arity: int = 1              # float operands (powi, ldexp, frexp, modf: the float one first)
    intrinsic: bool = False     # LLVM has llvm.<name>.f64 / .f32
    libm: bool = True           # libm has <name>, <name>f, <name>l
    reusable: bool = False      # the reverse sweep may reuse the primal's call of it (cos for sin')
    exponent: bool = False      # its integer operands are exponents: the result steps with them


_M = MathFunction
MATH: dict[str, MathFunction] = {
    "sqrt": _M(intrinsic=True, reusable=True), "cbrt": _M(), "pow": _M(2, intrinsic=True),
    "powi": _M(1, intrinsic=True, libm=False, exponent=True), "hypot": _M(2),
    "exp": _M(intrinsic=True, reusable=True), "exp2": _M(intrinsic=True), "exp10": _M(), "expm1": _M(),
    "log": _M(intrinsic=True, reusable=True), "log2": _M(intrinsic=True), "log10": _M(intrinsic=True),
    "log1p": _M(),
    "sin": _M(intrinsic=True, reusable=True), "cos": _M(intrinsic=True, reusable=True),
    "tan": _M(intrinsic=True), "asin": _M(), "acos": _M(), "atan": _M(), "atan2": _M(2),
    "sinh": _M(reusable=True), "cosh": _M(reusable=True), "tanh": _M(), "asinh": _M(), "acosh": _M(),
    "atanh": _M(),
    "erf": _M(), "erfc": _M(), "lgamma": _M(), "tgamma": _M(),
    "j0": _M(), "j1": _M(), "y0": _M(), "y1": _M(), "logb": _M(),
    "ldexp": _M(1, exponent=True), "scalbn": _M(1, exponent=True), "frexp": _M(1), "modf": _M(1),
    "fma": _M(3, intrinsic=True), "fmuladd": _M(3, intrinsic=True, libm=False),
    "fmod": _M(2), "remainder": _M(2), "fdim": _M(2),
    "fabs": _M(intrinsic=True), "copysign": _M(2, intrinsic=True),
    "fmin": _M(2), "fmax": _M(2),
    "minnum": _M(2, intrinsic=True, libm=False), "maxnum": _M(2, intrinsic=True, libm=False),
    "minimum": _M(2, intrinsic=True, libm=False), "maximum": _M(2, intrinsic=True, libm=False),
    "minimumnum": _M(2, libm=False), "maximumnum": _M(2, libm=False),
    "floor": _M(intrinsic=True), "ceil": _M(intrinsic=True), "trunc": _M(intrinsic=True),
    "round": _M(intrinsic=True), "rint": _M(intrinsic=True), "nearbyint": _M(intrinsic=True),
    "roundeven": _M(),
}


def library_function(name: str) -> LibraryFunction | None:
    """The facts of @name (given with or without the @), or None for a function not in the table."""
    return LIBRARY.get(name[1:] if name.startswith("@") else name)


def allocation_size_args(name: str) -> tuple[int, ...] | None:
    """The arguments whose product is the size of the block allocator @name returns."""
    f = library_function(name)
    return f.allocates if f is not None else None


# ---------------------------------------------------------------- views (by IR spelling)
def shadow_allocator(name: str) -> tuple[str, str]:
    """(allocating function, releasing function) for the shadow of a block `name` allocates:
    the allocator itself and its deallocator when the library says so, else ("", "free")
    (the engine's zeroed malloc or calloc, released by free)."""
    fact = LIBRARY.get(name)
    if fact is not None and fact.released_by:
        return name, fact.released_by
    return "", "free"


# deallocators that release their own kind of block (and its shadows): see shadow_allocator
RELEASERS = frozenset(f.released_by for f in LIBRARY.values() if f.released_by)
ALLOCATORS = frozenset("@" + n for n, f in LIBRARY.items() if f.allocates is not None)
DEALLOCATORS = frozenset("@" + n for n, f in LIBRARY.items() if f.frees)
INACTIVE_FUNCTIONS = frozenset(n for n, f in LIBRARY.items() if f.inactive)
WRITES_THROUGH_ARGS = frozenset(n for n, f in LIBRARY.items() if f.writes_args)
NODE_LINKERS = frozenset(n for n, f in LIBRARY.items() if f.links_nodes)
FILLS_BUFFERS = frozenset(n for n, f in LIBRARY.items() if f.fills_buffers)
VA_OUTPUT = frozenset(n for n, f in LIBRARY.items() if f.va_output)
INTRINSIC_MATH = frozenset(n for n, f in MATH.items() if f.intrinsic)
INTRINSIC_ONLY = frozenset(n for n, f in MATH.items() if not f.libm)
REUSABLE_MATH = frozenset(n for n, f in MATH.items() if f.reusable)


# The managers of type-punned storage: std::function's (`_Function_handler<...>::_M_manager`,
# `_Function_base::_Base_manager<...>::_M_manager`) and std::any's (`_Manager_internal` /
# `_Manager_external::_S_manage`). One routine answers several operations through the same
# bytes that hold the callable or value: `&typeid(T)` or a pointer to the stored object
# written over a destination's storage, the object itself cloned into it. The pointers they
# store say nothing about what the storage holds otherwise (analysis/memtypes.py keeps them
# as weak facts).
_STORAGE_MANAGER = re.compile(r'_ZNSt(?:17_Function_handler|14_Function_base13_Base_manager)\S*_M_manager'
                              r'|_ZNSt3any(?:17_Manager_internal|17_Manager_external)\S*_S_manage')


def manages_punned_storage(function_name: str) -> bool:
    """Whether `function_name` is a manager of type-punned storage (std::function, std::any)."""
    return _STORAGE_MANAGER.match(function_name.strip('@"')) is not None


def math_arity(base: str) -> int:
    """Float operands of the math function `base` (1 when unknown)."""
    f = MATH.get(base)
    return f.arity if f is not None else 1


_MATH_SPELLING = re.compile(r'@?"?(?:llvm\.)?([a-z0-9]+?)(?:\.(?:f64|f32|f80)(?:\.i32)?|f|l)?"?')


def math_integer_operand(callee: str, index: int) -> bool:
    """Whether operand `index` of a call of `callee` (`@ldexp`, `@scalbnf`, `@llvm.powi.f64.i32`)
    is a math function's integer parameter (an exponent): the result is a step function of it,
    so it carries no derivative."""
    m = _MATH_SPELLING.fullmatch(callee.strip())
    f = MATH.get(m.group(1)) if m else None
    return f is not None and f.exponent and index >= f.arity
