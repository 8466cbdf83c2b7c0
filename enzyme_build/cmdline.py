"""The one model of a clang command line, parsed once and asked questions by everyone.

`parse(argv)` walks clang's arguments once, with clang's option arities (`-o out`/`-oout`,
`-Wl,a,b`, `-Xlinker x`, `-L dir`/`-Ldir`, `-l name`/`-lname`, `-x lang`, `--`), and
returns a `CommandLine`: every argument as an `Arg` that keeps its original spelling and
position and says what it is (an input with its language and type, the output, `-c`, a
dependency-file flag, a link-only flag, a flag passed to the linker, a library, a search
directory, or any other option -- unknown ones included, passed on unchanged). Re-emitting
the arguments gives the command line back exactly.

The compile front end (frontend/driver.py) and the link step (link/) only ask it
questions: what the invocation does, its inputs and output, the compile command of one
source, the link command with sources replaced by objects, the files and libraries the
linker reads (with the `-Bstatic` and `--whole-archive` state in effect), the symbols the
command line names to the linker, the target flags. No other module walks argv.
"""
from __future__ import annotations

import os
from collections import namedtuple
from collections.abc import Callable

from .errors import EnzymeBuildError

# --- clang's option table (what this model needs of it) -------------------------------

# Options whose value is the NEXT argument when written alone ("-o out", "-I dir").
SEPARATE_VALUE = frozenset("""
-o -x -I -D -U -include -imacros -isystem -iquote -idirafter -isysroot -iprefix
-iwithprefix -iwithprefixbefore -isystem-after -imultilib -cxx-isystem -include-pch
-MF -MT -MQ -MJ -L -l -u -z -T -e -Xlinker -Xassembler -Xpreprocessor -Xclang -Xanalyzer
-Xopenmp-target -Xcuda-fatbinary -Xcuda-ptxas -Xoffload-linker -mllvm -arch -target
-working-directory -dependency-file -serialize-diagnostics --serialize-diagnostics -ivfsoverlay -F -B -rpath
--param -gcc-toolchain --sysroot --target --gcc-toolchain -framework -install_name
-dylib_file -exported_symbols_list -unexported_symbols_list -filelist -aux-info
-main-file-name -resource-dir --config -imsvc -iframework -ifile -Tbss -Tdata -Ttext
""".split())

# Options whose value may also be written joined ("-oout", "-Ldir", "-lm"), longest first,
# each with the longer options that merely share its prefix (clang's longest-match rule).
JOINED_VALUE = (
    ("-MF", ()), ("-MT", ()), ("-MQ", ()),
    ("-o", ("-obj",)), ("-x", ()), ("-L", ()), ("-l", ("-lazy_",)),
    ("-u", ("-undef", "-unwindlib", "-unexported")), ("-T", ()),
    ("-I", ()), ("-D", ()), ("-U", ()),
)

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

# Flags that only matter when linking: left out of the per-source compiles of a link.
LINK_ONLY_FLAGS = frozenset("""
-shared -static -rdynamic -pie -no-pie -nopie -static-pie -nostdlib -nostartfiles
-nodefaultlibs -static-libgcc -static-libstdc++ -shared-libgcc -nolibc -s
""".split())
LINK_ONLY_PREFIXES = ("-fuse-ld=", "--ld-path=", "--rtlib=", "-rtlib=", "--unwindlib=",
                      "-unwindlib=", "-Xlinker")
# Driver options clang hands to the linker as they are (their value is a linker word).
LINKER_OPTIONS = frozenset({"-Xlinker", "-u", "-e", "-z", "-T", "-rpath", "-Tbss", "-Tdata",
                            "-Ttext"})

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

