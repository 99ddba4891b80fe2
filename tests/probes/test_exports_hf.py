"""A release's public part as a Hugging Face dataset (issue 17, item 1): it loads back with
``datasets.load_dataset("parquet", …)`` as the same probes, messages and image bytes, holds nothing private, and
the release page builds it for admins only."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from unittest.mock import patch

import datasets
import pytest
import yaml
from django.core.management import call_command

from probes.exports.hf import ExportLeak, export_hf, parquet_text, release_hf_build, write_hf
from probes.exports.leakage import release_secrets
from probes.exports.public import read_public
from probes.models import Release
from tests.conftest import make_user


def _load(folder: Path, config: str, split: str):
    files = sorted(str(p) for p in (folder / "data" / config).glob("*.parquet"))
    loaded = datasets.load_dataset(
        "parquet", data_files={split: files}, split=split, cache_dir=str(folder.parent / "cache")
    )
    return loaded.cast_column("images", datasets.List(datasets.Image(decode=False)))


def test_the_dataset_loads_back_as_the_same_probes_messages_and_image_bytes(release, tmp_path):
    out = tmp_path / "hf"
    call_command("export_hf", "--release", release.release_id, "--output", str(out), stdout=io.StringIO())
    root = Path(release.path)
    split = release.split
    expected = {}
    for condition in ("raw", "gold"):
        for record in json.loads((root / "public" / f"qa_{condition}.json").read_text()):
            expected[(condition, record["instance_id"])] = record
    assert any(c == "gold" for c, _ in expected) and any(c == "raw" for c, _ in expected)

    card = (out / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == "cc-by-4.0"
    configs = {c["config_name"]: c for c in header["configs"]}
    seen = {}
    for name, config in configs.items():
        assert config["data_files"] == [{"split": split, "path": f"data/{name}/{split}-*.parquet"}]
        condition, interface = name.split("_", 1)
        for row in _load(out, name, split):
            record = expected[(condition, row["instance_id"])]
            assert (
                (row["condition"], row["interface"])
                == (condition, interface)
                == (
                    record["condition"],
                    record["interface"],
                )
            )
            assert row["logical_probe_id"] == record["logical_probe_id"] and row["split"] == split
            assert row["system"] == record["input"]["messages"]["system"]
            assert row["user"] == record["input"]["messages"]["user"]
            attachments = record["input"]["attachments"]
            assert [i["bytes"] for i in row["images"]] == [
                (root / "public" / a["path"]).read_bytes() for a in attachments
            ]
            assert row["image_sha256"] == [a["sha256"] for a in attachments]
            assert attachments and row["images"][0]["bytes"][:8] == b"\x89PNG\r\n\x1a\n"
            seen[(condition, row["instance_id"])] = name
        assert f"| `{name}` | {sum(1 for v in seen.values() if v == name)} |" in card
    assert set(seen) == set(expected)  # every public record once, nothing else
    assert "CC BY 4.0" in card and "SYNTHETIC_UNIT_TEST" in card and "## How to score" in card


def test_no_private_string_of_the_release_is_in_any_exported_file(release, tmp_path):
    out = tmp_path / "hf"
    export_hf(release=release, output=out)
    frozen, private = release_secrets(Path(release.path))
    secrets = {"SECRET-ANSWER-two-newtons", "SECRET-SOLUTION-text", "candidate_map", "gold_targets"}
    for item in frozen:
        secrets |= {t["id"] for t in item["private"]["candidate_map"].values()}
        secrets |= set(item["private"]["source_hashes"].values())
    assert frozen and private
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    for path in files:
        text = parquet_text(path)
        raw = path.read_bytes()
        for secret in secrets:
            assert secret not in text and secret.encode() not in raw, (secret, path)


def test_an_export_that_would_leak_is_refused_and_removed(release, tmp_path):
    part = read_public(Path(release.path))
    frozen, _ = release_secrets(Path(release.path))
    entity = next(iter(frozen[0]["private"]["candidate_map"].values()))["id"]
    leaky = [{"name": f"leak {entity}", "license": "", "url": "", "problems": 1}]
    with pytest.raises(ExportLeak, match="PRIVATE_STRING_IN_PUBLIC"):
        write_hf(part, tmp_path / "hf", leaky)
    assert not (tmp_path / "hf").exists()


def test_the_release_page_builds_the_dataset_for_admins_only(
    client, release, django_user_model, eager, django_capture_on_commit_callbacks
):
    url = f"/releases/{release.release_id}/hf/"
    download = f"/releases/{release.release_id}/hf/download/"
    for role in ("annotator", "probe_reviewer"):
        client.force_login(make_user(django_user_model, role, role))
        assert client.post(url).status_code == 403
        assert client.get(download).status_code == 403
    client.logout()
    assert client.post(url).status_code == 302 and "login" in client.post(url)["Location"]
    client.force_login(make_user(django_user_model, "boss", "admin"))
    assert client.get(download).status_code == 404
    assert (
        'data-testid="release-hf-prepare"' in client.get(f"/releases/{release.release_id}/").content.decode()
    )
    with django_capture_on_commit_callbacks(execute=True):  # the worker builds it (eager here)
        response = client.post(url)
    assert response.status_code == 302 and response["Location"] == f"/releases/{release.release_id}/"
    release.refresh_from_db()
    assert release.hf_status == "ready"
    assert client.get(url).status_code == 405
    page = client.get(f"/releases/{release.release_id}/").content.decode()
    assert 'data-testid="release-hf-download"' in page
    body = b"".join(client.get(download).streaming_content)
    names = zipfile.ZipFile(io.BytesIO(body)).namelist()
    assert "README.md" in names and any(n.startswith("data/raw_") and n.endswith(".parquet") for n in names)
    assert not any("private" in n or n.endswith(".json") for n in names)


def test_a_dataset_build_is_queued_once_polled_while_it_runs_and_a_failure_says_why(
    client, release, django_user_model
):
    client.force_login(make_user(django_user_model, "boss", "admin"))
    Release.objects.filter(pk=release.pk).update(hf_status="running")
    client.post(f"/releases/{release.release_id}/hf/")  # a build running is left alone
    release.refresh_from_db()
    assert release.hf_status == "running"
    panel = client.get(f"/releases/{release.release_id}/?panel=hf", HTTP_HX_REQUEST="true").content.decode()
    assert (
        'data-testid="release-hf-state"' in panel
        and 'hx-trigger="every 1s"' in panel
        and "<html" not in panel
    )
    assert client.get(f"/releases/{release.release_id}/hf/download/").status_code == 404
    # a build the leakage scan refuses ends failed, with the reason on the page and nothing to download
    with patch("probes.exports.hf.export_hf", side_effect=ExportLeak("PRIVATE_STRING_IN_PUBLIC: T2")):
        release_hf_build(release_pk=release.pk)
    release.refresh_from_db()
    assert release.hf_status == "failed" and "leakage scan" in release.hf_error
    page = client.get(f"/releases/{release.release_id}/").content.decode()
    assert 'data-testid="release-hf-error"' in page and 'data-testid="release-hf-prepare"' in page
    assert client.get(f"/releases/{release.release_id}/hf/download/").status_code == 404
