"""The one layer that talks to LLVM through llvmlite: parse, verify, optimize, emit.

Nothing else in enzyme_build imports llvmlite. Modules cross this boundary as
`Module` handles or as textual IR; LLVM's errors come back as EnzymeBuildError.
Import cost matters (compile-only invocations never import this package).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import EnzymeBuildError, InternalError

try:
    import llvmlite.binding as _llvm
except ImportError as _err:  # pragma: no cover - exercised only on broken installs
    raise EnzymeBuildError(
        f"cannot import llvmlite ({_err})",
        hint="install enzyme-build's dependencies: pip install 'llvmlite>=0.50,<0.51'")

_initialized = False


def _init() -> None:
    global _initialized
    if not _initialized:
        _llvm.initialize_native_target()
        _llvm.initialize_native_asmprinter()
        # inline assembly (`__asm__ volatile("nop")`, glibc's and Eigen's headers) is parsed
        # when the object is emitted; without the parser LLVM aborts the process
        _llvm.initialize_native_asmparser()
        _initialized = True


def llvm_version() -> tuple[int, int, int]:
    """The LLVM version llvmlite embeds."""
    return tuple(_llvm.llvm_version_info)


@dataclass
class Module:
    """A parsed LLVM module (wraps llvmlite's ModuleRef)."""

    ref: object
    name: str

    def text(self) -> str:
        return str(self.ref)

    def close(self) -> None:
        """Free the module's LLVM memory now, not when the wrapper is collected (it is not
        used afterwards)."""
        close = getattr(self.ref, "close", None)
        if close is not None:
            close()

    def bitcode(self) -> bytes:
        return self.ref.as_bitcode()

    def function_names(self, defined_only: bool = False) -> list[str]:
        return [f.name for f in self.ref.functions if not (defined_only and f.is_declaration)]

    def global_names(self) -> list[str]:
        return [g.name for g in self.ref.global_variables]


def parse_bitcode(data: bytes, name: str = "module") -> Module:
    _init()
    try:
        ref = _llvm.parse_bitcode(data)
    except RuntimeError as err:
        raise EnzymeBuildError(f"cannot read LLVM bitcode: {err}", location=name,
                               hint=f"rebuild the object with enzyme-build (LLVM {llvm_version()[0]})")
    ref.name = printable(name)
    return Module(ref, name)


def read_bitcode_file(path: str, name: str = "module") -> Module:
    """Parse a bitcode file we wrote ourselves (e.g. the optimized whole program)."""
    with open(path, "rb") as fh:
        return parse_bitcode(fh.read(), name)


def printable(name: str) -> str:
    """A module name LLVM can take: a file name that is not UTF-8 (bytes kept by Python as
    surrogate escapes) is shown with its odd bytes replaced."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def parse_assembly(text: str | bytes, name: str = "module") -> Module:
    """Parse textual IR. A parse failure of IR we generated is a bug, so callers that
    parse their own output should catch and re-raise as InternalError.

    Given UTF-8 bytes, LLVM reads them in place: llvmlite's own entry point encodes a str
    into a second copy first, and for the AD stage's output (tens of MB) that copy, beside
    the str and the module being built, is the build's peak memory."""
    _init()
    try:
        ref = _parse_utf8(text) if isinstance(text, bytes) else _llvm.parse_assembly(text)
    except RuntimeError as err:
        raise EnzymeBuildError(f"invalid LLVM IR: {err}", location=name)
    ref.name = printable(name)
    return Module(ref, name)


def _parse_utf8(data: bytes):
    """llvmlite's parse_assembly after its encoding step (llvmlite 0.50's binding)."""
    from ctypes import c_char_p
    from llvmlite.binding import ffi
    from llvmlite.binding.module import ModuleRef
    context = _llvm.get_global_context()
    with ffi.OutputString() as errmsg:
        ref = ModuleRef(ffi.lib.LLVMPY_ParseAssembly(context, c_char_p(data), errmsg), context)
        if errmsg:
            ref.close()
            raise RuntimeError(f"LLVM IR parsing error\n{errmsg}")
    return ref


def verify(module: Module, *, generated: bool = False) -> None:
    """Run LLVM's verifier. ``generated=True`` marks IR we produced: a failure is our bug."""
    try:
        module.ref.verify()
    except RuntimeError as err:
        cls = InternalError if generated else EnzymeBuildError
        raise cls(f"LLVM verifier rejected module {module.name}: {err}")


def link_modules(modules: list[Module]) -> Module:
    """Link several modules into the first (in-process llvm-link)."""
    if not modules:
        raise InternalError("link_modules called with no modules")
    dest = modules[0]
    for other in modules[1:]:
        try:
            dest.ref.link_in(other.ref)
        except RuntimeError as err:
            raise EnzymeBuildError(f"cannot link bitcode of {other.name}: {err}")
    return dest


def target_machine(*, opt: int = 2, pic: bool = True, cpu: str = "", features: str = ""):
    _init()
    target = _llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=min(opt, 3),
                                        reloc="pic" if pic else "static", codemodel="small")


