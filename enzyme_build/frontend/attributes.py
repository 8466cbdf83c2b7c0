"""Compile-time resolution of `__attribute__((enzyme("gradient", f_grad)))` and friends.

Also Enzyme's marker attributes (its clang plugin's spellings, `[[enzyme::inactive]]` too):
`enzyme_inactive` and `enzyme_inactive_noblock` on a function or a global,
`enzyme_function_like("log1p")` on a function, `enzyme_shadow(d_g)` on a global (d_g is its
shadow) and `enzyme_nofree` (accepted, no effect). They become the registration globals
Enzyme's plugin makes (`__enzyme_inactivefn_…`, `__enzyme_inactive_global_…`,
`__enzyme_function_like_…`; `__enzyme_shadow_global_…` for shadows), see
`marker_registration`.

clang drops the unknown `enzyme` attribute, so a TU that uses it is compiled a second
time with the attribute rewritten into registration globals that survive into bitcode.

How (the slow path, only for TUs whose first compile reported the attribute):

1. `clang -M` lists every file the TU reads; files mentioning `enzyme` are lexed and
   each `enzyme(kind, expr)` inside `__attribute__((...))` is found, also inside macro
   bodies: the raw files are rewritten, not the preprocessed text.
2. A syntax-only pass (`-ast-dump=json`) runs on copies where every such attribute is
   `annotate("enzyme_build", "enzyme_build_marker:N", kind, expr)`; the copies replace
   the originals through a VFS overlay (`-ivfsoverlay`), so paths, macros, dependency
   files, debug info and line numbers stay the user's. The AST tells which functions
   carry marker N (several when it was written in a macro), their signatures and the
   rule function's; the rule is checked against Enzyme's convention here, and an
   undeclared rule function is clang's own error at the user's line.
3. The real compile runs the user's command on copies with the attribute removed and,
   appended to the main file, one registration pair per (kind, f, rule):
   `void *__enzyme_build_rule_<kind>_<f>__<rule>[2] = {(void *)f, (void *)rule};`
   defined weak and hidden, so the copies from a header included by many TUs merge at
   link time (static when f itself is static). enzyme_build.custom.collect reads them.

Detection (enzyme_build.frontend.driver): the first compile gets `detection_flags()`;
`mentions_enzyme_attribute` recognizes clang's warning (or the error form under
-Werror). `-w` silences even that warning, so with `-w` the wrapper asks
`source_mentions_enzyme_attribute` instead (one `clang -M` and a lexical scan).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, replace

from .. import cmdline
from ..custom import convention
from ..errors import EnzymeBuildError
from ..files import unlink_quietly

RULE_KINDS = ("augment", "gradient", "forward")
ATTRIBUTE_NAMES = ("enzyme", "__enzyme__")
RULE_GLOBAL_PREFIX = "__enzyme_build_rule_"
MARKER = "enzyme_build_marker:"

# Enzyme's marker attributes (its clang plugin's spellings): attribute name -> (kind, what the
# attribute takes: "none", "string" (a libm name) or "variable" (the shadow global)).
# `enzyme::inactive` and `__enzyme_inactive__` are the same attribute.
MARKER_ATTRIBUTES = {
    "enzyme_inactive": ("inactive", "none"),
    "enzyme_inactive_noblock": ("inactive_noblock", "none"),
    "enzyme_nofree": ("nofree", "none"),
    "enzyme_function_like": ("function_like", "string"),
    "enzyme_shadow": ("shadow", "variable"),
}
MARKER_KINDS = tuple(kind for kind, _ in MARKER_ATTRIBUTES.values())
# which declarations each marker kind may decorate
_MARKER_ENTITIES = {"inactive": ("FunctionDecl", "VarDecl"), "inactive_noblock": ("FunctionDecl", "VarDecl"),
                    "nofree": ("FunctionDecl", "VarDecl"), "function_like": ("FunctionDecl",),
                    "shadow": ("VarDecl",)}

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_WARNING = re.compile(r"unknown attribute '(?:(?:__)?enzyme(?:__)?|(?:__)?enzyme_(?:inactive|inactive_noblock|"
                      r"nofree|function_like|shadow)(?:__)?|enzyme::(?:inactive|inactive_noblock|nofree|"
                      r"function_like|shadow))' ignored")
_CXX_EXTENSIONS = (".cc", ".cpp", ".cxx", ".c++", ".C", ".CC", ".cp", ".CPP", ".ii", ".mm")


# ---------------------------------------------------------------------------
# detection


def mentions_enzyme_attribute(diagnostics: str) -> bool:
    """True when clang's diagnostics say it ignored an `enzyme` attribute
    (as a warning, or as an error under -Werror); colors and formats don't matter."""
    return bool(_WARNING.search(_ANSI.sub("", diagnostics or "")))


def detection_flags() -> list[str]:
    """Flags the wrapper appends to a first compile so the attribute is reported but
    never fails the build (-Werror would otherwise make it an error)."""
    return ["-Wunknown-attributes", "-Wno-error=unknown-attributes"]


def source_mentions_enzyme_attribute(clang_cmd: list[str], source: str, env: dict) -> bool:
    """Cheap check for builds where -w hides the warning: does any file the TU reads
    contain an `enzyme(...)` attribute? One `clang -M` run plus a lexical scan."""
    with tempfile.TemporaryDirectory(prefix="enzyme-build-attr-") as tmp:
        proc, files = _included_files(clang_cmd, source, env, tmp)
        if proc.returncode != 0:
            return False  # the real compile reports the problem
    return any(_find_attributes(path, _read(path)) for path in files if "enzyme" in _read(path))


# ---------------------------------------------------------------------------
# lexing the user's files


@dataclass(frozen=True)
class Token:
    kind: str   # "ident", "string", "punct", "number", "other"
    text: str
    start: int
    end: int


