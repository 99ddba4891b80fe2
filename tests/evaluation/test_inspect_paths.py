"""Relative paths given to the inspect_ai task (issue 29, item 4): ``inspect eval FILE`` builds the task from the
task file's folder, so the README's ``-T source=var/releases/…`` used to be read from ``physalign_studio/``. Run
with inspect's own CLI and Python API from another working directory, offline (``mockllm/model``, and a
``sitecustomize`` in the CLI's process that refuses every connection off the machine): a relative path is refused
with the explanation and the absolute form to pass, the absolute form runs, and a task built in Python without
inspect's change of folder resolves a relative path against the caller's folder."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import inspect_ai
import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from physalign_studio.inspect_task import TASK_DIR, ReleaseSourceError, caller_path, physalign
from tests.probes.conftest import release  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db

CHECKOUT = Path(__file__).parents[2]
TASK_FILE = CHECKOUT / "physalign_studio" / "inspect_task.py"
INSPECT = Path(sys.executable).parent / "inspect"
OFFLINE_SITE = """
import os, socket

import tiktoken

LOCAL = ("127.0.0.1", "::1", "localhost")
_connect, _getaddrinfo = socket.socket.connect, socket.getaddrinfo


def _blocked(address):
    with open(os.environ["PHYSALIGN_TEST_BLOCKED"], "a", encoding="utf-8") as handle:
        handle.write(repr(address) + "\\n")
    raise OSError(f"network access in a test: {address}")


def _local_connect(sock, address):
    if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOCAL:
        _blocked(address)
    return _connect(sock, address)


def _local_getaddrinfo(host, *args, **kwargs):
    if host not in LOCAL and host is not None:
        _blocked(host)
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _local_connect
socket.getaddrinfo = _local_getaddrinfo
# mockllm counts its input tokens with tiktoken's o200k_base, which tiktoken downloads on first use: a
# byte-level stand-in of that name (the counts are only the mock's usage figures)
tiktoken.registry.ENCODINGS["o200k_base"] = tiktoken.Encoding(
    name="o200k_base",
    pat_str=r"\\S+|\\s+",
    mergeable_ranks={bytes([i]): i for i in range(256)},
    special_tokens={},
)
"""


@pytest.fixture
def caller(release, tmp_path, monkeypatch):  # noqa: F811
    """A working directory outside the checkout holding the release at ``var/releases/<id>`` (the README's
    relative path), inspect's directories under tmp_path and no connection leaving the machine."""
    folder = tmp_path / "caller"
    target = folder / "var" / "releases" / release.release_id
    shutil.copytree(release.path, target)
    for name, sub in (
        ("INSPECT_LOG_DIR", "logs"),
        ("INSPECT_CACHE_DIR", "inspect-cache"),
        ("XDG_DATA_HOME", "xdg-data"),
        ("XDG_CACHE_HOME", "xdg-cache"),
        ("XDG_CONFIG_HOME", "xdg-config"),
    ):
        monkeypatch.setenv(name, str(tmp_path / sub))
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    for name in ("INSPECT_TELEMETRY", "INSPECT_EVAL_MODEL", "PHYSALIGN_PRIVATE_KEY"):
        monkeypatch.delenv(name, raising=False)
    local = ("127.0.0.1", "::1", "localhost")
    connect, getaddrinfo, blocked = socket.socket.connect, socket.getaddrinfo, []

    def local_only(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in local:
            blocked.append(address)
            raise OSError(f"network access in a test: {address}")
        return connect(sock, address)

    def local_names(host, *args, **kwargs):
        if host is not None and host not in local:
            blocked.append(host)
            raise OSError(f"network access in a test: {host}")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", local_only)
    monkeypatch.setattr(socket, "getaddrinfo", local_names)
    yield folder, target.relative_to(folder).as_posix()
    assert blocked == []


def _no_json_model():
    """mockllm/model with its usage given (it would count tokens with a tokenizer tiktoken downloads)."""

    def answer(messages, tools, tool_choice, config):
        output = ModelOutput.from_content(model="mockllm/model", content="no JSON here", stop_reason="stop")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1)
        return output

    return get_model("mockllm/model", custom_outputs=answer)