_FULL_UNROLL_ONLY = False


def _full_unroll_only() -> None:
    """Make LLVM's loop unroller in this process unroll only loops it can unroll completely
    (no partial, runtime or peeled unrolling). Process-wide LLVM options, set once: only the
    pre-AD pipeline unrolls in-process (the post-AD pipeline runs in `opt`, or, without the
    release tools, in-process with these limits too)."""
    global _FULL_UNROLL_ONLY
    if not _FULL_UNROLL_ONLY:
        for option in ("-unroll-allow-partial=false", "-unroll-runtime=false", "-unroll-allow-peeling=false"):
            _llvm.set_option("enzyme-build", option)
        _FULL_UNROLL_ONLY = True


def optimize(module: Module, level: int = 2, *, size_level: int = 0, unroll: bool | str = True,
             vectorize: bool = True, pic: bool = True) -> None:
    """Run LLVM's default per-module pipeline (-O<level>) in place.

    The pre-AD pipeline runs with ``vectorize=False`` twice: ``unroll=False``, then (once
    byte-copy loops are memcpys) ``unroll="full"``, which unrolls loops with a small constant
    trip count (the components of a 3-vector) completely, so the engine sees straight-line
    code and SROA gets the small arrays they index; partially unrolled or vectorized loops
    would only make derivative code bigger (the paper's choice as well).
    """
    if level <= 0 and size_level <= 0:
        return
    if unroll == "full":
        _full_unroll_only()
    tm = target_machine(opt=level, pic=pic)
    pto = _llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_unrolling = bool(unroll)
    pto.loop_vectorization = vectorize
    pto.slp_vectorization = vectorize
    pto.loop_interleaving = vectorize
    pb = _llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(module.ref, pb)


def triple(module: Module) -> str:
    """The module's target triple ("x86_64-pc-linux-gnu"; empty when it has none)."""
    return module.ref.triple


def function_target_features(module: Module) -> list[str]:
    """The "target-features" of every defined function ("" for a function without)."""
    out = []
    for f in module.ref.functions:
        if f.is_declaration:
            continue
        features = ""
        for attr in f.attributes:
            text = attr.decode("utf-8", "replace") if isinstance(attr, bytes) else str(attr)
            at = text.find('"target-features"="')
            if at >= 0:
                start = at + len('"target-features"="')
                features = text[start:text.index('"', start)]
        out.append(features)
    return out


def rename_declarations(module: Module, names: dict[str, str]) -> list[str]:
    """Give the declared functions named in ``names`` their new names, calls included (an
    intrinsic renamed becomes an ordinary external function). A declaration whose new name
    is taken already stays as it is. Returns the new names given."""
    taken = {f.name for f in module.ref.functions}
    done = []
    for f in module.ref.functions:
        new = names.get(f.name)
        if new is not None and f.is_declaration and new not in taken:
            f.name = new
            taken.add(new)
            done.append(new)
    return done


