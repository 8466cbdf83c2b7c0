"""Enzyme's custom-rule convention, stated once: which parameters the augment, gradient and
forward rules of a function take, in which order, and what they return.

For ``T f(a1, ..., an)`` (each parameter classed as float, pointer or integer):

``augment(a1, [da1], ..., an, [dan])``
    every pointer argument is followed by its shadow (floats and integers are not; an
    ``enzyme_const`` pointer at the call site has no shadow either). It returns one of
    ``struct {void *tape; T primal;}``; ``void *tape`` alone; the primal ``T`` alone (no
    tape); or nothing (no tape). When it returns no primal and f returns a value, the
    primal comes from calling f itself.
``gradient(a1, [da1], ..., an, [dan], [dret], [tape])``
    the same interleaved arguments, then the adjoint of the result when T is a float
    type, then the tape only if the augment returns one (Enzyme's `rev_rsqrt(x, dret)`).
    It accumulates into the pointer shadows and returns the adjoints of the float
    arguments in order: nothing for none, a float for one, a struct for several.
``forward(a1, [da1], ..., an, [dan])``
    every float and pointer argument is followed by its tangent; returns
    ``struct {T primal; T tangent;}``, or the tangent ``T`` alone (the primal then comes
    from calling f), or nothing when f returns void.

A function registered with ``__enzyme_build_cache_mask_f`` (enzyme-build's own, for rule
libraries; custom/collect.py) has augment and gradient rules that take two more ``i64``
parameters right after their interleaved arguments (before the gradient's result adjoint
and tape): ``overwritten`` (bit k set when the memory parameter k of f points to may change
between the call and its gradient, so the augment must copy what the gradient reads of it)
and ``shadowed`` (bit k set when parameter k has a shadow at this call site; the augment
must test this, not the shadow, which may be poison there). See ``cache_mask_values``.

Both the compile-time check on C types (frontend/attributes.py), the link-time check on IR
signatures (custom/collect.py), the per-call-site check (custom/registry.py) and the engine's
adapters (ad/engine.py) ask this module.
"""
from __future__ import annotations

RULE_KINDS = ("augment", "gradient", "forward")

# the engine's adapters of Enzyme's other shapes to the one the sweeps call (ad/engine.py):
# `<rule><suffix>`, so an arity check can find the user's own function again
TAPELESS_AUGMENT_SUFFIX = ".enzyme_build.tapeless"   # {null tape, primal} around augment -> T / void
TAPELESS_GRADIENT_SUFFIX = ".enzyme_build.notape"    # takes (and drops) the tape the sweeps pass
TANGENT_ONLY_SUFFIX = ".enzyme_build.pair"           # {f(x), forward(x, dx)} around forward -> T


def user_rule(name: str) -> tuple[str, int]:
    """(the user's rule function, how many more parameters the adapter takes) for a rule name
    the engine may have adapted."""
    for suffix, extra in ((TAPELESS_AUGMENT_SUFFIX, 0), (TAPELESS_GRADIENT_SUFFIX, 1), (TANGENT_ONLY_SUFFIX, 0)):
        if name.endswith(suffix):
            return name[:-len(suffix)], extra
    return name, 0

# what an augment rule returns
AUGMENT_TAPE = "tape"                # void *tape
AUGMENT_TAPE_PRIMAL = "tape+primal"  # struct {void *tape; T primal;}
AUGMENT_PRIMAL = "primal"            # T (no tape)
AUGMENT_NOTHING = "nothing"          # void (no tape)


def augment_result(result_class: str, augment_result_class: str) -> str | None:
    """How an augment rule returning a value of class ``augment_result_class`` ('void',
    'pointer', 'float', 'int', 'struct') answers for a function whose result has class
    ``result_class``; None when it can't be any of Enzyme's shapes."""
    if augment_result_class == "void":
        return AUGMENT_NOTHING
    if augment_result_class == "pointer":
        return AUGMENT_TAPE      # also when f returns a pointer: Enzyme reads it as the tape
    if augment_result_class == "struct":
        return AUGMENT_TAPE_PRIMAL if result_class != "void" else None
    if augment_result_class == result_class:
        return AUGMENT_PRIMAL
    return None


