"""`enzyme-build cc/c++`: compile to fat objects, link (fast path or whole program), or pass through.

Imported on every compile, so it stays light: no click, rich or llvmlite here; the
whole-program link imports those lazily.
"""
from __future__ import annotations

import os
import subprocess
import sys

from .. import cmdline as argmodel
from .. import toolchain
from ..cmdline import CommandLine, Input
from ..errors import child_status
from ..files import unlink_quietly

INCLUDE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "include")

# Added to every C-family compile: embed the unoptimized frontend bitcode next to the
# native code; keep it free of `optnone` at -O0 so the whole-program pipeline may optimize
# it; make clang report attributes it drops (the custom-derivative hook looks for them),
# without -Werror turning that report into a failed build (= attributes.detection_flags()).
FAT_OBJECT_FLAGS = ["-Xclang", "-fembed-bitcode=all", "-Xclang", "-disable-O0-optnone",
                    "-Wunknown-attributes", "-Wno-error=unknown-attributes"]

# Added, for a compile-and-link whose program calls the AD entry points, to the compiles
# of its C-family sources. Such a link is a whole-program link: it absorbs each of these
# objects by its bitcode, and their native code only shows the trial link which symbols
# they define and reference. So the native code is made from the unoptimized module with
# the quick instruction selector and register allocator, without the optimization
# pipeline: a fifth of a full compile's time (the 50k-instruction build_scaling program:
# 0.8 s instead of 3.8 s). The embedded bitcode is the same as without these flags.
# `--optimize-regalloc`, not `-optimize-regalloc`: ccache and distcc read a word starting
# with `-o` as the output option (`-o ptimize-…`); ccache then stops caching the compile and
# distcc runs it locally, taking it for a link.
LEAN_OBJECT_FLAGS = ["-Xclang", "-disable-llvm-passes", "-mllvm", "-fast-isel",
                     "-mllvm", "--optimize-regalloc=false"]


def verbose_enabled() -> bool:
    return os.environ.get("ENZYME_BUILD_VERBOSE", "") not in ("", "0")


def log_command(argv: list[str]) -> None:
    if verbose_enabled():
        import shlex
        print("enzyme-build: " + shlex.join(argv), file=sys.stderr, flush=True)


def launched_compiler(argv: list[str]) -> tuple[list[str], bool] | None:
    """As a build system's compiler or linker *launcher* (CMake's C_COMPILER_LAUNCHER /
    C_LINKER_LAUNCHER, Meson's and Make's wrappers) we are given the real compiler first:
    `enzyme-cc /usr/bin/clang-22 -c x.c`. Returns (the arguments after it, whether it is a
    C++ driver), or None when argv does not start with a compiler."""
    if not argv or argv[0].startswith("-") or os.sep not in argv[0] and not _is_compiler_name(argv[0]):
        return None
    import shutil
    path = argv[0] if os.sep in argv[0] else shutil.which(argv[0])
    if path is None or not os.path.isfile(path) or not os.access(path, os.X_OK):
        return None
    names = {os.path.basename(path), os.path.basename(os.path.realpath(path))}
    if not any(_is_compiler_name(name) for name in names):
        return None
    if not any("clang" in name for name in names):
        from ..errors import EnzymeBuildError
        raise EnzymeBuildError(
            f"enzyme-build was launched with the compiler {argv[0]}, which is not clang",
            hint=f"configure the build with clang-{toolchain.LLVM_MAJOR} as the compiler "
                 f"(CC=clang-{toolchain.LLVM_MAJOR}, -DCMAKE_C_COMPILER=clang-{toolchain.LLVM_MAJOR}), "
                 "or use enzyme-cc itself as the compiler")
    return argv[1:], any("++" in name for name in names)


def _is_compiler_name(name: str) -> bool:
    if "." in name:  # main.cc is a source, not a compiler
        return False
    base = name.rsplit("-", 1)[0] if name[-1:].isdigit() else name  # clang-22, gcc-12
    return base.endswith(("clang", "clang++", "gcc", "g++", "cc", "c++"))