def _inspect_cli(folder: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    site = tmp_path / "offline-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(OFFLINE_SITE, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(CHECKOUT)]),
        "PWD": str(folder),  # as the shell sets it
        "PHYSALIGN_TEST_BLOCKED": str(tmp_path / "blocked.txt"),
    }
    done = subprocess.run(
        [str(INSPECT), "eval", str(TASK_FILE) + "@physalign", *args, "--model", "mockllm/model"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert not (tmp_path / "blocked.txt").exists(), (tmp_path / "blocked.txt").read_text()
    return done


def test_inspect_eval_refuses_a_relative_source_with_the_reason_and_runs_the_absolute_form(
    caller,
    tmp_path,
    release,  # noqa: F811
):
    folder, relative = caller
    key = f"{relative}/private/mappings.json"
    logs = tmp_path / "cli-logs"
    # the README's old command: refused, saying why and what to pass
    refused = _inspect_cli(
        folder, tmp_path, "-T", f"source={relative}", "-T", "condition=raw", "--log-dir", str(logs)
    )
    assert refused.returncode != 0
    message = " ".join((refused.stdout + refused.stderr).split())
    assert f"-T source={relative} is a relative path" in message
    assert str(TASK_DIR) in message and f'-T source="$PWD/{relative}"' in message
    assert not list(logs.glob("*.eval"))  # refused before anything ran
    # a relative key is refused the same way
    refused = _inspect_cli(
        folder, tmp_path, "-T", f"source={folder / relative}", "-T", f"private={key}", "--log-dir", str(logs)
    )
    assert refused.returncode != 0 and f"-T private={key} is a relative path" in " ".join(
        refused.stderr.split()
    )
    # the command that works: the same paths made absolute by the shell's $PWD
    done = _inspect_cli(
        folder,
        tmp_path,
        "-T",
        f"source={folder}/{relative}",
        "-T",
        "condition=raw",
        "-T",
        f"private={folder}/{key}",
        "--log-dir",
        str(logs),
    )
    assert done.returncode == 0, done.stderr
    [path] = logs.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.metadata["physalign_release_id"] == release.release_id
    raw = json.loads((folder / relative / "public" / "qa_raw.json").read_text(encoding="utf-8"))
    assert [str(s.id) for s in log.samples] == [r["logical_probe_id"] for r in raw] and raw
    # scored with the key: mockllm's text is no JSON, so every item is an unparsed output with G = 0
    assert all(s.scores and s.scores["physalign_scorer"].value["G"] == 0 for s in log.samples)


def test_the_python_api_by_file_refuses_too_and_a_task_built_in_python_resolves_against_the_caller(
    caller,
    monkeypatch,
    tmp_path,
    release,  # noqa: F811
):
    folder, relative = caller
    monkeypatch.chdir(folder)
    # ``inspect_ai.eval("FILE@physalign")`` builds the task in the file's folder as the CLI does
    # (the file is executed as a module of its own, so its error class is not the imported one: ValueError)
    with pytest.raises(ValueError, match=r"-T source=var/releases/\S+ is a relative path"):
        inspect_ai.eval(
            f"{TASK_FILE}@physalign",
            task_args={"source": relative, "condition": "raw"},
            model=_no_json_model(),
            log_dir=str(tmp_path / "api-logs"),
            display="none",
        )
    assert Path.cwd() == folder  # inspect gave the folder back
    # ``physalign(...)`` called here: no one changed the folder, the relative path is the caller's
    task = physalign(source=relative, condition="raw", private=f"{relative}/private/mappings.json")
    assert len(task.dataset) and task.metadata["physalign_release_id"] == release.release_id
    [log] = inspect_ai.eval(task, model=_no_json_model(), log_dir=str(tmp_path / "api-logs"), display="none")
    assert log.status == "success" and len(log.samples) == len(task.dataset)
    # the environment's key follows the same rule
    monkeypatch.setenv("PHYSALIGN_PRIVATE_KEY", f"{relative}/private/mappings.json")
    assert physalign(source=relative, condition="raw").scorer


def test_caller_path_keeps_absolute_paths_and_refuses_relative_ones_in_the_task_folder(monkeypatch, tmp_path):
    assert caller_path(str(tmp_path / "x"), "-T source") == tmp_path / "x"
    monkeypatch.chdir(tmp_path)
    assert caller_path("a/b", "-T source") == tmp_path / "a" / "b"
    monkeypatch.chdir(TASK_DIR)
    with pytest.raises(ReleaseSourceError, match=r'PHYSALIGN_PRIVATE_KEY="\$PWD/k\.json"'):
        caller_path("k.json", "PHYSALIGN_PRIVATE_KEY")
