"""A request's fingerprint: what the model sees, hashed once per request."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

from llm import ImageInput, LLMRequest


def _expected(request: LLMRequest) -> str:
    payload = {"system": request.system, "user": request.user, "images": [i.sha256 for i in request.images]}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


def test_fingerprint_is_the_digest_of_what_the_model_sees_and_follows_every_change():
    request = LLMRequest(system="s", user="u", images=(ImageInput(b"png"),), request_id="1:2:p:raw")
    first = request.fingerprint()
    assert first == _expected(request) == request.fingerprint()  # asked again: the same value
    assert (
        LLMRequest(system="s", user="u", images=(ImageInput(b"png"),)).fingerprint() == first
    )  # id not hashed
    assert request == LLMRequest(system="s", user="u", images=(ImageInput(b"png"),), request_id="1:2:p:raw")
    for changed in (
        replace(request, images=()),
        replace(request, user="u2"),
        replace(request, system="s2"),
        replace(request, images=(ImageInput(b"other"),)),
    ):
        assert changed.fingerprint() == _expected(changed) != first
    assert request.record()["fingerprint"] == first