def run(argv: list[str], *, cxx: bool = False) -> int:
    """Entry point of `enzyme-build cc ARGS…` (cxx: `c++`). Returns the exit code."""
    launched = launched_compiler(argv)
    if launched is not None:
        argv, cxx = launched
    driver = toolchain.clang_command(cxx)
    if os.environ.get("ENZYME_BUILD_CONFIGURE_ONLY") == "1":
        exec_clang(driver, argv)
    given = argmodel.from_argv(argv)
    inv = given.without_end_of_options()
    if inv.passthrough_reason == "input from stdin" and stdin_is_source(inv):
        return compile_stdin(driver, inv, cxx=cxx)
    if inv.mode == "passthrough":
        exec_clang(driver, given.passthrough_command(passthrough_additions(inv)))
    missing = [i.path for i in inv.inputs if i.kind != "stdin" and not os.path.exists(i.path)]
    if missing:
        # clang words this best ("no such file or directory: 'x.c'"), with its exit code
        exec_clang(driver, given.raw)
    if inv.mode == "compile":
        return compile_objects(driver, inv)
    return compile_and_link(driver, inv)


def stdin_is_source(inv: CommandLine) -> bool:
    """One `-` input, in a C-family language given by -x (clang insists on -x for stdin)."""
    stdin = [i for i in inv.inputs if i.kind == "stdin"]
    return len(stdin) == 1 and stdin[0].lang in argmodel.SOURCE_LANGS


def compile_stdin(driver: list[str], inv: CommandLine, *, cxx: bool) -> int:
    """`cc -x c - …`: the source is read from stdin into a temporary file and built like any
    other, so a program piped in gets its derivatives too. `-c` without `-o` writes `-.o`,
    the name clang gives it."""
    import shutil
    import tempfile
    stdin = next(i for i in inv.inputs if i.kind == "stdin")
    tmpdir = tempfile.mkdtemp(prefix="enzyme-build-stdin-")
    try:
        path = os.path.join(tmpdir, "stdin")
        with open(path, "wb") as handle:
            shutil.copyfileobj(sys.stdin.buffer, handle)
        replaced = inv.substitute({stdin.index: path})
        if inv.compile_only and inv.output is None:
            replaced = replaced.with_options(["-o", "-.o"])
        if replaced.mode == "passthrough":
            return child_status(subprocess.run(driver + replaced.emit()).returncode,
                                os.path.basename(driver[0]))
        if replaced.mode == "compile":
            return compile_objects(driver, replaced)
        return compile_and_link(driver, replaced)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def exec_clang(driver: list[str], argv: list[str]) -> None:
    """Become clang: its output, diagnostics and exit code reach the user untouched."""
    command = driver + argv
    log_command(command)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)


def passthrough_additions(inv: CommandLine) -> list[str]:
    """Only the include dir, so `#include <enzyme/enzyme.h>` preprocesses everywhere."""
    if inv.passthrough_reason == "-###":
        return []
    if any(i.kind in ("source", "stdin", "header", "asm") for i in inv.inputs):
        return [f"-I{INCLUDE_DIR}"]
    return []


def diagnostics_prefix() -> list[str]:
    # stderr is captured (for the attribute hook), so clang would not colour it itself
    return ["-fcolor-diagnostics"] if sys.stderr.isatty() else []


def fat_flags(source: Input) -> list[str]:
    if source.kind == "asm":
        return [f"-I{INCLUDE_DIR}"]
    return FAT_OBJECT_FLAGS + [f"-I{INCLUDE_DIR}"]


def run_compile(command: list[str], source: Input, output: str, *, silenced: bool = False,
                lean: list[str] | None = None) -> int:
    """Run one compile; apply the custom-derivative attribute hook; show clang's stderr.

    silenced: the command line has -w (CommandLine.warnings_silenced).
    lean: flags tried first (LEAN_OBJECT_FLAGS); when that compile fails, it is redone
    without them and only the second compile's diagnostics are shown (code generation of
    the unoptimized module can fail where the optimized one does not, e.g. an inline asm
    "i" operand that is a constant only once an always_inline function is inlined).
    """
    if lean:
        status = _compile_once(command + lean, source, output, silenced, show_failure=False)
        if status == 0:
            return 0
        unlink_quietly(output)
    return _compile_once(command, source, output, silenced, show_failure=True)


