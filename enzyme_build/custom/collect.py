"""Build a Registry from the registration globals in a whole-program module's textual IR.

Pure text (no llvmlite): the link step passes `Module.text()`, read through ir/model.py's
parser (headers, globals and constants only; no function body is parsed). Recognized globals
(matched by name prefix, so llvm-link's `.1` suffixes and `_X` parts don't matter):

| global                                   | initializer                 |
| ---------------------------------------- | --------------------------- |
| `__enzyme_register_gradient*`            | `{f, augment, gradient}`    |
| `__enzyme_register_derivative*`          | `{f, forward}`              |
| `__enzyme_inactivefn*`                   | `{f, g, ...}` (all inactive) |
| `__enzyme_function_like*`                | `{f, "libm name"}`          |
| `__enzyme_build_rule_<kind>_*`           | `{f, rule}` (from attributes, see frontend/attributes.py) |
| `__enzyme_build_batch_derivative_*`      | `{f, forward_batch}` (see CustomRule; rule libraries) |
| `__enzyme_build_null_shadows_*`          | `{f, "one letter per parameter"}` (see CustomRule) |
| `__enzyme_build_cache_mask_*`            | `{f, "one letter per parameter"}` (see CustomRule) |

Call it right after linking and before any optimization: the compile step's embedded
bitcode does not keep `used`, so optimization may delete the globals (and rule functions
only they reference). Keep `Registry.referenced_functions()` alive until AD is done.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import EnzymeBuildError
from ..ir.model import Module, aggregate_items, global_initializer, header_signature, parse_module, take_type
from . import convention
from .registry import CustomRule, Registry

_NAME = r'(?:"(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)'
_GLOBAL_NAME = re.compile(rf"@({_NAME}) = ")

GRADIENT_PREFIX = "__enzyme_register_gradient"
DERIVATIVE_PREFIX = "__enzyme_register_derivative"
INACTIVE_PREFIX = "__enzyme_inactivefn"
INACTIVE_NOBLOCK_PREFIX = "__enzyme_inactivenoblockfn"
INACTIVE_GLOBAL_PREFIX = "__enzyme_inactive_global"
FUNCTION_LIKE_PREFIX = "__enzyme_function_like"
ALLOCATION_LIKE_PREFIX = "__enzyme_allocation_like"
SHADOW_PREFIX = "__enzyme_shadow"
# Enzyme matches these anywhere in the name (`_ZL…__enzyme_inactivefn_autoreg_f` from a C++
# static works too); the order decides between overlapping spellings
_ENZYME_FAMILIES = (GRADIENT_PREFIX, DERIVATIVE_PREFIX, INACTIVE_NOBLOCK_PREFIX, INACTIVE_GLOBAL_PREFIX,
                    INACTIVE_PREFIX, FUNCTION_LIKE_PREFIX, ALLOCATION_LIKE_PREFIX)
ATTRIBUTE_PREFIX = "__enzyme_build_rule_"
BATCH_PREFIX = "__enzyme_build_batch_derivative_"
NULL_SHADOWS_PREFIX = "__enzyme_build_null_shadows_"
CACHE_MASK_PREFIX = "__enzyme_build_cache_mask_"
RULE_KINDS = convention.RULE_KINDS

FLOAT_TYPES = {"half", "bfloat", "float", "double", "x86_fp80", "fp128", "ppc_fp128"}


def _unquote(name: str) -> str:
    if name.startswith('"'):
        body = name[1:-1]
        return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), body)
    return name


def classify_ir_type(type_text: str) -> str:
    """'float', 'pointer', 'int', 'void' or 'aggregate'."""
    if type_text in FLOAT_TYPES:
        return "float"
    if type_text == "ptr" or type_text.startswith("ptr addrspace"):
        return "pointer"
    if re.fullmatch(r"i\d+", type_text):
        return "int"
    if type_text == "void":
        return "void"
    return "aggregate"


@dataclass(frozen=True)
class Signature:
    """A function's IR signature as far as the convention checks need it."""

    name: str
    defined: bool
    result: str
    params: tuple[str, ...]
    abi_rewritten: bool   # sret/byval/inalloca or varargs: C arity is not visible


