"""The one model of a clang command line: inputs, outputs, actions and link-only flags.

It knows just enough of clang's option table to tell an option's value from an input
file, to decide what the invocation does (compile, link, or something we pass through),
and to split a link into per-source compiles plus a link of objects. The compile front
end (frontend/) and the link step (link/) both read command lines through it.
"""
from __future__ import annotations

import os
from collections import namedtuple

# Options whose value is the NEXT argument when written alone ("-o out", "-I dir").
SEPARATE_VALUE = frozenset("""
-o -x -I -D -U -include -imacros -isystem -iquote -idirafter -isysroot -iprefix
-iwithprefix -iwithprefixbefore -isystem-after -imultilib -cxx-isystem -include-pch
-MF -MT -MQ -MJ -L -l -u -z -T -e -Xlinker -Xassembler -Xpreprocessor -Xclang -Xanalyzer
-Xopenmp-target -Xcuda-fatbinary -Xcuda-ptxas -Xoffload-linker -mllvm -arch -target
-working-directory -dependency-file -serialize-diagnostics -ivfsoverlay -F -B -rpath
--param -gcc-toolchain --sysroot --target --gcc-toolchain -framework -install_name
-dylib_file -exported_symbols_list -unexported_symbols_list -filelist -aux-info
-main-file-name -resource-dir --config -imsvc -iframework -ifile
""".split())

# Extension -> clang language, for inputs without an explicit -x.
SOURCE_EXTENSIONS = {
    ".c": "c", ".i": "cpp-output",
    ".cc": "c++", ".cp": "c++", ".cpp": "c++", ".cxx": "c++", ".c++": "c++", ".C": "c++",
    ".CC": "c++", ".CPP": "c++", ".ii": "c++-cpp-output",
    ".m": "objective-c", ".mi": "objc-cpp-output", ".mm": "objective-c++", ".M": "objective-c++",
}
ASM_EXTENSIONS = {".s": "assembler", ".S": "assembler-with-cpp", ".sx": "assembler-with-cpp"}
HEADER_EXTENSIONS = {".h", ".hh", ".hpp", ".hxx", ".H", ".h++", ".inc"}
OTHER_COMPILABLE_EXTENSIONS = {".bc", ".ll", ".cu", ".cl", ".f", ".f90", ".F90", ".pcm"}

SOURCE_LANGS = {"c", "c++", "objective-c", "objective-c++", "cpp-output", "c++-cpp-output",
                "objc-cpp-output", "objective-c-cpp-output", "objc++-cpp-output",
                "objective-c++-cpp-output"}
ASM_LANGS = {"assembler", "assembler-with-cpp"}

# Flags that only matter when linking: dropped from the per-source compiles of a link.
LINK_ONLY_FLAGS = frozenset("""
-shared -static -rdynamic -pie -no-pie -static-pie -nostdlib -nostartfiles -nodefaultlibs
-static-libgcc -static-libstdc++ -shared-libgcc -nolibc -s -Wl,--as-needed
""".split())
LINK_ONLY_SEPARATE = frozenset({"-L", "-l", "-Xlinker", "-u", "-z", "-T", "-e", "-rpath"})
LINK_ONLY_PREFIXES = ("-Wl,", "-L", "-l", "-fuse-ld=", "--ld-path=", "-Xlinker", "--rtlib=",
                      "-rtlib=", "--unwindlib=", "-unwindlib=")

# Options that make the invocation something other than compile-to-object or link: we
# hand those to clang untouched (ARCHITECTURE §3).
PASSTHROUGH_EXACT = frozenset("""
-E -S -M -MM -fsyntax-only -### --version -version -dumpversion -dumpmachine
-dumpspecs --help -help --help-hidden -emit-llvm -emit-ast --precompile -print-search-dirs
-print-multi-directory -print-multi-lib -print-libgcc-file-name -fembed-bitcode
-fembed-bitcode=all -fembed-bitcode=bitcode -fembed-bitcode=marker -cc1 -cc1as
-r -Wl,-r -Wl,--relocatable -Wl,-i
""".split())
PASSTHROUGH_PREFIXES = ("-print-", "--print-", "-flto", "-fembed-bitcode=")

DEPFILE_FLAGS = frozenset({"-MD", "-MMD"})
DEPFILE_SEPARATE = frozenset({"-MF", "-MT", "-MQ"})
DEPFILE_MODIFIERS = frozenset({"-MP", "-MG", "-MV"})


class Input(namedtuple("_Input", "path kind lang index")):
    """One input file as clang would see it.

    kind: source | asm | object | archive | shared | stdin | header | other;
    lang: the -x language in effect (None = by extension); index: position in the
    expanded argument list. (namedtuple, not dataclass: a compile's start-up matters.)
    """

    __slots__ = ()


