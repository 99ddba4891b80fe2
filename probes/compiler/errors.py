"""The compiler's single error type. Pure: no Django."""

from __future__ import annotations


class CompileError(ValueError):
    """A protocol rule refused an input. ``code`` is the kit's machine-readable reason."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


def require(condition: bool, code: str, detail: str = "") -> None:
    if not condition:
        raise CompileError(code, detail)
