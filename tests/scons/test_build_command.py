"""`enzyme-build build`: parallel builds through SCons, no-op and partial rebuilds, cache, errors."""
from __future__ import annotations

import os

from scons_helpers import (PROJECT_FILES, PROJECT_OUTPUT, PROJECT_SOURCES, clang, enzyme_build, run,
                           bitcode_section_count, write_files)

BUILD = ["-O2", "-I.", "-lm", "-j2"]


def program_value(path) -> float:
    return float(run([str(path)], cwd=os.path.dirname(path)).stdout)


def object_mtimes(build_dir) -> dict[str, int]:
    found = {}
    for root, _, files in os.walk(build_dir):
        for name in files:
            if name.endswith((".o", ".os")):
                found[name] = os.stat(os.path.join(root, name)).st_mtime_ns
    return found


def compiled(output: str) -> list[str]:
    """The sources a build reports compiling ("compile 2/3 poly.c")."""
    return [line.split()[-1] for line in output.splitlines() if line.startswith("compile ")]


def test_build_noop_and_single_file_rebuild(project):
    first = run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project)
    assert sorted(compiled(first.stderr)) == sorted(PROJECT_SOURCES), first.stderr
    assert abs(program_value(project / "prog") - PROJECT_OUTPUT) < 1e-6

    build_dir = project / ".enzyme-build" / "prog"
    before = object_mtimes(build_dir)
    assert len(before) == 3
    prog_mtime = os.stat(project / "prog").st_mtime_ns

    again = run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project)
    assert compiled(again.stderr) == []
    assert "prog is up to date" in again.stderr
    assert object_mtimes(build_dir) == before
    assert os.stat(project / "prog").st_mtime_ns == prog_mtime

    # Change what poly computes: only poly.c is recompiled, and the program is relinked.
    write_files(project, {"poly.c": PROJECT_FILES["poly.c"].replace("+ 1.0", "+ 2.0")})
    third = run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project)
    assert compiled(third.stderr) == ["poly.c"], third.stderr
    after = object_mtimes(build_dir)
    assert after["main.o"] == before["main.o"] and after["scale.o"] == before["scale.o"]
    assert after["poly.o"] != before["poly.o"]
    assert abs(program_value(project / "prog") - (PROJECT_OUTPUT + 1.0)) < 1e-6


def test_cache_dir_is_shared_between_build_trees(tmp_path):
    cache = tmp_path / "cache"
    trees = [tmp_path / "a", tmp_path / "b"]
    for tree in trees:
        write_files(tree, PROJECT_FILES)
    first = run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD, "--cache-dir", str(cache)),
                cwd=trees[0])
    assert len(compiled(first.stderr)) == 3
    second = run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD, "--cache-dir", str(cache)),
                 cwd=trees[1])
    # The second tree compiles nothing: every object comes out of the cache.
    assert compiled(second.stderr) == [], second.stderr
    assert second.stderr.count("from cache") >= 3, second.stderr
    assert abs(program_value(trees[1] / "prog") - PROJECT_OUTPUT) < 1e-6


def test_parallel_build_of_many_sources(tmp_path):
    count = 8
    files = {f"part{i}.c": f"double part{i}(void) {{ return {i}.0; }}\n" for i in range(count)}
    calls = " + ".join(f"part{i}()" for i in range(count))
    decls = "".join(f"double part{i}(void);\n" for i in range(count))
    files["main.c"] = f'#include <stdio.h>\n{decls}int main(void) {{ printf("%g\\n", {calls}); return 0; }}\n'
    write_files(tmp_path, files)
    result = run(enzyme_build(*sorted(files), "-o", "sum", "-O1", "-j2"), cwd=tmp_path)
    assert len(compiled(result.stderr)) == count + 1
    assert program_value(tmp_path / "sum") == sum(range(count))


def test_compile_error_reports_the_compiler_message_and_leaves_no_output(project):
    run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project)
    assert (project / "prog").exists()
    write_files(project, {"scale.c": "double scale(double x) { return x * ; }\n"})
    failed = run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project, check=False)
    assert failed.returncode == 1
    assert "scale.c:1" in failed.stderr and "expected expression" in failed.stderr
    assert "compiling scale.c failed" in failed.stderr
    assert "Traceback" not in failed.stderr
    # The stale program is gone, so nobody runs it believing it is current.
    assert not (project / "prog").exists()


def test_link_error_leaves_no_output(project):
    write_files(project, {"scale.c": "double scale_missing(double x) { return x; }\n"})
    failed = run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project, check=False)
    assert failed.returncode == 1
    assert "scale" in failed.stderr and "building prog failed" in failed.stderr, failed.stderr
    assert not (project / "prog").exists()
    assert not [name for name in os.listdir(project) if name.startswith(".prog.tmp")]


def test_bad_usage_is_one_clear_error(project):
    missing = run(enzyme_build("nope.c", "-o", "prog"), cwd=project, check=False)
    assert missing.returncode == 1
    assert "source file not found: nope.c" in missing.stderr
    assert "Traceback" not in missing.stderr
    no_output = run(enzyme_build("main.c"), cwd=project, check=False)
    assert no_output.returncode == 1 and "no output given" in no_output.stderr


