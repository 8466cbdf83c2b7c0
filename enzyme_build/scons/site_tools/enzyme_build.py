"""SCons tool `enzyme_build`: compile fat objects and link with AD through the enzyme-build wrapper.

Load with ``env.Tool('enzyme_build', toolpath=[enzyme_build.scons.TOOL_DIR])`` or use
``enzyme_build.scons.Environment``. Adds ``EnzymeProgram``, ``EnzymeSharedLibrary`` and
``EnzymeLibrary`` (a fat static library) to the environment.
"""
from __future__ import annotations

import os
import shlex
import shutil
import sys

import SCons.Errors
import SCons.Subst

from enzyme_build.scons import CACHE_DIR_VAR, PROGRESS_MARK, PROGRESS_VAR, literal

# Suffixes whose presence among a link's (transitive) sources means the C++ driver links.
CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".C", ".CC", ".CPP", ".mm")

# Environment variables the wrapper reads besides ENZYME_BUILD_*; SCons starts commands
# with a near-empty environment, so each one must be forwarded by name.
FORWARDED_VARS = ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "SOURCE_DATE_EPOCH")
# ENZYME_BUILD_LAUNCHER's tools read their own settings (cache dir, hosts) from these.
FORWARDED_PREFIX = ("ENZYME_BUILD_", "CCACHE_", "SCCACHE_", "DISTCC_", "ICECC_", "XDG_CACHE_HOME")

# Wrapper settings that change what a command produces. SCons does not hash the process
# environment, so they are added to the command signatures (never to the command lines).
COMPILE_SIGNATURE_VARS = ("ENZYME_BUILD_CONFIGURE_ONLY", "ENZYME_BUILD_CLANG")
LINK_SIGNATURE_VARS = ("ENZYME_BUILD_AD_BEFORE_OPT", "ENZYME_BUILD_CONFIGURE_ONLY",
                       "ENZYME_BUILD_CLANG", "ENZYME_BUILD_LLVM_BIN")

# (construction variable, progress line) pairs; $SOURCE/$TARGET expand per command.
PROGRESS_LINES = (
    ("CCCOMSTR", f"{PROGRESS_MARK} compile $SOURCE"),
    ("SHCCCOMSTR", f"{PROGRESS_MARK} compile $SOURCE"),
    ("CXXCOMSTR", f"{PROGRESS_MARK} compile $SOURCE"),
    ("SHCXXCOMSTR", f"{PROGRESS_MARK} compile $SOURCE"),
    ("LINKCOMSTR", f"{PROGRESS_MARK} link $TARGET"),
    ("SHLINKCOMSTR", f"{PROGRESS_MARK} link $TARGET"),
    ("ARCOMSTR", f"{PROGRESS_MARK} archive $TARGET"),
    ("RANLIBCOMSTR", f"{PROGRESS_MARK} index $TARGET"),
)


def shell_escape(word: str) -> str:
    """SCons' ESCAPE: quote one literal word (a file name, a Literal flag) for `sh -c`.

    SCons' POSIX default puts the word in double quotes and escapes only `"` and `$`, so a
    backtick in a file name still runs a command. Single quotes leave nothing active.
    """
    return shlex.quote(str(word))


def literal_path_flags(prefix, items, suffix, env, f=lambda x: x, target=None, source=None,
                       affect_signature: bool = True) -> list:
    """SCons' `_concat` for directory lists (-I, -L), each resulting word a Literal.

    SCons joins `-I` and a directory into a plain word that it quotes only for spaces, so
    a directory named with a backtick or `;` would reach the shell active. Literal words
    go through ESCAPE (shell_escape) instead. `$(`/`$)` markers stay markers.
    """
    import SCons.Defaults

    words = SCons.Defaults._concat(prefix, items, suffix, env, f, target, source,  # noqa: SLF001
                                   affect_signature=affect_signature)
    return [word if str(word) in ("$(", "$)") else literal(str(word)) for word in words or []]


def keep_dollars_in_node_signatures() -> None:
    """A file named `a$(b).c` is legal, but SCons reads `$(`/`$)` in the signature text of
    a command as its own markers and stops with "Unbalanced $(/$)". File nodes give their
    name with `$` doubled there (the text only feeds a hash; command lines are unchanged).
    Names without `$` keep their signatures, so existing builds stay up to date."""
    import SCons.Node.FS

    current = SCons.Node.FS.Base.for_signature
    if getattr(current, "keeps_dollars", False):
        return

    def for_signature(self) -> str:
        return current(self).replace("$", "$$")

    for_signature.keeps_dollars = True
    SCons.Node.FS.Base.for_signature = for_signature


