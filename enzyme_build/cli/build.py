"""`enzyme-build build`: compile sources in parallel through SCons and link them with AD applied.

SCons runs as a subprocess on an SConstruct generated into the build directory; its
progress lines are turned into a progress display and its failures into one clear error.
"""
from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field

import click

from ..errors import EnzymeBuildError, run_guarded
from ..scons import CACHE_DIR_VAR, PROGRESS_MARK, PROGRESS_VAR

C_SUFFIXES = (".c",)
CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".C", ".CC", ".CPP")
SOURCE_SUFFIXES = C_SUFFIXES + CXX_SUFFIXES
# Inputs passed to the link as they are: objects, fat static libraries, shared libraries.
LINK_INPUT_SUFFIXES = (".o", ".a", ".so")

DEFAULT_BUILD_ROOT = ".enzyme-build"

# "scons: *** [target] Error 1" names the target whose command failed.
FAILED_TARGET = re.compile(r"^scons: \*\*\* \[(?P<target>[^\]]+)\] (?P<why>.*)$")
EXIT_STATUS = re.compile(r"^Error (?P<status>-?\d+)$")
# CacheDir prints this instead of the command's progress line for a retrieved target.
RETRIEVED = re.compile(r"^Retrieved `(?P<target>.+)' from cache$")


@dataclass(frozen=True)
class BuildRequest:
    """What the user asked `enzyme-build build` to produce."""

    sources: tuple[str, ...]
    output: str
    kind: str  # "program" | "shared" | "static"
    language: str | None  # None: by source suffix
    optimization: str | None
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    lib_dirs: tuple[str, ...] = ()
    libs: tuple[str, ...] = ()
    compile_flags: tuple[str, ...] = ()
    link_flags: tuple[str, ...] = ()
    debug: bool = False
    standard: str | None = None  # "c11", "c++17": applies to the sources of that language


@dataclass
class BuildReport:
    """What SCons did, reconstructed from its progress lines and error output."""

    compiled: list[str] = field(default_factory=list)
    linked: list[str] = field(default_factory=list)
    retrieved: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)
    returncode: int = 0


# --- the generated SConstruct -----------------------------------------------------------

def scons_path(path: str, top: str) -> str:
    """A path as SCons should see it: '#'-relative inside the top directory, else absolute.

    Top-relative paths keep command lines (and so cache signatures) identical between two
    copies of the same project in different directories.
    """
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, top)
    if relative == ".":
        return "#."
    if _outside(relative):
        return absolute
    return "#" + relative


def _outside(relative: str) -> bool:
    return relative == ".." or relative.startswith(".." + os.sep)


def object_name(source: str, top: str) -> str:
    """The object's path under the build directory's obj/, mirroring the source's path."""
    absolute = os.path.abspath(source)
    relative = os.path.relpath(absolute, top)
    if _outside(relative):
        relative = os.path.join("_abs", absolute.lstrip(os.sep))
    stem, _ = os.path.splitext(relative)
    return stem


