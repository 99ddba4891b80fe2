"""Matrix rows for review: queue, slot, blind page, the reveal gate (HTML and API), agreement, audit, signoff,
accounting. ``populate`` gives the matrix probe reviewer a claimed slot with blind answers on every probe of it
(the strict blind order), so only that reviewer may see the target; everyone else (admin included) gets 403."""

from __future__ import annotations

from typing import Any

from probes.models import Probe
from review import services
from review.models import CONFIRMATION_KEYS, Role
from review.selectors import slot_work
from tests.endpoint_matrix import ADJ, ADM, ANON, KEY, PRB, Case, World, only, statuses

REVIEWER_PAGE = {**only({PRB: 200}), ANON: 302}
REVIEWER_API = only({PRB: 200})
QUEUE_PAGE = {**only({PRB: 200, ADJ: 200, ADM: 200}), ANON: 302}
AGREEMENT_PAGE = {**only({ADJ: 200, ADM: 200}), ANON: 302}
ADMIN_PAGE = {**only({ADM: 200}), ANON: 302}
KEY_PAGE = {**only({KEY: 200}), ANON: 302}


def _probe(w: World, suffix: str = "") -> str:
    return f"/review/slots/{w.review_slot}/probes/{w.review_probe}/{suffix}"


def _api(w: World, suffix: str = "") -> str:
    return f"/api/review/slots/{w.review_slot}/probes/{w.review_probe}/{suffix}"


CASES: list[Case] = [
    Case("review queue page", "get", "/review/", expected=QUEUE_PAGE, fmt=None),
    Case(
        "review slot page",
        "get",
        lambda w: f"/review/slots/{w.review_slot}/",
        expected=REVIEWER_PAGE,
        fmt=None,
    ),
    Case("review blind page", "get", lambda w: _probe(w), expected=REVIEWER_PAGE, fmt=None),
    Case("review target page", "get", lambda w: _probe(w, "target/"), expected=REVIEWER_PAGE, fmt=None),
    Case(
        "review attachment",
        "get",
        lambda w: _probe(w, f"attachments/{w.review_asset}"),
        expected=REVIEWER_PAGE,
        fmt=None,
    ),
    Case(
        "review parent original image",  # the reveal page's original images: the slot's reviewer, after the gate
        "get",
        lambda w: _probe(w, f"originals/{w.review_original}"),
        expected=REVIEWER_PAGE,
        fmt=None,
    ),
    Case(
        "review parent original image of no such id",
        "get",
        lambda w: _probe(w, "originals/img_999"),
        expected={**only({PRB: 404}), ANON: 302},
        fmt=None,
    ),
    Case("review agreement page", "get", "/review/agreement/", expected=AGREEMENT_PAGE, fmt=None),
    Case("review accounting page", "get", "/review/accounting/", expected=AGREEMENT_PAGE, fmt=None),
    Case("review audit page", "get", "/review/audit/", expected=ADMIN_PAGE, fmt=None),
    Case("review signoff page", "get", "/review/signoff/", expected=ADMIN_PAGE, fmt=None),
    Case("review queue api", "get", "/api/review/queue/", expected=only({PRB: 200, ADJ: 200, ADM: 200})),
    Case(
        "review claim api bad body",
        "post",
        "/api/review/queue/",
        {"role": "nobody"},
        expected=only({PRB: 400, ADJ: 400, ADM: 400}),
    ),
    Case(
        "review queue api, a bad cursor",
        "get",
        "/api/review/queue/?cursor=not-a-cursor",
        expected=only({PRB: 404, ADJ: 404, ADM: 404}),
    ),
    Case("review slot api", "get", lambda w: f"/api/review/slots/{w.review_slot}/", expected=REVIEWER_API),
    Case(  # asked once the slot is loaded: a missing slot is a 404 for every signed-in user
        "review slot api missing", "get", "/api/review/slots/999999/", expected=statuses(404, anonymous=403)
    ),
    Case(
        "review public probe api, a probe not of the slot",
        "get",
        lambda w: f"/api/review/slots/{w.review_slot}/probes/PAQ-no-such-probe/",
        expected=only({PRB: 404}),
    ),
    Case("review public probe api", "get", lambda w: _api(w), expected=REVIEWER_API),
    Case("review target api", "get", lambda w: _api(w, "target/"), expected=REVIEWER_API),
    Case(
        "review blind api again",
        "post",
        lambda w: _api(w, "blind/"),
        {"binding": ["E1"]},
        expected=only({PRB: 409}),
    ),
    Case(
        "review decision api bad body",
        "post",
        lambda w: _api(w, "decision/"),
        {"status": "maybe"},
        expected=only({PRB: 400}),
    ),
    Case(  # a valid body: the slot's reviewer records it (201 with the outcome), nobody else may
        "review decision api valid",
        "post",
        lambda w: _api(w, "decision/"),
        lambda w: w.review_decision_body,
        expected=only({PRB: 201}),
    ),
    Case("review agreement api", "get", "/api/review/agreement/", expected=only({ADJ: 200, ADM: 200})),
    Case("review campaigns api", "get", "/api/review/campaigns/", expected=only({ADM: 200})),
    Case(
        "review campaigns api, a bad cursor",
        "get",
        "/api/review/campaigns/?cursor=not-a-cursor",
        expected=only({ADM: 404}),
    ),
    Case(
        "review blind order api, an unknown order",
        "post",
        "/api/review/blind-order/",
        {"context": "development", "blind_order": "whenever"},
        expected=only({ADM: 400}),
    ),
    Case(
        "review blind order api, an unknown context",
        "post",
        "/api/review/blind-order/",
        {"context": "audit:999999", "blind_order": "strict"},
        expected=only({ADM: 404}),
    ),
    Case("review plan api missing", "get", "/api/review/plans/999999/", expected=only({ADM: 404})),
    Case(
        "review signoff api incomplete",
        "post",
        "/api/review/signoffs/",
        {"mode": "individual", "confirmations": {}, "evidence_ref": "x"},
        expected=only({ADM: 400}),
    ),
    # writes through pages (form posts redirect back with a message) and the audit API
    Case(
        "review claim page unknown role",
        "post",
        "/review/claim/",
        {"role": "nobody", "context": "development"},
        expected={**only({PRB: 302, ADJ: 302, ADM: 302}), ANON: 302},
        fmt=None,
    ),
    Case(
        "review audit campaign page",
        "get",
        lambda w: f"/review/audit/{w.review_campaign}/",
        expected=ADMIN_PAGE,
        fmt=None,
    ),
    Case(
        "review audit new campaign page",
        "post",
        "/review/audit/",
        {},
        expected={**only({ADM: 302}), ANON: 302},
        fmt=None,
    ),
    Case(
        "review audit draw plan page",
        "post",
        lambda w: f"/review/audit/{w.review_campaign}/",
        {"action": "plan"},
        expected={**only({ADM: 302}), ANON: 302},
        fmt=None,
    ),
    Case(
        "review signoff page post incomplete",
        "post",
        "/review/signoff/",
        {"mode": "individual"},
        expected={**only({ADM: 302}), ANON: 302},
        fmt=None,
    ),
    Case("review campaign create api", "post", "/api/review/campaigns/", {}, expected=only({ADM: 201})),
    Case(
        "review plan create api dev incomplete",
        "post",
        lambda w: f"/api/review/campaigns/{w.review_campaign}/plans/",
        {},
        expected=only({ADM: 400}),
    ),
    Case(
        "review plan assess api missing",
        "post",
        "/api/review/plans/999999/assess/",
        {},
        expected=only({ADM: 404}),
    ),
    # a slot with blind answers stays with its reviewer; only the slot's reviewer may even ask
    Case(
        "review slot release api answered",
        "post",
        lambda w: f"/api/review/slots/{w.review_slot}/release/",
        {},
        expected=only({PRB: 409}),
    ),
    Case(
        "review slot release page answered",
        "post",
        lambda w: f"/review/slots/{w.review_slot}/release/",
        {},
        expected={**only({PRB: 302}), ANON: 302},
        fmt=None,
    ),
    Case(
        "review blind order api",
        "post",
        "/api/review/blind-order/",
        {"context": "development", "blind_order": "kit"},
        expected=only({ADM: 200}),
    ),
    Case(
        "review blind order api bad body",
        "post",
        "/api/review/blind-order/",
        {"context": "development", "blind_order": "lenient"},
        expected=only({ADM: 400}),
    ),
    Case(
        "review blind order page",
        "post",
        "/review/blind-order/",
        {"context": "development", "blind_order": "strict"},
        expected={**only({ADM: 302}), ANON: 302},
        fmt=None,
    ),
]


