"""Provider errors normalised into one type, and the retry classification (ours, not the SDKs').

Retryable: connection errors, timeouts, 408, 409, 429, 5xx, "overloaded".
Not retryable: 400, 401, 403, 404, 422, content filter, and anything else unknown.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping

RETRYABLE_STATUS = frozenset({408, 409, 429})
NOT_RETRYABLE_STATUS = frozenset({400, 401, 403, 404, 422})


class ErrorKind:
    CONNECTION = "connection"
    TIMEOUT = "timeout"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER = "server"
    BAD_REQUEST = "bad_request"
    AUTH = "auth"
    NOT_FOUND = "not_found"
    CONTENT_FILTER = "content_filter"
    CONFIG = "config"
    OTHER = "other"


class ProviderError(Exception):
    """One failed provider call. ``retryable`` decides whether our retry loop tries again."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        status_code: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status_code = status_code
        self.retryable = (
            classify(kind=kind, status_code=status_code, message=message) if retryable is None else retryable
        )
        self.retry_after = retry_after


def classify(*, kind: str, status_code: int | None, message: str = "") -> bool:
    if kind in (ErrorKind.CONNECTION, ErrorKind.TIMEOUT, ErrorKind.OVERLOADED, ErrorKind.RATE_LIMIT):
        return True
    if kind in (ErrorKind.CONTENT_FILTER, ErrorKind.CONFIG):
        return False
    if status_code is not None:
        if status_code in RETRYABLE_STATUS or 500 <= status_code <= 599:
            return True
        if status_code in NOT_RETRYABLE_STATUS:
            return False
    return "overloaded" in message.lower()


def kind_for_status(status_code: int, message: str = "") -> str:
    if "overloaded" in message.lower() or status_code == 529:
        return ErrorKind.OVERLOADED
    if status_code == 429:
        return ErrorKind.RATE_LIMIT
    if status_code == 408:
        return ErrorKind.TIMEOUT
    if status_code >= 500:
        return ErrorKind.SERVER
    if status_code in (401, 403):
        return ErrorKind.AUTH
    if status_code == 404:
        return ErrorKind.NOT_FOUND
    if status_code in (400, 422):
        lowered = message.lower()
        if "content_filter" in lowered or "content filter" in lowered or "content_policy" in lowered:
            return ErrorKind.CONTENT_FILTER
        return ErrorKind.BAD_REQUEST
    return ErrorKind.OTHER


def retry_after_seconds(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """``retry-after-ms``, or ``Retry-After`` as seconds or an HTTP date; None when absent or bad."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(float(lowered["retry-after-ms"]) / 1000.0, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(parsed.timestamp() - (time.time() if now is None else now), 0.0)