def render_sconstruct(request: BuildRequest, build_dir: str, top: str) -> str:
    """The SConstruct text for one `enzyme-build build` invocation.

    Every user value reaches SCons as data it will not interpret: Python literals
    (repr) in this file; files and directories as nodes made without SCons' substitution
    (eb.file, eb.dir); flags and -D/-l words as eb.literals, which SCons neither substitutes
    nor splits and the tool quotes for the shell; directories (CPPPATH, LIBPATH) become
    literal -I/-L words in the tool. LIBS stays for SCons' dependency scanner only.
    """
    opt = [f"-O{request.optimization}"] if request.optimization is not None else []
    debug = ["-g"] if request.debug else []
    ccflags = opt + debug + list(request.compile_flags)
    linkflags = opt + debug + list(request.link_flags)
    bdir = scons_path(build_dir, top)
    objects = []
    for source in compiled_sources(request.sources):
        target = f"{bdir}/obj/{object_name(source, top)}"
        objects.append((target, scons_path(source, top)))
    link_inputs = [scons_path(path, top) for path in request.sources
                   if not path.endswith(SOURCE_SUFFIXES)]
    builder = {"program": "EnzymeProgram", "shared": "EnzymeSharedLibrary",
               "static": "EnzymeLibrary"}[request.kind]
    object_builder = "SharedObject" if request.kind == "shared" else "Object"
    suffix = ".os" if request.kind == "shared" else ".o"  # SCons' POSIX (SH)OBJSUFFIX
    final = f"{bdir}/out/{os.path.basename(request.output)}"
    include_dirs = [scons_path(d, top) for d in request.include_dirs]
    lib_dirs = [scons_path(d, top) for d in request.lib_dirs]
    lines = [
        "# Generated by `enzyme-build build` on every run; change the command line, not this file.",
        "import enzyme_build.scons as eb",
        "",
        "env = eb.Environment(",
        f"    CCFLAGS=eb.literals({ccflags!r}),",
        f"    CFLAGS=eb.literals({std_flags(request.standard, cxx=False)!r}),",
        f"    CXXFLAGS=eb.literals({std_flags(request.standard, cxx=True)!r}),",
        f"    LINKFLAGS=eb.literals({linkflags!r}),",
        f"    LIBS=[eb.node_name(lib) for lib in {list(request.libs)!r}],",
        "    PROGSUFFIX='', SHLIBPREFIX='', SHLIBSUFFIX='', LIBPREFIX='', LIBSUFFIX='',",
        ")",
        "env.Replace(",
        f"    CPPPATH=[eb.dir(env, d) for d in {include_dirs!r}],",
        f"    LIBPATH=[eb.dir(env, d) for d in {lib_dirs!r}],",
        f"    _CPPDEFFLAGS=eb.literals({['-D' + d for d in request.defines]!r}),",
        f"    _LIBFLAGS=eb.literals({['-l' + lib for lib in request.libs]!r}),",
        ")",
    ]
    if request.language == "c++":
        lines.append("env['LINK'] = env['SHLINK'] = '$CXX'")
    elif request.language == "c":
        lines.append("env['LINK'] = env['SHLINK'] = '$CC'")
    lines += [
        f"eb.sconsign_file({os.path.join(os.path.abspath(build_dir), 'sconsign')!r})",
        "objects = [",
    ]
    lines += [f"    env.{object_builder}(eb.file(env, {t + suffix!r}), eb.file(env, {s!r}))," for t, s in objects]
    lines += [f"    eb.file(env, {path!r})," for path in link_inputs]
    lines += [
        "]",
        f"result = env.{builder}(eb.file(env, {final!r}), objects)",
        "Default(result)",
        "",
    ]
    return "\n".join(lines)


def compiled_sources(inputs) -> list[str]:
    return [path for path in inputs if path.endswith(SOURCE_SUFFIXES)]


def std_flags(standard: str | None, cxx: bool) -> list[str]:
    """-std=… for the sources of its own language only (C++ standards name "++")."""
    if not standard or ("++" in standard) != cxx:
        return []
    return [f"-std={standard}"]


def write_if_changed(path: str, text: str) -> None:
    """Write text to path atomically, leaving the file untouched when it already holds text."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return
    except OSError:
        pass
    from ..files import replace_atomically
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    replace_atomically(path, text)


# --- running SCons ------------------------------------------------------------------------

def scons_command(sconstruct: str, directory: str | None, jobs: int) -> list[str]:
    """The SCons invocation: the SCons package of the running Python, quiet, in parallel."""
    command = [sys.executable, "-m", "SCons", "-Q", "-f", sconstruct, f"-j{jobs}"]
    if directory:
        command[3:3] = ["-C", directory]
    return command


def scons_environment(cache_dir: str | None, verbose: bool = False) -> dict:
    """The environment for the SCons subprocess: ours plus the progress/cache switches."""
    env = dict(os.environ)
    env[PROGRESS_VAR] = "1"
    if verbose:
        env["ENZYME_BUILD_VERBOSE"] = "1"  # the wrapper then prints each sub-command
    if cache_dir:
        env[CACHE_DIR_VAR] = os.path.abspath(cache_dir)
    else:
        env.pop(CACHE_DIR_VAR, None)
    return env


class Progress:
    """Shows compile/link progress: a live bar on a terminal, one line per step otherwise."""

    def __init__(self, total_sources: int, verbose: bool, shown_as: dict[str, str] | None = None):
        from rich.console import Console

        self.console = Console(stderr=True, highlight=False)
        self.total = total_sources
        self.verbose = verbose
        self.compiled = 0
        # Internal paths (the build directory's copy of the output) shown as the user's names.
        self.shown_as = shown_as or {}
        self.bar = None
        if self.console.is_terminal and total_sources:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn
            self.bar = Bar(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                           console=self.console, transient=True)
            self.task = self.bar.add_task("compile", total=total_sources)
            self.bar.start()

    def step(self, action: str, path: str) -> None:
        path = self.shown_as.get(os.path.normpath(path), path)
        if action == "index":  # ranlib after archiving: part of "archive"
            return
        if action == "compile":
            self.compiled += 1
            if self.bar is not None:
                self.bar.update(self.task, advance=1, description=f"compile {path}")
            count = f"{self.compiled}/{self.total}" if self.total else f"{self.compiled}"
            self.console.print(f"compile {count} {path}", markup=False)
        else:
            if self.bar is not None:
                self.bar.update(self.task, description=f"{action} {path}")
            self.console.print(f"{action} {path}", markup=False)

    def show_diagnostic(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def note(self, text: str) -> None:
        if self.verbose:
            self.console.print(text, markup=False)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run_scons(command: list[str], env: dict, cwd: str, progress: Progress) -> BuildReport:
    """Run SCons, feeding its progress lines to `progress` and collecting failures."""
    report = BuildReport()
    try:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace")
    except OSError as err:
        raise EnzymeBuildError(f"cannot run SCons: {err}",
                               hint="reinstall enzyme-build (it depends on scons)") from err

    reader = threading.Thread(target=relay_stderr, args=(proc.stderr, report, progress), daemon=True)
    reader.start()
    try:
        for raw in proc.stdout:
            relay_stdout_line(raw.rstrip("\n"), report, progress)
    except KeyboardInterrupt:
        # SCons got the same SIGINT; give it a moment to stop its compilers, then make sure.
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    report.returncode = proc.wait()
    reader.join()
    return report


def relay_stdout_line(line: str, report: BuildReport, progress: Progress) -> None:
    """Turn one line of SCons' output into a progress step (or show it as it is)."""
    retrieved = RETRIEVED.match(line)
    if line.startswith(PROGRESS_MARK + " "):
        action, _, path = line[len(PROGRESS_MARK) + 1:].partition(" ")
        if action == "compile":
            report.compiled.append(path)
        elif action in ("link", "archive"):
            report.linked.append(path)
        progress.step(action, path)
    elif retrieved:
        report.retrieved.append(retrieved["target"])
        progress.step("from cache", retrieved["target"])
    elif line.startswith("scons: "):
        progress.note(line)
    else:
        progress.console.print(line, markup=False)