# Linker words that change how the inputs after them are read.
WHOLE_ARCHIVE_ON = frozenset({"--whole-archive", "-whole-archive"})
WHOLE_ARCHIVE_OFF = frozenset({"--no-whole-archive", "-no-whole-archive"})
STATIC_ON = frozenset({"-Bstatic", "-dn", "-non_shared", "-static", "--static"})
STATIC_OFF = frozenset({"-Bdynamic", "-dy", "-call_shared"})
EXPORT_DYNAMIC_WORDS = frozenset({"--export-dynamic", "-export-dynamic", "-E"})
TARGET_FLAGS = frozenset({"-m32", "-m64", "-mx32"})
TARGET_PREFIXES = ("--target=", "-target=", "--gcc-toolchain=")
# Options that allow or forbid approximate math functions (clang's -fapprox-func).
APPROX_FUNC_ON = frozenset({"-ffast-math", "-Ofast", "-funsafe-math-optimizations", "-fapprox-func"})
APPROX_FUNC_OFF = frozenset({"-fno-fast-math", "-fno-unsafe-math-optimizations", "-fno-approx-func"})
NO_DEFAULT_LIBRARY_FLAGS = frozenset({"-nostdlib", "-nodefaultlibs", "-nolibc", "-ffreestanding"})


# --- the model -------------------------------------------------------------------------

# What an argument is (Arg.role).
INPUT = "input"                  # a file clang reads (Input gives its type and language)
END_OF_OPTIONS = "end-of-options"  # `--`: every later argument is an input
OUTPUT = "output"                # -o
LANGUAGE = "language"            # -x: the language of the inputs after it
COMPILE_ONLY = "compile-only"    # -c
DEPFILE = "depfile"              # -MD -MMD -MP -MG -MV -MF -MT -MQ
LTO = "lto"                      # -flto, -flto=…
LIBRARY = "library"              # -lNAME, -l NAME, -l:file
SEARCH_DIR = "search-dir"        # -Ldir, -L dir
LINKER = "linker"                # passed to the linker: -Wl,a,b, -Xlinker a, -u, -e, -z, -T
LINK_ONLY = "link-only"          # a driver flag only a link reads: -shared, -static, -fuse-ld=
OPTION = "option"                # anything else, unknown options included

# Roles a per-source compile of a link leaves out (the link itself keeps them).
LINK_ROLES = frozenset({LIBRARY, SEARCH_DIR, LINKER, LINK_ONLY})


class Arg(namedtuple("_Arg", "role option value tokens index")):
    """One argument as written: one token, or two for an option with a separate value.

    option: the option as clang names it ("-o", "-Wl,", "-L", "-fuse-ld=", "-O2"); None for
    an input or `--`. value: the option's value (for `-Wl,a,b`: "a,b"), or the input's
    path. tokens: the original spelling. index: position of the first token in the
    command line. (namedtuple, not dataclass: a compile's start-up matters.)
    """

    __slots__ = ()

    def linker_words(self) -> list[str]:
        """The words the linker receives from this argument (-Wl,a,b -> [a, b])."""
        if self.option == "-Wl,":
            return self.value.split(",")
        if self.option == "-Xlinker":
            return [self.value]
        if self.role == LINKER:
            return [self.option, self.value]
        return []


class Input(namedtuple("_Input", "path kind lang index")):
    """One input file as clang would see it.

    kind: source | asm | object | archive | shared | stdin | header | other;
    lang: the -x language in effect (None = by extension); index: position in the
    command line.
    """

    __slots__ = ()


class LinkedFile(namedtuple("_LinkedFile", "arg path library whole_archive static")):
    """A file the linker reads: an input (path) or a library by name (library), with the
    linker state in effect where it stands on the command line."""

    __slots__ = ()


class CommandLineError(EnzymeBuildError):
    """A command line clang itself would refuse before doing anything (a missing value)."""