class Invocation:
    """A classified command line."""

    def __init__(self, args: list[str]):
        self.args = args                         # after @response expansion
        self.inputs: list[Input] = []
        self.output: str | None = None
        self.compile_only = False                # -c
        self.passthrough_reason: str | None = None
        self.shared = False
        self.depfile = False                     # -MD / -MMD
        self.depfile_path: str | None = None     # -MF
        self.dep_targets: list[str] = []         # -MT / -MQ values (as flags)
        self.opt_level: str | None = None        # the last -O value ("2", "s", "fast", "")
        self.verbose = False                     # -v
        self.export_dynamic = False              # -rdynamic / -Wl,--export-dynamic
        self.no_pie = False                      # -no-pie / -static
        self.lto: str | None = None              # the -flto flag given, if any

    @property
    def sources(self) -> list[Input]:
        return [i for i in self.inputs if i.kind in ("source", "asm")]

    @property
    def link_inputs(self) -> list[Input]:
        return [i for i in self.inputs if i.kind in ("object", "archive", "shared", "other")]


def input_kind(path: str, lang: str | None) -> str:
    """What an input is: by the -x language in effect, else by its name."""
    if path == "-":
        return "stdin"
    if lang is not None:
        if lang in SOURCE_LANGS:
            return "source"
        if lang in ASM_LANGS:
            return "asm"
        if lang.endswith("header") or lang.endswith("-header-unit"):
            return "header"
        return "other"
    base = os.path.basename(path)
    ext = os.path.splitext(base)[1]
    if ext in SOURCE_EXTENSIONS:
        return "source"
    if ext in ASM_EXTENSIONS:
        return "asm"
    if ext in HEADER_EXTENSIONS:
        return "header"
    if ext in OTHER_COMPILABLE_EXTENSIONS:
        return "other"
    if ext == ".a":
        return "archive"
    if ext in (".so", ".dylib") or ".so." in base:
        return "shared"
    return "object"  # clang hands anything else to the linker


def takes_separate_value(arg: str) -> bool:
    return arg in SEPARATE_VALUE


def parse_opt_level(arg: str) -> str | None:
    if arg.startswith("-O"):
        return arg[2:]
    if arg == "--optimize":
        return "1"
    return None


def classify(args: list[str]) -> Invocation:
    """Walk the arguments once, recording inputs and the flags that steer our pipeline."""
    inv = Invocation(list(args))
    lang: str | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if arg == "-" or not arg.startswith("-") or arg == "":
            inv.inputs.append(Input(arg, input_kind(arg, lang), lang, i))
            i += 1
            continue
        if takes_separate_value(arg):
            _note_value_option(inv, arg, nxt)
            if arg == "-x":
                lang = None if nxt in (None, "none") else nxt
            i += 2
            continue
        if arg.startswith("-x") and len(arg) > 2:
            lang = None if arg[2:] == "none" else arg[2:]
        elif arg.startswith("-o") and len(arg) > 2:
            inv.output = arg[2:]
        elif arg.startswith(("-MF", "-MT", "-MQ")) and len(arg) > 3:
            _note_value_option(inv, arg[:3], arg[3:])
        elif arg == "-c":
            inv.compile_only = True
        elif arg in DEPFILE_FLAGS:
            inv.depfile = True
        elif arg == "-shared":
            inv.shared = True
        elif arg in ("-no-pie", "-static", "-nopie"):
            inv.no_pie = True
        elif arg == "-rdynamic" or arg.startswith("-Wl,") and (
                "--export-dynamic" in arg or "-export-dynamic" in arg or ",-E" in arg):
            inv.export_dynamic = True
        elif arg == "-v":
            inv.verbose = True
        elif parse_opt_level(arg) is not None:
            inv.opt_level = parse_opt_level(arg)
        if is_lto_flag(arg):
            inv.lto = inv.lto or arg
        elif inv.passthrough_reason is None and (
                arg in PASSTHROUGH_EXACT or arg.startswith(PASSTHROUGH_PREFIXES)) and \
                not arg.startswith(("-flto-jobs", "-fno-lto")):
            inv.passthrough_reason = arg
        i += 1
    if inv.lto and inv.compile_only and inv.passthrough_reason is None:
        inv.passthrough_reason = inv.lto   # -c -flto: the LTO bitcode object clang makes
    _decide_passthrough(inv)
    return inv


def is_lto_flag(arg: str) -> bool:
    """-flto, -flto=thin/full/auto/jobserver (not -flto-jobs=, -fno-lto)."""
    return arg == "-flto" or arg.startswith("-flto=")


def _note_value_option(inv: Invocation, opt: str, value: str | None) -> None:
    if value is None:
        return
    if opt == "-o":
        inv.output = value
    elif opt == "-MF":
        inv.depfile_path = value
    elif opt in ("-MT", "-MQ"):
        inv.dep_targets += [opt, value]
    elif opt == "-Xlinker" and value in ("--export-dynamic", "-export-dynamic", "-E"):
        inv.export_dynamic = True


