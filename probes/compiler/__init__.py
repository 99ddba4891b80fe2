"""The deterministic probe compiler (Kit §2–§4): pure Python, no Django import.

``compile_parent(ParentSource) -> ParentResult`` is the entry point; see ``pipeline``.
"""

from .errors import CompileError
from .pipeline import compile_parent
from .prompts import DEFAULT_PROMPT_SET, PromptSet, validate_prompt_files
from .types import BlockedGroup, CompiledProbe, ParentResult, ParentSource, SourceImage

__all__ = [
    "BlockedGroup",
    "CompileError",
    "CompiledProbe",
    "DEFAULT_PROMPT_SET",
    "ParentResult",
    "ParentSource",
    "PromptSet",
    "SourceImage",
    "compile_parent",
    "validate_prompt_files",
]