def run_named_passes(module: Module, passes: list[str], *, pic: bool = True) -> None:
    """Run a few named function/module passes (e.g. 'instnamer', 'sroa', 'simplifycfg')."""
    tm = target_machine(opt=2, pic=pic)
    pto = _llvm.create_pipeline_tuning_options(speed_level=2)
    pb = _llvm.create_pass_builder(tm, pto)
    mpm = _llvm.create_new_module_pass_manager()
    adders = {
        "instnamer": mpm.add_instruction_namer_pass,
        "sroa": mpm.add_sroa_pass,
        "mem2reg": mpm.add_sroa_pass,
        "simplifycfg": mpm.add_simplify_cfg_pass,
        "instcombine": mpm.add_instruction_combine_pass,
        "dce": mpm.add_dead_code_elimination_pass,
        "adce": mpm.add_aggressive_dce_pass,
        "globaldce": mpm.add_global_dead_code_eliminate_pass,
        "globalopt": mpm.add_global_opt_pass,
        "sccp": mpm.add_sccp_pass,
        "mergereturn": mpm.add_unify_function_exit_nodes_pass,
        "loop-simplify": mpm.add_loop_simplify_pass,
        "lcssa": mpm.add_lcssa_pass,
        "always-inline": mpm.add_always_inliner_pass,
        "strip-dead-prototypes": mpm.add_strip_dead_prototype_pass,
    }
    for name in passes:
        try:
            adders[name]()
        except KeyError:
            raise InternalError(f"unknown pass {name!r}")
    mpm.run(module.ref, pb)


def set_linkage(module: Module, name: str, linkage: str) -> None:
    """Change one global value's linkage ('internal', 'external', …)."""
    for collection in (module.ref.functions, module.ref.global_variables):
        for value in collection:
            if value.name == name:
                value.linkage = linkage
                return
    raise InternalError(f"no global named {name!r} in {module.name}")


def defined_symbols(module: Module) -> list[tuple[str, str, str]]:
    """(name, kind, linkage) for every definition: kind is 'function' or 'variable'."""
    out = []
    for f in module.ref.functions:
        if not f.is_declaration:
            out.append((f.name, "function", f.linkage.name))
    for g in module.ref.global_variables:
        if not g.is_declaration:
            out.append((g.name, "variable", g.linkage.name))
    return out


def internalize(module: Module, keep: set[str]) -> None:
    """Give internal linkage to every definition not in ``keep`` (whole-program mode)."""
    for collection in (module.ref.functions, module.ref.global_variables):
        for value in collection:
            if value.is_declaration or value.name in keep or value.name.startswith("llvm."):
                continue
            value.linkage = "internal"


def emit_object(module: Module, *, opt: int = 2, pic: bool = True) -> bytes:
    """Native object code for the host."""
    tm = target_machine(opt=opt, pic=pic)
    module.ref.triple = tm.triple
    module.ref.data_layout = str(tm.target_data)
    try:
        return tm.emit_object(module.ref)
    except RuntimeError as err:
        raise EnzymeBuildError(f"code generation failed: {err}", location=module.name)


def adopt_library_code(module: Module, exported: set[str]) -> str | None:
    """Turn a shared library's own bitcode into code a program linked against the library
    may differentiate: what the library exports becomes `available_externally` (the
    optimizer and the AD engine see the bodies; calls and data still bind to the library at
    run time), what it does not export becomes a private copy. Returns None when done, or
    why the library's code cannot be used this way: a private copy of mutable state would
    diverge from the library's own, and its constructors would run twice."""
    for g in module.ref.global_variables:
        if g.name in ("llvm.global_ctors", "llvm.global_dtors"):
            return "it has static constructors or destructors"
        if g.is_declaration or g.name.startswith("llvm."):
            continue
        local = g.linkage.name in ("internal", "private")
        if not local and g.name in exported:
            g.linkage = "available_externally"
            continue
        if not _is_constant_global(g):
            return f"it keeps mutable state that it does not export (@{g.name})"
        if not local:
            g.linkage = "internal"
    for f in module.ref.functions:
        if f.is_declaration or f.linkage.name in ("internal", "private"):
            continue
        f.linkage = "available_externally" if f.name in exported else "internal"
    return None


def _is_constant_global(g) -> bool:
    """Whether a global variable is declared `constant` (read from its IR line)."""
    head = str(g).split("=", 1)[-1]
    for word in head.replace(",", " ").split():
        if word in ("constant", "global"):
            return word == "constant"
    return False


def exported_definitions(module: Module) -> list[str]:
    """Definitions a shared library exports: non-local linkage and default visibility."""
    local = {"internal", "private", "available_externally"}
    out = []
    for collection in (module.ref.functions, module.ref.global_variables):
        for value in collection:
            if value.is_declaration or value.linkage.name in local:
                continue
            if value.visibility.name == "default":
                out.append(value.name)
    return out