_TOKEN = re.compile(r"""
    (?P<ws>(?:\s|\\\r?\n)+)
  | (?P<comment>//(?:[^\n\\]|\\.|\\\n)*|/\*.*?\*/)
  | (?P<string>(?:u8|u|U|L)?"(?:[^"\\\n]|\\.|\\\n)*"|(?:u8|u|U|L)?'(?:[^'\\\n]|\\.)*')
  | (?P<ident>[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<number>\.?[0-9](?:[0-9A-Za-z_.]|[eEpP][+-])*)
  | (?P<punct>.)
""", re.VERBOSE | re.DOTALL)


def tokenize(text: str) -> list[Token]:
    """C/C++ tokens without whitespace and comments (good enough to find attributes)."""
    tokens = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind in ("ws", "comment"):
            continue
        tokens.append(Token(kind, match.group(), match.start(), match.end()))
    return tokens


@dataclass(frozen=True)
class AttributeUse:
    """One `enzyme("kind", expr)` inside `__attribute__((...))` in a user's file."""

    path: str
    line: int
    kind: str | None   # None: a macro parameter, known once the AST is read
    kind_text: str
    expr: str
    start: int   # span of `enzyme(...)` in the file's text
    end: int
    in_macro: bool = False   # written in a #define: expr is only meaningful there
    standard_syntax: bool = False   # [[enzyme(...)]] rather than __attribute__((...))

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"


def _matching_paren(tokens: list[Token], open_index: int) -> int:
    depth = 0
    for index in range(open_index, len(tokens)):
        text = tokens[index].text
        if text in "([{":
            depth += 1
        elif text in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _split_top_level(tokens: list[Token], first: int, last: int) -> list[tuple[int, int]]:
    """Index ranges [a, b) of comma-separated items in tokens[first:last]."""
    items, depth, start = [], 0, first
    for index in range(first, last):
        text = tokens[index].text
        if text in "([{":
            depth += 1
        elif text in ")]}":
            depth -= 1
        elif text == "," and depth == 0:
            items.append((start, index))
            start = index + 1
    items.append((start, last))
    return items


def _find_attributes(path: str, text: str) -> list[AttributeUse]:
    """Every `enzyme(...)` entry of a GNU (`__attribute__((...))`) or standard
    (`[[...]]`) attribute list in one file's raw text."""
    tokens = tokenize(text)
    uses = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if (token.text in ("__attribute__", "__attribute") and index + 2 < len(tokens)
                and tokens[index + 1].text == "(" and tokens[index + 2].text == "("):
            outer_close = _matching_paren(tokens, index + 1)
            inner_close = _matching_paren(tokens, index + 2)
            if outer_close < 0 or inner_close < 0:
                break
            for first, last in _split_top_level(tokens, index + 3, inner_close):
                use = _parse_enzyme_entry(path, text, tokens, first, last)
                if use is not None:
                    uses.append(use)
            index = outer_close + 1
            continue
        if token.text == "[" and index + 1 < len(tokens) and tokens[index + 1].text == "[":
            inner_close = _matching_paren(tokens, index + 1)
            if inner_close < 0:
                break
            for first, last in _split_top_level(tokens, index + 2, inner_close):
                use = _parse_enzyme_entry(path, text, tokens, first, last)
                if use is not None:
                    uses.append(replace(use, standard_syntax=True))
            index = inner_close + 1
            continue
        index += 1
    return uses


def _marker_attribute_name(tokens: list[Token], first: int, last: int) -> tuple[str, int] | None:
    """(`enzyme_inactive`, index after the name) when tokens[first:] spell one of Enzyme's
    marker attributes: `enzyme_inactive`, `__enzyme_inactive__` or `enzyme::inactive`."""
    text = tokens[first].text
    if text == "enzyme" and first + 3 < last and tokens[first + 1].text == tokens[first + 2].text == ":" \
            and tokens[first + 3].kind == "ident":
        name, after = "enzyme_" + tokens[first + 3].text, first + 4
    else:
        name, after = text, first + 1
        if name.startswith("__") and name.endswith("__"):
            name = name[2:-2]
    return (name, after) if name in MARKER_ATTRIBUTES else None


def _parse_marker_entry(path, text, tokens, first, last, name, after) -> AttributeUse:
    """One of Enzyme's marker attributes: no argument, a libm name, or a shadow variable."""
    line = text.count("\n", 0, tokens[first].start) + 1
    where = f"{path}:{line}"
    kind, takes = MARKER_ATTRIBUTES[name]
    example = {"none": f"__attribute__(({name}))", "string": f'__attribute__(({name}("log1p")))',
               "variable": f"__attribute__(({name}(d_g)))"}[takes]
    expr = ""
    if after < last:
        if tokens[after].text != "(" or tokens[last - 1].text != ")":
            raise EnzymeBuildError(f"malformed {name} attribute", location=where, hint=f"write {example}")
        args = _split_top_level(tokens, after + 1, last - 1)
        if args == [(after + 1, after + 1)]:
            args = []
        if takes == "none" and args:
            raise EnzymeBuildError(f"the {name} attribute takes no arguments", location=where,
                                   hint=f"write {example}")
        if takes != "none":
            if len(args) != 1 or args[0][0] >= args[0][1]:
                raise EnzymeBuildError(f"the {name} attribute takes one argument", location=where,
                                       hint=f"write {example}")
            expr = text[tokens[args[0][0]].start:tokens[args[0][1] - 1].end]
    elif takes != "none":
        raise EnzymeBuildError(f"the {name} attribute takes one argument", location=where,
                               hint=f"write {example}")
    in_macro = _in_directive(text, tokens[first].start)
    if takes == "string" and not in_macro and not (tokens[after + 1].kind == "string"
                                                  and args[0][1] - args[0][0] == 1):
        raise EnzymeBuildError(f"the argument of {name} must be a string literal naming a math "
                               "function", location=where, hint=f"write {example}")
    return AttributeUse(path, line, kind, f'"{kind}"', expr, tokens[first].start,
                        tokens[last - 1].end, in_macro)


