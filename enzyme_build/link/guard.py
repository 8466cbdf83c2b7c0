"""The link guard: an object that calls __enzyme_* cannot be linked by anything but our link step."""
from __future__ import annotations

import os
import subprocess
import sys

from ..errors import child_status

# A fat object whose code calls __enzyme_* only becomes a working program through our link
# step. Linked by anything else it would lack its derivatives -- loudly for an executable
# (undefined __enzyme_autodiff), silently for a shared library (undefined symbols are
# allowed there). So such an object also references a hidden symbol that only our link
# defines: any other link stops with the symbol's name, which says what to do. The data
# section holding the reference is kept under --gc-sections ("R" = SHF_GNU_RETAIN).
LINK_GUARD = "__enzyme_build_link_step_required__link_with_enzyme_cc"
LINK_GUARD_ASM = f"""\
\t.section .data.rel.ro.enzyme_build_link_guard,"awR",@progbits
\t.p2align 3
\t.hidden {LINK_GUARD}
\t.quad {LINK_GUARD}
\t.section .note.GNU-stack,"",@progbits
"""


def guard_object(driver: list[str], output: str) -> int:
    """Add the link guard to a fresh fat object that calls __enzyme_* (0, or clang's status)."""
    from .objfile import mentions_enzyme, read_file
    try:
        if not mentions_enzyme(read_file(output)):
            return 0
    except OSError:
        return 0
    import tempfile
    from ..files import temporary_beside
    with tempfile.TemporaryDirectory(prefix="enzyme-build-guard-") as tmp:
        guard = os.path.join(tmp, "guard.o")
        made = subprocess.run([driver[0], "-c", "-x", "assembler", "-", "-o", guard],
                              input=LINK_GUARD_ASM.encode(), capture_output=True)
        if made.returncode != 0:
            sys.stderr.buffer.write(made.stderr)
            return child_status(made.returncode, os.path.basename(driver[0]))
        combined = temporary_beside(output)
        named = os.path.join(".", output) if output.startswith("-") else output  # not an option
        try:
            merged = subprocess.run([driver[0], "-r", "-nostdlib", named, guard, "-o", combined],
                                    capture_output=True)
            if merged.returncode != 0:
                sys.stderr.buffer.write(merged.stderr)
                return child_status(merged.returncode, os.path.basename(driver[0]))
            os.replace(combined, output)
        finally:
            if os.path.exists(combined):
                os.unlink(combined)
    return 0