def test_shared_library_is_loadable_by_a_plain_program(project):
    write_files(project, {"consumer.c": """\
        #include <stdio.h>
        double poly(double x);
        int main(void) { printf("%.6f\\n", poly(3.0)); return 0; }
    """})
    run(enzyme_build("poly.c", "--shared", "-o", "libpoly.so", "-O2", "-I."), cwd=project)
    run([clang(), "consumer.c", "-L.", "-lpoly", "-o", "consumer"], cwd=project)
    env = dict(os.environ, LD_LIBRARY_PATH=str(project))
    assert float(run([str(project / "consumer")], cwd=project, env=env).stdout) == 10.0


def test_static_library_holds_fat_objects(project):
    run(enzyme_build("poly.c", "scale.c", "--static", "-o", "libutil.a", "-O2", "-I."), cwd=project)
    assert bitcode_section_count(str(project / "libutil.a")) == 2
    # ...and is an ordinary archive a plain link can use.
    run([clang(), "main.c", "-I.", "libutil.a", "-lm", "-o", "plain"], cwd=project)
    assert abs(program_value(project / "plain") - PROJECT_OUTPUT) < 1e-6


def test_project_file_builds_an_sconstruct(project):
    write_files(project, {"SConstruct": """\
        import enzyme_build.scons as eb
        env = eb.Environment(CFLAGS=['-O2'], CPPPATH=['.'])
        env.EnzymeProgram('prog', ['main.c', 'poly.c', 'scale.c'], LIBS=['m'])
    """})
    elsewhere = project / "sub"
    elsewhere.mkdir()
    first = run(enzyme_build("--project", "../SConstruct", "-j2"), cwd=elsewhere)
    assert len(compiled(first.stderr)) == 3
    assert abs(program_value(project / "prog") - PROJECT_OUTPUT) < 1e-6
    second = run(enzyme_build("--project", "../SConstruct"), cwd=elsewhere)
    assert "up to date" in second.stderr and compiled(second.stderr) == []


AUTODIFF_CUBE = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double cube(double x) { return x * x * x; }
int main(void) {
  int failures = 0;
  for (double x = -2.0; x <= 2.0; x += 0.5) {
    double got = __enzyme_autodiff((void *)cube, x);
    if (got != 3.0 * x * x) { printf("d cube(%g) = %g, want %g\\n", x, got, 3.0 * x * x); failures++; }
  }
  printf(failures ? "FAIL\\n" : "ok\\n");
  return failures != 0;
}
"""


def test_autodiff_program_through_build(tmp_path):
    write_files(tmp_path, {"cube.c": AUTODIFF_CUBE})
    run(enzyme_build("cube.c", "-o", "cube", "-O2"), cwd=tmp_path)
    assert run([str(tmp_path / "cube")], cwd=tmp_path).stdout.strip() == "ok"


def test_output_changing_wrapper_settings_relink(project):
    run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project)
    # The ablation switch changes only the link step's output: relink, recompile nothing.
    env = dict(os.environ, ENZYME_BUILD_AD_BEFORE_OPT="1")
    ablation = run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project, env=env)
    assert compiled(ablation.stderr) == [] and "link prog" in ablation.stderr, ablation.stderr
    again = run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project, env=env)
    assert "prog is up to date" in again.stderr


def test_mixed_c_and_cxx_with_flags_per_language(tmp_path):
    write_files(tmp_path, {
        "src/main.cc": """\
            #include <cstdio>
            #include <vector>
            extern "C" double half(double);
            int main() { std::vector<double> v{SEED}; std::printf("%g\\n", half(v[0])); }
        """,
        "src/half.c": "double half(double x) { return x / 2; }\n",
    })
    # -std=c++17 applies to the C++ source only; the C++ driver links (libstdc++).
    run(enzyme_build("src/main.cc", "src/half.c", "-o", "bin/app", "-O1", "-std=c++17", "-Wall",
                     "-DSEED=9"), cwd=tmp_path)
    assert program_value(tmp_path / "bin" / "app") == 4.5


def test_header_change_recompiles_its_includers(project):
    run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project)
    write_files(project, {"util.h": PROJECT_FILES["util.h"] + "#define UTIL_VERSION 2\n"})
    again = run(enzyme_build(*PROJECT_SOURCES, "-o", "prog", *BUILD), cwd=project)
    assert sorted(compiled(again.stderr)) == sorted(PROJECT_SOURCES), again.stderr


def test_fat_static_library_as_an_input_is_differentiated_through(tmp_path):
    write_files(tmp_path, {
        "cube.c": "double cube(double x) { return x * x * x; }\n",
        "main.c": """\
            #include <stdio.h>
            double cube(double);
            double __enzyme_autodiff(void *, ...);
            int main(void) { printf("%g %g\\n", cube(2.0), __enzyme_autodiff((void *)cube, 2.0)); return 0; }
        """,
    })
    run(enzyme_build("cube.c", "--static", "-o", "libcube.a", "-O2"), cwd=tmp_path)
    run(enzyme_build("main.c", "libcube.a", "-o", "prog", "-O2"), cwd=tmp_path)
    assert run([str(tmp_path / "prog")], cwd=tmp_path).stdout.split() == ["8", "12"]
    # A rebuilt archive relinks the program without recompiling main.c.
    write_files(tmp_path, {"cube.c": "double cube(double x) { return x * x * x + 1.0; }\n"})
    run(enzyme_build("cube.c", "--static", "-o", "libcube.a", "-O2"), cwd=tmp_path)
    relinked = run(enzyme_build("main.c", "libcube.a", "-o", "prog", "-O2"), cwd=tmp_path)
    assert compiled(relinked.stderr) == [] and "link prog" in relinked.stderr
    assert run([str(tmp_path / "prog")], cwd=tmp_path).stdout.split() == ["9", "12"]
