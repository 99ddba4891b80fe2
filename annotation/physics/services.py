"""The app's side of the physics checks: which rules block, the severity of each finding, the one function every
caller asks for a document's physics issues, and the check result a save records on the document.

The pure checker (``annotation.physics.checks``) says what is physically wrong; this module says what that means
here. A rule is a *warning* unless an admin made it *blocking* (a ``PhysicsRuleSetting`` row): warnings are shown
and never refuse anything, blocking findings refuse submit (``annotation.services.pass_document_submit``). A Kit
import never runs the checks (its importer writes documents without ``pass_document_save``), so it is never
blocked by them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from audit.services import event_record
from physalign_site.errors import ApplicationError

from ..models import ParentProblem, PhysicsRuleSetting
from .checks import Finding, Rule, RuleSet, check_document, load_rules
from .permissions import can_manage_physics_rules

BLOCKING, WARNING = "blocking", "warning"
SEVERITIES = (WARNING, BLOCKING)
CHECKED_PASSES = (
    1,
    2,
    3,
    4,
)  # the answer-blind passes; Pass 5 aligns solution steps and has no physics records


@dataclass(frozen=True)
class RuleView:
    """One rule as the page and the API show it: the rule (data) and its severity here."""

    rule: Rule
    blocking: bool

    @property
    def code(self) -> str:
        return self.rule.code

    @property
    def severity(self) -> str:
        return BLOCKING if self.blocking else WARNING


def blocking_codes() -> frozenset[str]:
    """The codes admins made blocking (one query); every other rule is a warning."""
    return frozenset(PhysicsRuleSetting.objects.filter(blocking=True).values_list("code", flat=True))


def physics_rule_list(*, rules: RuleSet | None = None) -> list[RuleView]:
    """Every rule of the shipped rule set, in its order, with its severity (one query)."""
    rules = rules or load_rules()
    blocking = blocking_codes()
    return [RuleView(rule=rule, blocking=rule.code in blocking) for rule in rules.rules]


def _rule_or_404(code: str, rules: RuleSet) -> Rule:
    for rule in rules.rules:
        if rule.code == code:
            return rule
    raise ApplicationError(
        f"No physics rule {code!r} in rule set {rules.version}.", code="physics_rule_not_found", status=404
    )


@transaction.atomic
def physics_rule_set_blocking(*, code: str, blocking: bool, actor: Any) -> RuleView:
    """Make one rule blocking (it refuses submit) or a warning again: admins only, audited with the before and
    after. Setting what is already set changes nothing and records nothing."""
    if not can_manage_physics_rules(actor):
        raise ApplicationError(
            "Only an admin may change whether a physics rule blocks.",
            code="physics_rule_change_forbidden",
            status=403,
        )
    rules = load_rules()
    rule = _rule_or_404(code, rules)
    setting = PhysicsRuleSetting.objects.select_for_update().filter(code=code).first()
    before = setting.blocking if setting is not None else False
    if before == blocking:
        return RuleView(rule=rule, blocking=blocking)
    if setting is None:
        setting = PhysicsRuleSetting(code=code)
    setting.blocking = blocking
    setting.updated_by = actor if getattr(actor, "is_authenticated", False) else None
    setting.save()
    event_record(
        actor=actor,
        verb="physics_rule.set_blocking",
        obj=setting,
        before={"code": code, "blocking": before, "rules_version": rules.version},
        after={"code": code, "blocking": blocking, "rules_version": rules.version},
    )
    return RuleView(rule=rule, blocking=blocking)


def issues_with_severity(findings: list[Finding], *, blocking: Collection[str]) -> list[dict[str, Any]]:
    """Each finding as an issue of the workspace's list (``code, path, message, record_id, rule``) with its
    ``severity``: "blocking" when its rule's code is in ``blocking``, else "warning"."""
    return [
        {**finding.as_issue(), "severity": BLOCKING if finding.code in blocking else WARNING}
        for finding in findings
    ]


def physics_issues(
    *,
    parent: ParentProblem,
    pass_no: int,
    document: Any,
    earlier: Mapping[int, Any],
    blocking: Collection[str] | None = None,
    rules: RuleSet | None = None,
) -> list[dict[str, Any]]:
    """The physics issues of ``document`` as Pass ``pass_no`` of ``parent``, each with its severity: what the
    workspace, the pass API, the review page, save and submit all show. ``earlier`` maps pass numbers to the
    documents stored for this parent (later ones are ignored), so a caller that has them loaded asks no query;
    ``blocking`` is ``blocking_codes()`` when the caller has it (else one query, only if there is a finding)."""
    if pass_no not in CHECKED_PASSES or not isinstance(document, dict):
        return []
    findings = check_document(
        pass_no,
        document,
        earlier={n: doc for n, doc in earlier.items() if n < pass_no and isinstance(doc, dict)},
        question=parent.query,
        stem=parent.stem,
        rules=rules,
    )
    if not findings:
        return []
    return issues_with_severity(findings, blocking=blocking_codes() if blocking is None else blocking)


def physics_check_result(issues: list[dict[str, Any]], *, rules: RuleSet | None = None) -> dict[str, Any]:
    """What a save records on the document (``PassDocument.physics_check``): the rule-set version the check ran
    under and its findings, each with the severity it had then."""
    return {"rules_version": (rules or load_rules()).version, "findings": list(issues)}


def is_physics_issue(issue: Mapping[str, Any]) -> bool:
    """A physics finding among an issue list (the validator's issues carry no severity)."""
    return issue.get("severity") in SEVERITIES


def blocking_issues(issues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [issue for issue in issues if issue.get("severity") == BLOCKING]


def blocking_reason(issues: list[dict[str, Any]]) -> str:
    """The refusal's sentence: every blocking finding's code, where and what."""
    listed = "; ".join(
        f"{issue['code']} at {issue.get('path') or 'document'}: {issue['message']}" for issue in issues
    )
    return f"Blocked by physics rule{'s' if len(issues) != 1 else ''} an admin made blocking — {listed}"