def _compile_once(command: list[str], source: Input, output: str, silenced: bool, *,
                  show_failure: bool, show_success: bool = True) -> int:
    """One compile (through the launcher) and the attribute hook; clang's diagnostics are
    shown when the compile succeeded and show_success, or failed and show_failure."""
    from .launcher import launch
    launched, launch_env = launch(command)
    log_command(launched)
    sys.stdout.flush()
    proc = subprocess.run(launched, stderr=subprocess.PIPE, env=launch_env)
    stderr_text = proc.stderr.decode("utf-8", errors="replace")
    returncode = proc.returncode
    hooked = None
    if source.kind == "source" and returncode == 0:
        hooked = _attribute_hook(command, source.path, output, stderr_text, silenced)
    if hooked is not None:
        returncode = hooked.returncode
    if show_failure if returncode != 0 else show_success:
        if hooked is not None:
            if hooked.stdout:
                sys.stdout.write(hooked.stdout)
                sys.stdout.flush()
            sys.stderr.write(hooked.stderr or "")
        else:
            sys.stderr.buffer.write(proc.stderr)
    sys.stderr.flush()
    if returncode != 0 and not show_failure:
        return 1
    if returncode == 0 and source.kind == "source" and os.path.isfile(output):
        from ..link.objfile import rename_bitcode_section
        rename_bitcode_section(output)
    return child_status(returncode, os.path.basename(command[0]))


def _attribute_hook(command, source, output, stderr_text, silenced):
    """Recompile through frontend.attributes when clang dropped an `enzyme` attribute.

    The cheap test is clang's warning; `-w` silences it, and then only a scan of the
    files the TU reads can tell (one `clang -M`, paid only by `-w` builds).
    """
    if not silenced and "enzyme" not in stderr_text:
        return None
    try:
        from . import attributes
    except ImportError:
        return None
    env = dict(os.environ)
    if silenced:
        if not attributes.source_mentions_enzyme_attribute(command, source, env):
            return None
    elif not attributes.mentions_enzyme_attribute(stderr_text):
        return None
    return attributes.compile_with_enzyme_attributes(command, source, output, env)


def compile_objects(driver: list[str], inv: CommandLine) -> int:
    """`-c`: one fat object per source, named as clang names them."""
    sources = inv.sources
    status = 0
    if len(sources) == 1:
        source = sources[0]
        output = inv.output or argmodel.default_object_name(source.path)
        command = driver + diagnostics_prefix() + inv.emit() + fat_flags(source)
        return run_compile(command, source, output, silenced=inv.warnings_silenced) or \
            _guard(driver, output, inv)
    for source in sources:
        output = argmodel.default_object_name(source.path)
        command = (driver + diagnostics_prefix() + inv.compile_command(source, output)
                   + fat_flags(source))
        status = run_compile(command, source, output, silenced=inv.warnings_silenced) or \
            _guard(driver, output, inv) or status
    return status


def _guard(driver: list[str], output: str, inv: CommandLine) -> int:
    from ..link.guard import guard_object
    return guard_object(driver, output, inv.target_flags())


# --- linking -------------------------------------------------------------------------

def dependency_flags(inv: CommandLine, source: Input, tmp_depfile: str) -> list[str]:
    """-MD-style flags for one source of a link, writing into a temporary file."""
    flags = inv.depfile_flags()
    if inv.dep_targets:
        flags += inv.dep_targets
    else:
        target = inv.output or argmodel.default_object_name(source.path)
        flags += ["-MT", target]
    return flags + ["-MF", tmp_depfile]


def final_depfile(inv: CommandLine, source: Input) -> str:
    if inv.depfile_path:
        return inv.depfile_path
    if inv.output:
        return os.path.splitext(inv.output)[0] + ".d"
    return os.path.splitext(os.path.basename(source.path))[0] + ".d"


