"""The workspace's own checks (issue 15 item 10): what its hints promise, stricter than the Kit.

Each case starts from a document the Kit validator accepts, changes one thing, and asserts the exact
(code, path) list of ``workspace_checks``; the Kit validator's verdict on the same document is asserted
too, so a check that is stricter than the Kit stays out of ``validate_pass_document`` (and out of what
imports and compiles from Kit files).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kit.passes.validator import (
    ISSUE_CODES,
    MENTION_OCCURRENCE_AMBIGUOUS,
    MENTION_OCCURRENCE_REPAIR_PROPOSED,
    MENTION_ORDER_INVALID,
    PASS2_PHYSICAL_NODES_EMPTY,
    PHYSICAL_NODE_UNBOUND,
    TEXT_GLYPH_TEXT_EMPTY,
    VALUE_BLANK,
    WORKSPACE_ISSUE_CODES,
    checked_issues,
    checked_workspace_issues,
    validate_pass_document,
    workspace_checks,
)
from tests.annotation.test_validator import (
    binding,
    codes_and_paths,
    full_context,
    pass1_doc,
    pass2_doc,
    pass3_doc,
    pass4_doc,
    pass5_doc,
    physical,
)

DOCS = {1: pass1_doc, 2: pass2_doc, 3: pass3_doc, 4: pass4_doc, 5: pass5_doc}


@pytest.mark.parametrize("pass_no", [1, 2, 3, 4, 5])
def test_valid_documents_pass_the_workspace_checks_too(pass_no):
    assert workspace_checks(pass_no, DOCS[pass_no](), full_context()) == []


def test_workspace_codes_are_not_kit_codes():
    assert not set(WORKSPACE_ISSUE_CODES) & set(ISSUE_CODES)


@pytest.mark.parametrize("text", ["", "   ", "\u3000"])
def test_text_glyph_with_empty_visible_text(text):
    doc = pass1_doc()
    doc["visual_nodes"][2]["text"] = text  # v003, the glyph "m"
    assert validate_pass_document(1, doc, full_context()) == []  # the Kit keeps it (its compiler skips it)
    issues = workspace_checks(1, doc, full_context())
    assert codes_and_paths(issues) == [(TEXT_GLYPH_TEXT_EMPTY, "visual_nodes[2].text")]
    assert issues[0].message.startswith("Text glyph v003 has no visible text")


def test_empty_text_is_fine_on_a_region_that_is_not_a_glyph():
    doc = pass1_doc()
    assert doc["visual_nodes"][0]["type"] == "object_shape" and doc["visual_nodes"][0]["text"] == ""
    assert workspace_checks(1, doc, full_context()) == []


def test_pass2_with_no_entity_although_pass1_has_regions():
    doc = {**pass2_doc(), "physical_nodes": [], "bindings": []}
    assert validate_pass_document(2, doc, full_context()) == []  # the Kit accepts an empty Pass 2
    assert codes_and_paths(workspace_checks(2, doc, full_context())) == [
        (PASS2_PHYSICAL_NODES_EMPTY, "physical_nodes")
    ]


def test_pass2_with_no_entity_is_fine_when_pass1_has_no_region():
    doc = {**pass2_doc(), "physical_nodes": [], "bindings": []}
    context = replace(full_context(), pass1={**pass1_doc(), "visual_nodes": []})
    assert workspace_checks(2, doc, context) == []
    assert workspace_checks(2, doc, replace(full_context(), pass1=None)) == []


def test_pass2_entity_listing_anchors_that_no_binding_binds():
    doc = pass2_doc()
    doc["bindings"] = [b for b in doc["bindings"] if b["to_id"] != "p001"]  # block keeps anchor v001
    doc["bindings"] = [{**b, "id": f"b{i:03d}"} for i, b in enumerate(doc["bindings"], start=1)]
    assert validate_pass_document(2, doc, full_context()) == []  # the Kit checks only the anchor list
    issues = workspace_checks(2, doc, full_context())
    assert codes_and_paths(issues) == [(PHYSICAL_NODE_UNBOUND, "physical_nodes[0]")]
    assert issues[0].message.startswith("Entity p001 is bound to nothing")


def test_pass2_entity_without_any_anchor_is_the_kits_issue_once_with_a_binding_hint():
    doc = pass2_doc()
    doc["physical_nodes"].append(physical("p004", "body", "second block", [], [], provenance=["IMAGE"]))
    assert codes_and_paths(validate_pass_document(2, doc, full_context())) == [
        ("PROVENANCE_EVIDENCE_MISMATCH", "physical_nodes[3].provenance"),
        ("PASS2_VISUAL_ANCHOR_MISSING", "physical_nodes[3].visual_anchor_ids"),
    ]
    message = validate_pass_document(2, doc, full_context())[1].message
    assert message.startswith("Entity p004 is bound to no region") and "then B to bind it" in message
    assert workspace_checks(2, doc, full_context()) == []  # not reported twice


def test_pass3_new_entity_bound_to_nothing():
    doc = pass3_doc()
    # p005: new in Pass 3 (Pass 2 has p001–p003), with no anchor, no mention and no refers_to binding
    doc["new_or_updated_physical_nodes"].append(
        physical("p005", "body", "pulley", [], [], provenance=["TEXT"])
    )
    issues = workspace_checks(3, doc, full_context())
    index = len(doc["new_or_updated_physical_nodes"]) - 1
    assert codes_and_paths(issues) == [(PHYSICAL_NODE_UNBOUND, f"new_or_updated_physical_nodes[{index}]")]
    assert issues[0].message.startswith("Entity p005 is bound to nothing")


def test_pass3_entity_referred_to_by_a_mention_is_bound():
    doc = pass3_doc()
    doc["new_or_updated_physical_nodes"].append(
        physical("p005", "body", "pulley", [], [], provenance=["TEXT"])
    )
    doc["bindings"].append(binding("b005", "refers_to", "m001", "p005"))
    assert workspace_checks(3, doc, full_context()) == []


def _last_stem_mention_past_its_matches(doc, occurrence):
    """The last stem mention (m006, "force F") set past its quote's matches: no mention follows it in the stem,
    so the Kit finds the document valid (its order rule puts the mention at the end of the stem)."""
    doc["text_mentions"][5]["occurrence"] = occurrence


@pytest.mark.parametrize("pass_no", [3, 4])
def test_an_occurrence_past_a_unique_quote_is_a_proposed_repair_here_and_valid_in_the_kit(pass_no):
    doc = DOCS[pass_no]()
    _last_stem_mention_past_its_matches(doc, 7)

    assert validate_pass_document(pass_no, doc, full_context()) == []
    (issue,) = workspace_checks(pass_no, doc, full_context())
    assert (issue.code, issue.path) == (MENTION_OCCURRENCE_REPAIR_PROPOSED, "text_mentions[5].occurrence")
    assert issue.message == (
        "The quote 'force F' occurs only once in the stem text, not 7 times; a repair to occurrence 1 is "
        "proposed. Set occurrence to 1."
    )


def test_an_occurrence_past_an_ambiguous_quote_asks_which_one_is_meant():
    doc = pass3_doc()
    doc["text_mentions"][0]["occurrence"] = 3  # "block" occurs twice

    assert codes_and_paths(validate_pass_document(3, doc, full_context())) == [
        (MENTION_ORDER_INVALID, "text_mentions[1]")
    ]
    (issue,) = workspace_checks(3, doc, full_context())
    assert (issue.code, issue.path) == (MENTION_OCCURRENCE_AMBIGUOUS, "text_mentions[0].occurrence")
    assert issue.message == (
        "The quote 'block' occurs 2 times in the stem text, so occurrence 3 does not exist; say which one is meant."
    )


@pytest.mark.parametrize(
    ("pass_no", "path"),
    [
        (4, "constraints.0.kind"),
        (4, "ambiguities.0.description"),
        (4, "relations.0.predicate"),
        (3, "quantities.0.kind"),
        (3, "query_target.target_kind"),
    ],
)
def test_a_value_of_only_white_space_is_blank_here_and_valid_in_the_kit(pass_no, path):
    doc = DOCS[pass_no]()
    *parents, last = [int(part) if part.isdigit() else part for part in path.split(".")]
    record = doc
    for part in parents:
        record = record[part]
    record[last] = "  "

    kit_path = path.replace(".0.", "[0].")
    assert validate_pass_document(pass_no, doc, full_context()) == []
    assert codes_and_paths(workspace_checks(pass_no, doc, full_context())) == [(VALUE_BLANK, kit_path)]
    record[last] = ""
    assert [i.code for i in validate_pass_document(pass_no, doc, full_context())] == ["VALUE_EMPTY"]


@pytest.mark.parametrize("document", [None, [], "x", {"visual_nodes": "nope"}, {"physical_nodes": [1, "a"]}])
@pytest.mark.parametrize("pass_no", [1, 2, 3])
def test_malformed_documents_give_no_workspace_issue_and_never_raise(pass_no, document):
    assert workspace_checks(pass_no, document, full_context()) == []


def test_checked_workspace_issues_is_the_kit_issues_then_the_workspace_ones():
    doc = pass1_doc()
    doc["visual_nodes"][2]["text"] = ""
    doc["visual_nodes"][0]["confidence"] = "sure"
    assert [i["code"] for i in checked_issues(1, doc, full_context())] == ["ENUM_INVALID"]
    assert [(i["code"], i["path"]) for i in checked_workspace_issues(1, doc, full_context())] == [
        ("ENUM_INVALID", "visual_nodes[0].confidence"),
        (TEXT_GLYPH_TEXT_EMPTY, "visual_nodes[2].text"),
    ]


def test_a_non_kit_domain_says_how_it_is_exported():
    doc = {**pass4_doc(), "domain": "optics"}
    issues = validate_pass_document(4, doc, full_context())
    assert codes_and_paths(issues) == [("ENUM_INVALID", "domain")]
    assert "Kit's Pass 4 domains: mechanics, electromagnetism, mixed" in issues[0].message
    assert "keeps its own domain" in issues[0].message
