"""The singleton-basis grammar for T02 (Kit §3.2) and the atomic-glyph packet grammar (Kit §2.11).

A finite positive grammar: a quote is a singular reference only if it is an explicit object noun
with one atomic symbol, or a bare symbol that the source itself ties to every target.
"""

from __future__ import annotations

import re
from typing import Any

SYMBOL = r"(?:[A-Za-zΑ-Ωα-ω](?:\d{1,2}|_[A-Za-z0-9]|_\{[A-Za-z0-9]{1,2}\})?|[甲乙丙丁戊己庚辛壬癸])"
_EN_NOUNS = (
    "block body particle point ball sphere charge object spring resistor capacitor switch rod wire "
    "coil pulley bead ring magnet surface plane force field axis line segment vector ray"
).split()
_ZH_NOUNS = (
    "物块 物体 质点 小球 球 点 电荷 弹簧 电阻 电容器 开关 杆 导线 线圈 滑轮 圆环 磁铁 表面 平面 力 场 "
    "坐标轴 直线 线段 矢量 射线"
).split()
OBJECT_SYMBOL_EN = re.compile(r"(?:[Tt]he )?(?:" + "|".join(_EN_NOUNS) + r")\s+\$?(" + SYMBOL + r")\$?", re.I)
OBJECT_SYMBOL_ZH = re.compile(r"(?:" + "|".join(_ZH_NOUNS) + r")\s*\$?(" + SYMBOL + r")\$?")
PLURAL_CUES = re.compile(
    r"\b(?:two|three|four|five|both|several|all|each|every|pair|charges|blocks|particles|bodies|objects|points)\b"
    r"|\b[2-9]\s+\w+|[两三四五六七八九]|(?:两个|两点|两物|各个|所有|它们|分别|以及)|\band\b|[、，,]",
    re.I,
)

RULE_OBJECT_SYMBOL = "finite_explicit_object_symbol_v1"
RULE_ATOMIC_SYMBOL = "atomic_symbol_with_explicit_source_symbol_or_label_v1"

ATOMIC_GLYPH_PATTERNS = [
    re.compile(p)
    for p in (
        r"[A-Za-zΑ-Ωα-ω](?:[0-9]{1,2}|_[A-Za-z0-9]|_\{[A-Za-z0-9]{1,2}\})?",
        r"[甲乙丙丁戊己庚辛壬癸]",
        r"[+\-−]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:\s*(?:kg|g|m|cm|mm|s|N|T|A|V|C|J|W|Ω|m/s|m/s²))?",
        r"\\(?:alpha|beta|gamma|theta|phi|omega|mu|sigma|epsilon)(?:_[A-Za-z0-9]|_\{[A-Za-z0-9]{1,2}\})?",
        r"[+\-−]",
    )
]
PACKET_MAX_ENTRIES = 64


def is_atomic_glyph(text: str) -> bool:
    stripped = text.strip()
    return any(p.fullmatch(stripped) for p in ATOMIC_GLYPH_PATTERNS)


def singleton_basis(quote: str, rows: list[dict[str, Any]], index: Any) -> dict[str, Any]:
    """Why a T02 quote denotes exactly one object, or the blocking code."""
    if PLURAL_CUES.search(quote):
        return {"state": "blocked", "code": "EXPLICIT_PLURAL_REFERENCE"}
    match = OBJECT_SYMBOL_EN.fullmatch(quote.strip()) or OBJECT_SYMBOL_ZH.fullmatch(quote.strip())
    if match:
        return {
            "state": "supported",
            "rule": RULE_OBJECT_SYMBOL,
            "quote": quote,
            "symbol": match.group(1),
            "source_pointers": [r["ref"] for r in rows],
        }
    literal = quote.strip()
    if literal.startswith("$") and literal.endswith("$"):
        literal = literal[1:-1]
    if not (re.fullmatch(SYMBOL, literal) and rows):
        return {"state": "blocked", "code": "SINGLETON_BASIS_UNKNOWN"}
    proofs = []
    for row in rows:
        proof = _symbol_proofs(literal, row, index)
        if proof is None:
            return {"state": "blocked", "code": "SINGLETON_BASIS_UNKNOWN"}
        proofs.extend(proof)
    return {
        "state": "supported",
        "rule": RULE_ATOMIC_SYMBOL,
        "quote": quote,
        "symbol": literal,
        "source_pointers": [r["ref"] for r in rows] + proofs,
    }


def _symbol_proofs(literal: str, row: dict[str, Any], index: Any) -> list[dict[str, Any]] | None:
    target = index.rows["physical_nodes"].get(row["target"])
    if target is None:
        return None
    if target["symbol"] == literal:
        return [
            {
                **row["ref"],
                "collection": "physical_nodes",
                "record_id": target["id"],
                "target_field": "symbol",
            }
        ]
    visuals = index.rows["visual_nodes"]
    links = [
        b
        for b in index.pass4.get("bindings", [])
        if b["type"] in ("labels", "represents")
        and b["to_id"] == target["id"]
        and b["from_id"] in visuals
        and visuals[b["from_id"]]["type"] == "text_glyph"
        and visuals[b["from_id"]]["text"].strip() == literal
    ]
    if not links:
        return None
    return [
        {**row["ref"], "collection": "bindings", "record_id": b["id"], "target_field": "to_id"} for b in links
    ]
