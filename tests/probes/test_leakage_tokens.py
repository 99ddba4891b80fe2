"""The leakage scan's token search (one Aho–Corasick pass per file) finds exactly what a substring search
of every token in every file finds: overlapping tokens, tokens inside tokens, the empty token, no tokens."""

from __future__ import annotations

import random

from probes.release_layout import _tokens_present


def test_the_one_pass_search_equals_a_substring_search_of_each_token():
    rng = random.Random(2027)
    for _ in range(400):
        files = {
            f"public/f{i}.json": "".join(rng.choice("abE2-_") for _ in range(rng.randint(0, 120)))
            for i in range(rng.randint(1, 4))
        }
        tokens = {
            "".join(rng.choice("abE2-_") for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(0, 25))
        }
        assert _tokens_present(tokens, files) == {
            name: {token for token in tokens if token in text} for name, text in files.items()
        }


def test_named_cases():
    files = {"a": "…E2E20…", "b": ""}
    assert _tokens_present({"E2", "E20", "2E2", "E3"}, files) == {"a": {"E2", "E20", "2E2"}, "b": set()}
    assert _tokens_present(set(), files) == {"a": set(), "b": set()}
    assert _tokens_present({""}, files) == {"a": {""}, "b": {""}}
