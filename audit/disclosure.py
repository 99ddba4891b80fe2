"""Who may know a target, and who has been shown one (DESIGN §5): the one rule every page, API and download asks.

A probe's private side (gold alias, expected reading, the entity ids behind its aliases, its key) and a parent's
answer and solution are shown only to **key holders**: the admin role plus the permission
``probes.view_private_mapping`` (the "scorer" permission). Whatever is shown is recorded with :func:`disclose`,
per user and probe (or per parent for its answer), and whoever holds the permission or was ever shown a target
of a parent never reviews that parent blind (:func:`exposed_parent_ids`, asked by the review queue and the
blind answer). A reviewer's own reveal after their blind answer is the review protocol, not a disclosure.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet
from django.utils.functional import SimpleLazyObject

from physalign_site.roles import is_admin

from .models import Disclosure

KEY_PERMISSION = "probes.view_private_mapping"


def can_know_targets(user: Any) -> bool:
    """The key-holder permission: the admin role *and* the Django permission ``probes.view_private_mapping``."""
    has_perm = getattr(user, "has_perm", None)
    return is_admin(user) and callable(has_perm) and bool(has_perm(KEY_PERMISSION))


def disclose(
    user: Any,
    *,
    where: str,
    probes: Iterable[tuple[int, str]] = (),
    parents: Iterable[int] = (),
) -> None:
    """Record that ``user`` was shown the targets of ``probes`` (``(parent pk, logical probe id)`` pairs) and
    the answer and solution of ``parents`` (parent pks). Idempotent: the first showing is kept."""
    if not getattr(user, "is_authenticated", False):
        return
    rows = {(parent, probe) for parent, probe in probes} | {(parent, "") for parent in parents}
    if rows:
        Disclosure.objects.bulk_create(
            [
                Disclosure(user_id=user.pk, parent_id=parent, logical_probe_id=probe, where=where[:100])
                for parent, probe in sorted(rows)
            ],
            ignore_conflicts=True,
            batch_size=2000,
        )


def _shown_to(user: Any) -> QuerySet[Disclosure]:
    pk = getattr(user, "pk", None)
    return Disclosure.objects.filter(user_id=pk) if pk is not None else Disclosure.objects.none()


def exposed_parent_ids(user: Any) -> QuerySet[Disclosure, int]:
    """The parents any of whose targets (or answer) ``user`` has been shown: a subquery for ``parent_id__in``."""
    return _shown_to(user).values_list("parent_id", flat=True)


def has_seen_targets(user: Any, parent_id: int) -> bool:
    return _shown_to(user).filter(parent_id=parent_id).exists()


def may_show_targets(
    user: Any,
    *,
    where: str,
    probes: Iterable[tuple[int, str]] = (),
    parents: Iterable[int] = (),
) -> bool:
    """The call a page, API or download makes before it shows a private field: True (and the showing recorded)
    for a key holder, False for everyone else, who is shown the public side only."""
    if not can_know_targets(user):
        return False
    disclose(user, where=where, probes=probes, parents=parents)
    return True


def key_holder_context(request: Any) -> dict[str, Any]:
    """Templates ask ``key_holder`` before they link to a page of targets (a context processor). Lazy: the
    permission is looked up only on a page that asks."""
    user = getattr(request, "user", None)
    return {"key_holder": SimpleLazyObject(lambda: can_know_targets(user))}