class CommandLine:
    """A parsed clang command line: its arguments and the answers read off them.

    (A plain class, not a dataclass: importing dataclasses costs every compile several ms.)
    """

    __slots__ = ("args", "raw", "items", "inputs", "output", "compile_only",
                 "passthrough_reason", "shared", "depfile", "depfile_path", "dep_targets",
                 "opt_level", "verbose", "export_dynamic", "no_pie", "lto")

    def __init__(self, args: list[str], raw: list[str]):
        self.args = args                         # the tokens (after @response expansion)
        self.raw = raw                           # as given (before @response expansion)
        self.items: list[Arg] = []
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

    def __repr__(self) -> str:
        return f"CommandLine({self.args!r})"

    # --- what the invocation is ------------------------------------------------------

    @property
    def mode(self) -> str:
        """passthrough (clang runs it as it is) | compile (-c) | link."""
        if self.passthrough_reason is not None:
            return "passthrough"
        return "compile" if self.compile_only else "link"

    @property
    def sources(self) -> list[Input]:
        return [i for i in self.inputs if i.kind in ("source", "asm")]

    @property
    def link_inputs(self) -> list[Input]:
        return [i for i in self.inputs if i.kind in ("object", "archive", "shared", "other")]

    def roles(self, *roles: str) -> list[Arg]:
        return [a for a in self.items if a.role in roles]

    @property
    def libraries(self) -> list[str]:
        """-l names in order (`m` for -lm, `:libx.a` for -l:libx.a)."""
        return [a.value for a in self.roles(LIBRARY)]

    @property
    def search_dirs(self) -> list[str]:
        """The -L directories in order."""
        return [a.value for a in self.roles(SEARCH_DIR)]

    @property
    def warnings_silenced(self) -> bool:
        """-w: clang reports no warnings (nor the dropped-attribute one the hook reads)."""
        return any(a.option == "-w" or a.option == "-Xclang" and a.value == "-w"
                   for a in self.roles(OPTION))

    def vector_library(self) -> str | None:
        """The value of the last `-fveclib=` ("libmvec", "none", "SVML", …), None without one."""
        values = [a.value for a in self.roles(OPTION) if a.option == "-fveclib="]
        return values[-1] if values else None

    def approximate_math_functions(self) -> bool:
        """Whether the options let math functions be replaced by approximations, as clang's
        `-fapprox-func` (the `afn` flag on its calls) does: -ffast-math, -Ofast,
        -funsafe-math-optimizations, -fapprox-func and -ffp-model=fast|aggressive say yes,
        -fno-fast-math, -fno-unsafe-math-optimizations, -fno-approx-func and
        -ffp-model=precise|strict say no; the last of them wins."""
        allowed = False
        for arg in self.roles(OPTION):
            token = arg.tokens[0]
            if arg.option == "-ffp-model=":
                allowed = arg.value in ("fast", "aggressive")
            elif token in APPROX_FUNC_ON or token in APPROX_FUNC_OFF:
                allowed = token in APPROX_FUNC_ON
        return allowed

    @property
    def no_default_libraries(self) -> bool:
        """-nostdlib, -nodefaultlibs, -nolibc or -ffreestanding: the C library (and libm)
        is not assumed."""
        return any(a.tokens[0] in NO_DEFAULT_LIBRARY_FLAGS for a in self.roles(OPTION, LINK_ONLY))

    def emit(self) -> list[str]:
        """The command line again, token for token."""
        return [token for arg in self.items for token in arg.tokens]

    # --- questions of the compile ----------------------------------------------------

    def depfile_flags(self) -> list[str]:
        """-MD/-MMD and their modifiers (-MP, -MG, -MV) as written."""
        return [a.tokens[0] for a in self.roles(DEPFILE)
                if a.option in DEPFILE_FLAGS or a.option in DEPFILE_MODIFIERS]

    def target_flags(self) -> list[str]:
        """The options that choose the target (--target, -m32, --gcc-toolchain)."""
        out: list[str] = []
        for arg in self.roles(OPTION):
            if arg.option in TARGET_FLAGS or arg.tokens[0].startswith(TARGET_PREFIXES) or \
                    arg.option in ("-target", "--target"):
                out += arg.tokens
        return out

    def compile_options(self, *, for_link: bool = False) -> list[str]:
        """The options without inputs, -o, -c and -x: what every per-source compile shares.

        for_link: the compiles on the way to a link also leave out what only the link
        reads, the dependency-file flags (written per source) and -flto (they make fat
        objects: the whole-program link reads their bitcode itself).
        """
        dropped = {INPUT, END_OF_OPTIONS, OUTPUT, LANGUAGE, COMPILE_ONLY}
        if for_link:
            dropped |= LINK_ROLES | {DEPFILE, LTO}
        return [token for arg in self.items if arg.role not in dropped for token in arg.tokens]

    def compile_command(self, source: Input, output: str, *, for_link: bool = False,
                        extra: list[str] = ()) -> list[str]:
        """The arguments compiling one source of this command line to `output`."""
        lang = ["-x", source.lang] if source.lang else []
        return (self.compile_options(for_link=for_link) + list(extra) + ["-c"] + lang
                + [_as_input(source.path), "-o", output])

    # --- questions of the link -------------------------------------------------------

    def link_command(self, objects: dict[int, str]) -> CommandLine:
        """The link: inputs at the indexes in `objects` replaced by those objects; no -o,
        -c, -x or dependency-file flags."""
        dropped = {OUTPUT, LANGUAGE, COMPILE_ONLY, DEPFILE}
        tokens: list[str] = []
        for arg in self.items:
            if arg.role == INPUT and arg.index in objects:
                tokens.append(objects[arg.index])
            elif arg.role not in dropped:
                tokens += arg.tokens
        return parse(tokens)

    def linker_words(self) -> list[str]:
        """Every word the command line hands to the linker, in order."""
        return [word for arg in self.items for word in arg.linker_words()]

    def named_symbols(self) -> set[str]:
        """Symbols the command line names to the linker: -e/--entry and -u/--undefined."""
        words = self.linker_words()
        out = set()
        for k, word in enumerate(words):
            if word in ("-u", "-e", "--entry", "--undefined", "-undefined") and k + 1 < len(words):
                out.add(words[k + 1])
            elif word.startswith(("--entry=", "--undefined=", "-undefined=")):
                out.add(word.split("=", 1)[1])
            elif word.startswith(("-u", "-e")) and len(word) > 2 and word != "-export-dynamic":
                out.add(word[2:])
        return out

    def linker_option_values(self, *names: str) -> list[str]:
        """Values of linker options spelled `--name=value` or `--name value` (also with one
        dash, as GNU ld accepts), in command-line order."""
        spellings = set(names) | {n[1:] for n in names if n.startswith("--")}
        words = self.linker_words()
        out = []
        for k, word in enumerate(words):
            if word in spellings and k + 1 < len(words):
                out.append(words[k + 1])
            elif "=" in word and word.split("=", 1)[0] in spellings:
                out.append(word.split("=", 1)[1])
        return out

    def version_scripts(self) -> list[str]:
        """Files named by `-Wl,--version-script=FILE` (or `--version-script FILE`)."""
        return self.linker_option_values("--version-script")

    def excluded_libraries(self) -> list[str]:
        """Archive names of `-Wl,--exclude-libs,ALL|liba.a:libb.a` (`ALL` kept as is)."""
        out = []
        for value in self.linker_option_values("--exclude-libs"):
            out += [name for name in value.replace(",", ":").split(":") if name]
        return out

    def linked_files(self) -> list[LinkedFile]:
        """The inputs and -l libraries the linker reads, in order, each with the
        --whole-archive and static (-static, -Bstatic) state in effect where it stands."""
        static_all = any(a.option == "-static" for a in self.items)
        whole = static = False
        out: list[LinkedFile] = []
        for arg in self.items:
            for word in arg.linker_words():
                whole = (whole or word in WHOLE_ARCHIVE_ON) and word not in WHOLE_ARCHIVE_OFF
                static = (static or word in STATIC_ON) and word not in STATIC_OFF
            if arg.role == LIBRARY:
                out.append(LinkedFile(arg, None, arg.value, whole, static_all or static))
            elif arg.role == INPUT and arg.value != "-":
                out.append(LinkedFile(arg, arg.value, None, whole, static_all or static))
        return out

    def rewrite_linked_files(self, replace: Callable[[LinkedFile], list[str] | None]) -> list[str]:
        """The tokens with each linked file replaced by `replace(file)` (None: kept)."""
        files = {f.arg.index: f for f in self.linked_files()}
        out: list[str] = []
        for arg in self.items:
            found = files.get(arg.index) if arg.role in (INPUT, LIBRARY) else None
            replacement = replace(found) if found is not None else None
            out += arg.tokens if replacement is None else replacement
        return out

    # --- derived command lines -------------------------------------------------------

    def substitute(self, paths: dict[int, str]) -> CommandLine:
        """The same command line with the inputs at these indexes renamed."""
        out: list[str] = []
        for arg in self.items:
            out += [paths[arg.index]] if arg.role == INPUT and arg.index in paths else arg.tokens
        return parse(out)

    def with_options(self, extra: list[str]) -> CommandLine:
        """Plus `extra` options, placed before a `--` if there is one."""
        return parse(_insert_before_end(self.items, self.args, extra))

    def without_end_of_options(self) -> CommandLine:
        """The same command line with `--` removed: the inputs after it that look like
        options (`-weird.c`) are spelled `./-weird.c`, so options added later (`-c -o
        tmp.o`) stay options instead of becoming input files after the user's `--`."""
        if not self.roles(END_OF_OPTIONS):
            return self
        out: list[str] = []
        for arg in self.items:
            if arg.role == INPUT:
                out.append(_as_input(arg.value))
            elif arg.role != END_OF_OPTIONS:
                out += arg.tokens
        return parse(out)

    def passthrough_command(self, extra: list[str]) -> list[str]:
        """The user's own arguments (response files unexpanded) for clang to run as they
        are, plus `extra` options placed before a `--`."""
        if not extra:
            return list(self.raw)
        raw_items = _scan(self.raw, strict=False)
        if any(a.role == END_OF_OPTIONS for a in raw_items) or \
                not self.roles(END_OF_OPTIONS):
            return _insert_before_end(raw_items, self.raw, extra)
        return _insert_before_end(self.items, self.args, extra)  # `--` in a response file