def parse_functions(module_text: str | Module) -> dict[str, Signature]:
    """Every define/declare in the module, by (unquoted) name."""
    module = parse_module(module_text) if isinstance(module_text, str) else module_text
    lines = [(True, module.functions.header(n)) for n in module.functions] + \
        [(False, line) for line in module.declarations.values()]
    functions = {}
    for defined, line in lines:
        header = header_signature(line)
        if header is None:
            continue
        written, result, params = header
        abi = "..." in params or any(re.search(r"\b(sret|byval|inalloca|preallocated)\b", p)
                                     for p in params)
        name = _unquote(written)
        functions[name] = Signature(name, defined, result, tuple(take_type(p)[0] for p in params), abi)
    return functions


def _decode_c_string(body: str) -> str:
    text = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), body)
    return text.split("\0", 1)[0]


@dataclass(frozen=True)
class GlobalDef:
    name: str
    initializer: str | None   # None for declarations (external global without a value)


def parse_globals(module_text: str | Module) -> dict[str, GlobalDef]:
    """Global variables with their initializer text (after the value type)."""
    module = parse_module(module_text) if isinstance(module_text, str) else module_text
    result = {}
    for line in module.globals.values():
        m = _GLOBAL_NAME.match(line)
        if m:
            name = _unquote(m.group(1))
            result[name] = GlobalDef(name, global_initializer(line))
    return result


def initializer_elements(initializer: str) -> list[str]:
    """The elements of an array or struct initializer (`[ptr @f, ptr @g]`, `{ ptr @f, ptr
    @.str }`), or the one pointer of `void *__enzyme_inactivefn_f = (void *)f;` (empty for
    anything else)."""
    text = initializer.strip()
    items = aggregate_items(text)
    if items is not None:
        return items
    if text.startswith(("@", "bitcast", "getelementptr", "addrspacecast")):
        return [text]
    return []


def element_symbol(element: str) -> str | None:
    """'f' for `ptr @f` (also through a constant cast or getelementptr); None for null."""
    match = re.search(rf"@({_NAME})", element)
    return _unquote(match.group(1)) if match else None


def _string_value(name: str, globals_: dict[str, GlobalDef]) -> str | None:
    definition = globals_.get(name)
    if not definition or not definition.initializer:
        return None
    match = re.match(r'c"(.*)"$', definition.initializer)
    return _decode_c_string(match.group(1)) if match else None


# ---------------------------------------------------------------------------
# building the registry


def _registration_kind(name: str) -> str | None:
    for prefix in _ENZYME_FAMILIES:
        if prefix in name:
            return prefix
    if name.startswith(SHADOW_PREFIX):   # `__enzyme_shadow_global_g = {&g, &d_g}`
        return SHADOW_PREFIX
    for prefix in (BATCH_PREFIX, NULL_SHADOWS_PREFIX, CACHE_MASK_PREFIX):
        if name.startswith(prefix):
            return prefix
    if name.startswith(ATTRIBUTE_PREFIX) or _mangled_attribute_name(name):
        return ATTRIBUTE_PREFIX
    return None


def _mangled_attribute_name(name: str) -> str | None:
    """The registration a C++ TU made for a static f: a static variable is mangled even
    in a namespace's extern "C" (`_ZL53__enzyme_build_rule_…`, `_ZN4physL53__enzyme…E`)."""
    if not name.startswith("_Z"):
        return None
    match = re.search(r"(\d+)" + ATTRIBUTE_PREFIX, name)
    if match is None:
        return None
    start = match.start() + len(match.group(1))
    return name[start:start + int(match.group(1))]


def describe_origin(global_name: str, kind: str, rule: str) -> str:
    """How an error names where a rule came from."""
    if global_name.startswith(ATTRIBUTE_PREFIX) or _mangled_attribute_name(global_name):
        return f'__attribute__((enzyme("{kind}", {rule})))'
    return global_name