def _parse_enzyme_entry(path, text, tokens, first, last) -> AttributeUse | None:
    if first >= last:
        return None
    marker = _marker_attribute_name(tokens, first, last)
    if marker is not None:
        return _parse_marker_entry(path, text, tokens, first, last, *marker)
    if tokens[first].text not in ATTRIBUTE_NAMES:
        return None
    line = text.count("\n", 0, tokens[first].start) + 1
    where = f"{path}:{line}"
    if first + 1 >= last or tokens[first + 1].text != "(" or tokens[last - 1].text != ")":
        raise EnzymeBuildError("malformed enzyme attribute: expected enzyme(\"kind\", function)",
                               location=where, hint=_KIND_HINT)
    args = _split_top_level(tokens, first + 2, last - 1)
    if len(args) != 2 or args[0][1] - args[0][0] != 1 or args[1][0] >= args[1][1]:
        raise EnzymeBuildError("an enzyme attribute takes two arguments: a kind and a function",
                               location=where, hint=_KIND_HINT)
    kind_token = tokens[args[0][0]]
    in_macro = _in_directive(text, tokens[first].start)
    kind = kind_token.text.strip('"') if kind_token.kind == "string" else None
    if kind not in RULE_KINDS and not (kind is None and in_macro and kind_token.kind == "ident"):
        raise EnzymeBuildError(f"unknown enzyme attribute kind {kind_token.text}",
                               location=where, hint=_KIND_HINT)
    expr = text[tokens[args[1][0]].start:tokens[args[1][1] - 1].end]
    return AttributeUse(path, line, kind, kind_token.text, expr, tokens[first].start,
                        tokens[last - 1].end, in_macro)


def _in_directive(text: str, offset: int) -> bool:
    """Whether offset lies in a preprocessor directive (e.g. a #define body)."""
    start = offset
    while True:
        start = text.rfind("\n", 0, start)
        if start <= 0 or not text[:start].rstrip("\r").endswith("\\"):
            break
    line_start = start + 1
    return text[line_start:offset].lstrip().startswith("#")


_KIND_HINT = ('write __attribute__((enzyme("augment", f_aug))), enzyme("gradient", f_grad) '
              'or enzyme("forward", f_fwd) on a declaration of f')


def _keep_newlines(span: str) -> str:
    """What replaces a removed span: its line breaks (with their continuation backslash,
    inside a macro), so every later line keeps its number."""
    return "".join(match.group() for match in re.finditer(r"\\?\r?\n", span))


def rewrite(text: str, uses: list[AttributeUse], numbering: dict[AttributeUse, int],
            *, keep_marker: bool) -> str:
    """The file's text with each enzyme attribute turned into an annotate marker
    (``keep_marker``) or removed; line numbers are unchanged either way."""
    out, cursor = [], 0
    for use in sorted(uses, key=lambda u: u.start):
        out.append(text[cursor:use.start])
        span = text[use.start:use.end]
        if keep_marker:
            name = "clang::annotate" if use.standard_syntax else "annotate"
            head = f'{name}("enzyme_build", "{MARKER}{numbering[use]}", {use.kind_text}'
            if use.kind in MARKER_KINDS:
                takes = dict(MARKER_ATTRIBUTES.values())[use.kind]
                value = {"none": "", "string": f", {use.expr}", "variable": f", &({use.expr})"}[takes]
                out.append(f"{head}{value}{_keep_newlines(span)})")
            else:
                expr_lines = _keep_newlines(span[:span.find(use.expr)]) if use.expr in span else ""
                out.append(f"{head}, {expr_lines}{use.expr})")
        else:
            out.append(_keep_newlines(span))
        cursor = use.end
    out.append(text[cursor:])
    return "".join(out)


# ---------------------------------------------------------------------------
# the clang command


# what the analysis runs (-M, -ast-dump) must not write or stop early: the roles -o, -c
# and the dependency-file flags, and these options
_DROP_OPTIONS = {"-MJ", "--serialize-diagnostics", "-serialize-diagnostics", "-M", "-MM", "-S", "-E",
                 "-fsyntax-only", "-emit-llvm", "-save-temps", "-save-temps="}
_DROP_ROLES = {cmdline.OUTPUT, cmdline.COMPILE_ONLY, cmdline.DEPFILE}


def _analysis_command(clang_cmd: list[str], source: str) -> list[str]:
    """The user's command without outputs, dependency files and bitcode embedding
    (clang_cmd[0] is the compiler; the rest is read through enzyme_build/cmdline.py)."""
    out = clang_cmd[:1]
    for arg in cmdline.parse(clang_cmd[1:]).items:
        option = arg.option or ""
        if (arg.role in _DROP_ROLES or option in _DROP_OPTIONS or option.startswith(("-MJ", "-fembed-bitcode"))
                or option == "-Xclang" and arg.value.startswith("-fembed-bitcode")):
            continue
        out += arg.tokens
    return out


def _run(cmd: list[str], env: dict, **kwargs) -> subprocess.CompletedProcess:
    if (env or os.environ).get("ENZYME_BUILD_VERBOSE"):
        import sys
        print("enzyme-build: " + shlex.join(cmd), file=sys.stderr)
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, **kwargs)
    except OSError as err:
        raise EnzymeBuildError(f"cannot run {cmd[0]}: {err}")


def _parse_make_deps(text: str) -> list[str]:
    body = text.replace("\\\n", " ")
    _, _, deps = body.partition(": ")
    if not deps:
        _, _, deps = body.partition(":")
    files = []
    for piece in re.split(r"(?<!\\) ", deps.strip()):
        piece = piece.strip()
        if piece:
            files.append(piece.replace("\\ ", " ").replace("$$", "$"))
    return files


def _included_files(clang_cmd, source, env, tmp) -> tuple[subprocess.CompletedProcess, list[str]]:
    deps_path = os.path.join(tmp, "deps.d")
    cmd = _analysis_command(clang_cmd, source) + ["-M", "-MF", deps_path, "-w"]
    proc = _run(cmd, env)
    if proc.returncode != 0 or not os.path.exists(deps_path):
        return proc, []
    with open(deps_path, encoding="utf-8", errors="replace") as handle:
        return proc, _parse_make_deps(handle.read())


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as handle:
            return handle.read()
    except OSError:
        return ""