def _insert_before_end(items: list[Arg], tokens: list[str], extra: list[str]) -> list[str]:
    end = next((a.index for a in items if a.role == END_OF_OPTIONS), None)
    return tokens + list(extra) if end is None else tokens[:end] + list(extra) + tokens[end:]


def _as_input(path: str) -> str:
    """An input path spelled so that clang cannot read it as an option."""
    return path if path == "-" or not path.startswith("-") else os.path.join(".", path)


# --- the parser ------------------------------------------------------------------------

def parse(argv: list[str], *, raw: list[str] | None = None) -> CommandLine:
    """The model of an (already @response-expanded) command line.

    A known option missing its value (`-o` last) is a CommandLineError, as in clang.
    """
    cl = CommandLine(list(argv), list(argv if raw is None else raw))
    cl.items = _scan(cl.args, strict=True)
    lang: str | None = None
    for arg in cl.items:
        if arg.role == INPUT:
            cl.inputs.append(Input(arg.value, input_kind(arg.value, lang), lang, arg.index))
        elif arg.role == LANGUAGE:
            lang = None if arg.value == "none" else arg.value
        else:
            _note(cl, arg)
    if cl.lto and cl.compile_only and cl.passthrough_reason is None:
        cl.passthrough_reason = cl.lto   # -c -flto: the LTO bitcode object clang makes
    _decide_passthrough(cl)
    return cl