def write_depfiles(parts: dict[str, list[str]]) -> None:
    """Write each dependency file once: the rules of all sources that map to it."""
    from ..files import replace_atomically
    for path, pieces in parts.items():
        replace_atomically(path, "".join(_read_text(p) for p in pieces), mode=0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _read_text(path: str) -> str:
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError:
        return ""
    return text if text.endswith("\n") or not text else text + "\n"


def compile_and_link(driver: list[str], inv: CommandLine) -> int:
    """Compile sources to temporary fat objects, then link (fast path or whole program)."""
    import shutil
    import tempfile
    tmpdir = tempfile.mkdtemp(prefix="enzyme-build-")
    try:
        objects: dict[int, str] = {}
        lean_compiles: dict[int, tuple[list[str], Input, str]] = {}
        depparts: dict[str, list[str]] = {}
        lean = LEAN_OBJECT_FLAGS if lean_objects_likely(inv) else None
        for k, source in enumerate(inv.sources):
            stem = os.path.splitext(os.path.basename(source.path))[0]
            obj = os.path.join(tmpdir, f"{k}-{stem}.o")
            deps: list[str] = []
            if inv.depfile and source.kind == "source":
                tmp_dep = os.path.join(tmpdir, f"{k}-{stem}.d")
                deps = dependency_flags(inv, source, tmp_dep)
                depparts.setdefault(final_depfile(inv, source), []).append(tmp_dep)
            # fat objects even under -flto: the whole-program link reads their bitcode
            # (and LTO objects' bitcode) itself
            command = (driver + diagnostics_prefix()
                       + inv.compile_command(source, obj, for_link=True,
                                             extra=deps + ["-Qunused-arguments"])
                       + fat_flags(source))
            lean_here = lean if source.kind == "source" else None
            status = run_compile(command, source, obj, silenced=inv.warnings_silenced, lean=lean_here)
            if status != 0:
                return status
            objects[source.index] = obj
            if lean_here:
                lean_compiles[source.index] = (command, source, obj)
        write_depfiles(depparts)
        link = inv.link_command(objects)
        if not needs_whole_program(link):
            status = recompile_lean_objects(lean_compiles, inv.warnings_silenced)
            if status != 0:
                return status
            command = driver + link.emit() + ["-Qunused-arguments"]
            if inv.output:
                command += ["-o", inv.output]
            log_command(command)
            sys.stdout.flush()
            return child_status(subprocess.run(command).returncode, os.path.basename(command[0]))
        return whole_program_link(driver, inv, link, tmpdir)
    finally:
        if os.environ.get("ENZYME_BUILD_KEEP_TEMPS") != "1":
            shutil.rmtree(tmpdir, ignore_errors=True)


def lean_objects_likely(inv: CommandLine) -> bool:
    """Is this compile-and-link likely a whole-program link with AD, so that its objects
    may be lean (LEAN_OBJECT_FLAGS)? Guessed from the sources' text: one mentions
    `enzyme` (an `__enzyme_*` call, the header, a registration or an enzyme attribute).
    A wrong guess costs time, never the result: lean objects that end up linked natively
    are compiled again in full first (recompile_lean_objects). Not with the user's own
    `-mllvm` options, which may name the same LLVM options."""
    if any(arg.option == "-mllvm" or arg.option == "-Xclang" and arg.value == "-mllvm" for arg in inv.items):
        return False
    for source in inv.sources:
        if source.kind != "source":
            continue
        try:
            with open(source.path, "rb") as handle:
                if b"enzyme" in handle.read():
                    return True
        except OSError:
            continue  # clang reports it
    return False


def recompile_lean_objects(compiles: dict[int, tuple[list[str], Input, str]], silenced: bool) -> int:
    """Before a native link: the lean objects compiled again in full (optimized native
    code). Their diagnostics were shown by the first compile; a failure shows its own."""
    for command, source, output in compiles.values():
        status = _compile_once(command, source, output, silenced, show_failure=True, show_success=False)
        if status != 0:
            return status
    return 0


def needs_whole_program(link: CommandLine) -> bool:
    """Does any object or archive of the link (incl. -l from -L dirs) mention __enzyme_?"""
    from ..link import objfile
    search_dirs = objfile.library_search_dirs(link.search_dirs)
    for linked in link.linked_files():
        path = linked.path
        if linked.library is not None:
            path = objfile.find_library(linked.library, search_dirs, static_only=linked.static)
        if path is None or objfile.is_shared_object_path(path):
            continue
        try:
            data = objfile.read_file(path)
        except OSError:
            continue  # the linker will say what is wrong with it
        try:
            if objfile.mentions_enzyme(data, path):
                return True
        except objfile.MalformedArchive as err:
            raise objfile.malformed_archive(path, err) from err
    return False


def whole_program_link(driver: list[str], inv: CommandLine, link: CommandLine, tmpdir: str) -> int:
    from ..files import KEEP_VAR, keep_directory
    from ..link.wholeprogram import LinkPlan, link_whole_program
    keep_dir = keep_directory(os.environ.get(KEEP_VAR))
    plan = LinkPlan(
        driver=driver, link_args=link.emit(), output=inv.output or "a.out", shared=inv.shared,
        export_dynamic=inv.export_dynamic, opt_level=inv.opt_level,
        pic=inv.shared or not inv.no_pie, tmpdir=tmpdir,
        keep_dir=keep_dir, verbose=verbose_enabled())
    return link_whole_program(plan)