def relay_stderr(stream, report: BuildReport, progress: Progress) -> None:
    """Show compiler diagnostics as they arrive; keep SCons' own error lines for the summary."""
    for raw in stream:
        line = raw.rstrip("\n")
        match = FAILED_TARGET.match(line)
        if match:
            report.failed.append((match["target"], match["why"]))
        elif line.startswith("scons: "):
            if not line.startswith("scons: building terminated"):
                report.diagnostics.append(line)
        else:
            report.diagnostics.append(line)
            progress.show_diagnostic(line)


def failure_error(report: BuildReport, objects_to_sources: dict[str, str],
                  shown_as: dict[str, str] | None = None) -> EnzymeBuildError:
    """One error naming what failed (a source's compile, or the link)."""
    shown_as = shown_as or {}
    if not report.failed:
        scons_errors = [line for line in report.diagnostics if line.startswith("scons: ")]
        detail = "\n".join(scons_errors[-3:]) or f"exit status {report.returncode}"
        return EnzymeBuildError(f"SCons failed: {detail}")
    target, why = report.failed[0]
    if why.startswith("Build interrupted"):
        return EnzymeBuildError("build interrupted; nothing was installed")
    status = EXIT_STATUS.match(why)
    why = f"exit status {status['status']}" if status else why
    source = objects_to_sources.get(os.path.normpath(target))
    what = f"compiling {source}" if source else f"building {shown_as.get(os.path.normpath(target), target)}"
    others = f" (and {len(report.failed) - 1} more)" if len(report.failed) > 1 else ""
    return EnzymeBuildError(f"{what} failed: {why}{others}",
                            hint="see the compiler's messages above")


# --- the output file ------------------------------------------------------------------------

def install_output(built: str, output: str) -> bool:
    """Copy the built file to the user's output path atomically; False if already identical."""
    if os.path.isfile(output) and filecmp.cmp(built, output, shallow=False):
        return False
    directory = os.path.dirname(os.path.abspath(output))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(output)}.tmp-")
    os.close(fd)
    try:
        shutil.copy2(built, tmp)
        os.replace(tmp, output)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


def remove_stale_output(output: str) -> None:
    """A failed build must not leave an output the user could mistake for a fresh one."""
    if os.path.isfile(output):
        os.unlink(output)


# --- validation -----------------------------------------------------------------------------

