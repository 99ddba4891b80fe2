"""The agreement pages, CSVs and API over HTTP: admins only (never the second annotator), exact cells and CSV
rows, the per-parent page with its curation links, the filter, and flat query counts."""

from __future__ import annotations

import csv
import io

import pytest

from annotation.agreement.selectors import agreement_summary
from tests.annotation.agreement.world import build

pytestmark = pytest.mark.django_db

PAGE = "/agreement/"


def urls(world) -> list[str]:
    pair = f"{PAGE}pairs/{world.alice.pk}-{world.bob.pk}/passes/1"
    return [PAGE, f"{PAGE}pass1.csv", f"{PAGE}pass3.csv", f"{pair}/", f"{pair}.csv", "/api/agreement/"]


@pytest.mark.parametrize("role", ["annotator", "source_reviewer", "probe_reviewer", "adjudicator", "no_role"])
def test_only_admins_may_open_any_of_it(client, role_users, django_user_model, role):
    world = build(django_user_model, parents=1)
    user = role_users.get(role) or django_user_model.objects.create_user("plain", password="x")
    client.force_login(user)
    for url in urls(world):
        response = client.get(url)
        assert response.status_code == 403, url
        assert b"alice" not in response.content and b"agr_0" not in response.content


def test_the_second_annotator_never_sees_the_first_annotations_counts(client, django_user_model):
    world = build(django_user_model, parents=2)
    for user in (world.bob, world.carol):
        client.force_login(user)
        for url in urls(world):
            response = client.get(url)
            assert response.status_code == 403, url
            assert b"Regions, first" not in response.content and b"agr_0" not in response.content


def test_anonymous_visitors_go_to_the_login_page(client, django_user_model):
    world = build(django_user_model, parents=1)
    for url in urls(world)[:-1]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next="), url
    assert client.get("/api/agreement/").status_code in (401, 403)


def cells(html: str, table_id: str) -> list[list[str]]:
    """The text of each body row's cells of table ``table_id`` (tags stripped)."""
    import re

    body = html.split(f'id="{table_id}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body, flags=re.S)
    return [
        [
            re.sub(r"<span class=\"visually-hidden\">.*?</span>|<[^>]+>", "", c).strip()
            for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S)
        ]
        for row in rows
    ]


def test_the_admin_reads_the_summary(client, admin_user_role, django_user_model):
    world = build(django_user_model, parents=3, only_pass1=(2,))
    client.force_login(admin_user_role)
    response = client.get(PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    summary = agreement_summary()
    bob1 = summary.pair(world.alice.pk, world.bob.pk, 1).figures
    n = bob1["regions"]["first"]
    pass1 = cells(html, "table-pass1")
    assert [row[:5] for row in pass1] == [
        ["alice", "bob", "2", "2", str(n)],
        ["alice", "carol", "1", "1", pass1[1][4]],
    ]
    # recall: one dropped label on each of bob's two parents
    assert pass1[0][7:10] == [
        f"{(n - 2) / (n - 2):.3f}",
        f"{(n - 2) / n:.3f}",
        f"{2 * (n - 2) / (2 * n - 2):.3f}",
    ]
    assert pass1[0][10] == f"{bob1['regions']['mean_score']:.3f}"
    assert f'href="/agreement/pairs/{world.alice.pk}-{world.bob.pk}/passes/1/"' in html
    for table in ("pass1", "pass2", "pass3"):
        assert f'href="/agreement/{table}.csv"' in html
    pass3 = cells(html, "table-pass3")
    m = summary.pair(world.alice.pk, world.bob.pk, 3).figures["quantities"]["first"]
    assert pass3[0][:4] == ["alice", "bob", "1", "0"]  # Pass 3 is a draft: compared, not submitted
    unit = pass3[0][4 + 6 + 2 + 2 + 1]  # after the pair's 4 columns, the matching's 6, kind + n, κ + n, value
    assert unit == f"{(m - 1) / m:.3f}"
    assert "Cohen" in html and "ocr_label_v2_1" in html


def test_the_summary_csv_has_the_raw_figures(client, admin_user_role, django_user_model):
    world = build(django_user_model, parents=2)
    client.force_login(admin_user_role)
    response = client.get(f"{PAGE}pass3.csv")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="agreement-pass3.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(r["first_annotator"], r["second_annotator"], r["parents"], r["submitted"]) for r in rows] == [
        ("alice", "bob", "1", "0"),
        ("alice", "carol", "1", "0"),
    ]
    m = len(world.first_docs["agr_0"][3]["quantities"])
    assert rows[0]["quantities_matched"] == str(m)
    assert rows[0]["quantity_unit"] == f"{(m - 1) / m:.4f}"
    assert rows[0]["quantity_kind"] == rows[0]["quantity_value"] == rows[0]["quantity_owner"] == "1.0000"
    header = response.content.decode().splitlines()[0]
    assert header.startswith("first_annotator,second_annotator,parents,submitted,quantities_first,")


