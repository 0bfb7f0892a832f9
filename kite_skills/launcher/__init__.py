"""The zipapp's launcher: the code that runs before kite-skills does, when the file starts.

- ``first``: the archive's first module, in syntax every Python reads (a Python older than
  3.7 is answered in one line); it loads the others from the archive under their own names.
- ``start``: finds shiv's cache, refuses one another user could write, and either runs
  kite-skills from the unpacked copy (a warm start) or has the preamble unpack it first and
  hands over to shiv's bootstrap.
- ``preamble``: which Python and machine may run the file, unpacking what this CPython uses,
  and keeping shiv's cache bounded.
- ``build_info``: the build's facts (platform, CPythons, version), read from the one member
  the build writes; ``doctor`` and ``setup`` ask it too.
- ``compile_ahead``: on a server's first start, its modules compiled on another core while
  the start imports them.
- ``bytecode``: bytecode for the unpacked copy when PYTHONDONTWRITEBYTECODE is set.

Each is one module with one name (``kite_skills.launcher.<name>``), whether it runs from the
archive or from the unpacked copy. Standard library only, and nothing here is imported by
this ``__init__``: the start runs before anything is unpacked.
"""
