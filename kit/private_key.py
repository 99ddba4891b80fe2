"""Typed, read-only access to a probe's private key (Kit §2.9 ``key``): every reader of the key goes through
these names instead of string keys, so the key's shape is written down once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ProbeKeyView:
    raw: Mapping[str, Any]

    @property
    def candidate_map(self) -> Mapping[str, Mapping[str, Any]]:
        """Display alias → the target it stands for (``{"id": entity id, ...}``)."""
        return self.raw["candidate_map"]  # type: ignore[no-any-return]  # JSON: checked by the compiler

    @property
    def aliases(self) -> list[str]:
        return sorted(self.candidate_map)

    @property
    def alias_to_entity(self) -> dict[str, str]:
        return {alias: str(target["id"]) for alias, target in self.candidate_map.items()}

    @property
    def gold_targets(self) -> list[Mapping[str, Any]]:
        return list(self.raw["gold_targets"])

    @property
    def gold_entity_ids(self) -> list[str]:
        return sorted({str(target["id"]) for target in self.gold_targets})

    @property
    def gold_aliases(self) -> list[str]:
        gold = set(self.gold_entity_ids)
        return sorted(alias for alias, entity in self.alias_to_entity.items() if entity in gold)

    @property
    def read_targets(self) -> list[Mapping[str, Any]]:
        return list(self.raw.get("read_targets", []))

    @property
    def response_contract(self) -> Mapping[str, Any]:
        return self.raw["response_contract"]  # type: ignore[no-any-return]  # JSON: checked by the compiler

    @property
    def binding_key(self) -> str:
        return str(self.response_contract["binding_key"])

    @property
    def read_shape(self) -> str | None:
        shape = self.response_contract.get("read_shape")
        return None if shape is None else str(shape)

    @property
    def source_records(self) -> Any:
        """Where each target came from in the source documents (None in keys compiled before they were kept)."""
        return self.raw.get("source_records")

    @property
    def packet_plan(self) -> Mapping[str, Any]:
        return self.raw["packet_plan"]  # type: ignore[no-any-return]  # JSON: checked by the compiler

    @property
    def observation_ids(self) -> list[str]:
        return list(self.packet_plan["observation_ids"])

    @property
    def packet_state(self) -> str:
        return str(self.packet_plan["state"])