def from_argv(argv: list[str]) -> CommandLine:
    """The model of the arguments a user gave: @response files expanded, `--` kept."""
    try:
        expanded = expand_response_files(argv)
    except RecursionError as err:
        raise CommandLineError(str(err), hint="check the @response files for a cycle") from None
    return parse(expanded, raw=argv)


def _scan(tokens: list[str], *, strict: bool) -> list[Arg]:
    """Group the tokens into arguments, each with its role (clang's option arities)."""
    items: list[Arg] = []
    i = 0
    ended = False
    while i < len(tokens):
        token = tokens[i]
        if ended or token == "-" or not token.startswith("-"):
            items.append(Arg(INPUT, None, token, (token,), i))
        elif token == "--":
            items.append(Arg(END_OF_OPTIONS, None, None, (token,), i))
            ended = True
        elif token in SEPARATE_VALUE:
            if i + 1 >= len(tokens):
                if strict:
                    raise CommandLineError(f"argument to '{token}' is missing (expected 1 value)",
                                           hint=f"write the value after {token}, as clang expects")
                items.append(Arg(OPTION, token, None, (token,), i))
                break
            value = tokens[i + 1]
            items.append(Arg(_role(token, value), token, value, (token, value), i))
            i += 2
            continue
        else:
            option, value = _split_joined(token)
            items.append(Arg(_role(option, value, token), option, value, (token,), i))
        i += 1
    return items


