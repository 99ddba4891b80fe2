"""Prompt rendering (Kit §4): twelve bracketed sections; raw and gold differ only in the packet.

Templates and task questions are versioned *data*. ``DEFAULT_PROMPTS``/``DEFAULT_TASKS`` are this
product's own wording. A file in the kit's format (``prompts_v2.json``, ``task_registry_v2.json``)
can be loaded instead (``manage.py import_prompt_templates``) to reproduce the official prompts
character for character; the formatting code below is the same for both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kit.canonical import digest

from .errors import require
from .scorability import BINDING_KEYS

PROMPT_KEYS = ("system", "user", "one", "set", "read", "packet_empty")
USER_PLACEHOLDERS = (
    "stem",
    "query",
    "options",
    "attachment_legend",
    "text_locator_views",
    "anchor_block",
    "reference_block",
    "candidate_block",
    "read_instruction",
    "binding_question",
    "selection_instruction",
    "recognition_packet",
    "output_contract",
)
EN_HEADERS = (
    "[Original statement]",
    "[Original question]",
    "[Original answer options]",
    "[Images and locator views]",
    "[Text locator views]",
    "[Evidence locations]",
    "[Given reference entities]",
    "[Candidates]",
    "[Local question]",
    "[Selection rule]",
    "[Local reading information]",
    "[Output format]",
)
ZH_HEADERS = (
    "【原始题干】",
    "【原始问题】",
    "【原题选项】",
    "【图像与定位视图】",
    "【文本定位】",
    "【证据位置】",
    "【给定参考实体】",
    "【候选】",
    "【局部问题】",
    "【选择方式】",
    "【补充局部读取信息】",
    "【输出格式】",
)


def _user_template(headers: tuple[str, ...]) -> str:
    slots = [
        "{stem}",
        "{query}",
        "{options}",
        "{attachment_legend}",
        "{text_locator_views}",
        "{anchor_block}",
        "{reference_block}",
        "{candidate_block}",
        "{read_instruction}{binding_question}",
        "{selection_instruction}",
        "{recognition_packet}",
        "{output_contract}",
    ]
    return "\n".join(f"{h}\n{s}" for h, s in zip(headers, slots, strict=True))


DEFAULT_PROMPTS: dict[str, Any] = {
    "template_version": "physalign_studio_v1",
    "language_policy": "source_matched_v1",
    "en": {
        "system": (
            "This is a question about one local detail of a physics problem; do not solve the problem itself. "
            "Work only from the original images, the original text, the marked locations and the listed "
            "candidates. The original answer options are possibilities to consider, not given facts. "
            "An R label marks a piece of evidence, an E label names a candidate you may choose, and an H label "
            "marks a reference entity that is given to you; none of these labels is a physical name, a hint "
            "about correctness or an order of preference. When a reading is requested, copy the text found at "
            "the marked location exactly as it appears, without interpreting it or converting units. Any "
            "reading information that is supplied only tells you what is written at a location; you still have "
            "to decide the binding yourself. Reply with a single JSON object containing exactly the requested "
            "fields, with no explanation and no labels that were not given."
        ),
        "user": _user_template(EN_HEADERS),
        "one": "Answer with a single candidate ID.",
        "set": "Answer with every candidate ID that applies.",
        "read": "Copy the visible text at {read_anchors} exactly as written.",
        "packet_empty": "No reading information is supplied.",
    },
    "zh": {
        "system": (
            "这是关于一道物理题中某个局部细节的问题，不要求解原题。只能依据原图、原始文字、标出的位置和列出的候选作答。"
            "原题选项只是待考虑的可能，不是已知条件。R 标记证据位置，E 是可以选择的候选，H 标记已给出的参考实体；"
            "这些标记都不是物理名称，也不暗示正确与否或先后顺序。若要求读取，请按原样抄写标记位置的文字，"
            "不要解释含义，也不要换算单位。提供的读取信息只说明该位置写了什么，绑定关系仍需你自己判断。"
            "只回复一个包含所要求字段的 JSON 对象，不要解释，也不要使用未给出的编号。"
        ),
        "user": _user_template(ZH_HEADERS),
        "one": "只用一个候选编号作答。",
        "set": "列出所有适用的候选编号。",
        "read": "按原样抄写 {read_anchors} 处可见的文字。",
        "packet_empty": "未提供读取信息。",
    },
}

DEFAULT_TASKS: dict[str, Any] = {
    "T02": {
        "binding_key": "referent",
        "allowed_cardinalities": ["one", "set"],
        "question": {
            "en": {
                "one": "The expression marked at {anchor} names one object in the diagram. Which candidate is it?",
                "set": "The expression marked at {anchor} names objects in the diagram. Which candidates are they?",
            },
            "zh": {
                "one": "{anchor} 处标出的说法指的是图中哪一个候选对象？",
                "set": "{anchor} 处标出的说法指的是图中哪些候选对象？",
            },
        },
    },
    "T03": {
        "binding_key": "owner",
        "allowed_cardinalities": ["one"],
        "question": {
            "en": "The quantity marked at {anchor} belongs directly to which candidate entity?",
            "zh": "{anchor} 处标出的物理量直接属于哪个候选实体？",
        },
    },
}


@dataclass(frozen=True)
class PromptSet:
    """One versioned set of prompt templates and task questions."""

    prompts: dict[str, Any]
    tasks: dict[str, Any]

    @property
    def version(self) -> str:
        return str(self.prompts.get("template_version", ""))

    @property
    def sha256(self) -> str:
        return digest({"prompts": self.prompts, "tasks": self.tasks})

    def binding_key(self, task_id: str) -> str:
        key: str = self.tasks[task_id]["binding_key"]
        return key

    def question(self, task_id: str, language: str, cardinality: str, anchor: str) -> str:
        question = self.tasks[task_id]["question"][language]
        if isinstance(question, dict):
            question = question[cardinality]
        rendered: str = question.format(anchor=anchor)
        return rendered


DEFAULT_PROMPT_SET = PromptSet(DEFAULT_PROMPTS, DEFAULT_TASKS)


def validate_prompt_files(prompts: Any, tasks: Any) -> PromptSet:
    """Check the kit-format shapes (Kit §11); raise CompileError with a code on any mismatch."""
    require(isinstance(prompts, dict) and isinstance(tasks, dict), "PROMPT_FILE_SHAPE")
    for language in ("en", "zh"):
        block = prompts.get(language)
        require(
            isinstance(block, dict) and all(isinstance(block.get(k), str) for k in PROMPT_KEYS),
            "PROMPT_FILE_SHAPE",
            language,
        )
        for name in USER_PLACEHOLDERS:
            require("{" + name + "}" in block["user"], "PROMPT_PLACEHOLDER_MISSING", f"{language}: {name}")
        require("{read_anchors}" in block["read"], "PROMPT_PLACEHOLDER_MISSING", f"{language}: read_anchors")
    for task_id in ("T02", "T03"):
        task = tasks.get(task_id)
        require(
            isinstance(task, dict) and isinstance(task.get("binding_key"), str),
            "TASK_REGISTRY_SHAPE",
            task_id,
        )
        # Refused at upload with the code the compiler would block every group of this task with.
        require(task["binding_key"] in BINDING_KEYS, "BINDING_KEY", f"{task_id}: {task['binding_key']}")
        allowed = task.get("allowed_cardinalities")
        require(
            isinstance(allowed, list) and "one" in allowed,
            "TASK_OUTPUT_CONTRACT",
            f"{task_id}: allowed_cardinalities must list 'one'",
        )
        for language in ("en", "zh"):
            question = task.get("question", {}).get(language)
            forms = list(question.values()) if isinstance(question, dict) else [question]
            require(
                all(isinstance(f, str) and "{anchor}" in f for f in forms),
                "TASK_QUESTION_SHAPE",
                f"{task_id}/{language}",
            )
    return PromptSet(prompts, tasks)


def public_locator_text(loc: dict[str, Any], context: dict[str, Any], alias: str) -> str:
    if loc["kind"] == "visual":
        return f"{alias}: {loc['image_id']} {json.dumps(loc['geometry'], ensure_ascii=False)}"
    start, end, text = loc["start"], loc["end"], context[loc["section"]]
    return f"{alias} ({loc['section']}): {text[:start]}[{alias}]{text[start:end]}[/{alias}]{text[end:]}"


def output_contract(contract: dict[str, Any], language: str) -> dict[str, Any]:
    candidate = "<candidate ID>" if language == "en" else "<候选编号>"
    transcription = "<transcription>" if language == "en" else "<转写>"
    output: dict[str, Any] = {
        contract["binding_key"]: candidate if contract["cardinality"] == "one" else [candidate, "..."]
    }
    if contract["read_shape"] == "string":
        output = {"read": transcription, **output}
    elif contract["read_shape"] == "object_by_anchor":
        output = {"read": {r: transcription for r in contract["read_anchor_ids"]}, **output}
    return output


def render_messages(
    view: dict[str, Any],
    question: str,
    contract: dict[str, Any],
    attachments: list[str],
    displays: list[dict[str, Any]],
    prompt_set: PromptSet,
) -> dict[str, str]:
    language, context = view["language"], view["context"]
    prompts = prompt_set.prompts[language]
    anchors = "\n".join(public_locator_text(loc, context, a) for a, loc in view["anchors"].items())
    references = "\n".join(
        public_locator_text(loc, context, a) for a, locs in view["reference_views"].items() for loc in locs
    )
    candidates = "\n".join(
        f"{c['alias']}: {c['label']}"
        if c["kind"] == "role"
        else "\n".join(public_locator_text(loc, context, c["alias"]) for loc in c["locators"])
        for c in view["candidates"]
    )
    textual = "\n".join(
        public_locator_text(loc, context, a) for a, loc in view["anchors"].items() if loc["kind"] == "text"
    )
    by_asset = {d["output_asset_id"]: d for d in displays}
    original = "original source image" if language == "en" else "原图"
    legend = "\n".join(
        f"{a}: {by_asset[a]['source_image_id']}; {', '.join(m['alias'] for m in by_asset[a]['marks'])}"
        if a in by_asset
        else f"{a}: {original}"
        for a in attachments
    )
    read = ""
    if contract["read_shape"] != "none":
        read = prompts["read"].format(read_anchors=", ".join(contract["read_anchor_ids"])) + "\n"
    packet = (
        json.dumps(view["recognition_packet"], ensure_ascii=False)
        if view["recognition_packet"]
        else prompts["packet_empty"]
    )
    values = {
        "stem": context["stem"],
        "query": context["query"],
        "options": json.dumps(context["options"], ensure_ascii=False),
        "attachment_legend": legend,
        "text_locator_views": textual,
        "anchor_block": anchors,
        "reference_block": references,
        "candidate_block": candidates,
        "read_instruction": read,
        "binding_question": question,
        "selection_instruction": prompts[contract["cardinality"]],
        "recognition_packet": packet,
        "output_contract": json.dumps(output_contract(contract, language), ensure_ascii=False),
    }
    return {"system": prompts["system"], "user": prompts["user"].format(**values)}
