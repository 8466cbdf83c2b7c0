"""Where long-running steps say what they are doing, for whoever shows it.

The AD engine and the pipeline call `report("derivative of f")` as they go; the link's
progress display (link/progress.py) listens while a link runs. Nothing is shown, and almost
nothing costs, when no one listens.
"""
from __future__ import annotations

from contextlib import contextmanager

_listeners: list = []


def report(step: str) -> None:
    """Say what is being done now (a short phrase: "derivative of energy")."""
    for listener in _listeners:
        listener(step)


@contextmanager
def listening(listener):
    """Call `listener(step)` for every report made inside the block."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


# (pause, resume) of displays that run threads of their own (link/progress.py on a terminal)
_threaded: list = []


def register_threads(pause, resume) -> None:
    """A display that runs threads: `forking()` calls pause() before a fork, resume() after."""
    _threaded.append((pause, resume))


def unregister_threads(pause, resume) -> None:
    if (pause, resume) in _threaded:
        _threaded.remove((pause, resume))


@contextmanager
def forking():
    """Around os.fork(): the displays' threads stop first (a child must not inherit a lock
    another thread held, such as stderr's) and start again afterwards, in the parent only:
    the child leaves the block by exiting."""
    paused = list(_threaded)
    for pause, _ in paused:
        pause()
    try:
        yield
    finally:
        for _, resume in paused:
            resume()


def replace_listeners(listeners: list) -> None:
    """In a child process: report to these instead of the parent's listeners."""
    _listeners[:] = listeners
