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


def literal(value: str):
    """A word SCons neither substitutes (``$`` stays as written) nor splits, and that reaches
    the command quoted for the shell as one argument (see the tool's ``ESCAPE``)."""
    return _word_class()(str(value))


_WORD = None


def _word_class():
    """SCons.Subst.Literal whose signature text keeps a literal ``$(``/``$)`` from reading
    as SCons' "leave out of the signature" markers (SCons then reports them unbalanced)."""
    global _WORD  # noqa: PLW0603 - one class, made on first use (SCons imports lazily)
    if _WORD is None:
        import SCons.Subst

        class Word(SCons.Subst.Literal):
            def for_signature(self):
                return self.lstr.replace("$", "$$")

        _WORD = Word
    return _WORD


def literals(values) -> list:
    """Every value as a literal word (flags, -I/-L/-l/-D words built from user input)."""
    return [literal(value) for value in values]


def node_name(path: str) -> str:
    """A name as SCons must be given it where it substitutes it once (LIBS for its scanner).

    ``$`` starts a construction variable and ``${…}`` is evaluated as Python; ``$$`` is
    SCons' spelling of a plain ``$``. File and directory names go through file()/dir()
    instead: SCons may substitute a path twice (a literal ``$(`` then vanishes).
    """
    return str(path).replace("$", "$$")


def file(env, path: str):
    """The File node of exactly this path ('#' = top-relative), with no substitution."""
    return env.fs.File(str(path))


def dir(env, path: str):  # noqa: A001 - SCons' own name for a directory node
    """The Dir node of exactly this path ('#' = top-relative), with no substitution."""
    return env.fs.Dir(str(path))


def sconsign_file(path: str) -> None:
    """SConsignFile(path) without the substitution (and the substituted Mkdir) SCons adds."""
    import SCons.SConsign

    SCons.SConsign.File(os.path.normpath(str(path)))


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