def _write_overlay(tmp: str, name: str, contents: dict[str, str]) -> str:
    """A VFS overlay mapping each original path to a rewritten copy under tmp."""
    roots = []
    for index, (path, text) in enumerate(sorted(contents.items())):
        copy = os.path.join(tmp, f"{name}-{index}-{os.path.basename(path)}")
        with open(copy, "w", encoding="utf-8", errors="surrogateescape", newline="") as handle:
            handle.write(text)
        roots.append({"type": "file", "name": os.path.abspath(path),
                      "external-contents": copy, "use-external-name": False})
    overlay = os.path.join(tmp, f"{name}.yaml")
    with open(overlay, "w", encoding="utf-8") as handle:
        json.dump({"version": 0, "case-sensitive": "true", "roots": roots}, handle)
    return overlay


def _is_cxx(clang_cmd: list[str], source: str) -> bool:
    command = cmdline.parse(clang_cmd[1:])
    cxx_driver = "++" in os.path.basename(clang_cmd[0]) or any(
        arg.option == "--driver-mode=" and arg.value in ("g++", "cpp") for arg in command.roles(cmdline.OPTION))
    language = "c++" if cxx_driver or source.endswith(_CXX_EXTENSIONS) else "c"
    for arg in command.roles(cmdline.LANGUAGE):   # the last -x wins
        language = arg.value
    return language.startswith("c++") or language.startswith("objective-c++")


# ---------------------------------------------------------------------------
# reading the AST


@dataclass(frozen=True)
class RuleTarget:
    """What the AST says about one attribute: the function it decorates and the rule."""

    number: int
    kind: str
    function: str            # name usable in C at file scope (qualified in C++)
    symbol: str              # the linker-level (mangled) name
    function_type: str       # e.g. "double (double, double *)"
    param_types: tuple[str, ...]
    rule_name: str | None    # the rule function when the expression names one directly
    rule_type: str | None
    internal: bool = False   # f is static: each TU has its own copy
    variable: bool = False   # a global variable (enzyme_shadow, enzyme_inactive), not a function
    value: str | None = None  # enzyme_function_like: the libm name; enzyme_shadow: the shadow
    # a member or template specialization (C++): named by its mangled symbol in the registration
    # (an asm-label declaration), since no file-scope expression names it; its shadow likewise
    by_symbol: bool = False
    shadow_symbol: str | None = None


_DECL_OPEN = b"\n    {\n"     # clang's JSON: top-level declarations sit at indent 4
_DECL_CLOSE = b"\n    }"


def _top_level_decls(stream, chunk_size: int = 1 << 20):
    """Yield the JSON text of each top-level declaration of clang's -ast-dump=json output
    (a binary stream) that mentions our marker. C++ dumps reach hundreds of MB, so this
    scans bytes once and parses only the few declarations that matter."""
    marker = MARKER.encode()
    buffer = bytearray()
    scan = 0              # bytes before this offset have been searched
    open_at = None        # offset of the current top-level declaration, if inside one
    while True:
        chunk = stream.read(chunk_size)
        if chunk:
            buffer += chunk
        while True:
            if open_at is None:
                found = buffer.find(_DECL_OPEN, scan)
                if found < 0:
                    scan = max(scan, len(buffer) - len(_DECL_OPEN))
                    break
                open_at, scan = found, found + len(_DECL_OPEN) - 1
            close = buffer.find(_DECL_CLOSE, scan)
            if close < 0:
                scan = max(scan, len(buffer) - len(_DECL_CLOSE))
                break
            end = close + len(_DECL_CLOSE)
            if buffer.find(marker, open_at, end) >= 0:
                yield bytes(buffer[open_at + 1:end]).decode("utf-8", errors="replace")
            scan, open_at = end, None
        if not chunk:
            return
        keep_from = open_at if open_at is not None else scan
        del buffer[:keep_from]   # once per chunk: what is scanned and closed is done
        scan -= keep_from
        if open_at is not None:
            open_at = 0


def _marker(attr: dict) -> tuple[int, str, str | None] | None:
    """(marker number, kind, the string argument after the kind if any) of one of our
    annotate attributes, else None."""
    strings = [json.loads(node["value"]) if node["value"].startswith('"') else node["value"]
               for arg in attr.get("inner", []) for node in _walk(arg)
               if node.get("kind") == "StringLiteral" and isinstance(node.get("value"), str)]
    if len(strings) < 2 or not strings[0].startswith(MARKER):
        return None
    return int(strings[0][len(MARKER):]), strings[1], strings[2] if len(strings) > 2 else None


def _referenced_variable(attr: dict, symbols: dict[str, str] | None = None) -> str | None:
    """The global variable an `enzyme_shadow(d_g)` marker names (qualified in C++); with
    `symbols` (declaration id -> mangled name), its mangled name."""
    for arg in attr.get("inner", [])[2:]:
        for node in _walk(arg):
            ref = node.get("referencedDecl")
            if node.get("kind") == "DeclRefExpr" and ref and ref.get("kind") == "VarDecl":
                if symbols is None:
                    return ref.get("name")
                # declared outside the marked declaration: a variable of the global namespace,
                # whose symbol is its name
                return symbols.get(ref.get("id"), ref.get("name"))
    return None


# declarations a marker attribute (enzyme_inactive, _noblock, _function_like, _shadow) may sit
# on inside a class or template: named in the registration by their mangled symbol; the
# entity kind _MARKER_ENTITIES checks them as
_MEMBER_ENTITIES = {"FunctionDecl": "FunctionDecl", "CXXMethodDecl": "FunctionDecl", "VarDecl": "VarDecl",
                    "VarTemplateSpecializationDecl": "VarDecl"}
# scopes those declarations are found in (a pattern inside a template has no symbol: its
# instantiations, listed next to it, are registered)
_MEMBER_SCOPES = {"CXXRecordDecl", "ClassTemplateDecl", "ClassTemplateSpecializationDecl", "FunctionTemplateDecl",
                  "VarTemplateDecl", "NamespaceDecl", "LinkageSpecDecl"}