def _set_rule(registry: Registry, function: str, kind: str, rule: str, origin: str) -> None:
    entry = registry.rules.setdefault(function, CustomRule(function))
    existing = getattr(entry, kind)
    if existing is not None and existing != rule:
        first = describe_origin(entry.origins.get(kind, "?"), kind, existing)
        raise EnzymeBuildError(
            f"conflicting {kind} rules for {function}: {existing} (from {first}) and "
            f"{rule} (from {describe_origin(origin, kind, rule)})",
            location=function, hint=f"keep one {kind} rule for {function}")
    setattr(entry, kind, rule)
    entry.origins.setdefault(kind, origin)


def _symbols(global_name: str, elements: list[str], count: int | None) -> list[str]:
    symbols = [element_symbol(element) for element in elements]
    if count is not None and (len(symbols) < count or None in symbols[:count]):
        raise EnzymeBuildError(
            f"registration global {global_name} must hold {count} functions, "
            f"found {{{', '.join(elements)}}}", location=global_name,
            hint={3: "void *__enzyme_register_gradient_f[3] = {(void *)f, (void *)f_aug, (void *)f_grad};",
                  2: "void *__enzyme_register_derivative_f[2] = {(void *)f, (void *)f_fwd};"}.get(count))
    return symbols


def collect_registry(module_text: str, *, check_signatures: bool = True) -> Registry:
    """Every custom rule, inactive function and function-like mapping in the module.

    Identical registrations from several TUs (a header included twice) merge; two
    different rules of one kind for one function, a rule function with no definition,
    an augment without a gradient (or the reverse) and a rule whose IR signature can't
    follow Enzyme's convention raise EnzymeBuildError naming the function.
    """
    module = parse_module(module_text)
    globals_ = parse_globals(module)
    registry = Registry()
    for name, definition in globals_.items():
        family = _registration_kind(name)
        if family is None or definition.initializer is None:
            continue
        registry.registration_globals.add(name)
        elements = initializer_elements(definition.initializer)
        if family == GRADIENT_PREFIX:
            function, augment, gradient = _symbols(name, elements, 3)[:3]
            _set_rule(registry, function, "augment", augment, name)
            _set_rule(registry, function, "gradient", gradient, name)
        elif family == DERIVATIVE_PREFIX:
            function, forward = _symbols(name, elements, 2)[:2]
            _set_rule(registry, function, "forward", forward, name)
        elif family in (INACTIVE_PREFIX, INACTIVE_NOBLOCK_PREFIX):
            registry.inactive.update(s for s in _symbols(name, elements, None) if s)
        elif family == INACTIVE_GLOBAL_PREFIX:
            registry.inactive_globals.update(s for s in _symbols(name, elements, None) if s)
        elif family == FUNCTION_LIKE_PREFIX:
            _collect_function_like(registry, name, elements, globals_)
        elif family == ALLOCATION_LIKE_PREFIX:
            _collect_allocation_like(registry, name, elements, globals_)
        elif family == SHADOW_PREFIX:
            _collect_shadow(registry, name, elements, globals_)
        elif family == BATCH_PREFIX:
            function, rule = _symbols(name, elements, 2)[:2]
            _set_rule(registry, function, "forward_batch", rule, name)
        elif family == NULL_SHADOWS_PREFIX:
            function, pattern = _symbols(name, elements, 2)[:2]
            letters = _string_value(pattern, globals_) if pattern else None
            if letters is None or set(letters) - {"o", "."}:
                raise EnzymeBuildError(f'{name} must be {{f, "one letter per parameter: o or ."}}', location=name)
            _set_rule(registry, function, "null_shadows", letters, name)
        elif family == CACHE_MASK_PREFIX:
            function, pattern = _symbols(name, elements, 2)[:2]
            letters = _string_value(pattern, globals_) if pattern else None
            if letters is None or set(letters) - convention.CACHE_MASK_LETTERS:
                raise EnzymeBuildError(f'{name} must be {{f, "one letter per parameter: r, w or ."}}',
                                       location=name)
            _set_rule(registry, function, "cache_mask", letters, name)
        else:
            kind = _attribute_kind(name)
            function, rule = _symbols(name, elements, 2)[:2]
            _set_rule(registry, function, kind, rule, name)
    functions = parse_functions(module)
    for rule in registry.rules.values():
        _check_rule(rule, functions, check_signatures)
    registry.struct_params = struct_parameter_groups(module_text, module)
    return registry


