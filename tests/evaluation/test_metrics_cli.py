"""``manage.py metrics --items`` stays byte-identical while it gets faster (issue 16 item 5): the file is
read with orjson (falling back to ``json`` line by line), the command skips the system checks, and
neither loading it nor the URL conf imports sympy or scipy.ndimage."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command, load_command_class

from evaluation.metrics import ItemFileError, compute_metrics, read_items

ROOT = Path(__file__).resolve().parents[2]


def generated_items(*, models: int = 3, probes: int = 240, parents: int = 70, seed: int = 51) -> list[dict]:
    """Every condition (+GT on pool P only), every status, odd aliases, non-ASCII model names."""
    rng = random.Random(seed)
    catalogue = []
    for n in range(probes):
        parent = f"PA-{n:04d}" if n < parents else f"PA-{rng.randrange(parents):04d}"
        task = rng.choice(["T02", "T03"])
        interface = "T02-single" if task == "T02" else rng.choice(["T03-image", "T03-text"])
        in_l = interface == "T03-image" and rng.random() < 0.6
        in_p = in_l and rng.random() < 0.7
        pools = ["B"] + (["L"] if in_l else []) + (["P"] if in_p else [])
        k = rng.randint(1, 7)
        catalogue.append((f"PAQ-{n:05d}", parent, task, interface, pools, k, rng.randint(0, k)))
    items = []
    for m in range(models):
        for condition in ("raw", "gold", "no_image", "reordered"):
            for probe_id, parent, task, interface, pools, k, aliases in catalogue:
                if condition == "gold" and "P" not in pools:
                    continue
                status = rng.choices(
                    ["completed", "unparseable", "refusal", "truncated", "infra_missing"], [80, 6, 4, 4, 6]
                )[0]
                g = None if status == "infra_missing" else int(status == "completed" and rng.random() < 0.5)
                c = None
                if status != "infra_missing" and condition == "raw" and "L" in pools:
                    c = int(rng.random() < 0.7)
                items.append(
                    {
                        "model": f"modèle-{m}",
                        "condition": condition,
                        "probe_id": probe_id,
                        "parent_id": parent,
                        "task_id": task,
                        "interface": interface,
                        "pools": pools,
                        "status": status,
                        "C": c,
                        "G": g,
                        "K": k,
                        "gold_alias_count": aliases,
                        "nearest": rng.choice(["correct", "wrong", "not_applicable"]),
                    }
                )
    return items


def serialized(result: dict) -> bytes:
    """What the command writes (json.dump, indent 1, sorted keys, UTF-8, final newline)."""
    return (json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def read_items_json(path: str) -> list[dict]:
    """The reader before orjson (evaluation/metrics.py until issue 16), kept here as the reference."""
    items = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ItemFileError(f"line {number}: not JSON ({exc.msg})") from exc
    return items


def test_command_output_is_byte_identical_to_in_process_metrics(tmp_path):
    items = generated_items()
    path, out = tmp_path / "items.jsonl", tmp_path / "out.json"
    path.write_text("".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items), encoding="utf-8")
    call_command("metrics", "--items", str(path), "--output", str(out), "--resamples", "300", "--seed", "11")
    expected = serialized(compute_metrics(items, resamples=300, seed=11))
    assert out.read_bytes() == expected
    written = json.loads(expected)
    assert written["models"]["modèle-0"]["kit_paired"] is not None  # +GT present: every scope exercised
    assert written["models"]["modèle-0"]["GAcc"]["lower"] != written["models"]["modèle-0"]["GAcc"]["upper"]
    # and the same when the file is written the other way (ASCII escapes, compact separators, CRLF)
    crlf = tmp_path / "items_crlf.jsonl"
    crlf.write_bytes(b"".join(json.dumps(it, separators=(",", ":")).encode() + b"\r\n" for it in items))
    out2 = tmp_path / "out2.json"
    call_command("metrics", "--items", str(crlf), "--output", str(out2), "--resamples", "300", "--seed", "11")
    assert out2.read_bytes() == expected


def test_reader_gives_what_the_json_reader_gave(tmp_path):
    lines = [
        json.dumps({"a": 1, "b": [1, 2.5, None, True], "c": "é ☃ 𝔾"}, ensure_ascii=False),
        "",
        "   \t",
        json.dumps({"a": 0.1 + 0.2, "b": 1e-300, "c": -0.0, "d": 123456789012345678, "e": "\\u00e9"}),
        "\u00a0",  # a Unicode blank line: str.strip() skips it, bytes.strip() does not
        '{"big": 123456789012345678901234567890, "nan": NaN, "inf": -Infinity}',  # json only
        '{"lone": "\\ud800", "dup": 1, "dup": 2}',
        '  {"spaced": 1}  ',
    ]
    path = tmp_path / "items.jsonl"
    path.write_bytes(
        ("\n".join(lines[:3]) + "\r\n" + "\r".join(lines[3:5]) + "\n" + "\n".join(lines[5:])).encode()
    )
    got, want = read_items(str(path)), read_items_json(str(path))
    assert repr(got) == repr(want)  # repr: NaN compares unequal to itself
    assert len(got) == 5


@pytest.mark.parametrize(
    "content",
    [b'{"a": 1}\n\n{"a": \n', b"\xef\xbb\xbf" + b'{"a": 1}\n', b'{"a": 1}\n[1, 2\r\n', b"{'a': 1}\n"],
)
def test_reader_errors_are_the_json_reader_errors(tmp_path, content):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(ItemFileError) as new:
        read_items(str(path))
    with pytest.raises(ItemFileError) as old:
        read_items_json(str(path))
    assert str(new.value) == str(old.value)
    assert str(new.value).startswith("line ")


def test_command_skips_system_checks():
    assert load_command_class("evaluation", "metrics").requires_system_checks == []


CHILD = """
import sys
import django
django.setup()
from django.core.management import load_command_class
load_command_class("evaluation", "metrics")
heavy = ("sympy", "scipy.ndimage", "solving.views", "physalign_root.urls")
print(",".join(name for name in heavy if name in sys.modules) or "-")
from django.urls import get_resolver
get_resolver().url_patterns  # the whole URL conf, every view module
print(",".join(name for name in ("sympy", "scipy.ndimage") if name in sys.modules) or "-")
"""


def test_loading_the_command_or_the_url_conf_imports_no_heavy_module():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "physalign_site.settings"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    after_command, after_urls = done.stdout.split()
    assert after_command == "-"  # no URL conf, no view, no sympy/scipy.ndimage to run metrics
    assert after_urls == "-"  # sympy and scipy.ndimage load only when a debate function needs them
