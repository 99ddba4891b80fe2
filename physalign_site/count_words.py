"""Counts in words with the right plural ("1 reviewed parent", "2 reviewed parents", "1,020 parents"). Pure.

One helper for every page that prints a count before a noun (results, releases, the home pipeline board):
templates use Django's ``pluralize``; Python code that builds a label uses :func:`counted` or :func:`noun`.
"""

from __future__ import annotations


def noun(n: int, singular: str, plural: str = "") -> str:
    """The noun for ``n`` things: ``singular`` for exactly one, else ``plural`` (default ``singular + "s"``)."""
    return singular if n == 1 else (plural or singular + "s")


def counted(n: int, singular: str, plural: str = "") -> str:
    """``n`` with thousands separators, then its noun: ``counted(1, "parent") == "1 parent"``,
    ``counted(1020, "parent") == "1,020 parents"``, ``counted(2, "batch", "batches") == "2 batches"``."""
    return f"{n:,} {noun(n, singular, plural)}"
