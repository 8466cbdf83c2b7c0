"""Bad input: clang's own diagnostics and exit code, or one message of ours; no partial output."""
from __future__ import annotations

import os

BROKEN = "int f(void) { return 1 }\n"


def test_syntax_error_reports_clangs_message_and_leaves_no_object(ws):
    ws.write("bad.c", BROKEN)
    proc = ws.eb("-c", "bad.c", "-o", "bad.o")
    assert proc.returncode != 0
    assert "bad.c:1:" in proc.stderr and "expected ';'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not ws.exists("bad.o")


def test_syntax_error_in_a_link_leaves_no_executable(ws):
    ws.write("bad.c", BROKEN)
    ws.write("main.c", "int main(void) { return 0; }\n")
    proc = ws.eb("main.c", "bad.c", "-o", "prog")
    assert proc.returncode != 0 and "expected ';'" in proc.stderr
    assert not ws.exists("prog")


def test_missing_input_file(ws):
    proc = ws.eb("-c", "nope.c")
    assert proc.returncode != 0
    assert "nope.c" in proc.stderr and "no such file" in proc.stderr.lower()
    assert "Traceback" not in proc.stderr


def test_missing_object_in_link(ws):
    ws.write("main.c", "int main(void) { return 0; }\n")
    proc = ws.eb("main.c", "missing.o", "-o", "prog")
    assert proc.returncode != 0 and "missing.o" in proc.stderr
    assert not ws.exists("prog")


def test_unknown_flag_is_clangs_error(ws):
    ws.write("a.c", "int x;\n")
    proc = ws.eb("-c", "a.c", "--definitely-not-a-flag")
    assert proc.returncode != 0 and "--definitely-not-a-flag" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_compiler_names_what_was_tried(ws):
    ws.write("a.c", "int x;\n")
    proc = ws.eb("-c", "a.c", env={"ENZYME_BUILD_CLANG": "/nonexistent/clang-22",
                                   "XDG_CACHE_HOME": ws.file("cache")})
    assert proc.returncode == 1
    assert "/nonexistent/clang-22: not found" in proc.stderr
    assert "apt-get install -y clang-22 llvm-22 lld-22" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not ws.exists("a.o")


def test_wrong_clang_version_is_rejected(ws):
    fake = ws.write("bin/clang", "#!/bin/sh\necho 'clang version 14.0.6'\n")
    os.chmod(fake, 0o755)
    proc = ws.eb("--version", env={"ENZYME_BUILD_CLANG": fake, "XDG_CACHE_HOME": ws.file("c")})
    assert proc.returncode == 1
    assert "LLVM 14.0.6, need 22" in proc.stderr


def test_link_error_is_the_linkers(ws):
    ws.write("main.c", "int nowhere(void);\nint main(void) { return nowhere(); }\n")
    proc = ws.eb("main.c", "-o", "prog")
    assert proc.returncode != 0 and "nowhere" in proc.stderr
    assert not ws.exists("prog")


def test_link_error_on_the_whole_program_path_leaves_no_output(ws):
    ws.write("main.c", "int __enzyme_probe;\nint nowhere(void);\n"
                       "int main(void) { return nowhere(); }\n")
    proc = ws.eb("main.c", "-o", "prog")
    assert proc.returncode != 0 and "nowhere" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not ws.exists("prog")
    assert [f for f in os.listdir(ws.path) if "enzyme-tmp" in f] == []


def test_response_file_cycle_is_one_message(ws):
    ws.write("loop.rsp", "-c @loop.rsp\n")
    proc = ws.eb("@loop.rsp")
    assert proc.returncode == 1
    assert "response files nest too deeply" in proc.stderr and "Traceback" not in proc.stderr


def test_unreadable_inputs_are_reported_by_the_tools(ws):
    os.mkdir(ws.file("dir.c"))
    os.mkdir(ws.file("dir.o"))
    proc = ws.eb("-c", "dir.c")
    assert proc.returncode != 0 and "dir.c" in proc.stderr and "Traceback" not in proc.stderr
    ws.write("main.c", "int __enzyme_probe;\nint main(void) { return 0; }\n")
    proc = ws.eb("main.c", "dir.o", "-o", "prog")
    assert proc.returncode != 0 and "dir.o" in proc.stderr and "Traceback" not in proc.stderr
    assert not ws.exists("prog")


def test_diagnostics_keep_colour_on_a_terminal(ws):
    """stderr is captured for the attribute hook, so colour is asked for when it is a TTY."""
    import pty
    import subprocess
    from frontend_helpers import ENZYME_BUILD
    ws.write("warn.c", "int f(int x) { return x = 1; }\nint g(void) { int unused; return 0; }\n")
    master, slave = pty.openpty()
    try:
        proc = subprocess.run([ENZYME_BUILD, "cc", "-Wall", "-c", "warn.c"], cwd=ws.path,
                              stderr=slave, stdout=subprocess.DEVNULL, timeout=60)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
    text = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 0
    assert "unused" in text and "\x1b[" in text
    piped = ws.eb("-Wall", "-c", "warn.c")
    assert "unused" in piped.stderr and "\x1b[" not in piped.stderr
