"""Importing a release refuses an item no scorer could score (the compiler's contract check, reused)."""

from __future__ import annotations

import json
import shutil

import pytest

from kit.canonical import write_json_bytes
from physalign_site.errors import ApplicationError
from probes.models import Release
from probes.releases import release_import, seal_directory

from .test_services_and_releases import release_dir  # noqa: F401  (fixture)


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (
            lambda m: m["read_targets"][0].update(expected="$v_0 = 3\\,\\mathrm{m/s}$ \u2212 \u4e2d"),
            "UNSUPPORTED_GOLD_READING",
        ),
        (lambda m: m["response_contract"].update(binding_key="thing"), "BINDING_KEY"),
        (lambda m: m.pop("response_contract"), "PRIVATE_MAPPING_INVALID"),
    ],
)
def test_an_unscorable_mapping_is_refused_and_nothing_is_stored(release_dir, tmp_path, edit, code):  # noqa: F811
    _, root = release_dir
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    Release.objects.all().delete()
    path = copy / "private" / "mappings.json"
    mappings = json.loads(path.read_text("utf-8"))
    edit(next(m for m in mappings if m["read_targets"]))
    path.write_bytes(write_json_bytes(mappings))
    seal_directory(copy)
    with pytest.raises(ApplicationError) as refused:
        release_import(path=copy, actor=None)
    assert refused.value.code == code
    assert not Release.objects.exists()
