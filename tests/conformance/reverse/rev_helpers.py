"""Build-and-run helpers for the reverse-mode conformance programs (hcheck.h style)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")
# the self-check header every conformance program includes: the acceptance programs' own
HCHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "acceptance", "hcheck.h")
ENZYME_BUILD = os.path.join(os.path.dirname(sys.executable), "enzyme-build")
OK_LINE = re.compile(r"^ok (\d+)$", re.MULTILINE)


def build_and_run(tmp_path, source, opt="-O2", extra=(), env_extra=None, programs=PROGRAMS):
    """Compile programs/<source> with `enzyme-build cc|c++ <opt> -I.`, run it, and assert
    that it exits 0 printing `ok N` (N > 0). Returns N."""
    work = tmp_path / (os.path.splitext(source)[0] + opt.replace("-", "_") + "_".join(extra).replace("-", "_"))
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(HCHECK, work)
    shutil.copy(os.path.join(programs, source), work)
    driver = "c++" if source.endswith((".cc", ".cpp")) else "cc"
    env = dict(os.environ)
    env.update(env_extra or {})
    exe = str(work / "prog")
    build = subprocess.run(
        [ENZYME_BUILD, driver, opt, "-I.", *extra, source, "-o", exe, "-lm"],
        cwd=work, env=env, capture_output=True, text=True, timeout=240,
    )
    assert build.returncode == 0, f"build failed:\n{build.stdout}\n{build.stderr}"
    run = subprocess.run([exe], cwd=work, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"run failed ({run.returncode}):\n{run.stdout}\n{run.stderr}"
    match = OK_LINE.search(run.stdout)
    assert match and int(match.group(1)) > 0, run.stdout + run.stderr
    return int(match.group(1))
