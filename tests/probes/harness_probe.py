"""Reads our exports with the harnesses' own code, inside the harness environment (``scripts/harness_env.sh``:
lmms-eval, VLMEvalKit, torch), never in the app's. ``tests/probes/test_exports_in_harnesses.py`` runs it as

    HARNESS_PYTHON tests/probes/harness_probe.py lmms TASK_FOLDER ANSWERS.json OUT.json
    HARNESS_PYTHON tests/probes/harness_probe.py vlmeval TSV_FOLDER WORK_DIR OUT.json

and checks what it writes against the release. Standard library and the harnesses only: nothing of the app is
imported here except what the exported task folder's own ``utils.py`` imports to score (``PHYSALIGN_STUDIO``).

lmms: lmms-eval's ``TaskManager`` indexes the folder; ``get_task_dict`` builds every task as a simple-model task
and as a chat-model task; ``build_all_requests`` builds the requests a model gets; for each, the generation
kwargs' ``until`` and the prompt text. The same task without its ``until`` line is built too (what lmms-eval
adds when the key is missing). Then ``simple_evaluate`` runs the tasks end to end with a model that answers each
probe with the text in ANSWERS.json (by logical probe id) cut at every stop string in ``until``, as lmms-eval's
local models do (``for term in until: text = text.split(term)[0]``), and the per-sample metrics are written.

vlmeval: the TSVs go into a fresh ``LMUData`` folder; VLMEvalKit's ``build_dataset`` picks the dataset class for
each, ``build_prompt`` builds every line's message, and the inference loop ``infer_data`` hands each message to a
model that records it. The image parts are written as the files VLMEvalKit dumped.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any


def _lmms(folder: Path, answers_file: Path) -> dict[str, Any]:
    from lmms_eval.api.model import lmms  # type: ignore[import-not-found]
    from lmms_eval.evaluator import simple_evaluate  # type: ignore[import-not-found]
    from lmms_eval.tasks import TaskManager, get_task_dict  # type: ignore[import-not-found]

    answers = json.loads(answers_file.read_text(encoding="utf-8"))
    names = sorted(p.stem for p in folder.glob("physalign_*.yaml"))
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    out: dict[str, Any] = {"tasks": names, "built": {}, "without_until": {}, "evaluated": {}}
    for task_type in ("simple", "chat"):
        for name, task in get_task_dict(names, manager, task_type).items():
            task.build_all_requests(limit=None, rank=0, world_size=1)
            docs = task.test_docs()
            requests = []
            for instance in task.instances:
                ctx, doc_id = instance.args[0], instance.args[3]
                gen_kwargs = instance.args[1] if task_type == "simple" else instance.args[2]
                requests.append(
                    {
                        "logical_probe_id": docs[doc_id]["logical_probe_id"],
                        "ctx": ctx,
                        "until": gen_kwargs.get("until", "MISSING"),
                    }
                )
            out["built"][f"{task_type}:{name}"] = {
                "class": type(task).__name__,
                "config_until": task.config.generation_kwargs.get("until", "MISSING"),
                "requests": requests,
            }

    # the same task without ``until``: what lmms-eval puts there when the key is missing
    bare = folder.parent / f"{folder.name}-without-until"
    shutil.copytree(folder, bare, dirs_exist_ok=True)
    for path in bare.glob("physalign_*.yaml"):
        text = path.read_text(encoding="utf-8")
        assert "  until: []\n" in text
        path.write_text(
            text.replace("  until: []\n", "").replace(f"task: {path.stem}\n", f"task: {path.stem}_bare\n"),
            encoding="utf-8",
        )
    for path in bare.glob("_*.yaml"):
        path.unlink()
    bare_manager = TaskManager(include_path=str(bare), include_defaults=False)
    for name, task in get_task_dict([f"{n}_bare" for n in names], bare_manager, "simple").items():
        out["without_until"][name] = task.config.generation_kwargs.get("until", "MISSING")

    class Answers(lmms):  # type: ignore[misc]
        """A local model: the planned text, cut at each stop string as lmms-eval's local models cut theirs."""

        is_simple = True

        def __init__(self) -> None:
            super().__init__()
            self.seen: list[Any] = []

        def generate_until(self, requests: list[Any]) -> list[str]:
            texts = []
            for request in requests:
                ctx, gen_kwargs, _, doc_id, task_name, split = request.args
                doc = self.task_dict[task_name][split][doc_id]
                text = answers[doc["logical_probe_id"]]
                until = gen_kwargs.get("until", [])
                for term in until if isinstance(until, list) else [until]:
                    if len(term) > 0:
                        text = text.split(term)[0]
                self.seen.append(until)
                texts.append(text)
            return texts

        def loglikelihood(self, requests: list[Any]) -> list[Any]:
            raise NotImplementedError

        def generate_until_multi_round(self, requests: list[Any]) -> list[Any]:
            raise NotImplementedError

    for folder_used, tasks in ((folder, names), (bare, [f"{n}_bare" for n in names])):
        model = Answers()
        results = simple_evaluate(
            model=model,
            tasks=tasks,
            task_manager=TaskManager(include_path=str(folder_used), include_defaults=False),
            log_samples=True,
            bootstrap_iters=0,
        )
        for name in tasks:
            out["evaluated"][name] = [
                {
                    "logical_probe_id": s["doc"]["logical_probe_id"] if "doc" in s else None,
                    "doc_id": s["doc_id"],
                    "response": s.get("filtered_resps", s.get("resps")),
                    **{m: s.get(m) for m in ("physalign_G", "physalign_C", "physalign_J")},
                }
                for s in results["samples"][name]
            ]
            out["evaluated"][f"{name}:until_seen"] = sorted({json.dumps(u) for u in model.seen})
    return out