# ---------------------------------------------------------------------------
# structs passed by value in registers (forward mode pairs them as a whole)

_FORWARD_TARGET = re.compile(rf"@__enzyme_fwddiff[-a-zA-Z$._0-9]*\((?:ptr|i8\*) (?:noundef )?@({_NAME})[,)]")
# the front end's spill of a coerced struct: a GEP into the coercion type `{ T0, T1 }` ...
_COERCE_GEP = re.compile(r"^\s*(%[-a-zA-Z$._0-9]+) = getelementptr inbounds (?:nuw )?\{ [^{}]+ \}, "
                         r"ptr (%[-a-zA-Z$._0-9]+), i32 0, i32 (\d+)\s*$")
# ... and the store of one incoming parameter into it
_PARAM_STORE = re.compile(r"^\s*store (?:<[^>]*>|\S+) (%[-a-zA-Z$._0-9]+), ptr (%[-a-zA-Z$._0-9]+)\b")


def struct_parameter_groups(module_text: str, module: Module | None = None
                            ) -> dict[str, tuple[int, tuple[tuple[int, ...], ...]]]:
    """For the functions forward mode differentiates: which consecutive parameters are the
    pieces of one struct the ABI split into registers (x86-64 passes `struct {double x, y;}`
    as two doubles). Only the unoptimized body shows it: the entry block stores the pieces
    into the fields of one coercion-typed alloca."""
    targets = {_unquote(m.group(1)) for m in _FORWARD_TARGET.finditer(module_text)}
    found = {}
    if not targets:
        return found
    module = module or parse_module(module_text)
    for name in module.functions:
        written, _, params = header_signature(module.functions.header(name))
        if _unquote(written) not in targets:
            continue
        params = [p.split()[-1] for p in params]
        groups = _coerced_groups(module.functions.body_lines(name)[1:], params)
        if groups:
            found[_unquote(written)] = (len(params), groups)
    return found


def _coerced_groups(body: list[str], params: list[str]) -> tuple[tuple[int, ...], ...]:
    position = {p: k for k, p in enumerate(params) if p.startswith("%")}
    field_of: dict[str, str] = {}            # GEP result -> the struct alloca it points into
    members: dict[str, list[int]] = {}       # struct alloca -> parameter positions stored
    for line in body:
        if not line.strip():
            break                              # the entry block ends at the first blank line
        gep = _COERCE_GEP.match(line)
        if gep:
            field_of[gep.group(1)] = gep.group(2)
            continue
        store = _PARAM_STORE.match(line)
        if store and store.group(1) in position and store.group(2) in field_of:
            members.setdefault(field_of[store.group(2)], []).append(position[store.group(1)])
    groups = []
    for positions in members.values():
        positions.sort()
        if len(positions) > 1 and positions == list(range(positions[0], positions[0] + len(positions))):
            groups.append(tuple(positions))
    return tuple(sorted(groups))


def _attribute_kind(name: str) -> str:
    rest = (_mangled_attribute_name(name) or name)[len(ATTRIBUTE_PREFIX):]
    for kind in RULE_KINDS:
        if rest.startswith(kind + "_"):
            return kind
    raise EnzymeBuildError(f"unknown rule kind in registration global {name}", location=name)


