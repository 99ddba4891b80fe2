"""Logging filters (referenced from ``settings.LOGGING``)."""

from __future__ import annotations

import copy
import logging


class ClientErrorsOneLine(logging.Filter):
    """A record about a 4xx response (``status_code`` < 500, as Django's request and security loggers
    attach) is written as one line: the exception's type and message replace its traceback. A refused
    request is the client's mistake or an attack, not ours; tracebacks stay for 5xx and everything else."""

    def filter(self, record: logging.LogRecord) -> logging.LogRecord | bool:
        status = getattr(record, "status_code", None)
        if not isinstance(status, int) or status >= 500 or not record.exc_info:
            return True
        exc = record.exc_info[1]
        line = copy.copy(record)  # other handlers (tests' caplog, Sentry) still get the original record
        reason = (
            ""
            if exc is None
            else f" ({type(exc).__name__}: {exc})"
            if str(exc)
            else f" ({type(exc).__name__})"
        )
        line.msg = record.getMessage() + reason
        line.args = ()
        line.exc_info = None
        line.exc_text = None
        return line
