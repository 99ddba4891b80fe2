"""What the uploader may change: approvals and private fields only for those who may."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import permissions


@dataclass(frozen=True)
class ImportAuthority:
    """What the uploader may do through a file, exactly what they could do on the pages.

    - ``may_review``: review state in the file (approvals, rejections, exclusions) is imported only for
      source reviewers and admins; it is recorded as an imported approval *by the uploader*, with the
      file's reviewer name kept as provenance text. The Kit trusts whatever ``reviews/state.json`` says;
      this app does not (its rule is weaker than ours here, and ours wins).
    - ``may_edit_private``: answer and solution of an existing problem are changed only by admins; for
      anyone else they are kept whatever the file says, and the row's outcome never depends on them.

    - ``may_change_approved_content``: the statement, question, options and images of a problem with an
      approved pass change only by those who may review (source reviewers and admins); the approvals then go
      stale (DESIGN §5). For anyone else such a row is refused whole: nothing of that problem changes.
    - ``may_edit_sources``: a source's fields (name, licence, citation, URL), and which source an existing problem
      belongs to, change only by admins; anyone else's differing value is refused and reported.

    ``actor=None`` is a management command (``load_demo``, ``import_kit_workspace``): an operator with
    shell access to the server, who holds every right anyway.
    """

    may_review: bool
    may_edit_private: bool
    may_edit_sources: bool = False
    user: Any = None

    @property
    def may_change_approved_content(self) -> bool:
        return self.may_review

    @classmethod
    def of(cls, actor: Any) -> ImportAuthority:
        if actor is None:
            return cls(may_review=True, may_edit_private=True, may_edit_sources=True)
        user = actor if getattr(actor, "is_authenticated", False) else None
        return cls(
            may_review=permissions.can_import_review_state(actor),
            may_edit_private=permissions.can_edit_private_fields(actor),
            may_edit_sources=permissions.can_manage_sources(actor),
            user=user,
        )
