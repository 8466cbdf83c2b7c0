"""-MD / -MMD / -MF: dependency files written once, with the right target and headers."""
from __future__ import annotations


def _deps(text: str) -> tuple[str, set[str]]:
    words = text.replace("\\\n", " ").split()
    return words[0], set(words[1:])


def _sources(ws):
    ws.write("inc/a.h", "#define A 1\n")
    ws.write("b.h", "#define B 2\n")
    ws.write("a.c", '#include "inc/a.h"\n#include <stdio.h>\nint fa(void) { return A; }\n')
    ws.write("main.c", '#include "b.h"\nint fa(void);\nint main(void) { return fa() + B; }\n')


def test_md_with_compile(ws):
    _sources(ws)
    ws.eb("-MD", "-c", "a.c", "-o", "obj.o", check=True)
    target, deps = _deps(ws.read("obj.d"))
    assert target == "obj.o:" and {"a.c", "inc/a.h"} <= deps
    assert any(d.endswith("stdio.h") for d in deps)


def test_mmd_mf_mt(ws):
    _sources(ws)
    ws.write("deps/.keep", "")
    ws.eb("-MMD", "-MF", "deps/x.dep", "-MT", "custom", "-c", "a.c", check=True)
    target, deps = _deps(ws.read("deps/x.dep"))
    assert target == "custom:" and deps == {"a.c", "inc/a.h"}


def test_several_sources_with_c(ws):
    _sources(ws)
    ws.eb("-MMD", "-c", "a.c", "main.c", check=True)
    assert _deps(ws.read("a.d")) == ("a.o:", {"a.c", "inc/a.h"})
    assert _deps(ws.read("main.d")) == ("main.o:", {"main.c", "b.h"})


def test_compile_and_link_writes_one_file_covering_all_sources(ws):
    _sources(ws)
    ws.eb("-MMD", "a.c", "main.c", "-o", "prog", check=True)
    text = ws.read("prog.d")
    assert "/tmp" not in text and "enzyme-build" not in text
    rules = [line for line in text.splitlines() if line and not line.startswith(" ")]
    assert all(rule.startswith("prog:") for rule in rules) and len(rules) == 2
    words = set(text.replace("\\\n", " ").split())
    assert words == {"prog:", "a.c", "inc/a.h", "main.c", "b.h"}


def test_compile_and_link_without_output_names_like_clang(ws):
    _sources(ws)
    ws.eb("-MMD", "a.c", "main.c", check=True)
    assert _deps(ws.read("a.d")) == ("a.o:", {"a.c", "inc/a.h"})
    assert _deps(ws.read("main.d")) == ("main.o:", {"main.c", "b.h"})