def wrapper_commands() -> tuple[list, list] | None:
    """The (C, C++) compiler commands of the enzyme-build wrapper, or None if not installed.

    Prefers the single-executable entry points next to the running Python (the venv that
    runs scons also holds enzyme-build), then falls back to PATH.
    """
    bindir = os.path.dirname(os.path.abspath(sys.executable))
    candidates = [bindir] + os.environ.get("PATH", "").split(os.pathsep)
    for directory in candidates:
        cc = os.path.join(directory, "enzyme-cc")
        cxx = os.path.join(directory, "enzyme-c++")
        if _is_executable(cc) and _is_executable(cxx):
            return [literal(cc)], [literal(cxx)]
        driver = os.path.join(directory, "enzyme-build")
        if _is_executable(driver):
            return [literal(driver), "cc"], [literal(driver), "c++"]
    return None
# Each command is a list of words, the executable a Literal: an installation path with a
# space or a `$` in it stays one word, quoted for the shell.


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def forwarded_environment(base: dict) -> dict:
    """The ENV for wrapper subprocesses: SCons' own ENV plus the variables the wrapper needs."""
    env = dict(base)
    for name in FORWARDED_VARS:
        if name in os.environ:
            env[name] = os.environ[name]
    for name, value in os.environ.items():
        if name.startswith(FORWARDED_PREFIX):
            env[name] = value
    # The wrapper finds clang-22 & co. on PATH; keep the venv's bin first so helper
    # scripts resolve to the same installation as the wrapper itself.
    bindir = os.path.dirname(os.path.abspath(sys.executable))
    path = env.get("PATH", "").split(os.pathsep) if env.get("PATH") else []
    if bindir not in path:
        path.insert(0, bindir)
    env["PATH"] = os.pathsep.join(path)
    return env


def links_cplusplus(nodes, seen=None) -> bool:
    """Whether any node, or any source it is built from, is a C++ source file."""
    seen = set() if seen is None else seen
    for node in nodes:
        if id(node) in seen:
            continue
        seen.add(id(node))
        if str(node).endswith(CXX_SUFFIXES):
            return True
        if links_cplusplus(getattr(node, "sources", None) or [], seen):
            return True
    return False


def signature_settings(env, names) -> str:
    """The wrapper settings among `names` in the command environment, as NAME=value words."""
    command_env = env.get("ENV", {})
    return " ".join(f"{name}={command_env[name]}" for name in names if command_env.get(name))


def _linker(source, target, env, for_signature):
    """Construction-variable generator: link with the C++ wrapper when C++ is involved."""
    driver = "$CXX" if links_cplusplus(source) else "$CC"
    if for_signature:
        return f"{driver} {signature_settings(env, LINK_SIGNATURE_VARS)}".rstrip()
    return driver


def _compile_signature(source, target, env, for_signature):
    """Empty on the command line; the output-changing wrapper settings in the signature."""
    return signature_settings(env, COMPILE_SIGNATURE_VARS) if for_signature else ""


def _optimization_flags(flags) -> list:
    return [flag for flag in flags
            if isinstance(flag, (str, SCons.Subst.Literal)) and str(flag).startswith("-O")]


def with_link_optimization(env, kw: dict) -> dict:
    """Carry the compile-time -O level to the link, where the whole-program pipeline runs.

    Makefiles usually pass $(CFLAGS) when linking; SCons does not, so the link step would
    otherwise not know the optimization level the user asked for.
    """
    link_flags = _words(env, kw.get("LINKFLAGS", env.get("LINKFLAGS", [])))
    if _optimization_flags(link_flags):
        return kw
    level = []
    for var in ("CCFLAGS", "CFLAGS", "CXXFLAGS"):
        level = _optimization_flags(_words(env, kw.get(var, env.get(var, [])))) or level
    if not level:
        return kw
    return dict(kw, LINKFLAGS=link_flags + [level[-1]])


def _words(env, value) -> list:
    """A flags variable as a list of words; list items (Literals among them) kept as given."""
    if isinstance(value, str):
        return env.Split(value)
    return list(env.Flatten(value))


# Overrides that matter only to the link/archive step. Keeping them away from the objects
# lets a program and a library share one object per source (no "two environments" clash).
LINK_ONLY_VARS = frozenset((
    "LIBS", "LIBPATH", "LINKFLAGS", "SHLINKFLAGS", "RPATH", "ARFLAGS",
    "PROGPREFIX", "PROGSUFFIX", "LIBPREFIX", "LIBSUFFIX", "SHLIBPREFIX", "SHLIBSUFFIX",
    "SHLIBVERSION", "SONAME",
))
SOURCE_SUFFIXES = (".c",) + CXX_SUFFIXES