def _split_joined(token: str) -> tuple[str, str | None]:
    """(option, value) of a one-token option: -Wl,a,b | -oout | -std=c99 | -O2 (no value)."""
    if token.startswith("-Wl,"):
        return "-Wl,", token[4:]
    for prefix, longer in JOINED_VALUE:
        if token.startswith(prefix) and len(token) > len(prefix) and not token.startswith(longer):
            return prefix, token[len(prefix):]
    if "=" in token:
        name, value = token.split("=", 1)
        return name + "=", value
    return token, None


def _role(option: str, value: str | None, token: str | None = None) -> str:
    token = token or option
    if option == "-o":
        return OUTPUT
    if option == "-x":
        return LANGUAGE
    if option == "-c":
        return COMPILE_ONLY
    if option in DEPFILE_FLAGS or option in DEPFILE_MODIFIERS or option in DEPFILE_SEPARATE:
        return DEPFILE
    if is_lto_flag(token):
        return LTO
    if option == "-l":
        return LIBRARY
    if option == "-L":
        return SEARCH_DIR
    if option == "-Wl," or option in LINKER_OPTIONS:
        return LINKER
    if token in LINK_ONLY_FLAGS or token.startswith(LINK_ONLY_PREFIXES):
        return LINK_ONLY
    return OPTION


def _note(cl: CommandLine, arg: Arg) -> None:
    """Record what one option says about the invocation."""
    option, value, token = arg.option, arg.value, arg.tokens[0]
    if arg.role == OUTPUT:
        cl.output = value
    elif arg.role == COMPILE_ONLY:
        cl.compile_only = True
    elif arg.role == DEPFILE:
        if option in DEPFILE_FLAGS:
            cl.depfile = True
        elif option == "-MF":
            cl.depfile_path = value
        elif option in ("-MT", "-MQ"):
            cl.dep_targets += [option, value]
    elif option == "-shared":
        cl.shared = True
    elif option in ("-no-pie", "-static", "-nopie"):
        cl.no_pie = True
    elif option == "-rdynamic":
        cl.export_dynamic = True
    elif option == "-v":
        cl.verbose = True
    elif parse_opt_level(token) is not None:
        cl.opt_level = parse_opt_level(token)
    if any(word in EXPORT_DYNAMIC_WORDS for word in arg.linker_words()):
        cl.export_dynamic = True
    if len(arg.tokens) != 1:
        return
    if arg.role == LTO:
        cl.lto = cl.lto or token
    elif cl.passthrough_reason is None and (
            token in PASSTHROUGH_EXACT or token.startswith(PASSTHROUGH_PREFIXES)) and \
            not token.startswith(("-flto-jobs", "-fno-lto")):
        cl.passthrough_reason = token


def _decide_passthrough(cl: CommandLine) -> None:
    """Cases we leave to clang as they are (only the reason is recorded)."""
    if cl.passthrough_reason is not None:
        return
    kinds = {i.kind for i in cl.inputs}
    if not cl.inputs and (cl.compile_only or not cl.libraries):
        # a link of libraries only (`cc -o prog -lprog`) still links: main may sit in one
        cl.passthrough_reason = "no input files"
    elif "stdin" in kinds:
        cl.passthrough_reason = "input from stdin"
    elif "header" in kinds:
        cl.passthrough_reason = "header (precompiled header) input"
    elif cl.compile_only and not (kinds & {"source"}):
        cl.passthrough_reason = "nothing to compile to bitcode"
    elif cl.compile_only and len(cl.sources) > 1 and cl.output is not None:
        cl.passthrough_reason = "-o with several sources (clang reports it)"
    elif cl.compile_only and "other" in kinds:
        cl.passthrough_reason = "inputs clang compiles its own way"


# --- facts about single arguments --------------------------------------------------------

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


def parse_opt_level(arg: str) -> str | None:
    if arg.startswith("-O"):
        return arg[2:]
    if arg == "--optimize":
        return "1"
    return None


def is_lto_flag(arg: str) -> bool:
    """-flto, -flto=thin/full/auto/jobserver (not -flto-jobs=, -fno-lto)."""
    return arg == "-flto" or arg.startswith("-flto=")


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
