"""The render cache hands back exactly the bytes a fresh render produces (a view is a pure function of the
original, the locator's points and the label)."""

from __future__ import annotations

from probes.compiler import compile_parent, render
from probes.compiler.render import _RenderCache

from . import kit_demo as demo


def _views(source):
    return [
        (p.logical_probe_id, v.view_id, v.png, v.record)
        for p in compile_parent(source).probes
        for v in p.views
    ]


def test_cached_views_are_the_bytes_of_a_fresh_render(monkeypatch):
    monkeypatch.setattr(render, "_rendered", _RenderCache(0))  # no cache: every view drawn and encoded
    fresh = _views(demo.demo_source())
    cache = _RenderCache(512)
    monkeypatch.setattr(render, "_rendered", cache)
    cold, warm = _views(demo.demo_source()), _views(demo.demo_source())
    assert fresh == cold == warm
    assert len(cache._items) < len(fresh)  # the demo draws some locator with the same label twice
