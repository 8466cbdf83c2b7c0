"""`enzyme-build doctor`: the toolchain found, versions, what is missing and how to fix it."""
from __future__ import annotations

import sys

import click


def gather() -> list[dict]:
    """One row per tool: key, required, path/version or the attempts that failed."""
    from .. import toolchain
    rows = []
    for key, (_base, required) in toolchain.TOOLS.items():
        tool, attempts = toolchain.search(key)
        rows.append({"key": key, "required": required, "tool": tool, "attempts": attempts})
    return rows


def llvmlite_status() -> tuple[str | None, str]:
    """(LLVM version llvmlite embeds, or None; a note)."""
    try:
        from .. import llvm
    except Exception as err:  # the llvm layer raises EnzymeBuildError on a broken install
        return None, str(getattr(err, "message", err))
    import llvmlite
    major, minor, patch = llvm.llvm_version()
    return f"{major}.{minor}.{patch}", f"llvmlite {llvmlite.__version__}"


@click.command("doctor")
def doctor():
    """Show the toolchain enzyme-build uses and what is missing."""
    from rich.console import Console
    from rich.table import Table

    from .. import LLVM_MAJOR, __version__, toolchain
    console = Console()
    table = Table(title=f"enzyme-build {__version__}: toolchain (LLVM {LLVM_MAJOR} required)")
    table.add_column("tool")
    table.add_column("status")
    table.add_column("version")
    table.add_column("path / tried")
    problems: list[str] = []
    for row in gather():
        tool = row["tool"]
        if tool is not None:
            table.add_row(row["key"], "[green]ok[/]", tool.version, tool.path)
            continue
        status = "[red]missing[/]" if row["required"] else "[yellow]missing (optional)[/]"
        tried = "\n".join(f"{a.candidate}: {a.outcome}" for a in row["attempts"])
        table.add_row(row["key"], status, "-", tried)
        if row["required"]:
            problems.append(row["key"])
    version, note = llvmlite_status()
    if version is None:
        table.add_row("llvmlite", "[red]broken[/]", "-", note)
        problems.append("llvmlite")
    elif int(version.split(".")[0]) != LLVM_MAJOR:
        table.add_row("llvmlite", "[red]mismatch[/]", version, note)
        problems.append("llvmlite")
    else:
        table.add_row("llvmlite", "[green]ok[/]", version, note)
    console.print(table)
    if problems:
        console.print(f"[red]missing or mismatched:[/] {', '.join(problems)}")
        if any(p != "llvmlite" for p in problems):
            console.print(f"fix: {toolchain.INSTALL_HINT}")
        if "llvmlite" in problems:
            console.print("fix: pip install 'llvmlite>=0.50,<0.51'")
        sys.exit(1)
    console.print("[green]everything enzyme-build needs is present[/]")
