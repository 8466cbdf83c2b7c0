"""What a long link is doing: stage names on a terminal, a timing line with ENZYME_BUILD_VERBOSE.

A whole-program link with AD can take seconds (bitcode, optimization, derivative
synthesis, code generation). On a terminal, a link still running after DELAY seconds
shows its current stage on one transient line (rich); build logs (no terminal) stay
exactly as clang would leave them. ENZYME_BUILD_VERBOSE=1 adds one summary line:

    enzyme-build: linked prog in 2.41 s: trial link 0.05 s, bitcode 0.21 s, ...
    enzyme-build: slowest steps: gradient of energy 0.80 s, pre-AD optimization 0.31 s, ...
"""
from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager

SLOWEST_SHOWN = 5  # the derivatives (and other reported steps) a verbose link names
DELAY = 1.0  # seconds; ENZYME_BUILD_PROGRESS_DELAY overrides (0: show every link at once)


def delay() -> float:
    try:
        return max(0.0, float(os.environ.get("ENZYME_BUILD_PROGRESS_DELAY", DELAY)))
    except ValueError:
        return DELAY


class LinkProgress:
    """Stages of one link: shown live on a terminal after DELAY, summed up when verbose."""

    def __init__(self, output: str, *, verbose: bool, live: bool | None = None):
        self.output = output
        self.verbose = verbose
        self.live = sys.stderr.isatty() if live is None else live
        self.started = time.monotonic()
        self.times: list[tuple[str, float]] = []
        self.details: list[tuple[str, float]] = []  # what the stages reported, timed
        self.current = "starting"
        self._status = None
        self._lock = threading.Lock()
        self._timer = None
        self._finished = False
        if self.live:
            self._timer = threading.Timer(delay(), self._show)
            self._timer.daemon = True
            self._timer.start()

    def _show(self) -> None:
        with self._lock:
            if self._status is not None or self._timer is None:
                return
            from rich.console import Console
            console = Console(stderr=True, highlight=False)
            self._status = console.status(self._text(), spinner="dots")
            self._status.start()

    def _text(self) -> str:
        elapsed = time.monotonic() - self.started
        return f"enzyme-build: linking {self.output}: {self.current} ({elapsed:.0f} s)"

    @contextmanager
    def stage(self, name: str):
        """Time one stage; on a terminal, show its name (and what it reports) while it runs."""
        from .. import progress
        start = time.monotonic()
        self._show_step(name)
        last = [None, start]  # the detail in progress and when it began

        def detail(step: str) -> None:
            now = time.monotonic()
            if last[0] is not None:
                self.details.append((last[0], now - last[1]))
            last[0], last[1] = step, now
            self._show_step(f"{name}: {step}")
        try:
            with progress.listening(detail):
                yield
        finally:
            end = time.monotonic()
            if last[0] is not None:
                self.details.append((last[0], end - last[1]))
            self.times.append((name, end - start))

    def _show_step(self, text: str) -> None:
        with self._lock:
            self.current = text
            if self._status is not None:
                self._status.update(self._text())

    def finish(self) -> None:
        """Remove the live line; print the summary when verbose (once)."""
        with self._lock:
            if self._finished:
                return
            self._finished = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._status is not None:
                self._status.stop()
                self._status = None
        if self.verbose and self.times:
            total = time.monotonic() - self.started
            parts = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in self.times)
            print(f"enzyme-build: linked {self.output} in {total:.2f} s: {parts}",
                  file=sys.stderr, flush=True)
            slowest = sorted(self.details, key=lambda item: -item[1])[:SLOWEST_SHOWN]
            if slowest:
                steps = ", ".join(f"{step} {seconds:.2f} s" for step, seconds in slowest)
                print(f"enzyme-build: slowest steps: {steps}", file=sys.stderr, flush=True)


def verbose_enabled() -> bool:
    return os.environ.get("ENZYME_BUILD_VERBOSE", "") not in ("", "0")