def _walk(node):
    yield node
    for child in node.get("inner", []) or []:
        yield from _walk(child)


def _referenced_function(attr: dict) -> tuple[str | None, str | None]:
    args = attr.get("inner", [])[2:]
    for arg in args:
        for node in _walk(arg):
            ref = node.get("referencedDecl")
            if node.get("kind") == "DeclRefExpr" and ref and ref.get("kind") == "FunctionDecl":
                return ref.get("name"), ref.get("type", {}).get("qualType")
    return None, None


def _collect_targets(decl: dict, scope: list[str] | None, found: dict[int, list[RuleTarget]],
                     misplaced: dict[int, str], symbols: dict[str, str] | None = None,
                     member: bool = False) -> None:
    """`scope`: the namespaces of a file- or namespace-scope declaration, None elsewhere;
    `member`: inside a class or template (outside function bodies), where marker attributes
    are registered by symbol."""
    kind = decl.get("kind")
    attrs = [node for node in decl.get("inner", []) or [] if node.get("kind") == "AnnotateAttr"]
    for attr in attrs:
        marker = _marker(attr)
        if marker is None or attr.get("inherited"):
            continue
        number, rule_kind, text_value = marker
        entities = _MARKER_ENTITIES.get(rule_kind, ("FunctionDecl",))
        # a member or specialization; at file scope too when defined out of its class
        # (`double P::q = 1;`, `template <class T> T H<T>::n = 0;`: the semantic parent is the class)
        by_symbol = (scope is None and member) or (scope is not None and (
            kind not in entities or "parentDeclContextId" in decl))
        if by_symbol and rule_kind in MARKER_KINDS and _MEMBER_ENTITIES.get(kind) in entities:
            if _in_anonymous_namespace(decl):
                misplaced.setdefault(number, "member of a class in an anonymous namespace")
            elif decl.get("mangledName"):
                _add_member_target(decl, attr, number, rule_kind, text_value, found, misplaced, symbols or {})
            continue   # (a template's pattern: its instantiations are registered)
        if kind not in entities or scope is None:
            misplaced.setdefault(number, kind or "declaration")
            continue
        if rule_kind in MARKER_KINDS:
            rule_name, rule_type = None, None
            value = text_value if rule_kind == "function_like" else \
                _referenced_variable(attr) if rule_kind == "shadow" else None
        else:
            (rule_name, rule_type), value = _referenced_function(attr), None
        params = tuple(_type_of(node) for node in decl.get("inner", []) or []
                       if node.get("kind") == "ParmVarDecl")
        name = decl.get("name", "")
        found.setdefault(number, []).append(RuleTarget(
            number=number, kind=rule_kind, function="::".join(scope + [name]) if scope else name,
            symbol=decl.get("mangledName", name), function_type=decl.get("type", {}).get("qualType", ""),
            param_types=params, rule_name=rule_name, rule_type=rule_type,
            internal=decl.get("storageClass") == "static", variable=kind == "VarDecl", value=value))
    if kind == "FunctionDecl":
        # a marked declaration inside a function body: refused, never silently ignored
        for child in decl.get("inner", []) or []:
            if child.get("kind") != "CompoundStmt":
                continue
            for node in _walk(child):
                marker = _marker(node) if node.get("kind") == "AnnotateAttr" else None
                if marker is not None:
                    misplaced.setdefault(marker[0], "declaration inside a function")
    container = kind in (None, "TranslationUnitDecl", "NamespaceDecl", "LinkageSpecDecl")
    inside = (container and scope is not None) or (member and kind in _MEMBER_SCOPES) or kind in _MEMBER_SCOPES
    for child in decl.get("inner", []) or []:
        child_kind = child.get("kind") or ""
        if not child_kind.endswith("Decl") or child_kind == "ParmVarDecl":
            continue
        if child_kind == "NamespaceDecl" and scope is not None:
            name = child.get("name")
            _collect_targets(child, scope + [name] if name else scope, found, misplaced, symbols, member=True)
        else:
            # members and templates: marker attributes by symbol; rules there and block-scope
            # declarations are found but not supported
            _collect_targets(child, scope if container else None, found, misplaced, symbols,
                             member=inside and kind != "FunctionDecl" and kind != "CXXMethodDecl")


# clang's declaration kinds in words, for messages
_DECL_WORDS = {"FunctionDecl": "function", "CXXMethodDecl": "member function", "VarDecl": "variable",
               "FieldDecl": "non-static data member", "CXXConstructorDecl": "constructor",
               "CXXDestructorDecl": "destructor", "TypedefDecl": "typedef", "TypeAliasDecl": "type alias",
               "RecordDecl": "struct", "CXXRecordDecl": "class or struct", "EnumDecl": "enum",
               "ParmVarDecl": "parameter"}


def _in_anonymous_namespace(decl: dict) -> bool:
    """Internal linkage that a symbol reference cannot reach (an anonymous namespace mangles
    as `_GLOBAL__N_1`)."""
    return "_GLOBAL__N" in (decl.get("mangledName") or "")


def _add_member_target(decl, attr, number, rule_kind, text_value, found, misplaced, symbols) -> None:
    variable = _MEMBER_ENTITIES[decl.get("kind")] == "VarDecl"
    shadow_symbol = None
    if rule_kind == "shadow":
        shadow_symbol = _referenced_variable(attr, symbols)
        if not shadow_symbol:
            misplaced.setdefault(number, "member whose shadow is not a variable with a symbol")
            return
    found.setdefault(number, []).append(RuleTarget(
        number=number, kind=rule_kind, function=decl.get("name", ""), symbol=decl["mangledName"],
        function_type=decl.get("type", {}).get("qualType", ""), param_types=(), rule_name=None, rule_type=None,
        internal=False, variable=variable, value=text_value if rule_kind == "function_like" else None,
        by_symbol=True, shadow_symbol=shadow_symbol))