def _collect_function_like(registry, name, elements, globals_) -> None:
    symbols = _symbols(name, elements, 2)
    function, string_global = symbols[0], symbols[1]
    libm_name = _string_value(string_global, globals_)
    if libm_name is None:
        raise EnzymeBuildError(
            f"{name} must be {{function, \"libm name\"}}", location=name,
            hint='void *__enzyme_function_like[2] = {(void *)my_log1p, "log1p"};')
    existing = registry.function_like.get(function)
    if existing is not None and existing != libm_name:
        raise EnzymeBuildError(
            f"conflicting function-like registrations for {function}: {existing} and {libm_name}",
            location=name)
    registry.function_like[function] = libm_name


def _collect_shadow(registry, name, elements, globals_) -> None:
    """`{&g, &d_g}`: the user's global d_g is the shadow of the global g (Enzyme's
    `!enzyme_shadow` metadata; `__attribute__((enzyme_shadow(d_g)))` on g makes one)."""
    symbols = [element_symbol(e) for e in elements]
    if len(symbols) != 2 or None in symbols or any(s not in globals_ for s in symbols):
        raise EnzymeBuildError(
            f"{name} must be {{&global, &its_shadow}} (two global variables), found "
            f"{{{', '.join(elements)}}}", location=name,
            hint="void *__enzyme_shadow_global_g[2] = {(void *)&g, (void *)&d_g};")
    primal, shadow = symbols
    existing = registry.shadow_globals.get(primal)
    if existing is not None and existing != shadow:
        raise EnzymeBuildError(f"conflicting shadows for the global {primal}: {existing} and {shadow}",
                               location=name, hint=f"give {primal} one shadow")
    registry.shadow_globals[primal] = shadow


def _collect_allocation_like(registry, name, elements, globals_) -> None:
    """Enzyme's `{allocator, (void *)size_argument_index, "free argument index", deallocator}`."""
    if len(elements) != 4 or element_symbol(elements[0]) is None:
        raise EnzymeBuildError(
            f"{name} must be {{allocator, (void *)size_index, \"free_index\", deallocator}}",
            location=name, hint='void *__enzyme_allocation_like[4] = {(void *)my_alloc, (void *)0, '
                                '(void *)"-1", (void *)my_free};')
    index = re.search(r"inttoptr \(i\d+ (\d+) to", elements[1])
    size_index = int(index.group(1)) if index else 0 if "null" in elements[1] else None
    free_string = element_symbol(elements[2])
    free_index = _string_value(free_string, globals_) if free_string else None
    deallocator = element_symbol(elements[3])
    if size_index is None or free_index is None or deallocator is None:
        raise EnzymeBuildError(
            f"{name} must be {{allocator, (void *)size_index, \"free_index\", deallocator}}, found "
            f"{{{', '.join(elements)}}}", location=name)
    registry.allocation_like[element_symbol(elements[0])] = (size_index, free_index, deallocator)


# ---------------------------------------------------------------------------
# Enzyme's convention, checked on IR signatures


def _classes(primal: Signature) -> tuple[list[str], str] | None:
    classes = [classify_ir_type(p) for p in primal.params]
    result = classify_ir_type(primal.result)
    if primal.abi_rewritten or "aggregate" in classes or result == "aggregate":
        return None
    return classes, result


def augment_shape(primal: Signature, augment: Signature | None) -> str | None:
    """What the augment rule returns for `primal` (a convention.AUGMENT_* shape; None if unknown)."""
    found = _classes(primal)
    if found is None or augment is None:
        return None
    result = classify_ir_type(augment.result)
    return convention.augment_result(found[1], "struct" if result == "aggregate" else result)


def expected_rule_arity(kind: str, primal: Signature, augment: Signature | None = None,
                        cache_mask: bool = False) -> int | None:
    """How many IR parameters a ``kind`` rule for ``primal`` takes (None if unknowable), by
    enzyme_build.custom.convention; a gradient's count depends on whether ``augment`` (the
    augment rule's signature, if known) returns a tape; ``cache_mask``: the reverse rules take
    the two masks of __enzyme_build_cache_mask_f."""
    found = _classes(primal)
    if found is None:
        return None
    shape = augment_shape(primal, augment) if kind == "gradient" else None
    return convention.expected_arity(kind, found[0], found[1], shape, cache_mask=cache_mask)