def check_output(output: str) -> None:
    """-o must name a file: its base name also names the build directory under
    .enzyme-build/, so `.`/`..` would put the generated SConstruct over the user's files."""
    base = os.path.basename(output)
    if base in ("", ".", "..") or os.path.isdir(output):
        raise EnzymeBuildError(f"-o {output} names a directory, not an output file",
                               hint="give the file to write, e.g. -o bin/prog")


def check_cache_dir(cache_dir: str | None) -> None:
    """A cache directory others can write to is a cache others can fill: every object in
    it is linked as it is found. Said once per build (docs/security.md)."""
    if not cache_dir or not os.path.isdir(cache_dir):
        return
    mode = os.stat(cache_dir).st_mode
    if mode & 0o022:
        print(f"enzyme-build: warning: --cache-dir {cache_dir} is writable by other users; "
              "objects found there are linked without a check, so share it only between "
              "users who trust each other (see docs/security.md)", file=sys.stderr, flush=True)


def check_sources(sources: tuple[str, ...], output: str) -> None:
    check_output(output)
    if not sources:
        raise EnzymeBuildError("no source files given", hint="enzyme-build build main.c util.c -o prog")
    missing = [s for s in sources if not os.path.isfile(s)]
    if missing:
        raise EnzymeBuildError(f"source file not found: {', '.join(missing)}")
    unknown = [s for s in sources if not s.endswith(SOURCE_SUFFIXES + LINK_INPUT_SUFFIXES)]
    if unknown:
        raise EnzymeBuildError(
            f"not a C/C++ source, object or library: {', '.join(unknown)}",
            hint=f"inputs end in one of {' '.join(SOURCE_SUFFIXES + LINK_INPUT_SUFFIXES)}")
    if not any(s.endswith(SOURCE_SUFFIXES) for s in sources):
        raise EnzymeBuildError("no C or C++ source among the inputs",
                               hint="to link existing objects use `enzyme-build cc *.o -o prog`")
    if os.path.abspath(output) in {os.path.abspath(s) for s in sources}:
        raise EnzymeBuildError(f"output {output} is also a source file", hint="choose another -o")
    names = [object_name(s, os.getcwd()) for s in compiled_sources(sources)]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise EnzymeBuildError(f"two sources would share the object {duplicates[0]}.o",
                               hint="rename one of the sources")


# --- the command ------------------------------------------------------------------------------

def build_sources(request: BuildRequest, jobs: int, build_dir: str | None, cache_dir: str | None,
                  verbose: bool) -> int:
    """Build `request` and install the result at request.output."""
    check_sources(request.sources, request.output)
    check_cache_dir(cache_dir)
    top = os.getcwd()
    build_dir = build_dir or os.path.join(DEFAULT_BUILD_ROOT, os.path.basename(request.output))
    sconstruct = os.path.join(build_dir, "SConstruct")
    write_if_changed(sconstruct, render_sconstruct(request, build_dir, top))

    built = os.path.join(build_dir, "out", os.path.basename(request.output))
    objects_to_sources = {
        os.path.normpath(os.path.join(build_dir, "obj", object_name(s, top)) + suffix): s
        for s in compiled_sources(request.sources) for suffix in (".o", ".os")}
    shown_as = {os.path.normpath(built): request.output, **objects_to_sources}
    progress = Progress(len(compiled_sources(request.sources)), verbose, shown_as)
    try:
        report = run_scons(scons_command(sconstruct, None, jobs),
                           scons_environment(cache_dir, verbose), top, progress)
    finally:
        progress.stop()
    if report.returncode != 0:
        remove_stale_output(request.output)
        raise failure_error(report, objects_to_sources, shown_as)

    if not os.path.isfile(built):
        raise EnzymeBuildError(f"SCons reported success but {built} is missing")
    changed = install_output(built, request.output)
    if not (report.compiled or report.linked or report.retrieved or changed):
        progress.console.print(f"{request.output} is up to date", markup=False)
    else:
        cached = f", {len(report.retrieved)} from cache" if report.retrieved else ""
        progress.console.print(
            f"built {request.output}: compiled {len(report.compiled)} of "
            f"{len(compiled_sources(request.sources))} "
            f"sources{cached}" + (", linked" if report.linked else ""), markup=False)
    return 0


