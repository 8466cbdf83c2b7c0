"""Lua 5.4 (Debian's lua5.4 source package) built with `make CC="enzyme-build cc"`, then run."""
from __future__ import annotations

import shutil
import textwrap

import pytest

from project_helpers import is_fat_object, run

SCRIPT = textwrap.dedent("""\
    -- closures, integer/float arithmetic, strings, tables, coroutines, errors, utf8
    local function counter()
      local n = 0
      return function() n = n + 1; return n end
    end
    local c = counter(); c(); c()
    print("counter", c())
    print("arith", 7 // 2, 7 % 3, 2^10, 1 / 4, math.maxinteger)
    print("float", string.format("%.6f %.6f", math.sin(1.0), math.sqrt(2)))
    local t = {}
    for i = 1, 10 do t[i] = (i * 7) % 11 end
    table.sort(t)
    print("sorted", table.concat(t, ","))
    print("gsub", (string.gsub("hello world", "o", "0")))
    print("find", string.find("enzyme-build", "%-(%a+)"))
    local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1); return b * 2 end)
    print("coroutine", co(1), co(20))
    print("pcall", pcall(function() error({code = 42}) end) == false)
    local ok, msg = pcall(function() return nil + 1 end)
    print("error", ok, (msg:gsub("^.-:%-?%d+: ", "")))
    print("utf8", utf8.len("h\\u{e9}llo"), utf8.char(955))
    local fib = {}
    local function f(n) if n < 2 then return n end; fib[n] = fib[n] or f(n - 1) + f(n - 2); return fib[n] end
    print("fib", f(80))
    local s = 0
    for i = 1, 1000000 do s = s + i end
    print("loop", s)
    """)

EXPECTED = textwrap.dedent("""\
    counter\t3
    arith\t3\t1\t1024.0\t0.25\t9223372036854775807
    float\t0.841471 1.414214
    sorted\t1,2,3,4,5,6,7,8,9,10
    gsub\thell0 w0rld
    find\t7\t12\tbuild
    coroutine\t2\t40
    pcall\ttrue
    error\tfalse\tattempt to perform arithmetic on a nil value
    utf8\t5\t\u03bb
    fib\t23416728348467685
    loop\t500000500000
    """)


@pytest.fixture(scope="module")
def lua_build(lua_source_dir, enzyme_cc_cmd, tmp_path_factory):
    """Copy the pristine sources and build lua, luac and liblua.a with the wrapper (-j2)."""
    tree = tmp_path_factory.mktemp("lua") / "lua"
    shutil.copytree(lua_source_dir, tree)
    run(["make", "-j2", "-C", str(tree / "src"), "linux", f"CC={enzyme_cc_cmd}"], timeout=900)
    return tree / "src"


def test_lua_builds_fat_objects_and_archive(lua_build):
    for name in ("lua", "luac", "liblua.a", "lvm.o"):
        assert (lua_build / name).is_file(), f"{name} was not built"
    # the wrapper's objects carry their bitcode, and ar kept it in the archive's members
    assert is_fat_object(str(lua_build / "lvm.o"))
    members = run(["ar", "t", str(lua_build / "liblua.a")]).stdout.split()
    assert "lapi.o" in members and "lvm.o" in members
    extract = lua_build / "members"
    extract.mkdir(exist_ok=True)
    run(["ar", "x", str(lua_build / "liblua.a"), "lapi.o"], cwd=extract)
    assert is_fat_object(str(extract / "lapi.o"))


def test_lua_one_liner(lua_build):
    out = run([str(lua_build / "lua"), "-e", "print(_VERSION, 6 * 7, ('x'):rep(3))"]).stdout
    assert out == "Lua 5.4\t42\txxx\n"


def test_lua_script(lua_build, tmp_path):
    script = tmp_path / "check.lua"
    script.write_text(SCRIPT)
    assert run([str(lua_build / "lua"), str(script)]).stdout == EXPECTED


def test_luac_compiles_and_lua_runs_bytecode(lua_build, tmp_path):
    script = tmp_path / "check.lua"
    script.write_text(SCRIPT)
    chunk = tmp_path / "check.luac"
    run([str(lua_build / "luac"), "-s", "-o", str(chunk), str(script)])
    assert run([str(lua_build / "lua"), str(chunk)]).stdout == EXPECTED


def test_lua_exit_status_and_stderr(lua_build):
    proc = run([str(lua_build / "lua"), "-e", "io.stderr:write('bad\\n'); os.exit(3)"], check=False)
    assert proc.returncode == 3
    assert proc.stdout == "bad\n"
