"""What a run records about the code that ran it (Kit manifest: code revision and package versions)."""

from __future__ import annotations

import subprocess
from importlib import metadata as importlib_metadata
from pathlib import Path

from django.conf import settings


def code_revision() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(settings.BASE_DIR),
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def package_versions() -> dict[str, str]:
    result = {}
    for name in ("django", "celery", "numpy", "openai", "anthropic", "google-genai", "redis", "psycopg"):
        try:
            result[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            pass
    return result
