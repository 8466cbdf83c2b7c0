"""A `-c` compile must not pay for llvmlite, click or rich."""
from __future__ import annotations

import subprocess
import sys

from frontend_helpers import ENZYME_BUILD


def test_compile_imports_no_heavy_modules(ws):
    ws.write("a.c", "int a(void) { return 1; }\n")
    proc = subprocess.run([sys.executable, "-X", "importtime", ENZYME_BUILD, "cc", "-c", "a.c"],
                          cwd=ws.path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert "enzyme_build.frontend.driver" in imported  # the check would notice the compile
    assert not {"llvmlite", "click", "rich", "enzyme_build.llvm"} & imported