def build_project(project: str, jobs: int, cache_dir: str | None, verbose: bool,
                  targets: tuple[str, ...]) -> int:
    """Run a user's SConstruct (which uses enzyme_build.scons) with progress and clear errors."""
    if not os.path.isfile(project):
        raise EnzymeBuildError(f"project file not found: {project}")
    check_cache_dir(cache_dir)
    directory = os.path.dirname(os.path.abspath(project))
    command = scons_command(os.path.basename(project), directory, jobs) + list(targets)
    progress = Progress(0, verbose)
    try:
        report = run_scons(command, scons_environment(cache_dir, verbose), os.getcwd(), progress)
    finally:
        progress.stop()
    if report.returncode != 0:
        raise failure_error(report, {})
    if not report.compiled and not report.linked:
        progress.console.print(f"{project}: everything is up to date", markup=False)
    else:
        progress.console.print(f"{project}: compiled {len(report.compiled)}, "
                               f"linked/archived {len(report.linked)}", markup=False)
    return 0


@click.command("build", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("sources", nargs=-1, type=click.Path())
@click.option("-o", "output", metavar="OUT", help="Executable, shared library or archive to write.")
@click.option("--shared", "kind", flag_value="shared", help="Build a shared library.")
@click.option("--static", "kind", flag_value="static", help="Build a fat static library (.a).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Parallel compile jobs (default: number of CPUs).")
@click.option("-O", "optimization", metavar="LEVEL", help="Optimization level: -O0 … -O3, -Os.")
@click.option("-g", "debug", is_flag=True, help="Emit debug info.")
@click.option("-I", "include_dirs", multiple=True, metavar="DIR", help="Header search directory.")
@click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]", help="Preprocessor define.")
@click.option("-L", "lib_dirs", multiple=True, metavar="DIR", help="Library search directory.")
@click.option("-l", "libs", multiple=True, metavar="LIB", help="Library to link.")
@click.option("-W", "warnings", multiple=True, metavar="WARNING", help="Warning flag: -Wall, -Wextra, -Werror …")
@click.option("-f", "f_flags", multiple=True, metavar="FEATURE", help="Code generation flag: -ffast-math …")
@click.option("-m", "m_flags", multiple=True, metavar="MACHINE", help="Target flag: -march=native …")
@click.option("-std", "standard", metavar="STD", help="Language standard: -std=c11, -std=c++17 …")
@click.option("--cflag", "compile_flags", multiple=True, metavar="FLAG",
              help="Extra compiler flag (repeatable).")
@click.option("--ldflag", "link_flags", multiple=True, metavar="FLAG",
              help="Extra linker flag (repeatable).")
@click.option("--cc", "language", flag_value="c", help="Link with the C driver.")
@click.option("--c++", "language", flag_value="c++", help="Link with the C++ driver.")
@click.option("--build-dir", metavar="DIR", help="Objects and SCons state (default .enzyme-build/OUT).")
@click.option("--cache-dir", metavar="DIR", help="Shared object cache (SCons CacheDir).")
@click.option("--project", metavar="FILE", help="Build an SConstruct that uses enzyme_build.scons.")
@click.option("-v", "--verbose", is_flag=True, help="Show SCons' own messages.")
def build(sources, output, kind, jobs, optimization, debug, include_dirs, defines, lib_dirs, libs,
          warnings, f_flags, m_flags, standard, compile_flags, link_flags, language, build_dir,
          cache_dir, project, verbose):
    """Compile SOURCES in parallel (SCons) and link them with derivatives applied."""
    jobs = jobs or os.cpu_count() or 1
    verbose = verbose or bool(os.environ.get("ENZYME_BUILD_VERBOSE"))
    if project:
        # With --project, SOURCES name the SCons targets to build.
        code = run_guarded(build_project, project, jobs, cache_dir, verbose, tuple(sources))
    elif not output:
        code = run_guarded(_missing_output)
    else:
        request = BuildRequest(
            sources=tuple(sources), output=output, kind=kind or "program", language=language,
            optimization=optimization, include_dirs=include_dirs, defines=defines,
            lib_dirs=lib_dirs, libs=libs, debug=debug,
            standard=standard.lstrip("=") if standard else None,
            compile_flags=clang_flags(warnings, f_flags, m_flags) + compile_flags,
            # -f and -m flags change code generation, so the link (which generates code) gets them too
            link_flags=clang_flags((), f_flags, m_flags) + link_flags)
        code = run_guarded(build_sources, request, jobs, build_dir, cache_dir, verbose)
    if code:
        sys.exit(code)


def clang_flags(warnings, f_flags, m_flags) -> tuple[str, ...]:
    """Rebuild clang spellings from the options click split off (-Wall -> ("all",))."""
    flags = [f"-W{w}" for w in warnings] + [f"-f{f}" for f in f_flags] + [f"-m{m}" for m in m_flags]
    return tuple(flags)


def _missing_output() -> int:
    raise EnzymeBuildError("no output given", hint="add -o OUT (or use --project SConstruct)")


if __name__ == "__main__":
    build()
