"""`enzyme-build package`: from sources and export specs to a package directory, atomically.

Everything is written into a temporary directory next to the output and renamed into place
at the end, so a failure leaves neither a partial package nor temporary files behind.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass

from .. import cmdline
from ..errors import EnzymeBuildError
from . import jaxgen, pygen, shim
from .binding import Binding, bind
from .signature import read_signature
from .spec import parse_export
from .tools import run_tool

C_SUFFIXES = (".c",)
CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".C")
LINK_SUFFIXES = (".o", ".a", ".so")
# headers declare exported functions whose code comes in an object or library
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx")
MARKER = ".enzyme-build-package"


@dataclass(frozen=True)
class PackageRequest:
    arguments: tuple[str, ...]  # sources and compiler flags, in the user's order
    name: str
    output: str
    exports: tuple[str, ...]
    jax: bool = True  # build the JAX FFI handlers when jaxlib is installed


@dataclass(frozen=True)
class CompileInputs:
    sources: tuple[str, ...]  # C/C++ sources and headers (their declarations are read)
    arguments: tuple[str, ...]  # everything for the link, in order (headers left out)
    syntax_flags: tuple[str, ...]  # the flags that matter to reading declarations
    cxx: bool


def split_arguments(arguments: tuple[str, ...]) -> CompileInputs:
    """Sources, link arguments and the flags that matter to reading declarations, read off
    the shared model of the clang command line (enzyme_build/cmdline.py)."""
    try:
        command = cmdline.parse(list(arguments))
    except cmdline.CommandLineError:
        last = arguments[-1]   # a known option without its value
        if last in _NOT_ACCEPTED:
            raise _not_accepted(last) from None
        raise EnzymeBuildError(f"{last} needs a value", hint=f"write {last}VALUE") from None
    sources, syntax_flags, link_arguments, linked_code = [], [], [], False
    for arg in command.items:
        if arg.role != cmdline.INPUT:
            if arg.role in (cmdline.OUTPUT, cmdline.COMPILE_ONLY) or arg.option in _NOT_ACCEPTED:
                raise _not_accepted(arg.option)
            if arg.role not in cmdline.LINK_ROLES:
                syntax_flags += arg.tokens
            link_arguments += arg.tokens
            continue
        argument = arg.value
        if not os.path.isfile(argument):
            raise EnzymeBuildError(f"no such file: {argument}", hint="check the source paths")
        if not argument.endswith(C_SUFFIXES + CXX_SUFFIXES + LINK_SUFFIXES + HEADER_SUFFIXES):
            raise EnzymeBuildError(f"{argument}: not a C/C++ source, header, object or library",
                                   hint="pass .c/.cc/.cpp sources, .h headers and .o/.a/.so inputs")
        if argument.endswith(C_SUFFIXES + CXX_SUFFIXES + HEADER_SUFFIXES):
            sources.append(argument)
        if not argument.endswith(HEADER_SUFFIXES):
            link_arguments.append(argument)
            linked_code = True
    if not sources or not linked_code:
        raise EnzymeBuildError("no C or C++ source given" if not sources else
                               "headers declare the functions but nothing provides their code",
                               hint="enzyme-build package energy.c --name NAME -o DIR --export 'f(x[n], n)' "
                                    "(or a header with the fat library: fit.h libfit.a)")
    cxx = any(s.endswith(CXX_SUFFIXES + (".hh", ".hpp", ".hxx")) for s in sources)
    return CompileInputs(tuple(sources), tuple(link_arguments), tuple(syntax_flags), cxx)


_NOT_ACCEPTED = ("-o", "-c", "-E", "-S")


def _not_accepted(option: str) -> EnzymeBuildError:
    return EnzymeBuildError(f"{option} is not a compiler flag `package` accepts",
                            hint="give the output directory with -o DIR after the sources")


def resolve_bindings(exports: tuple[str, ...], inputs: CompileInputs) -> list[Binding]:
    if not exports:
        raise EnzymeBuildError("nothing to export", hint="add --export 'f(x[n], n)' for each function")
    bindings = []
    for text in exports:
        spec = parse_export(text)
        signature = read_signature(spec.function, list(inputs.sources), list(inputs.syntax_flags))
        bindings.append(bind(spec, signature))
    pygen.check_export_names(bindings)
    return bindings


def enzyme_build_command(cxx: bool) -> list[str]:
    return [sys.executable, "-m", "enzyme_build", "c++" if cxx else "cc"]


def compile_library(name: str, inputs: CompileInputs, bindings: list[Binding], package_dir: str) -> str:
    """Build lib<name>.so from the user's inputs and the generated shim with our own compiler.

    The shim comes first: it is what calls into the user's code, so archives after it
    contribute the members it needs, as with any link."""
    shim_path = os.path.join(package_dir, f"_{name}_shim.c")
    with open(shim_path, "w", encoding="utf-8") as handle:
        handle.write(shim.shim_source(name, bindings))
    library = os.path.join(package_dir, f"lib{name}.so")
    argv = enzyme_build_command(inputs.cxx) + [
        "-O2", "-fPIC", "-x", "c", shim_path, "-x", "none", *inputs.arguments,
        "-shared", "-o", library, "-lm"]
    proc = run_tool(argv)
    if proc.returncode != 0:
        output = (proc.stderr or proc.stdout).strip()
        raise EnzymeBuildError(f"building lib{name}.so failed:\n{output}",
                               hint="fix the errors above (compiler flags go before --name, e.g. -I include -DN=3)")
    return library


def compile_second_order(name: str, inputs: CompileInputs, bindings: list[Binding],
                         package_dir: str) -> str | None:
    """Build lib<name>_second.so (forward over reverse entry points); on failure a note, not
    an error: the first-order package stands without it."""
    if not any(shim._has_derivatives(b) for b in bindings):
        return None
    shim_path = os.path.join(package_dir, f"_{name}_second.c")
    with open(shim_path, "w", encoding="utf-8") as handle:
        handle.write(shim.second_order_source(name, bindings))
    library = os.path.join(package_dir, f"lib{name}_second.so")
    argv = enzyme_build_command(inputs.cxx) + [
        "-O2", "-fPIC", "-x", "c", shim_path, "-x", "none", *inputs.arguments,
        "-shared", "-o", library, "-lm"]
    proc = run_tool(argv)
    if proc.returncode != 0:
        os.remove(shim_path)
        if os.path.exists(library):
            os.remove(library)
        first_line = (proc.stderr or proc.stdout).strip().splitlines()[:1]
        return (f"second derivatives of {name} are not available (the engine could not "
                f"differentiate the reverse pass: {first_line[0] if first_line else 'unknown error'}); "
                f"first-order derivatives are unaffected")
    return None


def _prepare_output(output: str) -> None:
    if os.path.lexists(output):
        if not os.path.isdir(output) or (os.listdir(output) and
                                         not os.path.exists(os.path.join(output, MARKER))):
            raise EnzymeBuildError(f"{output} exists and is not a package made by enzyme-build package",
                                   hint="remove it or choose another -o DIR")


def _install(staging: str, output: str) -> None:
    """Rename the finished package into place, replacing a previous one."""
    if os.path.lexists(output):
        retired = tempfile.mkdtemp(prefix=f".{os.path.basename(output)}.old-", dir=os.path.dirname(output))
        os.rename(output, os.path.join(retired, "package"))
        os.rename(staging, output)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.rename(staging, output)


def build_package(request: PackageRequest, log=None) -> list[Binding]:
    """Build the package directory request.output; returns the exports' bindings."""
    pygen.check_package_name(request.name)
    inputs = split_arguments(request.arguments)
    bindings = resolve_bindings(request.exports, inputs)
    output = os.path.abspath(request.output)
    parent = os.path.dirname(output)
    if not os.path.isdir(parent):
        raise EnzymeBuildError(f"the parent directory of {request.output} does not exist",
                               hint=f"create it first: mkdir -p {os.path.dirname(request.output) or '.'}")
    _prepare_output(output)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(output)}.tmp-", dir=parent)
    try:
        package_dir = os.path.join(staging, request.name)
        os.mkdir(package_dir)
        compile_library(request.name, inputs, bindings, package_dir)
        with open(os.path.join(package_dir, f"{request.name}.h"), "w", encoding="utf-8") as handle:
            handle.write(shim.header_source(request.name, bindings))
        pygen.write_python_package(staging, request.name, bindings)
        notes = [compile_second_order(request.name, inputs, bindings, package_dir)]
        if request.jax:
            notes.append(jaxgen.build_handlers(request.name, bindings, package_dir))
        for note in notes:
            if note and log:
                log(note)
        open(os.path.join(staging, MARKER), "w").close()
        os.chmod(staging, 0o755)
        _install(staging, output)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return bindings
