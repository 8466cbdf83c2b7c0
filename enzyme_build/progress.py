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
