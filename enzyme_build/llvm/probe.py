"""Reading untrusted bitcode where an LLVM abort cannot take enzyme-build down with it.

llvmlite's LLVM is built with assertions: a crafted or damaged bitcode section can end the
process in `abort()` (exit 134) in the middle of a link, leaving its temporary files
behind. So before the link parses embedded bitcode in-process, a child process (this
module run as `python -m enzyme_build.llvm.probe FILE…`, with limits on memory, CPU time
and core files) parses and verifies every module first. The parent then repeats the same
parse, which is deterministic, on bitcode known to be readable.

Protocol: for each FILE the child prints `ok` or `error <LLVM's message>` on a line of its
own; a child that dies names, by the number of lines it printed, the module that killed it.
"""
from __future__ import annotations

import os
import subprocess
import sys

# Limits of the checking child: generous for real modules (a 100k-instruction program's
# bitcode parses in well under a second and a few hundred MB), fatal for a memory bomb.
MEMORY_LIMIT = 8 << 30
CPU_SECONDS = 300
WALL_SECONDS = 600


class Verdict:
    """What the child said of one module: None (readable) or the reason it is not."""

    def __init__(self, label: str, problem: str | None):
        self.label = label
        self.problem = problem


def _limit_child() -> None:  # runs in the child between fork and exec
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def check_modules(modules: list[tuple[str, bytes]], tmpdir: str | None = None) -> list[Verdict]:
    """Parse and verify each (label, bitcode) in a child process; one verdict each."""
    import shutil
    import tempfile
    workdir = tempfile.mkdtemp(prefix="probe-", dir=tmpdir)
    verdicts: list[Verdict] = []
    start = 0
    try:
        paths = []
        for k, (_label, data) in enumerate(modules):
            path = os.path.join(workdir, f"{k}.bc")
            with open(path, "wb") as fh:
                fh.write(data)
            paths.append(path)
        while start < len(modules):
            lines, status = _run_child(paths[start:])
            for k, line in enumerate(lines):
                label = modules[start + k][0]
                verdicts.append(Verdict(label, None if line == "ok" else line[len("error "):]))
            start += len(lines)
            if start < len(modules) and status != 0:
                # the child died on this module: it is unreadable; go on with the rest
                verdicts.append(Verdict(modules[start][0], _death(status)))
                start += 1
            elif start < len(modules):
                break  # a child that stops early without dying: treat the rest as unchecked
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    while len(verdicts) < len(modules):
        verdicts.append(Verdict(modules[len(verdicts)][0], "the bitcode checker stopped early"))
    return verdicts


def _run_child(paths: list[str]) -> tuple[list[str], int]:
    command = [sys.executable, "-m", "enzyme_build.llvm.probe", *paths]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              timeout=WALL_SECONDS, preexec_fn=_limit_child,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return [], -9
    lines = [line for line in proc.stdout.splitlines() if line == "ok" or line.startswith("error ")]
    return lines, proc.returncode


def _death(status: int) -> str:
    if status < 0:
        import signal
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"LLVM crashed reading it ({name})"
    return f"LLVM stopped reading it (exit status {status})"


def _main(paths: list[str]) -> int:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    for path in paths:
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            module = llvm.parse_bitcode(data)
            module.verify()
            # the link reads the module as text and its symbols by name, both UTF-8
            str(module)
            for value in [*module.functions, *module.global_variables]:
                value.name  # noqa: B018 - decoding is the check
        except RuntimeError as err:
            message = " ".join(str(err).split())
            print(f"error {message}", flush=True)
            continue
        except UnicodeDecodeError:
            print("error its symbol names or strings are not UTF-8 text", flush=True)
            continue
        print("ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
