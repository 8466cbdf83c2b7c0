"""`enzyme-build`: the command dispatcher (cc, c++, doctor, and build/package when present)."""
from __future__ import annotations

import importlib
import sys

# Subcommands added only if their module exists (they are developed separately).
OPTIONAL_COMMANDS = (("enzyme_build.cli.build", "build"), ("enzyme_build.cli.package", "package"),
                     ("enzyme_build.cli.config", "config"))


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    # cc/c++ bypass click: compiler arguments are not ours to parse, and start-up matters
    if argv and argv[0] in ("cc", "c++"):
        from .cc import run_cc
        sys.exit(run_cc(argv[1:], cxx=argv[0] == "c++"))
    if argv == ["--print-include-dir"]:  # as clang's -print-… options: for scripts, no click
        from .config import INCLUDE_DIR
        print(INCLUDE_DIR)
        sys.exit(0)
    from ..errors import run_guarded
    # click exits by itself (SystemExit passes through); our errors become one message
    sys.exit(run_guarded(lambda: build_group().main(args=argv, prog_name="enzyme-build")))


def build_group():
    import click

    from .. import __version__
    from .doctor import doctor

    @click.group(context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, prog_name="enzyme-build")
    def cli():
        """Exact gradients for C/C++ programs, synthesized on optimized whole-program LLVM IR.

        \b
        enzyme-build cc ARGS…   drop-in C compiler (fat objects, AD at link time)
        enzyme-build c++ ARGS…  drop-in C++ compiler
        """

    # listed in --help; main() handles them before click sees the arguments
    for name, cxx in (("cc", False), ("c++", True)):
        cli.add_command(_compiler_command(name, cxx))
    cli.add_command(doctor)
    for module_name, command_name in OPTIONAL_COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ImportError as err:
            if err.name != module_name:
                raise
            continue
        command = getattr(module, command_name, None)
        if command is not None:
            cli.add_command(command, command_name)
    return cli


def _compiler_command(name: str, cxx: bool):
    import click

    @click.command(name, context_settings={"ignore_unknown_options": True,
                                           "allow_extra_args": True, "help_option_names": []},
                   help=f"Drop-in {'C++' if cxx else 'C'} compiler: clang's arguments.")
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def command(args):
        from .cc import run_cc
        sys.exit(run_cc(list(args), cxx=cxx))
    return command