def _vlmeval(tsv_folder: Path, work: Path) -> dict[str, Any]:
    root = work / "LMUData"
    root.mkdir(parents=True, exist_ok=True)
    os.environ["LMUData"] = str(root)
    for tsv in tsv_folder.glob("*.tsv"):
        shutil.copy(tsv, root / tsv.name)
    from vlmeval.dataset import build_dataset  # type: ignore[import-not-found]
    from vlmeval.inference import infer_data  # type: ignore[import-not-found]
    from vlmeval.vlm.base import BaseModel  # type: ignore[import-not-found]

    class Recorder(BaseModel):  # type: ignore[misc]
        INTERLEAVE = True

        def __init__(self) -> None:
            super().__init__()
            self.seen: list[Any] = []

        def generate_inner(self, message: list[dict[str, Any]], dataset: str | None = None) -> str:
            self.seen.append(message)
            return "{}"

    out: dict[str, Any] = {}
    for tsv in sorted(tsv_folder.glob("*.tsv")):
        name = tsv.stem
        dataset = build_dataset(name)
        lines = [dataset.data.iloc[i] for i in range(len(dataset))]
        prompts = [dataset.build_prompt(line) for line in lines]
        model = Recorder()
        infer_data(
            model=model,
            model_name="physalign-recorder",
            work_dir=str(work),
            dataset=dataset,
            out_file=str(work / f"{name}_infer.pkl"),
        )
        out[name] = {
            "class": type(dataset).__name__,
            "lines": [
                {"index": int(line["index"]), "logical_probe_id": line["logical_probe_id"], "message": prompt}
                for line, prompt in zip(lines, prompts, strict=True)
            ],
            "inferred": model.seen,
        }
    return out


def main(argv: list[str]) -> None:
    kind, source, extra, target = argv
    result = _lmms(Path(source), Path(extra)) if kind == "lmms" else _vlmeval(Path(source), Path(extra))
    Path(target).write_text(json.dumps(result, ensure_ascii=False, default=str), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
