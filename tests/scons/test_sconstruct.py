"""The SCons tool used from an SConstruct run by the venv's scons: programs, libraries, rebuilds."""
from __future__ import annotations

import os
import re

from scons_helpers import (PROJECT_OUTPUT, clang, run, scons_command, bitcode_section_count,
                      write_files)

SCONSTRUCT = """\
import enzyme_build.scons as eb
env = eb.Environment(CFLAGS=['-O2'], CPPPATH=['.'])
env.EnzymeProgram('prog', ['main.c', 'poly.c', 'scale.c'], LIBS=['m'])
env.EnzymeSharedLibrary('poly', ['poly.c'])
env.EnzymeLibrary('physics', ['poly.c', 'scale.c'])
"""

# A plain SCons environment that loads the tool by name, the way existing projects would.
SCONSTRUCT_TOOL = """\
import enzyme_build.scons as eb
env = Environment()
env.Tool('enzyme_build', toolpath=[eb.TOOL_DIR])
print('CC=' + env.subst('$CC'))
print('CXX=' + env.subst('$CXX'))
print('HAS_METHODS=%s' % all(hasattr(env, m) for m in ('EnzymeProgram', 'EnzymeSharedLibrary', 'EnzymeLibrary')))
print('FORWARDED=' + env['ENV'].get('ENZYME_BUILD_TEST_MARKER', '<missing>'))
"""

CONSUMER = """\
#include <stdio.h>
double poly(double x);
int main(void) { printf("%.6f\\n", poly(3.0)); return 0; }
"""


def compile_commands(output: str) -> list[str]:
    """Lines in SCons' output that invoke the compiler on a source (`-c`)."""
    return [line for line in output.splitlines() if " -c " in line and line.rstrip().endswith(".c")]


def test_sconstruct_builds_program_and_libraries(project):
    write_files(project, {"SConstruct": SCONSTRUCT, "consumer.c": CONSUMER})
    first = run(scons_command() + ["-j2"], cwd=project)
    commands = compile_commands(first.stdout)
    # poly.c is compiled twice (static and -fPIC), main.c and scale.c once each.
    assert len(commands) == 4, first.stdout
    assert all("enzyme" in line.split()[0] for line in commands), first.stdout

    printed = run([str(project / "prog")], cwd=project).stdout
    assert abs(float(printed) - PROJECT_OUTPUT) < 1e-6

    # The shared library is usable by a plain C program built with the system compiler.
    run([clang(), "consumer.c", "-L.", "-lpoly", "-o", "consumer"], cwd=project)
    env = dict(os.environ, LD_LIBRARY_PATH=str(project))
    assert abs(float(run([str(project / "consumer")], cwd=project, env=env).stdout) - 10.0) < 1e-9

    # The static library is fat: every member carries its bitcode.
    assert bitcode_section_count(str(project / "libphysics.a")) == 2

    # Nothing changed: nothing is compiled or linked again.
    second = run(scons_command() + ["-j2", "--debug=explain"], cwd=project)
    assert compile_commands(second.stdout) == []
    assert "rebuilding" not in second.stdout
    assert "is up to date" in second.stdout


def test_sconstruct_rebuilds_only_the_changed_source(project):
    write_files(project, {"SConstruct": SCONSTRUCT})
    run(scons_command() + ["-j2", "prog"], cwd=project)
    with open(project / "scale.c", "a", encoding="utf-8") as handle:
        handle.write("double scale_twice(double x) { return 2.0 * scale(x); }\n")
    again = run(scons_command() + ["-j2", "prog"], cwd=project)
    commands = compile_commands(again.stdout)
    assert len(commands) == 1 and commands[0].endswith("scale.c"), again.stdout
    assert abs(float(run([str(project / "prog")], cwd=project).stdout) - PROJECT_OUTPUT) < 1e-6


def test_tool_loads_into_an_existing_environment(project):
    write_files(project, {"SConstruct": SCONSTRUCT_TOOL})
    env = dict(os.environ, ENZYME_BUILD_TEST_MARKER="forwarded")
    out = run(scons_command() + ["-Q", "-n", "."], cwd=project, env=env).stdout
    values = dict(re.findall(r"^(\w+)=(.*)$", out, re.M))
    # The wrapper is named by absolute path so SCons' empty PATH cannot hide it.
    assert os.path.isabs(values["CC"].split()[0]) and "enzyme" in values["CC"], out
    assert os.path.isabs(values["CXX"].split()[0]) and "enzyme" in values["CXX"], out
    assert values["HAS_METHODS"] == "True"
    assert values["FORWARDED"] == "forwarded"


def test_template_sconstruct_builds_as_documented(tmp_path):
    template = os.path.join(os.path.dirname(__file__), "..", "..", "templates", "SConstruct")
    with open(template, encoding="utf-8") as handle:
        write_files(tmp_path, {"SConstruct": handle.read()})
    write_files(tmp_path, {
        "include/physics.h": "double force(double x);\ndouble mass(void);\n",
        "src/physics/force.c": '#include "physics.h"\ndouble force(double x) { return -4.0 * x; }\n',
        "src/physics/mass.c": '#include "physics.h"\ndouble mass(void) { return 2.5; }\n',
        "src/main.c": '#include <stdio.h>\n#include "physics.h"\n'
                      'int main(void) { printf("%g\\n", force(mass())); return 0; }\n',
        "src/grad.c": "#include <math.h>\ndouble energy(double x) { return cos(x); }\n",
    })
    run(scons_command() + ["-Q", "-j2"], cwd=tmp_path)
    assert float(run([str(tmp_path / "simulate")], cwd=tmp_path).stdout) == -10.0
    assert (tmp_path / "libgrad.so").is_file()
    assert bitcode_section_count(str(tmp_path / "libphysics.a")) == 2