def has_tape(augment_shape: str | None) -> bool:
    """Whether the gradient rule receives a tape (last), given the augment's shape; an unknown
    shape counts as Enzyme's original one (with a tape)."""
    return augment_shape in (AUGMENT_TAPE, AUGMENT_TAPE_PRIMAL, None)


def interleaved_count(param_classes: list[str], *, tangents_for_floats: bool) -> int:
    """Parameters of a rule's leading part: each pointer (and, in forward rules, each float)
    followed by its shadow or tangent."""
    extra = sum(1 for c in param_classes if c == "pointer" or (tangents_for_floats and c == "float"))
    return len(param_classes) + extra


def expected_arity(kind: str, param_classes: list[str], result_class: str,
                   augment_shape: str | None = None, cache_mask: bool = False) -> int:
    """The number of parameters a ``kind`` rule takes for f (all pointers shadowed);
    ``cache_mask``: f is registered with __enzyme_build_cache_mask_f."""
    masks = CACHE_MASK_PARAMS if cache_mask else 0
    if kind == "augment":
        return interleaved_count(param_classes, tangents_for_floats=False) + masks
    if kind == "gradient":
        return (interleaved_count(param_classes, tangents_for_floats=False) + masks
                + (1 if result_class == "float" else 0) + (1 if has_tape(augment_shape) else 0))
    if kind == "forward":
        return interleaved_count(param_classes, tangents_for_floats=True)
    raise ValueError(kind)


# __enzyme_build_cache_mask_f: the augment and gradient rules take `i64 overwritten, i64
# shadowed` after their interleaved arguments; one letter per parameter of f says which
# parameters are pointers f only reads ('r') or may write ('w'), '.' for the others
CACHE_MASK_PARAMS = 2
CACHE_MASK_LETTERS = frozenset(".rw")
CACHE_MASK_MAX_PARAMS = 63   # the bits of a signed i64


def cache_mask_values(letters: str, overwritten, shadowed) -> list[str]:
    """The two mask arguments (`i64 N`) of a call of a cache-mask rule: bit k of the first set
    when `overwritten[k]` (the memory of pointer parameter k may change before the gradient
    runs), of the second when `shadowed[k]` (parameter k has a shadow at this call site)."""
    over = shad = 0
    for k, (letter, o, s) in enumerate(zip(letters, overwritten, shadowed)):
        if letter in "rw":
            over |= int(bool(o)) << k
            shad |= int(bool(s)) << k
    return [f"i64 {over}", f"i64 {shad}"]


def gradient_arities(param_classes: list[str], result_class: str) -> tuple[int, ...]:
    """Every parameter count a gradient rule may have when its augment is not known yet
    (with the tape, then without)."""
    with_tape = expected_arity("gradient", param_classes, result_class)
    return (with_tape, with_tape - 1)


def gradient_result(param_classes: list[str]) -> str:
    """What a gradient rule returns: the adjoints of f's float arguments."""
    return {0: "void", 1: "float"}.get(param_classes.count("float"), "struct")


def augment_results(result_class: str) -> tuple[str, ...]:
    """The result classes an augment rule may have."""
    if result_class == "void":
        return ("pointer", "void")
    return tuple(dict.fromkeys(("struct", "pointer", "void", result_class)))


def forward_results(result_class: str) -> tuple[str, ...]:
    """The result classes a forward rule may have."""
    return ("void",) if result_class == "void" else ("struct", result_class)


def describe(kind: str) -> str:
    """The convention of one rule kind, as errors state it."""
    return {
        "augment": "augment(args, each pointer followed by its shadow) returns struct {void *tape; "
                   "T primal;} when f returns T, the tape (void *) alone, the primal T alone, or nothing",
        "gradient": "gradient(args, each pointer followed by its shadow, [the return adjoint if f "
                    "returns a float], [the tape if the augment returns one]) returns the adjoints "
                    "of f's float args (void for none, a float for one, a struct for several)",
        "forward": "forward(args, each float and pointer followed by its tangent) returns "
                   "struct {T primal; T tangent;} or the tangent T when f returns T (void otherwise)",
    }[kind]
