"""The whole-program link: select inputs like the linker, merge their bitcode, run AD, emit.

Steps (ARCHITECTURE §1): a trial native link with the user's own linker and `--trace`
given twice names the objects and archive members the link really pulls in; their embedded bitcode is linked into one
module, internalized, handed to the AD stage, optimized, compiled to one object, and
linked natively with every input that carries no bitcode.

Optimization level after AD: with no -O flag, O3 (derivative code needs it); with an
explicit -O<n>, max(n, 2) (AD always runs on O2-optimized IR, so lower levels buy
nothing); -Os/-Oz keep their size levels on top of O2.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cached_property

from .. import cmdline
from ..errors import EnzymeBuildError, child_status
from . import objfile

# Marker globals of the AD ABI (ARCHITECTURE §4): never internalized before AD (their
# identity is what the AD engine reads); defined weakly afterwards if still referenced.
MARKER_PREFIX = "enzyme_"
ENZYME_PREFIX = "__enzyme_"
ABI_MARKERS = frozenset(MARKER_PREFIX + name for name in (
    "dup", "dupnoneed", "out", "const", "width", "allocated", "tape", "vector", "buffer",
    "nofree", "primal_return", "noret", "scalar", "dupv", "dupnoneedv", "shadow"))

# A loaded archive member in --trace output: lld prints `lib.a(m.o)`, GNU ld `(lib.a)m.o`.
_TRACE_MEMBER_LLD = re.compile(r"^(.*)\(([^()]+)\)$")
_TRACE_MEMBER_BFD = re.compile(r"^\(([^()]+)\)(.+)$")


@dataclass
class LinkPlan:
    """Everything the whole-program link needs from the command line."""

    driver: list[str]            # clang argv prefix (C or C++ driver)
    link_args: list[str]         # the link's arguments: inputs (objects) and link flags, no -o
    output: str                  # the final executable / shared library
    shared: bool = False
    export_dynamic: bool = False
    opt_level: str | None = None
    pic: bool = True
    tmpdir: str = "."
    keep_dir: str | None = None
    verbose: bool = False
    extra_libraries: list[str] = field(default_factory=list)   # the final link adds these

    @cached_property
    def command_line(self) -> cmdline.CommandLine:
        """The model of link_args, which the link step asks its questions of."""
        return cmdline.parse(self.link_args)


@dataclass
class Selection:
    """What the trial link pulled in, sorted into bitcode and native parts."""

    bitcode: list[tuple[str, bytes]] = field(default_factory=list)  # (name, bitcode)
    native_undefined: set[str] = field(default_factory=set)        # refs from native inputs
    shared_symbols: set[str] = field(default_factory=set)          # dynsym of shared libs
    shared_definitions: dict[str, tuple[str, bool]] = field(default_factory=dict)
    # name -> (shared library that defines it, whether that library carries bitcode)
    shared_bitcode: list[tuple[str, bytes, frozenset]] = field(default_factory=list)
    # (shared library, its embedded bitcode, the names it exports), for libraries built by us
    absorbed_files: set[str] = field(default_factory=set)          # real paths fully absorbed
    native_members: dict[str, list[tuple[str, bytes]]] = field(default_factory=dict)
    # archive real path -> native (non-bitcode) members the link pulled from it

    archive_of: dict[str, str] = field(default_factory=dict)
    # bitcode label -> the archive its member came from (for --exclude-libs)

    def add_bitcode(self, label: str, section: bytes, archive: str | None = None) -> None:
        modules = objfile.split_bitcode_modules(section)
        for k, module in enumerate(modules):
            name = label if len(modules) == 1 else f"{label}#{k}"
            self.bitcode.append((name, module))
            if archive is not None:
                self.archive_of[name] = archive


def log(verbose: bool, argv: list[str]) -> None:
    if verbose:
        print("enzyme-build: " + shlex.join(argv), file=sys.stderr, flush=True)


def parse_trace(text: str) -> list[tuple[str, str | None]]:
    """--trace lines (GNU ld or lld): `path`, `archive(member)` or `(archive)member`."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("ld.lld:", "warning:", "error:", "/usr/bin/ld:")):
            continue
        bfd = _TRACE_MEMBER_BFD.match(line)
        lld = _TRACE_MEMBER_LLD.match(line)
        if bfd and not os.path.isfile(line):
            out.append((bfd.group(1), bfd.group(2)))
        elif lld and not os.path.isfile(line):
            out.append((lld.group(1), lld.group(2)))
        else:
            out.append((line, None))
    return out


