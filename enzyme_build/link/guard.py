"""The link guard: an object that calls __enzyme_* cannot be linked by anything but our link step."""
from __future__ import annotations

import os
import subprocess
import sys

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


def guard_object(driver: list[str], output: str, target_flags: list[str] = ()) -> int:
    """Add the link guard to a fresh fat object that calls __enzyme_* (always 0).

    target_flags: the compile's options that choose its target (CommandLine.target_flags),
    so the guard is assembled for the same target.

    The guard is a safety net: if it cannot be added (an unusual target, a linker without
    -r), the object stays as clang made it and a warning says so.
    """
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
        target = list(target_flags)
        made = subprocess.run([driver[0], *target, "-c", "-x", "assembler", "-", "-o", guard],
                              input=LINK_GUARD_ASM.encode(), capture_output=True)
        if made.returncode != 0:
            return _not_guarded(output, made)
        combined = temporary_beside(output)
        named = os.path.join(".", output) if output.startswith("-") else output  # not an option
        try:
            # another target: lld, which links every target (GNU ld only its own)
            linker = ["-fuse-ld=lld"] if target else []
            merged = subprocess.run([driver[0], *target, *linker, "-r", "-nostdlib", named, guard,
                                     "-o", combined], capture_output=True)
            if merged.returncode != 0:
                return _not_guarded(output, merged)
            os.replace(combined, output)
        finally:
            if os.path.exists(combined):
                os.unlink(combined)
    return 0


def _not_guarded(output: str, proc: subprocess.CompletedProcess) -> int:
    first = proc.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
    detail = f": {first[0]}" if first else ""
    print(f"enzyme-build: warning: {output} calls __enzyme_* but the link guard could not be "
          f"added{detail}; link it with enzyme-build (a plain link would lack the derivatives)",
          file=sys.stderr, flush=True)
    return 0
