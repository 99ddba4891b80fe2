"""The Redis rate limit holds across two real worker processes sharing one Redis database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/12"

WORKER = textwrap.dedent("""
    import json, sys, time
    import redis
    from llm import LLMRequest, ProviderConfig, generate
    from llm.ratelimit import RedisRateLimiter
    url, key, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    limiter = RedisRateLimiter(redis.Redis.from_url(url), prefix="physalign:test:" + key)
    config = ProviderConfig(name="shared", provider="simulated", model="sim", requests_per_minute=5,
                            max_concurrency=2, extra={"rate_window_seconds": 1.0, "latency_ms": 150})
    spans = []
    for n in range(count):
        request = LLMRequest(system="", user=f"{sys.argv[4]}-{n}")
        t0 = time.time()
        result = generate(request, config, limiter=limiter)
        started = result.attempts[0].started_at
        spans.append([started, started + result.attempts[0].latency_ms / 1000.0])
    print(json.dumps(spans))
""")


@pytest.fixture
def redis_url():
    import redis

    try:
        redis.Redis.from_url(REDIS_URL).ping()
    except redis.exceptions.ConnectionError:
        if os.environ.get("PHYSALIGN_REQUIRE_SERVICES"):
            pytest.fail(f"Redis is required at {REDIS_URL}")
        pytest.skip(f"no Redis at {REDIS_URL}")
    return REDIS_URL


def test_two_processes_share_requests_per_window_and_concurrency(redis_url, tmp_path):
    key = os.urandom(4).hex()
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, redis_url, key, "6", f"w{i}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=root,
        )
        for i in range(2)
    ]
    outputs = [proc.communicate(timeout=60) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], [err for _, err in outputs]
    spans = sorted(span for out, _ in outputs for span in json.loads(out))
    starts = [start for start, _ in spans]
    assert len(starts) == 12
    # At most 5 request starts in any 1-second window, across both processes.
    for start in starts:
        assert sum(1 for other in starts if start <= other < start + 1.0 - 0.02) <= 5, starts
    # 12 requests at 5 per second cannot finish in under 2 windows.
    assert starts[-1] - starts[0] >= 2.0 - 0.05
    # Never more than 2 requests in flight at once.
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans], key=lambda x: (x[0], x[1]))
    running = peak = 0
    for _, delta in events:
        running += delta
        peak = max(peak, running)
    assert peak <= 2
    # Both processes did work (the limit is shared, not per process).
    assert all(len(json.loads(out)) == 6 for out, _ in outputs)