def populate(world: World, users: dict[str, Any]) -> None:
    if not Probe.objects.exists():  # the probes area normally compiled the demo parent already
        from tests.endpoint_matrix.probes_cases import populate as probes_populate

        probes_populate(world, users)
    slot = services.review_claim(reviewer=users[PRB], role=Role.PRIMARY, context="development")
    for each in slot_work(slot):
        services.review_submit_blind(
            slot=slot,
            probe=each,
            reviewer=users[PRB],
            given=services.BlindAnswerIn(
                binding=each.key.gold_aliases,
                read={r["anchor_alias"]: r["expected"] for r in each.key.key["read_targets"]},
            ),
        )
    probe = Probe.objects.select_related("key").get(logical_probe_id=slot.blind_first_probe_id)
    empty = not probe.key.key["packet_plan"]["observation_ids"]
    world.review_decision_body = {
        "status": "approved",
        "severity": "none",
        "confirmations": dict.fromkeys(CONFIRMATION_KEYS, True),
        "packet_state": "approved_empty" if empty else "approved_nonempty",
        "packet_empty_reason": "no_independent_readable_primitive" if empty else "",
    }
    world.review_slot = slot.pk
    world.review_probe = probe.logical_probe_id
    world.review_asset = probe.attachment_ids[0]
    world.review_original = probe.parent.images.order_by("ordinal").values_list("image_id", flat=True)[0]
    world.review_campaign = services.audit_campaign_create(actor=users[ADM]).pk


CASES += [
    # a Kit draft carries every probe's key: the Kit decision pages are for key holders only
    Case("review kit decisions page", "get", "/review/kit-decisions/", expected=KEY_PAGE, fmt=None),
    Case(
        "review kit decisions post without file",
        "post",
        "/review/kit-decisions/",
        {"action": "decisions"},
        expected={**only({KEY: 302}), ANON: 302},
        fmt=None,
    ),
    # our decisions as a Kit decision file: key holders only (no draft here: the key holder is told so)
    Case(
        "review kit decisions download of no such draft",
        "get",
        "/review/kit-decisions/export/?draft=" + "f" * 64,
        expected={**only({KEY: 302}), ANON: 302},
        fmt=None,
    ),
    Case(
        "review kit decisions export api of no such draft",
        "get",
        "/api/review/kit-drafts/" + "f" * 64 + "/decisions/",
        expected=only({KEY: 404}),
    ),
]