def _check_rule(rule: CustomRule, functions: dict[str, Signature], check_signatures: bool) -> None:
    if (rule.augment is None) != (rule.gradient is None):
        have, missing = ("augment", "gradient") if rule.gradient is None else ("gradient", "augment")
        raise EnzymeBuildError(
            f"{rule.function} has a custom {have} rule ({getattr(rule, have)}) but no {missing} rule",
            location=rule.function,
            hint=f'add __attribute__((enzyme("{missing}", ...))) to a declaration of '
                 f"{rule.function}; reverse mode needs both")
    if (rule.null_shadows or rule.forward_batch) and not (rule.gradient or rule.forward):
        raise EnzymeBuildError(
            f"{rule.function} is registered with {', '.join(rule.origins.get(k, k) for k in ('null_shadows', 'forward_batch') if getattr(rule, k))} "
            f"but has no derivative rules", location=rule.function,
            hint=f"register its rules too: __enzyme_register_gradient_{rule.function} / "
                 f"__enzyme_register_derivative_{rule.function}")
    if rule.cache_mask is not None:
        _check_cache_mask(rule, functions.get(rule.function))
    if rule.forward_batch and not (functions.get(rule.forward_batch) and functions[rule.forward_batch].defined):
        raise EnzymeBuildError(f"the batch forward rule {rule.forward_batch} of {rule.function} is not defined "
                               f"in the program", location=rule.function,
                               hint=f"define {rule.forward_batch} in a source built with enzyme-build (or fix the name)")
    primal = functions.get(rule.function)
    for kind in RULE_KINDS:
        name = getattr(rule, kind)
        if name is None:
            continue
        signature = functions.get(name)
        if signature is None or not signature.defined:
            raise EnzymeBuildError(
                f"the {kind} rule {name} of {rule.function} is not defined in the program",
                location=rule.function,
                hint=f"define {name} in a source built with enzyme-build (or fix the name)")
        if not check_signatures or primal is None or signature.abi_rewritten:
            continue
        augment = functions.get(rule.augment) if rule.augment else None
        expected = expected_rule_arity(kind, primal, augment,
                                       cache_mask=rule.cache_mask is not None and kind != "forward")
        if expected is not None and len(signature.params) != expected:
            raise EnzymeBuildError(
                f"the {kind} rule {name} of {rule.function} takes {len(signature.params)} "
                f"parameter(s) ({', '.join(signature.params) or 'none'}); Enzyme's convention "
                f"for {rule.function}({', '.join(primal.params)}) -> {primal.result} needs {expected}",
                location=rule.function, hint=_convention_hint(kind))


def _check_cache_mask(rule: CustomRule, primal: Signature | None) -> None:
    """A cache-mask registration needs both reverse rules and one letter per parameter of f,
    'r' or 'w' exactly at its pointers."""
    origin = rule.origins.get("cache_mask", "the cache-mask registration")
    if not (rule.augment and rule.gradient):
        raise EnzymeBuildError(f"{rule.function} is registered with {origin} but has no augment and gradient rules",
                               location=rule.function,
                               hint=f"register them: __enzyme_register_gradient_{rule.function}")
    if primal is None or primal.abi_rewritten:
        return
    pointers = [classify_ir_type(t) == "pointer" for t in primal.params]
    expected = "".join("p" if p else "." for p in pointers)
    given = "".join("p" if c in "rw" else "." for c in rule.cache_mask)
    if given != expected or len(pointers) > convention.CACHE_MASK_MAX_PARAMS:
        raise EnzymeBuildError(
            f'{origin} gives "{rule.cache_mask}" for {rule.function}({", ".join(primal.params)}): '
            f"it needs one letter per parameter, 'r' (only read) or 'w' (written) at each pointer "
            f"and '.' elsewhere (at most {convention.CACHE_MASK_MAX_PARAMS} parameters)",
            location=rule.function)


def _convention_hint(kind: str) -> str:
    return convention.describe(kind)
