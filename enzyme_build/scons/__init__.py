"""SCons integration: an Environment preloaded with the enzyme-build tool, and where the tool lives.

Use from an SConstruct run by the ``scons`` installed next to enzyme-build::

    import enzyme_build.scons as eb
    env = eb.Environment(CFLAGS=['-O2'])
    env.EnzymeProgram('prog', ['main.c'])
"""
from __future__ import annotations

import os

#: Directory holding ``enzyme_build.py``; pass as ``toolpath=[TOOL_DIR]`` to ``env.Tool``.
TOOL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site_tools")

TOOL_NAME = "enzyme_build"

# Set by `enzyme-build build` for the SCons it runs: print one parseable progress line per
# compile/link/archive instead of the command, and share a cache directory.
PROGRESS_VAR = "ENZYME_BUILD_PROGRESS"
CACHE_DIR_VAR = "ENZYME_BUILD_CACHE_DIR"
PROGRESS_MARK = "@enzyme-build"


def Environment(**kw):  # noqa: N802 - mirrors SCons' own constructor name
    """An SCons Environment whose compilers and linkers are the enzyme-build wrapper.

    Keyword arguments are passed to ``SCons.Environment.Environment``; ``tools`` and
    ``toolpath`` are extended (not replaced) with the enzyme-build tool.
    """
    # Imported lazily: SCons is only needed when an SConstruct is being read.
    import SCons.Environment

    tools = list(kw.pop("tools", None) or ["default"])
    if TOOL_NAME not in tools:
        tools.append(TOOL_NAME)
    toolpath = list(kw.pop("toolpath", None) or [])
    if TOOL_DIR not in toolpath:
        toolpath.append(TOOL_DIR)
    return SCons.Environment.Environment(tools=tools, toolpath=toolpath, **kw)