def _variable_symbols(decl: dict, into: dict[str, str]) -> None:
    """Declaration id -> mangled name of every variable declared in `decl` (outside function
    bodies), for the shadows member attributes name."""
    for node in _walk(decl):
        if node.get("kind") in ("VarDecl", "VarTemplateSpecializationDecl") and node.get("mangledName"):
            into[node.get("id")] = node["mangledName"]


def _type_of(node: dict) -> str:
    type_ = node.get("type", {})
    return type_.get("desugaredQualType") or type_.get("qualType", "")


def find_rule_targets(ast_stream) -> tuple[dict[int, list[RuleTarget]], dict[int, str]]:
    """Marker number -> the functions it decorates (several when written in a macro),
    and markers found on something other than a function."""
    found: dict[int, list[RuleTarget]] = {}
    misplaced: dict[int, str] = {}
    symbols: dict[str, str] = {}
    for text in _top_level_decls(ast_stream):
        decl = json.loads(text)
        _variable_symbols(decl, symbols)   # (only declarations holding a marker are read)
        wrapper = {"inner": [decl]}
        _collect_targets(wrapper, [], found, misplaced, symbols)
    return found, misplaced


# ---------------------------------------------------------------------------
# Enzyme's signature convention, checked on C types


_FLOAT_TYPES = {"float", "double", "long double", "_Float16", "__fp16", "__bf16", "_Float128",
                "__float128"}
_INT_WORDS = {"int", "long", "short", "char", "unsigned", "signed", "_Bool", "bool", "size_t",
              "ptrdiff_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
              "uint32_t", "uint64_t", "enum", "intptr_t", "uintptr_t", "ssize_t", "wchar_t"}
_QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "__restrict__", "struct", "union"}


def classify_c_type(type_text: str) -> str:
    """'float', 'pointer', 'int', 'void', 'struct' or 'unknown' for a C type spelling."""
    text = type_text.strip()
    if "*" in text or "[" in text or "&" in text:
        return "pointer"
    words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text) if w not in _QUALIFIERS]
    if text.startswith(("struct ", "union ")):
        return "struct"
    joined = " ".join(words)
    if joined in _FLOAT_TYPES:
        return "float"
    if joined == "void":
        return "void"
    if words and all(w in _INT_WORDS for w in words):
        return "int"
    return "unknown"


def split_function_type(type_text: str) -> tuple[str, list[str]] | None:
    """("double", ["double", "double *"]) for "double (double, double *)"; None if unsure."""
    text = re.sub(r"\s*(noexcept|__attribute__\(\(.*\)\))\s*$", "", type_text.strip())
    if not text.endswith(")"):
        return None
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        if text[index] == ")":
            depth += 1
        elif text[index] == "(":
            depth -= 1
            if depth == 0:
                break
    else:
        return None
    result, params_text = text[:index].strip(), text[index + 1:-1].strip()
    params, depth, current = [], 0, ""
    for char in params_text:
        if char in "(<[":
            depth += 1
        elif char in ")>]":
            depth -= 1
        if char == "," and depth == 0:
            params.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        params.append(current.strip())
    if params == ["void"]:
        params = []
    if "..." in params:
        return None
    return result, params


def expected_rule_shape(kind: str, result: str, params: list[str]) -> tuple[int, str] | None:
    """(number of parameters, result class) of Enzyme's original shape of a ``kind`` rule for a
    function ``result (params)`` (the gradient with a tape, the augment returning it); None
    when a type can't be classified. `check_rule_signature` also accepts the other shapes
    enzyme_build.custom.convention lists."""
    classes = [classify_c_type(p) for p in params]
    result_class = classify_c_type(result)
    if "unknown" in classes or "struct" in classes or result_class == "unknown":
        return None
    count = convention.expected_arity(kind, classes, result_class)
    if kind == "augment":
        return count, "pointer" if result_class == "void" else "struct"
    if kind == "gradient":
        return count, convention.gradient_result(classes)
    return count, "void" if result_class == "void" else "struct"


def _accepted_shapes(kind: str, result: str, params: list[str]) -> tuple[tuple[int, ...], tuple[str, ...]] | None:
    """Every (parameter count, result class) Enzyme's convention allows a ``kind`` rule."""
    classes = [classify_c_type(p) for p in params]
    result_class = classify_c_type(result)
    if "unknown" in classes or "struct" in classes or result_class == "unknown":
        return None
    if kind == "augment":
        return (convention.expected_arity(kind, classes, result_class),), convention.augment_results(result_class)
    if kind == "gradient":
        return convention.gradient_arities(classes, result_class), (convention.gradient_result(classes),)
    return (convention.expected_arity(kind, classes, result_class),), convention.forward_results(result_class)


def convention_text(kind: str) -> str:
    return convention.describe(kind)


def check_rule_signature(use: AttributeUse, target: RuleTarget) -> None:
    """Raise a clear error when the rule function can't follow Enzyme's convention."""
    if target.rule_type is None or target.kind in MARKER_KINDS:
        return
    primal = split_function_type(target.function_type)
    rule = split_function_type(target.rule_type)
    if primal is None or rule is None:
        return
    primal_params = list(target.param_types) if len(target.param_types) == len(primal[1]) \
        else primal[1]
    if target.kind not in RULE_KINDS:
        raise EnzymeBuildError(f"unknown enzyme attribute kind {target.kind!r} for {target.function}",
                               location=use.location, hint=_KIND_HINT)
    shapes = _accepted_shapes(target.kind, primal[0], primal_params)
    if shapes is None:
        return
    counts, results = shapes
    rule_result = classify_c_type(rule[0])
    problems = []
    if len(rule[1]) not in counts:
        problems.append(f"takes {len(rule[1])} parameter(s), expected {' or '.join(map(str, counts))}")
    if rule_result != "unknown" and rule_result not in results:
        problems.append(f"returns {rule[0]!r} ({rule_result}), expected {' or '.join('a ' + r for r in results)}")
    if problems:
        raise EnzymeBuildError(
            f"{target.kind} rule {target.rule_name or use.expr!r} for {target.function}"
            f" ({target.function_type}) has type {target.rule_type}: " + "; ".join(problems),
            location=use.location, hint="Enzyme's convention: " + convention_text(target.kind))


