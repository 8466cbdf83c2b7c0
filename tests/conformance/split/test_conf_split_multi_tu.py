"""Split-mode conformance across translation units: the augmented forward pass and the
reverse pass requested from different files, compiled separately and linked, and in one
command."""
import os
import shutil
import subprocess

import pytest

from split_helpers import ENZYME_BUILD, HCHECK, OK_LINE, PROGRAMS

SOURCES = ["model.c", "fwd.c", "bwd.c", "main.c"]


def _run(cmd, cwd):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("separate", [True, False], ids=["separate", "one-shot"])
def test_tape_crosses_translation_units(tmp_path, opt, separate):
    for name in SOURCES:
        shutil.copy(os.path.join(PROGRAMS, "tu_split", name), tmp_path)
    shutil.copy(HCHECK, tmp_path)
    exe = str(tmp_path / "prog")
    if separate:
        for name in SOURCES:
            _run([ENZYME_BUILD, "cc", opt, "-I.", "-c", name], tmp_path)
        _run([ENZYME_BUILD, "cc", opt, *[n[:-2] + ".o" for n in SOURCES], "-o", exe, "-lm"], tmp_path)
    else:
        _run([ENZYME_BUILD, "cc", opt, "-I.", *SOURCES, "-o", exe, "-lm"], tmp_path)
    run = _run([exe], tmp_path)
    match = OK_LINE.search(run.stdout)
    assert match and int(match.group(1)) == 5, run.stdout
