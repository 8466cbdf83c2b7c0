"""The project's error classes: user errors (exit 1) and internal bugs (exit 2)."""
from __future__ import annotations

import os
import sys


class EnzymeBuildError(Exception):
    """A problem with the user's input, tools or environment, with a location and a fix.

    ``location`` is a source location ("file.c:12") when debug info gives one, or the IR
    function/instruction the problem was found in. ``hint`` says how to fix it.
    """

    exit_code = 1

    def __init__(self, message: str, *, location: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def render(self) -> str:
        head = f"{self.location}: " if self.location else ""
        text = f"enzyme-build: error: {head}{self.message}"
        if self.hint:
            text += f"\n  fix: {self.hint}"
        return text


class InternalError(EnzymeBuildError):
    """A bug in enzyme-build itself, not in the user's program."""

    exit_code = 2

    def render(self) -> str:
        return (f"enzyme-build: internal error: {self.message}\n"
                "  this is a bug in enzyme-build; please report it with ENZYME_BUILD_DEBUG=1 output")


def run_guarded(fn, *args, **kwargs) -> int:
    """Call fn, turning our errors (and unexpected exceptions) into one message and an exit code.

    ENZYME_BUILD_DEBUG=1 re-raises so the traceback is visible.
    """
    try:
        result = fn(*args, **kwargs)
        return int(result or 0)
    except EnzymeBuildError as err:
        if os.environ.get("ENZYME_BUILD_DEBUG"):
            raise
        print(err.render(), file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("enzyme-build: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a bug: say so, without a traceback unless asked
        if os.environ.get("ENZYME_BUILD_DEBUG"):
            raise
        print(InternalError(f"{type(err).__name__}: {err}").render(), file=sys.stderr)
        return 2