def _objects(env, source, object_builder, suffix_var: str, kw: dict) -> list:
    """Compile the C/C++ sources among `source`; objects and libraries pass through.

    Each object is named here, from its source node, rather than by the builder: SCons
    derives a target name by substituting the source's name as a string, which evaluates
    `$`/`${…}` in a file picked by Glob() (and drops the suffix of `a.b.c`).
    """
    compile_kw = {key: value for key, value in kw.items() if key not in LINK_ONLY_VARS}
    nodes = []
    for item in env.Flatten([source] if source is not None else []):
        if not str(item).endswith(SOURCE_SUFFIXES):
            nodes.append(item)
            continue
        node = env.File(item) if isinstance(item, str) else item
        nodes.extend(object_builder(object_target(env, node, suffix_var), node, **compile_kw))
    return nodes


def object_target(env, node, suffix_var: str):
    """The object's node, beside its source (where SCons would put it), made directly."""
    path = node.get_internal_path()
    stem = os.path.splitext(path)[0] + env.subst(f"${suffix_var}")
    return env.fs.File(stem if os.path.isabs(stem) else "#" + stem)


def _link_kw(kw: dict) -> dict:
    return {key: value for key, value in kw.items() if key in LINK_ONLY_VARS}


def _enzyme_program(env, target, source=None, **kw):
    """An executable linked by enzyme-build (derivatives synthesized at link time)."""
    objects = _objects(env, source, env.Object, "OBJSUFFIX", kw)
    return env.Program(target, objects, **_link_kw(with_link_optimization(env, kw)))


def _enzyme_shared_library(env, target, source=None, **kw):
    """A shared library linked by enzyme-build (derivatives synthesized at link time)."""
    objects = _objects(env, source, env.SharedObject, "SHOBJSUFFIX", kw)
    return env.SharedLibrary(target, objects, **_link_kw(with_link_optimization(env, kw)))


def _enzyme_library(env, target, source=None, **kw):
    """A fat static library: an ordinary archive of fat objects (native code + bitcode)."""
    objects = _objects(env, source, env.Object, "OBJSUFFIX", kw)
    return env.StaticLibrary(target, objects, **_link_kw(kw))


def _archiver(names):
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def generate(env):
    """Make the environment compile and link through the enzyme-build wrapper."""
    commands = wrapper_commands()
    if commands is None:
        raise SCons.Errors.UserError(
            "enzyme_build tool: the enzyme-build wrapper (enzyme-cc / enzyme-build) was not found "
            f"next to {sys.executable} or on PATH; install enzyme-build into the Python that runs scons")
    cc, cxx = commands
    env["CC"] = cc
    env["CXX"] = cxx
    env["SHCC"] = "$CC"
    env["SHCXX"] = "$CXX"
    env["EB_LINKER"] = _linker
    env["EB_COMPILE_SIGNATURE"] = _compile_signature
    # Every C/C++ compile command (static and shared) expands $_CCCOMCOM.
    env["_CCCOMCOM"] = env.get("_CCCOMCOM", "$CPPFLAGS $_CPPDEFFLAGS $_CPPINCFLAGS") + " $EB_COMPILE_SIGNATURE"
    env["LINK"] = "$EB_LINKER"
    env["SHLINK"] = "$EB_LINKER"
    # Fat archives are plain archives; llvm-ar matches the LLVM the wrapper uses.
    archiver = _archiver(("llvm-ar-22", "llvm-ar", "ar"))
    if archiver:
        env["AR"] = [literal(archiver)]
        ranlib = _archiver(("llvm-ranlib-22", "llvm-ranlib", "ranlib"))
        if ranlib:
            env["RANLIB"] = [literal(ranlib)]
    # Commands still run through `sh -c` (an SConstruct's own actions may use redirections),
    # but every literal word -- node names, Literal flags -- is quoted so the shell keeps it.
    env["ESCAPE"] = shell_escape
    keep_dollars_in_node_signatures()
    env["_eb_path_flags"] = literal_path_flags
    env["_CPPINCFLAGS"] = ("${_eb_path_flags(INCPREFIX, CPPPATH, INCSUFFIX, __env__, RDirs, "
                           "TARGET, SOURCE, affect_signature=False)}")
    env["_LIBDIRFLAGS"] = ("${_eb_path_flags(LIBDIRPREFIX, LIBPATH, LIBDIRSUFFIX, __env__, RDirs, "
                           "TARGET, SOURCE, affect_signature=False)}")
    env["ENV"] = forwarded_environment(env.get("ENV", {}))
    # SCons' default decider (content signatures) is kept on purpose: "content-timestamp"
    # compares whole-second mtimes and misses an edit made in the second of the last build.

    if os.environ.get(PROGRESS_VAR):
        for var, line in PROGRESS_LINES:
            env[var] = line
    if os.environ.get(CACHE_DIR_VAR):
        env.CacheDir(os.environ[CACHE_DIR_VAR])

    env.AddMethod(_enzyme_program, "EnzymeProgram")
    env.AddMethod(_enzyme_shared_library, "EnzymeSharedLibrary")
    env.AddMethod(_enzyme_library, "EnzymeLibrary")


def exists(env):
    """True when the enzyme-build wrapper is installed."""
    return wrapper_commands() is not None
