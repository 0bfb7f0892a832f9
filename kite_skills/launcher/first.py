"""The zipapp's first module: the archive's ``__main__.py`` (tools/zipapps.py, ``MAIN``) runs
it from the archive, before anything is unpacked.

Written in syntax every Python reads (no annotations, no f-strings), so that a Python older
than 3.7, which cannot read the start's, is answered in one line instead of a SyntaxError.
It also loads the launcher's modules from the archive under their own names
(``kite_skills.launcher.start`` …) with :func:`load`: each launcher file has that one name,
whether it runs from the archive (before unpacking) or from the unpacked copy.
"""

from __future__ import absolute_import  # noqa: UP010 - Python 2 would look in this package

import os
import sys

MYPY = False
if MYPY:  # the types named in the type comments (this syntax has no annotations)
    import types  # noqa: F401
    import zipimport  # noqa: F401

PACKAGE = "kite_skills.launcher"
MEMBER = "site-packages/kite_skills/launcher/build_info.json"  # build_info.MEMBER
# Where to get CPython 3.13 (preamble.where_to_get("darwin"/"win32", "3.13"); a test checks
# they agree): the preamble's syntax is too new to import here.
WHERE = (
    "python.org/downloads, Homebrew ('brew install python@3.13') or uv ('uv python install 3.13')"
)
WHERE_WINDOWS = "python.org/downloads or uv ('uv python install 3.13')"


def load(launcher, name):  # type: (zipimport.zipimporter, str) -> types.ModuleType
    """The module ``kite_skills.launcher.<name>``, run from the archive: ``launcher`` is a
    zipimporter of the archive's ``site-packages/kite_skills/launcher/``. Its parent packages
    are not imported (they are the unpacked ones, later): nothing it runs at import may need
    them.

    The archive holds no bytecode, so the module's source is compiled here, once. (An
    ``import`` from the archive would compile it twice: the import system asks the zipimporter
    for the module's file name first, and zipimporter.get_filename compiles the module to
    learn it: CPython 3.11-3.13 at least.)"""
    fullname = PACKAGE + "." + name
    module = type(sys)(fullname)
    module.__file__ = launcher.archive + os.sep + launcher.prefix + name + ".py"
    module.__loader__ = launcher
    module.__package__ = PACKAGE
    sys.modules[fullname] = module
    try:
        exec(launcher.get_code(name), module.__dict__)
    except BaseException:
        del sys.modules[fullname]
        raise
    return module


def too_old(launcher):  # type: (zipimport.zipimporter) -> str | None
    """The one-line message for a Python older than 3.7, else None."""
    if sys.version_info >= (3, 7):  # noqa: UP036 - older Pythons are what this answers
        return None
    import json

    pythons = json.loads(launcher.get_data(MEMBER))["pythons"]
    return (
        "kite-skills: this file runs on CPython %s-%s, but it was started with "  # noqa: UP031
        "Python %d.%d (%s) - start it with one of those, e.g. '%s %s'; none installed? "
        "get CPython 3.13 from %s\n"
        % (
            pythons[0],
            pythons[-1],
            sys.version_info[0],
            sys.version_info[1],
            sys.executable,
            "py -3.13" if sys.platform == "win32" else "python3.13",
            sys.argv[0],
            WHERE_WINDOWS if sys.platform == "win32" else WHERE,
        )
    )


def main(launcher):  # type: (zipimport.zipimporter) -> None
    """Answer a Python too old to read the start, else run the start."""
    message = too_old(launcher)
    if message:
        sys.stderr.write(message)
        sys.exit(1)
    load(launcher, "start").main(launcher, load)
