"""The one error of frontmatter reading, shared by the fast path (:mod:`._frontmatter`) and
the YAML parser (:mod:`._frontmatter_yaml`) without either importing the other."""

from __future__ import annotations


class FrontmatterProblem(Exception):
    """A frontmatter defect at ``line`` (1-based, in the file)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message