def trial_link(plan: LinkPlan) -> list[tuple[str, str | None]]:
    """Run the link natively once, tracing, and report the files/members it loaded.

    The user's own linker decides (archive order, search paths, --whole-archive, linker
    scripts); `--trace` twice makes GNU ld name archive members too. Unresolved symbols
    are ignored: the __enzyme_* calls only get definitions from the AD stage.
    """
    from .guard import LINK_GUARD
    trial_out = os.path.join(plan.tmpdir, "trial.out")
    argv = plan.driver + plan.link_args + [
        "-Qunused-arguments", "-Wl,--trace", "-Wl,--trace", f"-Wl,--defsym={LINK_GUARD}=0",
        "-Wl,--unresolved-symbols=ignore-all", "-Wl,--no-fatal-warnings", "-o", trial_out]
    log(plan.verbose, argv)
    # file names as the OS gives them (bytes that are not UTF-8 kept as surrogate escapes,
    # like os.fsdecode), so each traced path opens the very file the linker read
    proc = subprocess.run(argv, capture_output=True, text=True, errors="surrogateescape")
    if proc.returncode != 0:
        raise LinkFailed(proc.returncode, proc.stderr)
    return parse_trace(proc.stdout)


class LinkFailed(Exception):
    """The native linker rejected the link; its own message is the user's diagnostic."""

    def __init__(self, returncode: int, stderr: str):
        super().__init__(stderr)
        self.returncode = returncode
        self.stderr = stderr


def select_inputs(trace: list[tuple[str, str | None]]) -> Selection:
    """Sort what the linker loaded into embedded bitcode and native code."""
    sel = Selection()
    archives: dict[str, list[objfile.Member]] = {}
    seen_members: dict[tuple[str, str], int] = {}
    for path, member in trace:
        real = os.path.realpath(path)
        if member is None:
            data = _read(real)
            if data is None or objfile.is_archive(data):
                continue
            if objfile.is_shared_object_path(real):
                sel.shared_symbols |= objfile.dynamic_symbols(data)
                bitcode = objfile.embedded_bitcode(data)
                exported = frozenset(objfile.defined_dynamic_symbols(data))
                for name in exported:
                    sel.shared_definitions.setdefault(name, (path, bitcode is not None))
                if bitcode is not None:
                    sel.shared_bitcode.append((path, bitcode, exported))
                continue
            bitcode = objfile.embedded_bitcode(data)
            if bitcode is not None:
                sel.add_bitcode(path, bitcode)
                sel.absorbed_files.add(real)
            else:
                sel.native_undefined |= objfile.undefined_symbols(data)
            continue
        if real not in archives:
            data = _read(real)
            try:
                archives[real] = objfile.archive_members(data, real) if data else []
            except objfile.MalformedArchive as err:
                raise objfile.malformed_archive(path, err) from err
        # the same member name may occur several times in one archive: take them in order
        nth = seen_members.get((real, member), 0)
        seen_members[(real, member)] = nth + 1
        matches = [m for m in archives[real] if m.name == member]
        if nth >= len(matches):
            continue
        found = matches[nth]
        bitcode = objfile.embedded_bitcode(found.data)
        if bitcode is not None:
            sel.add_bitcode(f"{path}({member})", bitcode, archive=path)
            sel.absorbed_files.add(real)
        else:
            sel.native_undefined |= objfile.undefined_symbols(found.data)
            sel.native_members.setdefault(real, []).append((member, found.data))
    return sel


def _read(path: str) -> bytes | None:
    try:
        return objfile.read_file(path)
    except OSError:
        return None


def post_ad_levels(opt_level: str | None) -> tuple[int, int]:
    """(speed level, size level) of the post-AD pipeline; see the module docstring."""
    if opt_level is None:
        return 3, 0
    if opt_level in ("s", "z"):
        return 2, 1 if opt_level == "s" else 2
    if opt_level == "fast":
        return 3, 0
    try:
        return max(int(opt_level or "1"), 2), 0
    except ValueError:
        return 2, 0