# ---------------------------------------------------------------------------
# the generated registrations


def _identifier(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def rule_expression(use: AttributeUse, target: RuleTarget) -> str:
    """How the appended registration names the rule: the user's expression, or (for an
    attribute written in a macro, whose text means nothing outside it) the function
    the AST resolved it to."""
    if not use.in_macro:
        return use.expr
    if target.rule_name is None:
        raise EnzymeBuildError(
            f"the {target.kind} rule of {target.function} written in a macro must name a function",
            location=use.location, hint='e.g. __attribute__((enzyme("gradient", f_grad)))')
    return target.rule_name


def registration_name(target: RuleTarget, rule: str) -> str:
    """The same (kind, f, rule) pair gets the same name in every TU, so the weak
    definitions from a header included by many TUs merge at link time."""
    return f"{RULE_GLOBAL_PREFIX}{target.kind}_{_identifier(target.symbol)}__{_identifier(rule)}"


def _in_namespaces(line: str, function: str) -> str:
    """Reopen the namespaces of f around its registration: the rule is named as written
    next to f's declaration, so it is looked up from there (`drag_fwd` inside `phys`)."""
    scopes = function.split("::")[:-1]
    if not scopes:
        return line
    return "".join(f"namespace {s} {{ " for s in scopes) + line + " }" * len(scopes)


def registration_code(uses_by_number: dict[int, AttributeUse],
                      targets: dict[int, list[RuleTarget]], cxx: bool) -> str:
    """C/C++ text appended to the main file: one pair {f, rule} per attribute.

    The pair is a weak hidden definition (static when f is static, since then every TU
    has its own f). The embedded bitcode loses `used`, so the link step must collect
    registrations before optimizing; see enzyme_build.custom.collect.
    """
    lines = ["", "#pragma clang diagnostic push",
             '#pragma clang diagnostic ignored "-Weverything"']
    if cxx:
        lines.append("template <class __enzyme_build_T> using __enzyme_build_fnptr = __enzyme_build_T *;")
    seen = set()
    pairs = [(uses_by_number[number], target) for number in sorted(targets)
             for target in targets[number]]
    for use, target in pairs:
        if target.kind in MARKER_KINDS:
            line = marker_registration(use, target, cxx)
            if line is None or line in seen:
                continue
            seen.add(line)
            lines.append(_in_namespaces(line, target.function) if cxx and not target.by_symbol else line)
            continue
        rule = rule_expression(use, target)
        name = registration_name(target, rule)
        if name in seen:
            continue
        seen.add(name)
        if cxx:
            function = (f"(void *)static_cast<__enzyme_build_fnptr<{target.function_type}>>"
                        f"(&::{target.function})")
        else:
            function = f"(void *)&{target.function}"
        storage = ("static", "used") if target.internal else \
            ("", 'used, weak, visibility("hidden")')
        prefix = f"{storage[0]} " if storage[0] else ""
        if cxx and not target.internal:
            prefix = 'extern "C" ' + prefix
        line = f"{prefix}void *{name}[2] __attribute__(({storage[1]})) = {{{function}, (void *)({rule})}};"
        lines.append(_in_namespaces(line, target.function) if cxx else line)
    lines += ["#pragma clang diagnostic pop", ""]
    return "\n".join(lines)


def _symbol_reference(symbol: str, variable: bool) -> tuple[str, str]:
    """(declaration, expression) naming the entity with linker name `symbol` in C++."""
    ref = f"__enzyme_build_ref_{_identifier(symbol)}"
    decl = f'extern "C" char {ref} __asm__("{symbol}");' if variable else \
        f'extern "C" void {ref}(void) __asm__("{symbol}");'
    return decl, f"(void *)&{ref}"


def _registration_by_symbol(use: AttributeUse, target: RuleTarget, name: str) -> str:
    """A member's or template specialization's registration (C++ only)."""
    decl, entity = _symbol_reference(target.symbol, target.variable)
    lines, values = [decl], [entity]
    if target.kind == "function_like":
        libm = target.value if use.in_macro or not use.expr else None
        values.append(f"(void *){json.dumps(libm)}" if libm is not None else f"(void *)({use.expr})")
    elif target.kind == "shadow":
        shadow_decl, shadow = _symbol_reference(target.shadow_symbol, True)
        lines.append(shadow_decl)
        values.append(shadow)
    lines.append(f'extern "C" void *{name}[{len(values)}] __attribute__((used, weak, visibility("hidden"))) = '
                 f"{{{', '.join(values)}}};")
    return "\n".join(lines)


# Enzyme's registration global per marker kind (read by enzyme_build.custom.collect, and by
# Enzyme's own PreserveNVVM pass under the same names)
_MARKER_GLOBALS = {("inactive", False): "__enzyme_inactivefn", ("inactive", True): "__enzyme_inactive_global",
                   ("inactive_noblock", False): "__enzyme_inactivenoblockfn",
                   ("inactive_noblock", True): "__enzyme_inactive_global",
                   ("function_like", False): "__enzyme_function_like",
                   ("shadow", True): "__enzyme_shadow_global"}


def marker_registration(use: AttributeUse, target: RuleTarget, cxx: bool) -> str | None:
    """The registration global for one of Enzyme's marker attributes on `target`, or None
    (enzyme_nofree: our engine never needs the promise).

    Unlike the rule pairs, these are never static: a variable's registration must survive the
    pre-AD optimization (it keeps a read-only global with a shadow from being folded into a
    constant), so a static target gets a name unique to its translation unit instead."""
    prefix = _MARKER_GLOBALS.get((target.kind, target.variable))
    if prefix is None:
        return None
    name = f"{prefix}_enzyme_build_{_identifier(target.symbol)}"
    if target.by_symbol:
        return _registration_by_symbol(use, target, name)
    if target.internal:
        import hashlib
        name += "_" + hashlib.sha1(os.path.abspath(use.path).encode()).hexdigest()[:12]
    if target.variable:
        entity = f"(void *)&::{target.function}" if cxx else f"(void *)&{target.function}"
    elif cxx:
        entity = (f"(void *)static_cast<__enzyme_build_fnptr<{target.function_type}>>"
                  f"(&::{target.function})")
    else:
        entity = f"(void *)&{target.function}"
    values = [entity]
    if target.kind == "function_like":
        libm = target.value if use.in_macro or not use.expr else None
        values.append(f"(void *){json.dumps(libm)}" if libm is not None else f"(void *)({use.expr})")
    elif target.kind == "shadow":
        shadow = target.value if use.in_macro else use.expr
        if not shadow:
            raise EnzymeBuildError(f"the shadow of {target.function} must name a global variable",
                                   location=use.location, hint="e.g. double g __attribute__((enzyme_shadow(d_g)));")
        values.append(f"(void *)&({shadow})")
    storage = 'extern "C" ' if cxx else ""
    return (f"{storage}void *{name}[{len(values)}] __attribute__((used, weak, visibility(\"hidden\"))) = "
            f"{{{', '.join(values)}}};")


# ---------------------------------------------------------------------------
# the entry point the wrapper calls


def compile_with_enzyme_attributes(clang_cmd: list[str], source: str, output: str,
                                   env: dict) -> subprocess.CompletedProcess:
    """Recompile one TU with its enzyme attributes resolved into registration globals.

    ``clang_cmd`` is the wrapper's full compile command (with ``-c``, ``-o output``, the
    bitcode embedding and ``source``). Returns the final compile's CompletedProcess
    (its diagnostics no longer mention the attribute). On any failure ``output`` is
    removed, so no stale object without the rules is left behind.
    """
    try:
        proc = _compile_with_attributes(clang_cmd, source, output, env)
    except BaseException:
        unlink_quietly(output)
        raise
    if proc.returncode != 0:
        unlink_quietly(output)
    return proc


def _compile_with_attributes(clang_cmd, source, output, env) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="enzyme-build-attr-") as tmp:
        proc, files = _included_files(clang_cmd, source, env, tmp)
        if proc.returncode != 0:
            return proc
        texts = {path: _read(path) for path in files}
        uses_by_file = {path: _find_attributes(path, text)
                        for path, text in texts.items() if "enzyme" in text}
        uses_by_file = {path: uses for path, uses in uses_by_file.items() if uses}
        all_uses = [use for path in sorted(uses_by_file) for use in uses_by_file[path]]
        numbering = {use: number for number, use in enumerate(all_uses)}
        uses_by_number = {number: use for use, number in numbering.items()}
        main_path = _main_file(files, source)

        targets = {}
        if all_uses:
            marked = {path: rewrite(texts[path], uses, numbering, keep_marker=True)
                      for path, uses in uses_by_file.items()}
            overlay = _write_overlay(tmp, "ast", marked)
            ast_cmd = _analysis_command(clang_cmd, source) + [
                "-ivfsoverlay", overlay, "-fsyntax-only", "-w", "-Xclang", "-ast-dump=json"]
            ast_proc, targets, misplaced = _run_ast(ast_cmd, env)
            if ast_proc.returncode != 0:
                return ast_proc
            for number, kind in misplaced.items():
                use = uses_by_number[number]
                if use.kind in MARKER_KINDS:
                    wanted = {"FunctionDecl": "a function", "VarDecl": "a global variable or static data member"}
                    allowed = " or ".join(wanted[e] for e in _MARKER_ENTITIES[use.kind])
                    raise EnzymeBuildError(
                        f"the enzyme_{use.kind} attribute is on a {_DECL_WORDS.get(kind, kind)}; it belongs on "
                        f"{allowed} (at file or namespace scope, a member of a class, or a template)",
                        location=use.location)
                raise EnzymeBuildError(
                    f"the enzyme attribute ({use.kind_text}, {use.expr}) is on a {kind}, "
                    "not on a function declared at file or namespace scope",
                    location=use.location,
                    hint="put it on a declaration of a plain (non-member, non-template) function")
            # attributes the AST doesn't show (unused macros, #if 0) need nothing
            for number, found in targets.items():
                for target in found:
                    check_rule_signature(uses_by_number[number], target)

        cleaned = {path: rewrite(texts[path], uses, numbering, keep_marker=False)
                   for path, uses in uses_by_file.items()}
        if targets:
            main_text = cleaned.get(main_path, texts.get(main_path, _read(source)))
            if not main_text.endswith("\n"):
                main_text += "\n"
            cleaned[main_path] = main_text + registration_code(
                uses_by_number, targets, _is_cxx(clang_cmd, source))
        if cleaned:
            overlay = _write_overlay(tmp, "compile", cleaned)
            final = _run(clang_cmd + ["-ivfsoverlay", overlay], env)
        else:
            final = _run(clang_cmd, env)
        if final.returncode == 0 and mentions_enzyme_attribute(final.stderr):
            raise EnzymeBuildError(
                "an enzyme attribute could not be resolved (is its name produced by a macro?)",
                location=source, hint='spell it out: __attribute__((enzyme("gradient", f_grad)))')
        return subprocess.CompletedProcess(clang_cmd, final.returncode, final.stdout, final.stderr)


def _main_file(files: list[str], source: str) -> str:
    for path in files:
        if os.path.abspath(path) == os.path.abspath(source):
            return path
    return files[0] if files else source


def _run_ast(cmd, env):
    """Run the syntax-only AST dump, streaming stdout through the marker filter."""
    if (env or os.environ).get("ENZYME_BUILD_VERBOSE"):
        import sys
        print("enzyme-build: " + shlex.join(cmd), file=sys.stderr)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errors:
        try:
            process = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=errors)
        except OSError as err:
            raise EnzymeBuildError(f"cannot run {cmd[0]}: {err}")
        with process:
            targets, misplaced = find_rule_targets(process.stdout)
            process.stdout.close()
            returncode = process.wait()
        errors.seek(0)
        stderr = errors.read()
    return subprocess.CompletedProcess(cmd, returncode, "", stderr), targets, misplaced
