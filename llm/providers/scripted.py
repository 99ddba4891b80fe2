"""``scripted``: canned outputs keyed by request, for tests.

``extra.responses`` is a list of ``{"match": substring of the user text | "fingerprint": request
fingerprint, "outputs": [...]}``; the first entry that matches answers, with its n-th output on the
n-th attempt (the last one repeats). An output is a string, or ``{"text", "finish_reason"}``, or
``{"error": status, "retry_after": s}``. ``extra.default`` answers anything else.
"""

from __future__ import annotations

from typing import Any

from ..errors import ErrorKind, ProviderError, kind_for_status
from ..types import LLMRequest, ProviderConfig, ProviderReply, Usage


def _matches(entry: dict[str, Any], request: LLMRequest) -> bool:
    if "fingerprint" in entry:
        scripted: object = entry["fingerprint"]
        return scripted == request.fingerprint()
    match = entry.get("match")
    return match is None or match in request.user


class ScriptedProvider:
    def call(
        self, request: LLMRequest, config: ProviderConfig, *, http_client: Any = None, attempt: int = 1
    ) -> ProviderReply:
        outputs: list[Any] | None = None
        for entry in config.extra.get("responses", []):
            if _matches(entry, request):
                outputs = list(entry.get("outputs") or [entry.get("output", "")])
                break
        if outputs is None:
            if "default" not in config.extra:
                raise ProviderError(
                    "The script has no output for this request.", kind=ErrorKind.BAD_REQUEST, status_code=400
                )
            outputs = [config.extra["default"]]
        output = outputs[min(attempt, len(outputs)) - 1]
        if isinstance(output, dict) and "error" in output:
            status = int(output["error"])
            kind = output.get("kind") or kind_for_status(status, str(output.get("message", "")))
            raise ProviderError(
                f"HTTP {status}: {output.get('message', 'scripted')}",
                kind=kind,
                status_code=status or None,
                retry_after=output.get("retry_after"),
            )
        text, finish = (
            (output.get("text", ""), output.get("finish_reason", "stop"))
            if isinstance(output, dict)
            else (str(output), "stop")
        )
        usage = Usage(
            input_tokens=(len(request.system) + len(request.user)) // 4, output_tokens=len(text) // 4
        )
        return ProviderReply(
            text=text, finish_reason=finish, usage=usage, raw={"scripted": True, "attempt": attempt}
        )
