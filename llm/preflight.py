"""What a model config needs on this machine before a run may use it, checked at launch.

A run whose model cannot be called would only find out row by row: every request would end ``infra_missing``
(the OCR baseline without the tesseract binary, a provider model without its key), and the results would show
bounds where values belong. ``preflight`` names what is missing, so the launch is refused with the reason and
nothing is created. Per provider:

- ``baseline-ocr-nearest``: the tesseract binary (``pytesseract``'s ``tesseract_cmd``, on PATH or as a path);
- ``openai``, ``anthropic``, ``google``: a key variable named in the config and set in the environment;
- ``openai_compatible``: a base URL (without one the SDK would call OpenAI itself), and the key variable set
  when the config names one (a local server may need no key);
- ``simulated`` and ``scripted`` (offline): nothing.

Pure and Django-free; ``which`` and ``environ`` are parameters so the checks are testable and so the caller
decides which process environment counts (the launching process shares the worker's ``.env``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .types import ProviderConfig

KEYED_PROVIDERS = ("openai", "anthropic", "google")
TESSERACT_INSTALL = "apt-get install tesseract-ocr"


@dataclass(frozen=True)
class MissingTool:
    """One thing a model needs that this machine lacks."""

    model: str
    tool: str  # what is missing: "tesseract", the key variable's name, "base_url"
    code: str  # tool_missing | api_key_missing | base_url_missing
    message: str


def tesseract_command() -> str:
    """The command ``pytesseract`` runs (its module setting; ``tesseract`` by default)."""
    import pytesseract.pytesseract as tess

    return str(tess.tesseract_cmd)


def preflight(
    config: ProviderConfig,
    *,
    which: Callable[[str], str | None] | None = None,
    environ: Mapping[str, str] | None = None,
    tesseract: str | None = None,
) -> list[MissingTool]:
    """What ``config`` needs and this machine lacks (empty: the model can be called)."""
    env = os.environ if environ is None else environ
    if config.provider == "baseline-ocr-nearest":
        command = tesseract or tesseract_command()
        if (which or shutil.which)(command) is None:
            return [
                MissingTool(
                    config.name,
                    "tesseract",
                    "tool_missing",
                    f"Model {config.name} (OCR baseline) needs the tesseract binary, which is not installed "
                    f"on this machine ({command!r} is not found; {TESSERACT_INSTALL}).",
                )
            ]
        return []
    if config.provider in KEYED_PROVIDERS:
        if not config.api_key_env:
            return [
                MissingTool(
                    config.name,
                    "api_key_env",
                    "api_key_missing",
                    f"Model {config.name} ({config.provider}) names no API key variable; set one on the model.",
                )
            ]
        return _key_set(config, env)
    if config.provider == "openai_compatible":
        missing = []
        if not config.base_url:
            missing.append(
                MissingTool(
                    config.name,
                    "base_url",
                    "base_url_missing",
                    f"Model {config.name} (OpenAI-compatible) has no base URL; set the server's address.",
                )
            )
        return missing + (_key_set(config, env) if config.api_key_env else [])
    return []


def _key_set(config: ProviderConfig, env: Mapping[str, str]) -> list[MissingTool]:
    if env.get(config.api_key_env, ""):
        return []
    return [
        MissingTool(
            config.name,
            config.api_key_env,
            "api_key_missing",
            f"Model {config.name} ({config.provider}) needs the environment variable {config.api_key_env}, "
            f"which is not set.",
        )
    ]