def plain_levels(opt_level: str | None) -> tuple[int, int]:
    """(speed, size) for a whole-program module that needed no AD: the user's level.

    A link line without -O says little (objects are usually compiled with -O2 and linked
    without it), and the embedded bitcode is unoptimized, so the default is O2.
    """
    if opt_level is None:
        return 2, 0
    if opt_level in ("s", "z"):
        return 2, 1 if opt_level == "s" else 2
    if opt_level == "fast":
        return 3, 0
    try:
        return min(int(opt_level or "1"), 3), 0
    except ValueError:
        return 2, 0


class ExportRules:
    """What a linked output's dynamic symbol table keeps, beyond visibility: the version
    scripts (`-Wl,--version-script=FILE`: `global:`/`local:` patterns with `*`, `?` and
    `[...]` wildcards, exact names before wildcards before a bare `*`, as GNU ld ranks them;
    `extern "C++" { ... }` patterns matched against demangled names) and
    `-Wl,--exclude-libs,ALL|liba.a:libb.a` (definitions from those archives' members are
    not exported)."""

    def __init__(self, scripts: list[tuple[str, list[tuple[str, bool, bool]]]] = (),
                 excluded_libraries: list[str] = ()):
        # patterns: (pattern, is_global, is_cxx)
        self.patterns = [p for _path, patterns in scripts for p in patterns]
        self.excluded_libraries = list(excluded_libraries)
        self.hidden: set[str] = set()           # filled by hide_from_archives

    def hide_from_archives(self, sel: Selection, modules) -> None:
        from .. import llvm
        every = "ALL" in self.excluded_libraries
        names = set(self.excluded_libraries)
        for (label, _data), module in zip(sel.bitcode, modules):
            archive = sel.archive_of.get(label)
            if archive is None or not (every or os.path.basename(archive) in names):
                continue
            self.hidden |= {n for n, _kind, linkage in llvm.defined_symbols(module)
                            if linkage not in ("internal", "private")}

    def filter(self, names: list[str]) -> list[str]:
        names = [n for n in names if n not in self.hidden]
        if not self.patterns:
            return names
        demangled = _demangle(names) if any(cxx for _p, _g, cxx in self.patterns) else {}
        return [n for n in names if self._exported(n, demangled.get(n, n))]

    def _exported(self, name: str, demangled: str) -> bool:
        import fnmatch
        best = None   # (rank, is_global): 0 exact, 1 wildcard, 2 bare `*`
        for pattern, is_global, cxx in self.patterns:
            subject = demangled if cxx else name
            if pattern == "*":
                rank = 2
            elif _is_glob(pattern):
                if not fnmatch.fnmatchcase(subject, pattern):
                    continue
                rank = 1
            elif pattern == subject:
                rank = 0
            else:
                continue
            if best is None or rank < best[0]:
                best = (rank, is_global)
        return True if best is None else best[1]


def _is_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _demangle(names: list[str]) -> dict[str, str]:
    """Itanium-demangled spellings of the mangled names (others map to themselves)."""
    mangled = [n for n in names if n.startswith("_Z")]
    if not mangled:
        return {}
    for tool in ("llvm-cxxfilt", "c++filt"):
        try:
            proc = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True,
                                  text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        out = proc.stdout.splitlines()
        if proc.returncode == 0 and len(out) == len(mangled):
            return dict(zip(mangled, out))
    raise EnzymeBuildError("cannot demangle C++ names for the version script's extern \"C++\" patterns",
                           hint="install llvm-cxxfilt (or binutils' c++filt)")