def _decide_passthrough(inv: Invocation) -> None:
    """Cases we leave to clang as they are (only the reason is recorded)."""
    if inv.passthrough_reason is not None:
        return
    kinds = {i.kind for i in inv.inputs}
    if not inv.inputs and (inv.compile_only or not _names_libraries(inv.args)):
        # a link of libraries only (`cc -o prog -lprog`) still links: main may sit in one
        inv.passthrough_reason = "no input files"
    elif "stdin" in kinds:
        inv.passthrough_reason = "input from stdin"
    elif "header" in kinds:
        inv.passthrough_reason = "header (precompiled header) input"
    elif inv.compile_only and not (kinds & {"source"}):
        inv.passthrough_reason = "nothing to compile to bitcode"
    elif inv.compile_only and len(inv.sources) > 1 and inv.output is not None:
        inv.passthrough_reason = "-o with several sources (clang reports it)"
    elif inv.compile_only and "other" in kinds:
        inv.passthrough_reason = "inputs clang compiles its own way"


def _names_libraries(args: list[str]) -> bool:
    """Does the command line link a library by name (-lNAME, -l NAME, -l:file)?"""
    return any(arg.startswith("-l") for arg in args)


def strip_inputs_and_output(args: list[str], *, drop_link_only: bool,
                            drop_depfile: bool) -> list[str]:
    """The options of an invocation without its inputs, -o, -c and -x (for re-targeted runs)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-" or not arg.startswith("-") or arg == "":
            i += 1
            continue
        if takes_separate_value(arg):
            pair = args[i:i + 2]
            skip = arg in ("-o", "-x") or (drop_link_only and arg in LINK_ONLY_SEPARATE) or (
                drop_depfile and arg in DEPFILE_SEPARATE)
            if not skip:
                out += pair
            i += 2
            continue
        skip = (arg == "-c" or (arg.startswith("-o") and len(arg) > 2)
                or (arg.startswith("-x") and len(arg) > 2)
                or (drop_link_only and (arg in LINK_ONLY_FLAGS or arg.startswith(LINK_ONLY_PREFIXES)))
                or (drop_depfile and (arg in DEPFILE_FLAGS or arg in DEPFILE_MODIFIERS
                                      or arg.startswith(("-MF", "-MT", "-MQ")))))
        if not skip:
            out.append(arg)
        i += 1
    return out


def end_of_options(args: list[str]) -> int | None:
    """Index of a `--` that ends the options (not the value of an option), or None."""
    i = 0
    while i < len(args):
        if args[i] == "--":
            return i
        i += 2 if takes_separate_value(args[i]) else 1
    return None


def without_end_of_options(args: list[str]) -> list[str]:
    """The same command line with `--` removed: the inputs after it that look like options
    (`-weird.c`) are spelled `./-weird.c`, so options the wrapper adds later (`-c -o tmp.o`)
    stay options instead of becoming input files after the user's `--`."""
    k = end_of_options(args)
    if k is None:
        return args
    rest = [a if a == "-" or not a.startswith("-") else os.path.join(".", a) for a in args[k + 1:]]
    return args[:k] + rest


def with_options(args: list[str], extra: list[str]) -> list[str]:
    """`args` plus `extra` options, placed before a `--` if the command line has one."""
    k = end_of_options(args)
    return args + extra if k is None else args[:k] + extra + args[k:]


def default_object_name(source: str) -> str:
    """The object clang's `-c` writes for a source when no -o is given (in the cwd)."""
    stem = os.path.splitext(os.path.basename(source))[0]
    return stem + ".o"


def expand_response_files(args: list[str], *, _depth: int = 0) -> list[str]:
    """Replace every readable `@file` with the arguments it holds (recursively).

    An `@name` that is not a readable file stays as it is, as with clang.
    """
    if _depth > 32:
        raise RecursionError("response files nest too deeply")
    out: list[str] = []
    for arg in args:
        if arg.startswith("@") and len(arg) > 1 and os.path.isfile(arg[1:]):
            try:
                with open(arg[1:], encoding="utf-8", errors="surrogateescape") as fh:
                    text = fh.read()
            except OSError:
                out.append(arg)
                continue
            out += expand_response_files(split_response_text(text), _depth=_depth + 1)
        else:
            out.append(arg)
    return out


def split_response_text(text: str) -> list[str]:
    """GNU-style tokenization: whitespace separates, quotes group, backslash escapes."""
    tokens: list[str] = []
    current: list[str] = []
    in_token = False
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"' and i + 1 < len(text) and text[i + 1] in '"\\':
                i += 1
                current.append(text[i])
            else:
                current.append(ch)
        elif ch in "'\"":
            quote = ch
            in_token = True
        elif ch == "\\" and i + 1 < len(text):
            i += 1
            current.append(text[i])
            in_token = True
        elif ch.isspace():
            if in_token:
                tokens.append("".join(current))
                current, in_token = [], False
        else:
            current.append(ch)
            in_token = True
        i += 1
    if in_token:
        tokens.append("".join(current))
    return tokens
