"""Error cases across builds: a function with no body and no rule, call-site marker mismatches
and an unsupported construct give one clear message, exit 1, no traceback and no output file."""
from __future__ import annotations

import os



def _fails_cleanly(proc, out_path):
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "enzyme-build: error:" in proc.stderr
    assert not os.path.exists(out_path), "a failed build left its output behind"
    return proc.stderr


def test_no_body_in_plain_object(project, mt):
    """blackbox() lives in an object built by plain clang: no bitcode, no rule."""
    d = project("errors")
    assert mt.run(d, [mt.clang, "-O2", "-c", "blackbox.c", "-o", "blackbox.o"]).returncode == 0
    assert mt.run(d, [mt.enzyme_build, "cc", "-O2", "-c", "nobody.c", "-o", "nobody.o"]).returncode == 0
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "nobody.o", "blackbox.o", "-o", "prog", "-lm"])
    err = _fails_cleanly(proc, os.path.join(d, "prog"))
    assert "blackbox" in err
    assert "outer -> " in err and "-> blackbox" in err  # the chain from the differentiated function
    assert "enzyme_inactivefn" in err  # fix 1: mark it inactive
    assert "gradient" in err  # fix 2: give it a rule


def test_no_body_shared_library_output(project, mt):
    d = project("errors")
    assert mt.run(d, [mt.clang, "-O2", "-c", "blackbox.c", "-o", "blackbox.o"]).returncode == 0
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-shared", "-fPIC", "nobody.c", "blackbox.o", "-o", "libx.so"])
    err = _fails_cleanly(proc, os.path.join(d, "libx.so"))
    assert "blackbox" in err


def test_marker_missing_tangent(project, mt):
    d = project("errors")
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-g", "marker_missing.c", "-o", "prog"])
    err = _fails_cleanly(proc, os.path.join(d, "prog"))
    assert "marker_missing.c:" in err  # the call site
    assert "parameter 2" in err


def test_marker_mismatch_names_parameter(project, mt):
    d = project("errors")
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "marker_out.c", "-o", "prog"])
    err = _fails_cleanly(proc, os.path.join(d, "prog"))
    assert "%arg" not in err and "parameter 1" in err
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "marker_missing.c", "-o", "prog"])
    err = _fails_cleanly(proc, os.path.join(d, "prog"))
    assert ".site" not in err


def test_marker_out_on_pointer_has_location_with_g(project, mt):
    d = project("errors")
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "-g", "marker_out.c", "-o", "prog"])
    err = _fails_cleanly(proc, os.path.join(d, "prog"))
    assert "marker_out.c:6" in err and "enzyme_out" in err


def test_inline_asm_error_names_construct(project, mt):
    d = project("errors")
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "inline_asm.c", "-o", "prog"])
    err = _fails_cleanly(proc, os.path.join(d, "prog"))
    assert "assembly" in err or "asm" in err.replace("inline_asm.c", "")
    assert "indirect call" not in err


def test_inline_asm_fails_cleanly(project, mt):
    d = project("errors")
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "inline_asm.c", "-o", "prog"])
    _fails_cleanly(proc, os.path.join(d, "prog"))


def test_forward_no_body_hint_names_forward_rule(project, mt):
    d = project("errors")
    assert mt.run(d, [mt.clang, "-O2", "-c", "blackbox.c", "-o", "blackbox.o"]).returncode == 0
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "fwd_nobody.c", "blackbox.o", "-o", "prog", "-lm"])
    err = _fails_cleanly(proc, os.path.join(d, "prog"))
    assert "outer -> blackbox" in err
    assert "forward" in err and "__enzyme_register_derivative_blackbox" in err
    assert "enzyme_inactivefn" in err


def test_rule_arity_mismatch_is_not_silent(project, mt):
    """Either the rule gets the shadows its signature asks for (and the result is right) or the
    build refuses; a build that succeeds and then crashes is the failure."""
    d = project("errors")
    proc = mt.run(d, [mt.enzyme_build, "cc", "-O2", "rule_arity.c", "-o", "prog", "-lm"])
    if proc.returncode != 0:
        err = _fails_cleanly(proc, os.path.join(d, "prog"))
        assert "dotw" in err
        return
    run = mt.run(d, ["./prog"])
    assert run.returncode == 0, run.stdout + run.stderr
    assert "dw = 12 16" in run.stdout


def test_cxx_no_body_fails_cleanly(project, mt):
    d = project("errors")
    proc = mt.run(d, [mt.enzyme_build, "c++", "-O0", "cxx_nobody.cc", "-o", "prog"])
    err = _fails_cleanly(proc, os.path.join(d, "prog"))
    assert "blackbox" in err and "run" in err  # Model::eval may be inlined away


def test_cxx_names_demangled(project, mt):
    d = project("errors")
    proc = mt.run(d, [mt.enzyme_build, "c++", "-O0", "cxx_nobody.cc", "-o", "prog"])
    err = _fails_cleanly(proc, os.path.join(d, "prog"))
    assert "sim::blackbox" in err and "run(double)" in err and "_ZN3sim" not in err  # Model::eval may be inlined