def test_a_pairs_page_has_a_row_per_parent_and_the_curation_links(client, admin_user_role, django_user_model):
    world = build(django_user_model, parents=3)
    client.force_login(admin_user_role)
    url = f"{PAGE}pairs/{world.alice.pk}-{world.bob.pk}/passes/1/"
    response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    rows = cells(html, "table-pass1-parents")
    assert [r[0] for r in rows] == ["agr_0", "agr_2"]
    assert [r[2] for r in rows] == ["submitted", "submitted"]
    for pid in ("agr_0", "agr_2"):
        n = len(world.first_docs[pid][1]["visual_nodes"])
        assert f'href="/problems/{pid}/passes/1/curate/"' in html
        row = next(r for r in rows if r[0] == pid)
        assert row[3:6] == [str(n), str(n - 1), str(n - 1)] and row[7] == f"{(n - 1) / n:.3f}"
    assert "agr_1" not in html  # carol's
    assert f'href="/agreement/pairs/{world.alice.pk}-{world.bob.pk}/passes/2/"' in html
    response = client.get(url.rstrip("/") + ".csv")
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="agreement-{world.alice.pk}-{world.bob.pk}-pass1.csv"'
    )
    lines = list(csv.reader(io.StringIO(response.content.decode())))
    assert (
        lines[0][-1] == "curation"
        and lines[1][0] == "agr_0"
        and lines[1][-1] == "/problems/agr_0/passes/1/curate/"
    )


def test_refusals_of_the_pages(client, admin_user_role, django_user_model):
    world = build(django_user_model, parents=1)
    client.force_login(admin_user_role)
    pair = f"{PAGE}pairs/{world.alice.pk}-{world.bob.pk}/passes"
    assert client.get(f"{pair}/4/").status_code == 404
    assert client.get(f"{PAGE}pairs/{world.alice.pk}-{world.carol.pk}/passes/1/").status_code == 404
    assert client.get(f"{PAGE}nope.csv").status_code == 404
    bad = client.get(PAGE, {"threshold": "2"})
    assert bad.status_code == 400 and b"less than or equal to 1" in bad.content
    assert client.get(PAGE, {"sample": "999"}).status_code == 400
    assert client.get(f"{PAGE}pass1.csv", {"threshold": "x"}).status_code == 400


def test_the_sample_and_threshold_filter(client, admin_user_role, django_user_model):
    one = build(django_user_model, parents=1, prefix="one")
    build(django_user_model, parents=1, prefix="two")
    client.force_login(admin_user_role)
    html = client.get(PAGE, {"sample": one.sample.pk, "threshold": "0.9"}).content.decode()
    assert cells(html, "table-pass1")[0][2] == "1"  # one parent, not two
    assert f'href="/agreement/pass1.csv?sample={one.sample.pk}&amp;threshold=0.9"' in html
    assert f"passes/1/?sample={one.sample.pk}&amp;threshold=0.9" in html


def test_the_api(client, admin_user_role, django_user_model):
    world = build(django_user_model, parents=2)
    client.force_login(admin_user_role)
    data = client.get("/api/agreement/").json()
    assert data["sample"] is None and data["threshold"] == 0.5
    assert [(p["first_annotator"]["username"], p["second_annotator"]["username"], p["pass_no"]) for p in data["pairs"]] == [
        ("alice", "bob", 1), ("alice", "bob", 2), ("alice", "bob", 3),
        ("alice", "carol", 1), ("alice", "carol", 2), ("alice", "carol", 3),
    ]  # fmt: skip
    bob1 = data["pairs"][0]
    n = len(world.first_docs["agr_0"][1]["visual_nodes"])
    assert bob1["figures"]["regions"]["recall"] == pytest.approx((n - 1) / n)
    assert bob1["figures"]["quantities"] is None and bob1["figures"]["entity_type"] is None
    kappa = data["pairs"][1]["figures"]["entity_type"]["kappa"]
    assert (
        set(kappa) == {"kappa", "n", "observed", "expected"}
        and "pairs" not in data["pairs"][1]["figures"]["entity_type"]
    )
    only = client.get("/api/agreement/", {"sample": world.sample.pk}).json()
    assert only["sample"] == world.sample.pk and len(only["pairs"]) == 6
    bad = client.get("/api/agreement/", {"threshold": "0"})
    assert bad.status_code == 400 and bad.json()["code"] == "filter_invalid"


@pytest.mark.parametrize("parents", [1, 10])
def test_page_queries_are_flat(
    client, admin_user_role, django_user_model, django_assert_max_num_queries, parents
):
    world = build(django_user_model, parents=parents)
    client.force_login(admin_user_role)
    with django_assert_max_num_queries(10):
        assert client.get(PAGE).status_code == 200
    with django_assert_max_num_queries(10):
        assert client.get(f"{PAGE}pairs/{world.alice.pk}-{world.bob.pk}/passes/3/").status_code == 200
    with django_assert_max_num_queries(10):
        assert client.get("/api/agreement/").status_code == 200


CHILD = """
import sys
import django
django.setup()
from django.urls import get_resolver
get_resolver().url_patterns  # the whole URL conf, the agreement pages included
loaded = "scipy.optimize" in sys.modules
from annotation.agreement.core import pass_agreement
node = {"id": "v001", "image_id": "img_0", "bbox_1000": [0, 0, 10, 10]}
pass_agreement(1, {"visual_nodes": [node]}, {"visual_nodes": [node]})
print(loaded, "scipy.optimize" in sys.modules)
"""


def test_the_url_conf_does_not_load_scipy_optimize():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "physalign_site.settings"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]  # loaded on the first assignment
