"""A release's page counts probes per interface (the paper's T02-single, T03-image, T03-text), and its pools in
a table of their own (issue 28 item 12)."""

from __future__ import annotations

import re

from probes.models import Probe
from probes.release_views import release_interfaces
from tests.conftest import make_user


def test_interfaces_are_counted_from_the_release_items(release):
    # the demo parent compiles one probe of each interface, all approved and released
    assert sorted(Probe.objects.values_list("interface", flat=True)) == [
        "T02-single",
        "T03-image",
        "T03-text",
    ]
    assert [(r["interface"], r["probes"], r["parents"]) for r in release_interfaces(release)] == [
        ("T02-single", 1, 1),
        ("T03-image", 1, 1),
        ("T03-text", 1, 1),
    ]
    release.items.filter(interface="T03-text").delete()  # an interface the release lacks is shown as 0
    assert [(r["interface"], r["probes"]) for r in release_interfaces(release)][2] == ("T03-text", 0)


def test_the_release_page_shows_interfaces_and_pools_under_their_own_headings(
    client, release, django_user_model
):
    client.force_login(make_user(django_user_model, "annie", "annotator"))
    assert client.get(f"/releases/{release.release_id}/").status_code == 403
    client.force_login(make_user(django_user_model, "boss", "admin"))
    html = client.get(f"/releases/{release.release_id}/").content.decode()
    interfaces = html[
        html.index('data-testid="release-interfaces"') : html.index('data-testid="release-pools"')
    ]
    rows = re.findall(
        r'data-interface="([^"]+)"><th scope="row"><span class="mono">\1</span><br><span class="muted">[^<]+</span>'
        r'</th><td class="num">(\d+)</td><td class="num">(\d+)</td>',
        interfaces,
    )
    assert rows == [("T02-single", "1", "1"), ("T03-image", "1", "1"), ("T03-text", "1", "1")]
    assert "Probes per interface" in html and "Probes per evaluation pool" in html
    pools = html[html.index('data-testid="release-pools"') :]
    for pool, value in release.counts.items():
        assert f'data-pool="{pool}">' in pools
        assert f'<td class="num">{value["probes"]}</td><td class="num">{value["mothers"]}</td>' in pools
    assert 'data-pool="B"' not in interfaces  # pools are not called interfaces any more