_SCRIPT_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{};]|[^\s{};"]+')


def parse_version_script(path: str) -> list[tuple[str, bool, bool]]:
    """(pattern, is_global, is_cxx) of a GNU ld version script; a clear error when it
    cannot be read or is not one."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as err:
        raise EnzymeBuildError(f"cannot read the version script {path}: {err.strerror}")
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
    text = re.sub(r"#[^\n]*", " ", text)
    tokens = _SCRIPT_TOKEN.findall(text)

    def bad(why: str):
        return EnzymeBuildError(f"the version script {path} is not one enzyme-build can read: {why}",
                                hint="write it as GNU ld documents: "
                                     "[NAME] { global: sym; pattern*; local: *; } [DEPS];")
    out: list[tuple[str, bool, bool]] = []
    k = 0
    while k < len(tokens):
        if tokens[k] != "{":                      # version node name
            k += 1
            if k >= len(tokens) or tokens[k] != "{":
                raise bad(f"expected '{{' after {tokens[k - 1]!r}")
        k += 1
        is_global, cxx_depth = True, []
        while True:
            if k >= len(tokens):
                raise bad("missing '}'")
            tok = tokens[k]
            if tok == "}":
                k += 1
                if cxx_depth:
                    cxx_depth.pop()
                    if k < len(tokens) and tokens[k] == ";":
                        k += 1
                    continue
                break
            if tok in ("global", "local") and k + 1 < len(tokens) and tokens[k + 1].startswith(":"):
                tokens[k + 1] = tokens[k + 1][1:]       # `global :` / `local :*`
                tok = tokens[k] = tok + ":"
            if tok.startswith(("global:", "local:")):
                is_global = tok.startswith("global:")
                rest = tok.split(":", 1)[1]
                if rest:                                 # `local:*`
                    tokens[k] = rest
                else:
                    k += 1
                continue
            if tok == "":
                k += 1
                continue
            if tok == "extern" and k + 2 < len(tokens) and tokens[k + 2] == "{":
                lang = tokens[k + 1].strip('"')
                if lang not in ("C", "C++"):
                    raise bad(f'extern "{lang}" blocks are not supported')
                cxx_depth.append(lang == "C++")
                k += 3
                continue
            if tok == ";":
                k += 1
                continue
            cxx = bool(cxx_depth and cxx_depth[-1])
            if tok.startswith('"'):                    # quoted: a literal name
                out.append((tok[1:-1], is_global, cxx))
            else:
                out.append((tok, is_global, cxx))
            k += 1
        while k < len(tokens) and tokens[k] != ";":     # dependencies: VERS_1.0
            k += 1
        k += 1
    return out


def export_rules(plan: LinkPlan) -> ExportRules | None:
    """The version scripts and --exclude-libs of the link, or None when it has neither."""
    cl = plan.command_line
    scripts, excluded = cl.version_scripts(), cl.excluded_libraries()
    if not scripts and not excluded:
        return None
    return ExportRules([(path, parse_version_script(path)) for path in scripts], excluded)


# Entry points the C runtime or the linker name (a -nostartfiles program defines _start).
ALWAYS_KEPT = frozenset({"main", "_start", "_init", "_fini"})


def keep_set(module, sel: Selection, *, shared: bool, export_dynamic: bool,
             named: set[str] = frozenset(), exports: "ExportRules | None" = None) -> set[str]:
    """Definitions that must stay visible after internalization. A shared library (or an
    -rdynamic executable) exports its default-visibility definitions, minus what its
    version scripts make local and what --exclude-libs hides (`exports`)."""
    from .. import llvm
    keep = set(ALWAYS_KEPT) | sel.native_undefined | sel.shared_symbols | set(named)
    if shared or export_dynamic:
        exported = llvm.exported_definitions(module)
        keep |= set(exports.filter(exported) if exports else exported)
    keep |= {name for name, _kind, _linkage in llvm.defined_symbols(module)
             if name.startswith((ENZYME_PREFIX, MARKER_PREFIX))}
    return keep


def build_module(sel: Selection, *, shared: bool, export_dynamic: bool, name: str,
                 named: set[str] = frozenset(), tmpdir: str | None = None,
                 libraries: list[tuple[str, bytes, frozenset]] = (),
                 exports: "ExportRules | None" = None):
    """Parse and link the selected bitcode into one module, then internalize it.

    The bitcode comes from objects anyone may have made: a child process reads it first
    (llvm.probe), so a damaged section is reported by name instead of aborting us. Objects
    this command compiled itself, into its own private `tmpdir` (`cc a.c b.c -o prog`), are
    clang's output of a moment ago and skip that child.
    """
    from .. import llvm
    if not sel.bitcode:
        raise EnzymeBuildError("no embedded bitcode among the linked inputs", location=name,
                               hint="compile the objects with enzyme-build cc -c")
    check_bitcode([(label, data) for label, data in sel.bitcode if not _compiled_here(label, tmpdir)], tmpdir,
                  hint="rebuild that object with enzyme-build cc -c, or leave it out of the link")
    modules = [llvm.parse_bitcode(data, label) for label, data in sel.bitcode]
    if exports is not None and exports.excluded_libraries:
        exports.hide_from_archives(sel, modules)
    module = llvm.link_modules(modules)
    module.name = name
    llvm.internalize(module, keep_set(module, sel, shared=shared, export_dynamic=export_dynamic,
                                      named=named, exports=exports))
    for library in libraries:
        module = llvm.link_modules([module, library_module(library, tmpdir)])
    llvm.verify(module)
    return module


def _compiled_here(label: str, tmpdir: str | None) -> bool:
    """Whether a bitcode label (an object's path, `path#k` for the k-th of several modules)
    names an object in this command's own temporary directory, made with mkdtemp for it:
    only its own compiles write there."""
    if tmpdir is None:
        return False
    path = label if os.path.exists(label) else label.rpartition("#")[0]
    return bool(path) and os.path.dirname(os.path.realpath(path)) == os.path.realpath(tmpdir)


def check_bitcode(modules: list[tuple[str, bytes]], tmpdir: str | None, *, hint: str) -> None:
    """Read (label, bitcode) pieces in the probe's child process first; the first damaged
    one is the user's error."""
    from ..llvm import probe
    for verdict in probe.check_modules(modules, tmpdir):
        if verdict.problem is not None:
            raise EnzymeBuildError(f"malformed embedded bitcode in {verdict.label}: {verdict.problem}",
                                   hint=hint)


def library_module(library: tuple[str, bytes, frozenset], tmpdir: str | None):
    """A linked shared library's bitcode, prepared by llvm.adopt_library_code."""
    from .. import llvm
    path, section, exported = library
    pieces = [(f"{path}#{k}", data) for k, data in enumerate(objfile.split_bitcode_modules(section))]
    check_bitcode(pieces, tmpdir, hint="rebuild that library with enzyme-build")
    module = llvm.link_modules([llvm.parse_bitcode(data, label) for label, data in pieces])
    why_not = llvm.adopt_library_code(module, set(exported))
    if why_not is not None:
        raise LibraryNotAdoptable(path, why_not)
    return module


class LibraryNotAdoptable(Exception):
    """A shared library's bitcode that a program must not copy (see adopt_library_code)."""

    def __init__(self, path: str, why: str):
        super().__init__(why)
        self.path = path
        self.why = why


def define_leftover_markers(module):
    """Give weak definitions to marker globals (enzyme_dup, …) still only declared.

    Only the ABI's names: another `extern int enzyme_x;` may be meant for a shared library.
    """
    from .. import llvm
    from .guard import LINK_GUARD
    defined = {name for name, _k, _l in llvm.defined_symbols(module)}
    leftover = [g for g in module.global_names() if g in ABI_MARKERS and g not in defined]
    # guarded archive members the native link may still pull in find the guard defined
    text = f"@{LINK_GUARD} = weak hidden global i8 0\n" if LINK_GUARD not in defined else ""
    if not leftover and not text:
        return module
    text += "".join(f"@{g} = weak global i32 0\n" for g in leftover)
    extra = llvm.parse_assembly(text, "enzyme-markers")
    return llvm.link_modules([module, extra])


def private_definitions(module) -> set[str]:
    """Definitions with internal/private linkage (static in the source, or internalized)."""
    from .. import llvm
    return {name for name, _kind, linkage in llvm.defined_symbols(module) if linkage in ("internal", "private")}


def restore_private(module, private: set[str]) -> None:
    """The AD stage keeps registered rule functions visible while it works; what was private
    before it stays private in the output (no clash with another object's `helper`, no
    export from a shared library that would interpose on another library's copy)."""
    from .. import llvm
    for name, _kind, linkage in llvm.defined_symbols(module):
        if name in private and linkage not in ("internal", "private"):
            llvm.set_linkage(module, name, "internal")


def keep_module(module, keep_dir: str | None, stem: str, stage: str) -> None:
    """<KEEP>/<output>.<stage>.{bc,ll}; the directory was checked (files.keep_directory)."""
    if not keep_dir:
        return
    from ..files import replace_atomically
    base = os.path.join(keep_dir, f"{stem}.{stage}")
    replace_atomically(base + ".bc", module.bitcode())
    replace_atomically(base + ".ll", module.text())


def ad_keep_dir(keep_dir: str | None, stem: str) -> str | None:
    """The AD stage's own files (ad-input.ll, ad-output.ll) go to <KEEP>/<output>.ad/, so
    two links into one KEEP directory do not overwrite each other's."""
    if not keep_dir:
        return None
    path = os.path.join(keep_dir, f"{stem}.ad")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


_M_MMAP_THRESHOLD = -3   # glibc's mallopt parameter (malloc.h)


def return_large_blocks() -> None:
    """Have glibc map every block of 1 MiB and more on its own, so that freeing it returns the
    memory at once. By default glibc raises that threshold to the largest block freed so far
    (up to 32 MiB): after the first whole-module text is freed, every later one (the AD stage
    makes several, tens of MB each at 100k instructions) lands in the heap, between LLVM's
    allocations, and stays resident after it is freed. Peak memory of the 100k-instruction
    build_scaling program: 388 MB -> 374 MB. Elsewhere than glibc nothing changes."""
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 1 << 20)


def compile_whole_program(sel: Selection, plan: LinkPlan, progress=None) -> str:
    """Bitcode -> AD -> optimized native object in plan.tmpdir; returns its path."""
    from .. import llvm
    return_large_blocks()
    from ..llvm import vecmath
    from .progress import LinkProgress
    progress = progress or LinkProgress(plan.output, verbose=False, live=False)
    stem = os.path.basename(plan.output)
    libraries: list = []
    while True:
        with progress.stage("bitcode"):
            try:
                module = build_module(sel, shared=plan.shared, export_dynamic=plan.export_dynamic,
                                      name=stem, named=plan.command_line.named_symbols(),
                                      tmpdir=plan.tmpdir, libraries=libraries,
                                      exports=export_rules(plan))
            except LibraryNotAdoptable as refused:
                raise EnzymeBuildError(
                    f"the derivative needs code from {refused.path}, but that library's bitcode "
                    f"cannot be copied into this output: {refused.why}",
                    hint=f"link its static archive (or its objects) instead of "
                         f"{os.path.basename(refused.path)}") from refused
            keep_module(module, plan.keep_dir, stem, "pre-ad")
        from ..ad import stage
        if not stage.module_needs_ad(module.function_names()):
            speed, size = plain_levels(plan.opt_level)
            break
        private = private_definitions(module)
        with progress.stage("derivatives"):
            try:
                module = stage.run_ad_stage(module, ad_before_opt=os.environ.get(
                    "ENZYME_BUILD_AD_BEFORE_OPT") == "1", keep_dir=ad_keep_dir(plan.keep_dir, stem))
            except EnzymeBuildError as err:
                # a function without a body defined by a linked shared library that carries
                # our bitcode: once more, with the libraries' code (docs/getting-started.md)
                if libraries or not sel.shared_bitcode or not _no_body_in_library(err, sel):
                    raise in_shared_library(err, sel) from err
                libraries = list(sel.shared_bitcode)
                continue
        restore_private(module, private)
        speed, size = post_ad_levels(plan.opt_level)
        break
    from ..llvm import backend   # opt/llc of our LLVM when installed, else llvmlite
    optimized = os.path.join(plan.tmpdir, "whole-program.bc")
    vector_library = choose_vector_library(plan, llvm.triple(module))
    legal_isas = vecmath.legal_isas(llvm.function_target_features(module))
    with progress.stage("optimization"):
        module = define_leftover_markers(module)
        backend.optimize_to_bitcode(module, optimized, speed, size_level=size, pic=plan.pic,
                                    workdir=plan.tmpdir,   # consumes the module
                                    vector_library=vector_library,
                                    keep_names=bool(plan.keep_dir))   # <KEEP>/*.post-ad.ll readable
        del module
        if plan.keep_dir:
            keep_module(llvm.read_bitcode_file(optimized, stem), plan.keep_dir, stem, "post-ad")
    with progress.stage("code generation"):
        path = os.path.join(plan.tmpdir, "whole-program.o")
        codegen = dict(opt=max(speed, 1) if speed else 0, pic=plan.pic, workdir=plan.tmpdir, name=stem)
        backend.emit_object_file(optimized, path, **codegen)
        if vector_library == vecmath.LIBMVEC:
            with open(path, "rb") as fh:
                illegal = vecmath.illegal_calls(objfile.undefined_symbols(fh.read()), legal_isas)
            if illegal:   # rare: wider variants than the functions' features allow, once more
                backend.call_intrinsics_instead(optimized, illegal, stem)
                if plan.keep_dir:
                    keep_module(llvm.read_bitcode_file(optimized, stem), plan.keep_dir, stem, "post-ad")
                backend.emit_object_file(optimized, path, **codegen)
        os.unlink(optimized)
    plan.extra_libraries = vector_math_libraries(vector_library, path)
    return path


def choose_vector_library(plan: LinkPlan, triple: str) -> str | None:
    """The vector math library the final pipeline may call (opt's -vector-library name), or
    None (docs/build-performance.md, "Vector math"):

    - the link's own -fveclib=<lib> (the last one), as clang uses it: `none` gives none;
    - without one, glibc's libmvec when the options allow approximate math functions
      (-ffast-math, -Ofast, -funsafe-math-optimizations, -fapprox-func,
      -ffp-model=fast|aggressive, CommandLine.approximate_math_functions), the target is
      x86-64 Linux with glibc, the C library is linked (no -nostdlib, -nodefaultlibs,
      -nolibc, -ffreestanding) and the installed libmvec defines every function LLVM may
      call;
    - otherwise none. -fno-math-errno alone does not turn libmvec on: its results differ
      from libm's in the last bits, which clang's -fno-math-errno does not allow either.

    Either way only calls that cannot set errno are vectorized (the bitcode says which:
    clang compiled them with -fno-math-errno, -ffast-math or a pure builtin).
    """
    from ..llvm import vecmath
    cl = plan.command_line
    explicit = cl.vector_library()
    if explicit is not None:
        try:
            return vecmath.llvm_name(explicit)
        except KeyError:
            raise EnzymeBuildError(
                f"unsupported -fveclib={explicit}",
                hint="use one of " + ", ".join(sorted(vecmath.CLANG_TO_LLVM, key=str.lower)))
    if not cl.approximate_math_functions() or cl.no_default_libraries:
        return None
    if not vecmath.is_x86_64_glibc(triple) or not _libmvec_complete(cl):
        return None
    return vecmath.LIBMVEC


def _libmvec_complete(cl: cmdline.CommandLine) -> bool:
    """The libmvec the link would find defines every function LLVM may call (glibc 2.35 or
    later: tan came last)."""
    from ..llvm import vecmath
    path = objfile.find_library("mvec", objfile.library_search_dirs(cl.search_dirs),
                                static_only=False)
    if path is None or not path.endswith(".so"):
        return False
    try:
        exported = objfile.defined_dynamic_symbols(objfile.read_file(path))
    except OSError:
        return False
    return vecmath.LIBMVEC_X86_64 <= exported


def vector_math_libraries(vector_library: str | None, program_object: str) -> list[str]:
    """-lmvec -lm when the program object calls libmvec, else nothing."""
    from ..llvm import vecmath
    if vector_library != vecmath.LIBMVEC:
        return []
    with open(program_object, "rb") as fh:
        calls = vecmath.libmvec_calls(objfile.undefined_symbols(fh.read()))
    return list(vecmath.LIBMVEC_LINK_FLAGS) if calls else []


_NO_BODY = re.compile(r"cannot differentiate through '([^']+)': it has no body")


def _library_of(err: EnzymeBuildError, sel: Selection) -> tuple[str, str, bool] | None:
    """(function, shared library defining it, whether it carries bitcode) for an error about
    a function without a body that a linked shared library defines; None otherwise."""
    match = _NO_BODY.search(err.message)
    found = sel.shared_definitions.get(match.group(1)) if match else None
    return (match.group(1), *found) if found is not None else None


def _no_body_in_library(err: EnzymeBuildError, sel: Selection) -> bool:
    found = _library_of(err, sel)
    return found is not None and found[2]


def in_shared_library(err: EnzymeBuildError, sel: Selection) -> EnzymeBuildError:
    """A function without a body that a linked shared library defines: say which library,
    and that the fix is to link its code statically (its bitcode), not to write a rule."""
    found = _library_of(err, sel)
    if found is None:
        return err
    name, library, has_bitcode = found
    base = os.path.basename(library).split(".so", 1)[0]
    static = f"{base}.a"
    if has_bitcode:
        why = (f"'{name}' comes from the shared library {library}, which carries enzyme-build "
               f"bitcode, but derivatives are only built from code linked into this output")
    else:
        why = (f"'{name}' comes from the shared library {library}, which has no embedded "
               f"bitcode (it was not built with enzyme-build)")
    return EnzymeBuildError(
        f"{err.message}\n  {why}", location=err.location,
        hint=f"link the static library instead ({static}: -l:{static}, or "
             f"-Wl,-Bstatic -l{base[3:] if base.startswith('lib') else base} -Wl,-Bdynamic), "
             f"or its objects, built with enzyme-build cc -c; or, if '{name}' does not affect "
             f"derivatives, mark it inactive")


def final_link_args(plan: LinkPlan, sel: Selection, program_object: str) -> list[str]:
    """The link's arguments with absorbed inputs replaced by the whole-program object.

    Absorbed objects leave the link. Absorbed archives stay after the whole-program
    object: the native code of members nobody selected can still satisfy a reference the
    unoptimized bitcode makes and the optimized native code did not (`if (debug) dump();`).
    Inside --whole-archive they would load everything again, so there they leave, and
    their native (non-bitcode) members are extracted in their place.
    """
    link = plan.command_line
    search_dirs = objfile.library_search_dirs(link.search_dirs)
    placed = False

    def replace(linked: cmdline.LinkedFile) -> list[str] | None:
        nonlocal placed
        target = linked.path
        if linked.library is not None:
            target = objfile.find_library(linked.library, search_dirs, static_only=linked.static)
        real = os.path.realpath(target) if target else None
        if real is None or real not in sel.absorbed_files:
            return None
        out = [] if placed else [program_object]
        placed = True
        if _is_archive_file(real) and not linked.whole_archive:
            return out + list(linked.arg.tokens)
        return out + _extract_native_members(plan, sel, real, linked.arg.index)

    args = link.rewrite_linked_files(replace)
    return (args if placed else [program_object] + args) + plan.extra_libraries


def _is_archive_file(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return objfile.is_archive(fh.read(8))
    except OSError:
        return False


def _extract_native_members(plan: LinkPlan, sel: Selection, archive: str, slot: int) -> list[str]:
    """The archive's native members as files of our own naming: a member's name is the
    archive author's text, never a path we write to."""
    paths = []
    for k, (_member, data) in enumerate(sel.native_members.get(archive, [])):
        extracted = os.path.join(plan.tmpdir, f"native-{slot}-{k}.o")
        with open(extracted, "wb") as fh:
            fh.write(data)
        paths.append(extracted)
    return paths


def link_whole_program(plan: LinkPlan) -> int:
    """The whole-program path end to end; returns the final link's exit code."""
    from ..files import keep_directory
    from .progress import LinkProgress
    plan.keep_dir = keep_directory(plan.keep_dir)
    progress = LinkProgress(plan.output, verbose=plan.verbose)
    try:
        try:
            with progress.stage("trial link"):
                trace = trial_link(plan)
        except LinkFailed as failed:
            progress.finish()
            sys.stderr.buffer.write(failed.stderr.encode("utf-8", "surrogateescape"))
            sys.stderr.flush()
            return child_status(failed.returncode, os.path.basename(plan.driver[0]))
        with progress.stage("inputs"):
            sel = select_inputs(trace)
        program_object = compile_whole_program(sel, plan, progress)
        args = final_link_args(plan, sel, program_object)
        with progress.stage("system link"):
            return native_link(plan, args)
    finally:
        progress.finish()


def native_link(plan: LinkPlan, args: list[str]) -> int:
    """Link natively into a temporary name next to the output, renamed on success."""
    if os.path.exists(plan.output) and not os.path.isfile(plan.output):
        argv = plan.driver + args + ["-Qunused-arguments", "-o", plan.output]  # /dev/null
        log(plan.verbose, argv)
        return child_status(subprocess.run(argv).returncode, os.path.basename(argv[0]))
    out_dir = os.path.dirname(os.path.abspath(plan.output))
    if not os.path.isdir(out_dir):
        raise EnzymeBuildError(f"cannot write {plan.output}: no directory {os.path.dirname(plan.output)}",
                               hint="create the directory first, or choose another -o")
    from ..files import temporary_beside
    try:
        tmp_out = temporary_beside(plan.output)  # ours, unpredictable: the linker replaces it
    except OSError as err:
        raise EnzymeBuildError(f"cannot write {plan.output}: {err.strerror or err}")
    argv = plan.driver + args + ["-Qunused-arguments", "-o", tmp_out]
    log(plan.verbose, argv)
    try:
        proc = subprocess.run(argv)
        if proc.returncode == 0:
            os.replace(tmp_out, plan.output)
        return child_status(proc.returncode, os.path.basename(argv[0]))
    finally:
        if os.path.exists(tmp_out):
            os.unlink(tmp_out)
