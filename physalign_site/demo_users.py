"""Demo logins for the local demo (``make run``): one user per role, password = name + "-demo"."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from .roles import ALL_ROLES

DEMO_PASSWORD_SUFFIX = "-demo"


@transaction.atomic
def demo_users_ensure() -> list[tuple[str, str]]:
    """Create (or reset) the demo users; returns (username, password) pairs. Never for production."""
    User = get_user_model()
    logins = []
    for role in ALL_ROLES:
        user, _ = User.objects.get_or_create(username=role, defaults={"email": f"{role}@demo.invalid"})
        password = role + DEMO_PASSWORD_SUFFIX
        user.set_password(password)
        user.is_staff = user.is_superuser = role == "admin"
        user.is_active = True
        user.save()
        user.groups.set([Group.objects.get_or_create(name=role)[0]])
        logins.append((role, password))
    # a second probe reviewer, so two independent reviewers can take the demo probes (Kit §6.5), and a second
    # annotator, who annotates a sample of the demo problems a second time (double annotation, issue 31)
    for username, role in (("probe_reviewer2", "probe_reviewer"), ("annotator2", "annotator")):
        second, _ = User.objects.get_or_create(
            username=username, defaults={"email": f"{username}@demo.invalid"}
        )
        second.set_password(username + DEMO_PASSWORD_SUFFIX)
        second.is_staff = second.is_superuser = False
        second.is_active = True
        second.save()
        second.groups.set([Group.objects.get(name=role)])
        logins.append((username, username + DEMO_PASSWORD_SUFFIX))
    return logins
