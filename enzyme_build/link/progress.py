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
        self._paused = False
        self._threads: list[threading.Thread] = []
        if self.live:
            self._start_timer(delay())
            from .. import progress
            progress.register_threads(self._pause, self._resume)

    def _start_timer(self, seconds: float) -> None:
        self._timer = threading.Timer(seconds, self._show)
        self._timer.daemon = True
        self._timer.start()

    def _pause(self) -> None:
        """Before a fork: no thread of this display runs (progress.forking)."""
        with self._lock:
            timer, self._timer = self._timer, None
            status, self._status = self._status, None
            self._paused = status is not None or timer is not None
            self._was_shown = status is not None
        if timer is not None:
            timer.cancel()
            timer.join()
        if status is not None:
            status.stop()   # asks rich's refresh thread to end, without waiting for it
            for thread in self._threads:
                thread.join()

    def _resume(self) -> None:
        with self._lock:
            if not self._paused or self._finished:
                return
            self._paused = False
        if self._was_shown:
            self._start_timer(0.0)
        else:
            self._start_timer(max(0.0, delay() - (time.monotonic() - self.started)))

    def _show(self) -> None:
        with self._lock:
            if self._status is not None or self._timer is None or self._finished:
                return
            from rich.console import Console
            console = Console(stderr=True, highlight=False)
            self._status = console.status(self._text(), spinner="dots")
            before = set(threading.enumerate())
            self._status.start()
            # the display's own threads (rich's refresh thread), joined when it pauses
            self._threads = [t for t in threading.enumerate() if t not in before]

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
            if self.live:
                from .. import progress
                progress.unregister_threads(self._pause, self._resume)
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
