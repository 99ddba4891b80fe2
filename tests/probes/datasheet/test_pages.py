"""The datasheet on the release page, its CSV and JSON downloads (admins only), and the command that prints it."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from bs4 import BeautifulSoup
from django.core.management import call_command
from django.core.management.base import CommandError

from probes.datasheet.figures import datasheet_json
from probes.datasheet.selectors import datasheet_for_release
from probes.datasheet.tables import csv_text
from tests.conftest import make_user
from tests.probes.datasheet.world import RELEASE_ID, build_release

pytestmark = pytest.mark.django_db

PAGE = f"/releases/{RELEASE_ID}/"
# the first lines of the CSV, byte for byte: Tables 1(a), 1(b) and the first rows of Table 6
CSV_HEAD = (
    b"table,row,column,value\r\n"
    b"table1a_sources,SeePhys-mini,parents,4\r\n"
    b"table1a_sources,SeePhys-mini,parents_paired,2\r\n"
    b"table1a_sources,OpenStax-mini,parents,2\r\n"
    b"table1a_sources,OpenStax-mini,parents_paired,2\r\n"
    b"table1a_sources,Full release,parents,6\r\n"
    b"table1a_sources,Full release,parents_paired,4\r\n"
    b"table1b_partition,Development,parents,2\r\n"
    b"table1b_partition,Development,probes,5\r\n"
    b"table1b_partition,Development,paired,3\r\n"
    b"table1b_partition,Test,parents,4\r\n"
    b"table1b_partition,Test,probes,8\r\n"
    b"table1b_partition,Test,paired,2\r\n"
    b"table1b_partition,Full release,parents,6\r\n"
    b"table1b_partition,Full release,probes,13\r\n"
    b"table1b_partition,Full release,paired,5\r\n"
    b"table6_domains,Mechanics,count,3\r\n"
    b"table6_domains,Mechanics,share,50.00\r\n"
    b"table6_domains,Mechanics,paired,2\r\n"
    b"table6_domains,Mechanics,unpaired,1\r\n"
    b"table6_domains,Mechanics,rate,66.67\r\n"
)


@pytest.fixture
def release(tmp_path, django_user_model):
    return build_release(
        tmp_path, annotator=django_user_model.objects.create_user(username="second_annotator")
    )


@pytest.fixture
def admin_client(client, django_user_model):
    client.force_login(make_user(django_user_model, "boss", "admin"))
    return client


def _rows(soup: BeautifulSoup, slug: str) -> list[list[str]]:
    table = soup.find("table", attrs={"data-testid": f"ds-{slug}"})
    return [
        [cell.get_text(strip=True) for cell in tr.find_all(["th", "td"])]
        for tr in table.select("tbody tr, tfoot tr")
    ]


def test_the_release_page_shows_the_datasheet(admin_client, release):
    soup = BeautifulSoup(admin_client.get(PAGE).content.decode(), "html.parser")
    lead = soup.find(attrs={"data-testid": "datasheet-lead"}).get_text(" ", strip=True)
    assert "6 parent problems, 13 localized probes and 5 paired +GT inputs from 4 parents" in lead
    assert _rows(soup, "table1a_sources") == [
        ["SeePhys-mini", "4", "2"],
        ["OpenStax-mini", "2", "2"],
        ["Full release", "6", "4"],
    ]
    assert _rows(soup, "table1b_partition") == [
        ["Development", "2", "5", "3"],
        ["Test", "4", "8", "2"],
        ["Full release", "6", "13", "5"],
    ]
    assert _rows(soup, "table6_domains")[:3] == [
        ["Mechanics", "3", "50.00", "2", "1", "66.67"],
        ["Electromagnetism", "2", "33.33", "2", "0", "100.00"],
        ["Optics", "1", "16.67", "0", "1", "0.00"],
    ]
    assert _rows(soup, "table6_domains")[3] == [
        "Thermal physics / thermodynamics",
        "0",
        "0.00",
        "0",
        "0",
        "—",
    ]
    assert _rows(soup, "table6_domains")[-1] == ["Full release", "6", "100.00", "4", "2", "66.67"]
    assert _rows(soup, "table7a_density") == [
        ["Development", "2.50", "60.00"],
        ["Test", "2.00", "25.00"],
        ["Full release", "2.17", "38.46"],
    ]
    assert _rows(soup, "table7b_summaries") == [
        ["Parents with paired +GT inputs", "66.67%", "4/6 parents"],
        ["Paired +GT variants per paired parent", "1.25", "5/4 (parents with paired variants only)"],
        ["Localized probes per parent: median; range", "2; 1–4", "Parent-level summary"],
        ["Localized probes without a paired +GT variant", "8", "13 − 5 probes"],
        ["Packaged image files", "9", "File-level count"],
    ]
    assert _rows(soup, "agreement") == [
        ["Parents with a second, independent annotation", "2", "of 6 parents"],
        ["Second annotations with a pass submitted", "1", "of 2 double-annotated parents"],
    ]
    assert _rows(soup, "figure6_terms")[0] == ["block", "Bodies and apparatus", "2", "2"]
    assert len(_rows(soup, "figure6_terms")) == 20
    # the charts' data: Figure 3's three collections in percent, Figure 6's families and terms
    chart = json.loads(soup.find("script", id="datasheet-chart-data").string)
    assert [s["label"] for s in chart["radar"]["series"]] == [
        "Source problems (6)",
        "Localized probes (13)",
        "Paired +GT inputs (5)",
    ]
    assert chart["radar"]["series"][1]["percents"][:3] == [46.15, 38.46, 15.38]
    assert chart["radar"]["series"][2]["counts"][:3] == [3, 2, 0]
    assert (
        chart["families"]["labels"][3] == "Bodies and apparatus" and chart["families"]["shares"][3] == 66.67
    )
    assert chart["terms"]["labels"][:3] == ["block", "force", "speed"]
    for canvas in ("chart-datasheet-radar", "chart-datasheet-families", "chart-datasheet-terms"):
        assert soup.find("canvas", id=canvas) is not None
    assert soup.find("a", attrs={"data-testid": "datasheet-csv"})["href"] == f"{PAGE}datasheet.csv"


def test_no_agreement_table_without_double_annotation(admin_client, tmp_path):
    build_release(tmp_path)
    soup = BeautifulSoup(admin_client.get(PAGE).content.decode(), "html.parser")
    assert soup.find("table", attrs={"data-testid": "ds-agreement"}) is None
    assert soup.find("table", attrs={"data-testid": "ds-table1a_sources"}) is not None


@pytest.mark.parametrize("copies", [1, 5])
def test_the_page_is_flat_in_queries(
    admin_client, tmp_path, django_user_model, django_assert_num_queries, copies
):
    build_release(tmp_path, copies=copies, annotator=django_user_model.objects.create_user(username="second"))
    # session and user, the release, its interfaces, then the datasheet's reads (agreement's among them)
    with django_assert_num_queries(14):
        assert admin_client.get(PAGE).status_code == 200


def test_the_csv_download(admin_client, release):
    response = admin_client.get(f"{PAGE}datasheet.csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="{RELEASE_ID[:21]}-datasheet.csv"'
    body = response.content
    assert body.startswith(CSV_HEAD)
    lines = body.decode("utf-8").split("\r\n")
    assert lines[-1] == ""  # every line ends with CRLF
    assert "table7a_density,Full release,density,2.17" in lines
    assert "table7b_summaries,Localized probes per parent: median; range,value,2; 1–4" in lines
    assert "table6_domains,Unclassified,rate," in lines  # nothing to divide: an empty cell
    assert "figure3_radar,Mechanics,localized_probes_percent,46.15" in lines
    assert (
        'figure6_families,Bodies and apparatus,top_terms,"block (2), ball (1), particle (1), pulley (1), rope (1)"'
        in lines
    )
    assert "figure6_families,Heat and thermodynamics,top_terms," in lines
    assert "agreement,Second annotations with a pass submitted,value,1" in lines
    # 6 + 9 + 50 + 6 + 10 + 48 + 48 + 60 + 4 cells, the header and the last empty string
    assert len(lines) == 241 + 2


def test_the_json_download_is_the_datasheet(admin_client, release):
    response = admin_client.get(f"{PAGE}datasheet.json")
    assert response.status_code == 200
    data = json.loads(response.content)
    assert data == json.loads(json.dumps(datasheet_json(datasheet_for_release(release))))
    assert data["schema_version"] == "studio_release_datasheet_v1"
    assert data["totals"] == {
        "parents": 6,
        "localized_probes": 13,
        "paired_probes": 5,
        "parents_with_paired": 4,
    }
    assert data["agreement"] == {
        "double_annotated_parents": 2,
        "second_annotation_submitted": 1,
        "figures": [],
    }


@pytest.mark.parametrize("role", ["annotator", "source_reviewer", "probe_reviewer", "adjudicator"])
@pytest.mark.parametrize("suffix", ["", "datasheet.csv", "datasheet.json"])
def test_only_admins_read_the_datasheet(client, release, django_user_model, role, suffix):
    client.force_login(make_user(django_user_model, f"u_{role}", role))
    assert client.get(f"{PAGE}{suffix}").status_code == 403


def test_anonymous_visitors_are_sent_to_log_in(client, release):
    response = client.get(f"{PAGE}datasheet.csv")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_an_unknown_release_is_404(admin_client, db):
    assert admin_client.get("/releases/NREL-nope/datasheet.csv").status_code == 404


def test_the_command_prints_the_same_figures(release):
    sheet = datasheet_for_release(release)
    out = StringIO()
    call_command("datasheet", "--release", RELEASE_ID, "--format", "csv", stdout=out)
    assert out.getvalue() == csv_text(sheet)  # the download's bytes
    assert out.getvalue().encode().startswith(CSV_HEAD)
    out = StringIO()
    call_command("datasheet", "--release", RELEASE_ID[:12], "--format", "json", stdout=out)
    assert json.loads(out.getvalue()) == json.loads(json.dumps(datasheet_json(sheet)))
    out = StringIO()
    call_command("datasheet", "--release", RELEASE_ID, stdout=out)
    text = out.getvalue()
    assert text.startswith("## Datasheet\n")
    assert "| **Full release** | **6** | **100.00** | **4** | **2** | **66.67** |" in text
    assert "| Localized probes per parent: median; range | 2; 1–4 | Parent-level summary |" in text


def test_the_command_refuses_an_unknown_release(db):
    with pytest.raises(CommandError, match="no release NREL-nope"):
        call_command("datasheet", "--release", "NREL-nope")
