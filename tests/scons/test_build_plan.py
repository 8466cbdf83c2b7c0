"""The pure parts of `enzyme-build build`: paths as SCons sees them, object names, the SConstruct."""
from __future__ import annotations

import ast
import os

from enzyme_build.cli.build import (BuildRequest, clang_flags, object_name, render_sconstruct,
                                    scons_path, std_flags)


def test_scons_path_is_top_relative_inside_and_absolute_outside(tmp_path):
    top = str(tmp_path / "proj")
    assert scons_path(os.path.join(top, "src", "a.c"), top) == "#src/a.c"
    assert scons_path(top, top) == "#."
    assert scons_path(str(tmp_path / "other" / "b.c"), top) == str(tmp_path / "other" / "b.c")


def test_object_names_mirror_sources_and_never_leave_the_build_dir(tmp_path):
    top = str(tmp_path / "proj")
    assert object_name(os.path.join(top, "src", "a.c"), top) == os.path.join("src", "a")
    outside = object_name("/usr/share/x/b.c", top)
    assert outside.startswith("_abs" + os.sep) and ".." not in outside.split(os.sep)


def test_std_flags_go_to_their_language_only():
    assert std_flags("c11", cxx=False) == ["-std=c11"] and std_flags("c11", cxx=True) == []
    assert std_flags("gnu++20", cxx=True) == ["-std=gnu++20"] and std_flags("gnu++20", cxx=False) == []
    assert std_flags(None, cxx=True) == []


def test_clang_flags_restore_the_split_spellings():
    assert clang_flags(("all", "error=vla"), ("fast-math",), ("arch=native",)) == (
        "-Wall", "-Werror=vla", "-ffast-math", "-march=native")


def test_rendered_sconstruct_is_python_with_one_object_per_source(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # source paths are relative to the current directory
    top = str(tmp_path)
    request = BuildRequest(sources=("main.c", "src/util.cc"), output="bin/app", kind="shared",
                           language=None, optimization="2", include_dirs=("include",),
                           defines=("N=3",), libs=("m",), standard="c++17")
    text = render_sconstruct(request, os.path.join(top, ".enzyme-build", "app"), top)
    ast.parse(text)
    assert ("env.SharedObject(eb.file(env, '#.enzyme-build/app/obj/main.os'), "
            "eb.file(env, '#main.c'))") in text
    assert ("env.SharedObject(eb.file(env, '#.enzyme-build/app/obj/src/util.os'), "
            "eb.file(env, '#src/util.cc'))") in text
    assert "env.EnzymeSharedLibrary(eb.file(env, '#.enzyme-build/app/out/app'), objects)" in text
    assert "CXXFLAGS=eb.literals(['-std=c++17'])" in text and "CFLAGS=eb.literals([])" in text
    assert "CPPPATH=[eb.dir(env, d) for d in ['#include']]" in text
    assert "CCFLAGS=eb.literals(['-O2'])" in text
    assert "_CPPDEFFLAGS=eb.literals(['-DN=3'])" in text and "_LIBFLAGS=eb.literals(['-lm'])" in text
