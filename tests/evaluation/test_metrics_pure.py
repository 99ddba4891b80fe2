"""Metrics of the item-file contract: hand-computed cases, paper identities, bounds, bootstrap."""

from __future__ import annotations

import json
import random
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from django.core.management import call_command

from evaluation.metrics import ItemFileError, compute_metrics, multiplicities


def item(
    probe,
    parent,
    *,
    model="m1",
    condition="raw",
    task="T03",
    pools=("B",),
    status="completed",
    C=None,
    G=0,
    K=4,
    gold=1,
    nearest="not_applicable",
    interface=None,
):
    return {
        "model": model,
        "condition": condition,
        "probe_id": probe,
        "parent_id": parent,
        "task_id": task,
        "interface": interface or ("T02-single" if task == "T02" else "T03-image"),
        "pools": list(pools),
        "status": status,
        "C": C,
        "G": G,
        "K": K,
        "gold_alias_count": gold,
        "nearest": nearest,
    }


def test_equal_parents_within_a_type_one_third_not_one_half():
    items = [item("a1", "A", G=1), item("a2", "A", G=1), item("a3", "A", G=0), item("b1", "B", G=0)]
    gacc = compute_metrics(items, resamples=50)["models"]["m1"]["GAcc"]
    assert gacc["value"] == pytest.approx(1 / 3)
    assert (gacc["parents"], gacc["probes"]) == (2, 4)
    assert gacc["lower"] == gacc["upper"] == gacc["value"]


def test_types_weighted_equally_t03_image_and_text_are_one_type():
    items = [
        item("a1", "A", G=1),
        item("a2", "A", G=1, interface="T03-text"),
        item("a3", "A", G=0),
        item("b1", "B", G=0),
        item("c1", "C", task="T02", G=1),
    ]
    result = compute_metrics(items, resamples=50)["models"]["m1"]
    assert result["GAcc"]["value"] == pytest.approx((1 / 3 + 1) / 2)


def test_infra_missing_stays_in_the_denominator_as_bounds():
    items = [item("a1", "A", G=1), item("a2", "A", status="infra_missing", G=None), item("b1", "B", G=0)]
    gacc = compute_metrics(items, resamples=50)["models"]["m1"]["GAcc"]
    assert gacc["value"] is None and gacc["ci"] is None
    assert gacc["lower"] == pytest.approx((0.5 + 0) / 2)
    assert gacc["upper"] == pytest.approx((1 + 0) / 2)
    assert gacc["probes"] == 3


def _joint_items():
    rows = []
    cg = [(1, 1), (1, 0), (0, 1), (0, 0), (1, 1), (1, 1), (0, 0)]
    parents = ["A", "A", "B", "C", "C", "C", "D"]
    for n, ((c, g), parent) in enumerate(zip(cg, parents, strict=True)):
        rows.append(item(f"p{n}", parent, pools=("B", "L"), C=c, G=g))
    rows.append(item("q", "E", task="T02", G=1))
    return rows


def test_paper_identities_quadrants_and_conditional():
    result = compute_metrics(_joint_items(), resamples=200)["models"]["m1"]
    q = result["quadrants"]
    assert sum(q[k]["value"] for k in ("q11", "q10", "q01", "q00")) == pytest.approx(1)
    assert q["q11"]["value"] == pytest.approx(result["JAcc"]["value"])
    assert q["q10"]["value"] == pytest.approx(result["CAcc"]["value"] - result["JAcc"]["value"])
    assert q["q01"]["value"] == pytest.approx(result["GAcc_L"]["value"] - result["JAcc"]["value"])
    assert result["GAcc_given_C"]["value"] == pytest.approx(result["JAcc"]["value"] / result["CAcc"]["value"])
    assert result["GErr_given_C"]["value"] == pytest.approx(1 - result["GAcc_given_C"]["value"])
    # hand values: parents A (C=1,1; J=1,0), B (0;0), C (1,1,1→... J 1,1 of 3), D (0)
    c = Fraction(1) + 0 + Fraction(2, 3) + 0
    j = Fraction(1, 2) + 0 + Fraction(2, 3) + 0
    assert result["CAcc"]["value"] == pytest.approx(float(c / 4))
    assert result["JAcc"]["value"] == pytest.approx(float(j / 4))
    assert result["JAcc"]["value"] != pytest.approx(result["CAcc"]["value"] * result["GAcc_L"]["value"])
    for stat in (result["CAcc"], result["JAcc"]):
        lo, hi = stat["ci"]
        assert lo <= stat["value"] <= hi
    # with 4 L parents some replicates draw only C = 0 parents: CAcc = 0 there, so the ratio's CI is withheld
    assert result["GAcc_given_C"]["ci"] is None


def test_gacc_given_c_null_when_cacc_zero():
    items = [item("p1", "A", pools=("B", "L"), C=0, G=1), item("p2", "B", pools=("B", "L"), C=0, G=0)]
    result = compute_metrics(items, resamples=20)["models"]["m1"]
    assert result["CAcc"]["value"] == 0
    assert result["GAcc_given_C"]["value"] is None and result["GErr_given_C"]["value"] is None


def test_paired_set_transitions_and_rates():
    pools = ("B", "L", "P")
    items = []
    transitions = [(0, 1), (0, 0), (1, 1), (1, 0), (0, 1)]
    for n, (raw, gold) in enumerate(transitions):
        items.append(item(f"p{n}", f"P{n}", pools=pools, C=1, G=raw))
        items.append(item(f"p{n}", f"P{n}", pools=pools, condition="gold", G=gold))
    # returned raw but missing gold: not in P_m
    items.append(item("x", "PX", pools=pools, C=1, G=1))
    items.append(item("x", "PX", pools=pools, condition="gold", status="infra_missing", G=None))
    paired = compute_metrics(items, resamples=100)["models"]["m1"]["paired"]
    assert paired["base"]["value"] == pytest.approx(2 / 5)
    assert paired["gt"]["value"] == pytest.approx(3 / 5)
    assert paired["delta"]["value"] == pytest.approx(1 / 5)
    assert paired["repair_share"]["value"] == pytest.approx(2 / 5)
    assert paired["harm_share"]["value"] == pytest.approx(1 / 5)
    assert paired["repair_rate"]["value"] == pytest.approx(2 / 3)
    assert paired["harm_rate"]["value"] == pytest.approx(1 / 2)
    assert paired["base"]["probes"] == 5 and paired["base"]["lower"] == paired["base"]["value"]


def test_baselines_controls_and_h_hard():
    items = [
        item("p1", "A", G=1, K=4, gold=1, nearest="correct"),
        item("p2", "A", G=0, K=2, gold=1, nearest="wrong", pools=("B", "L"), C=1),
        item("p3", "B", G=1, K=5, gold=2, nearest="wrong", pools=("B", "L"), C=1),
        item("p4", "C", G=0, K=3, gold=1),
        item("p1", "A", condition="no_image", G=0),
        item("p2", "A", condition="no_image", G=0),
        item("p3", "B", condition="no_image", G=0),
        item("p4", "C", condition="no_image", G=0),
        item("p1", "A", condition="reordered", G=1),
        item("p2", "A", condition="reordered", G=0),
        item("p3", "B", condition="reordered", G=1),
        item("p4", "C", condition="reordered", G=0),
    ]
    result = compute_metrics(items, resamples=100)
    base = result["baselines"]
    assert base["random"]["value"] == pytest.approx(((1 / 4 + 1 / 2) / 2 + 2 / 5 + 1 / 3) / 3)
    assert base["nearest"]["value"] == pytest.approx((1 / 2 + 0) / 2)
    m = result["models"]["m1"]
    assert m["GAcc"]["value"] == pytest.approx((1 / 2 + 1 + 0) / 3)
    assert m["no_image"]["GAcc"]["value"] == 0
    assert m["no_image"]["delta"]["value"] == pytest.approx(-0.5)
    assert m["reordered"]["delta"]["value"] == pytest.approx(0)
    assert m["H"]["model"]["value"] == pytest.approx((1 / 2 + 1) / 2)
    assert m["H"]["model_minus_nearest"]["value"] == pytest.approx(0.75 - 0.25)
    hard = m["H_hard"]
    assert hard["model"]["value"] == pytest.approx((0 + 1) / 2)
    assert hard["random"]["value"] == pytest.approx((1 / 2 + 2 / 5) / 2)
    assert hard["CpGm_share"]["value"] == pytest.approx(1 / 2)
    assert hard["GErr_given_C"]["value"] == pytest.approx(1 / 2)


def test_a_stream_of_items_gives_the_metrics_of_the_list_whatever_order_names_first_appear():
    """compute_metrics keeps columns, not records (a run's items stream from the database): a generator
    gives the list's result, and names coded by first appearance are renumbered in sorted order, so a
    file listing model m2 and parent Z first gives what sorting the distinct names would."""
    items = [
        item("p9", "Z", model="m2", G=1, pools=("B", "L"), C=1, nearest="correct"),
        item("p1", "A", G=1, K=4, gold=1, nearest="correct"),
        item("p2", "A", G=0, K=2, gold=1, nearest="wrong", pools=("B", "L"), C=1),
        item("p3", "B", G=1, K=5, gold=2, nearest="wrong", pools=("B", "L", "P"), C=0),
        item("p3", "B", condition="gold", G=1, pools=("B", "L", "P"), C=1),
        item("p4", "C", G=0, K=3, gold=1, status="infra_missing", C=None),
        item("p9", "Z", model="m1", G=0, pools=("B", "L"), C=0, nearest="correct"),
        item("p1", "A", model="m2", condition="no_image", G=0),
    ]
    items[5]["G"] = None
    listed = compute_metrics(items, resamples=200, seed=5)
    streamed = compute_metrics((dict(it) for it in items), resamples=200, seed=5)
    assert json.dumps(streamed, sort_keys=True) == json.dumps(listed, sort_keys=True)
    assert list(listed["models"]) == ["m1", "m2"]
    assert listed["models"]["m1"]["GAcc"]["clusters"] == 4  # A, B, C and Z: the raw parents of m1
    with pytest.raises(ItemFileError, match="item 3: duplicate"):
        compute_metrics(iter([item("a", "A"), item("b", "A"), item("a", "A")]))


def test_multiplicities_match_python_rng_choice():
    for n in (1, 3, 7, 40):
        rng = random.Random(2027)
        clusters = [f"c{i:03d}" for i in range(n)]
        expected = []
        for _ in range(30):
            drawn = Counter(rng.choice(clusters) for _ in clusters)
            expected.append([drawn[c] for c in clusters])
        assert multiplicities(n, 30, 2027).tolist() == expected


def test_bootstrap_matches_a_direct_computation_and_is_deterministic():
    items = _joint_items()
    result = compute_metrics(items, resamples=300, seed=11)
    again = compute_metrics(list(reversed(items)), resamples=300, seed=11)
    assert json.dumps(result, sort_keys=True) == json.dumps(again, sort_keys=True)
    assert result != compute_metrics(items, resamples=300, seed=12)
    # direct: weighted parent means, type T03 only (pool L)
    parents = sorted({it["parent_id"] for it in items})
    rng = random.Random(11)
    draws = []
    for _ in range(300):
        counts = Counter(rng.choice(parents) for _ in parents)
        by_parent: dict[str, list[int]] = {}
        for it in items:
            if "L" in it["pools"]:
                by_parent.setdefault(it["parent_id"], []).append(it["C"])
        num = sum(counts[p] * np.mean(v) for p, v in by_parent.items())
        den = sum(counts[p] for p in by_parent)
        draws.append(num / den)
    draws.sort()

    def pct(p):
        pos = (len(draws) - 1) * p
        lo = int(pos)
        return draws[lo] + (pos - lo) * (draws[min(lo + 1, len(draws) - 1)] - draws[lo])

    assert result["models"]["m1"]["CAcc"]["ci"] == pytest.approx([pct(0.025), pct(0.975)], abs=1e-12)


def test_undefined_replicate_withholds_the_interval():
    # one T02 parent only: a replicate without it has no T02 type → undefined → CI withheld
    items = [item("a", "A", task="T02", G=1), item("b", "B", G=0), item("c", "C", G=1)]
    gacc = compute_metrics(items, resamples=200)["models"]["m1"]["GAcc"]
    assert gacc["value"] == pytest.approx((1 + 0.5) / 2)
    assert gacc["ci"] is None


def test_invalid_items_are_rejected():
    with pytest.raises(ItemFileError):
        compute_metrics([item("a", "A", status="infra_missing", G=0)])
    with pytest.raises(ItemFileError):
        compute_metrics([item("a", "A"), item("a", "A")])
    with pytest.raises(ItemFileError):
        compute_metrics([{**item("a", "A"), "condition": "base"}])


def test_metrics_command_round_trip(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(it) + "\n" for it in _joint_items()))
    out = tmp_path / "out.json"
    call_command("metrics", "--items", str(path), "--output", str(out), "--resamples", "100", "--seed", "5")
    written = json.loads(out.read_text())
    assert written == json.loads(json.dumps(compute_metrics(_joint_items(), resamples=100, seed=5)))
    stat = written["models"]["m1"]["GAcc"]
    assert set(stat) == {"value", "ci", "lower", "upper", "parents", "probes", "clusters"}
    assert set(written["models"]["m1"]) >= {
        "GAcc",
        "CAcc",
        "JAcc",
        "GAcc_L",
        "GAcc_given_C",
        "GErr_given_C",
        "quadrants",
        "paired",
        "kit_paired",
        "no_image",
        "reordered",
        "H",
        "H_hard",
    }
    assert written["models"]["m1"]["kit_paired"] is None  # no +GT response in this file
    assert written["bootstrap"]["method"] == "paired_cluster_percentile_linear_interpolation"


# ----------------------------------------------------------------------------------------------- Kit bootstrap scopes

SCOPED = {  # parent: ((C, G, +GT G) of X1 in B∩L, (G, +GT G) of X2 in B, G of X3 (T02) or None), per model
    "m1": {
        "A": ((1, 0, 1), (0, 1), 1),
        "B": ((1, 1, 1), (1, 0), 0),
        "C": ((0, 0, 1), (0, 0), 1),
        "D": ((1, 0, 0), (1, 1), 1),
        "E": ((1, 1, 1), (0, 1), 0),
        "F": ((0, 1, 1), (0, 0), 1),
        "G": ((1, 0, None), (1, None), 0),
        "H": ((0, 1, None), (0, None), 1),
        "I": ((1, 1, None), (0, None), None),
        "J": ((1, 0, None), (1, None), None),
    },
    "m2": {
        "A": ((1, 1, 1), (1, 1), 0),
        "B": ((0, 0, 1), (1, 1), 1),
        "C": ((1, 1, 0), (0, 1), 1),
        "D": ((1, 1, 1), (0, 0), 0),
        "E": ((0, 0, 0), (1, 1), 1),
        "F": ((1, 0, "missing"), (1, 1), 0),
        "G": ((0, 0, None), (0, None), 1),
        "H": ((1, 1, None), (1, None), 1),
        "I": ((0, 1, None), (1, None), None),
        "J": ((1, 1, None), (0, None), None),
    },
}


def _scoped_items():
    """Parents A–J; pool P (with +GT responses) only on A–F, a strict subset of the file's parents;
    X2 is a T03 probe outside L (in the Kit's paired report, not in P_m); m2's +GT of F1 is missing,
    which drops parent F from m2's P_m but not from its Kit paired report."""
    items = []
    for model, parents in SCOPED.items():
        for parent, ((c, g, g1), (g2, gg2), g3) in parents.items():
            paired = ("P",) if parent <= "F" else ()
            items.append(item(f"{parent}1", parent, model=model, pools=("B", "L") + paired, C=c, G=g))
            items.append(
                item(f"{parent}2", parent, model=model, pools=("B",) + paired, G=g2, interface="T03-text")
            )
            if g3 is not None:
                items.append(item(f"{parent}3", parent, model=model, task="T02", G=g3))
            if paired:
                items.append(
                    item(
                        f"{parent}1",
                        parent,
                        model=model,
                        condition="gold",
                        pools=("B", "L", "P"),
                        **({"status": "infra_missing", "G": None} if g1 == "missing" else {"G": g1}),
                    )
                )
                items.append(
                    item(
                        f"{parent}2",
                        parent,
                        model=model,
                        condition="gold",
                        pools=("B", "P"),
                        G=gg2,
                        interface="T03-text",
                    )
                )
    return items


# (value, [ci low, ci high] or None when withheld), 2,000 resamples, seed 2027. These numbers come from
# running the Kit's own implementation (HCPLab-SYSU/PhysAlign physalign/bootstrap.py
# paired_cluster_bootstrap with physalign/metrics.py evaluate, called as physalign/reporting.py
# _intervals does) on _scoped_items(): "full" is its raw_all report, "kit_paired" its paired report
# (BAcc → GAcc, BAcc_gold → GAcc_gold, delta_BAcc_gold_raw → delta); "paired" (P_m, which the Kit does
# not report) is its paired_cluster_bootstrap over P_m's parents with Pool.estimate statistics. The old
# file-wide resampling (10 clusters for every statistic) withheld every P_m interval here, since some
# replicates drew no parent of P_m.
KIT_SCOPED = {
    ("m1", "full", 10): {
        "GAcc": (0.5375, [0.39166666666666666, 0.675]),
        "CAcc": (0.7, [0.4, 1.0]),
        "JAcc": (0.3, [0.09750000000000442, 0.6]),
        "GAcc_L": (0.5, [0.2, 0.8]),
        "GAcc_given_C": (0.4285714285714286, [0.09750000000000442, 0.8]),
        "GErr_given_C": (0.5714285714285714, [0.19999999999999996, 0.9024999999999864]),
    },
    ("m2", "full", 10): {
        "GAcc": (0.6125, [0.4471130952380954, 0.7750892857142853]),
        "CAcc": (0.6, [0.3, 0.9]),
        "JAcc": (0.5, [0.2, 0.8]),
        "GAcc_L": (0.6, [0.3, 0.9]),
        "GAcc_given_C": (0.8333333333333334, [0.5, 1.0]),
        "GErr_given_C": (0.16666666666666663, [0.0, 0.5]),
    },
    ("m1", "kit_paired", 6): {
        "GAcc": (0.4166666666666667, [0.16666666666666666, 0.6666666666666666]),
        "CAcc": (0.6666666666666666, [0.3333333333333333, 1.0]),
        "JAcc": (0.3333333333333333, [0.0, 0.6666666666666666]),
        "GAcc_L": (0.5, [0.16666666666666666, 0.8333333333333334]),
        "GAcc_given_C": (0.5, None),
        "GErr_given_C": (0.5, None),  # 5 undefined replicates (CAcc = 0)
        "GAcc_gold": (0.6666666666666666, [0.5, 0.8333333333333334]),
        "delta": (0.24999999999999994, [-0.16666666666666663, 0.5833333333333334]),
    },
    ("m2", "kit_paired", 6): {
        "GAcc": (0.5833333333333334, [0.5, 0.75]),
        "CAcc": (0.6666666666666666, [0.3333333333333333, 1.0]),
        "JAcc": (0.5, [0.16666666666666666, 0.8333333333333334]),
        "GAcc_L": (0.5, [0.16666666666666666, 0.8333333333333334]),
        "GAcc_given_C": (0.75, None),
        "GErr_given_C": (0.25, None),
        "GAcc_gold": (None, None),
        "delta": (None, None),
    },
    ("m1", "paired", 6): {
        "base": (0.5, [0.16666666666666666, 0.8333333333333334]),
        "gt": (0.8333333333333334, [0.5, 1.0]),
        "delta": (0.33333333333333337, [0.0, 0.6666666666666667]),
        "repair_share": (0.3333333333333333, [0.0, 0.6666666666666666]),
    },
    ("m2", "paired", 5): {
        "base": (0.6, [0.2, 1.0]),
        "gt": (0.6, [0.2, 1.0]),
        "delta": (0.0, [-0.6, 0.6]),
        "repair_share": (0.2, [0.0, 0.6]),
    },
}


@pytest.mark.parametrize("scope", list(KIT_SCOPED), ids=lambda s: f"{s[0]}-{s[1]}")
def test_bootstrap_scopes_equal_the_kit_implementation(scope):
    result = compute_metrics(_scoped_items(), resamples=2000, seed=2027)
    model, table, clusters = scope
    node = result["models"][model] if table == "full" else result["models"][model][table]
    for name, (value, ci) in KIT_SCOPED[scope].items():
        stat = node[name]
        assert stat["value"] == (None if value is None else pytest.approx(value, abs=1e-12)), name
        assert stat["ci"] == (None if ci is None else pytest.approx(ci, abs=1e-12)), name
        assert stat["clusters"] == clusters, name


def test_paired_scopes_are_strict_subsets_of_the_file():
    result = compute_metrics(_scoped_items(), resamples=200, seed=2027)
    scopes = result["bootstrap"]["scopes"]
    assert result["bootstrap"]["clusters"] == 10 and result["bootstrap"]["cluster_scope"] == "statistic"
    assert (scopes["m1.full"], scopes["m1.P"], scopes["m1.P_m"], scopes["m2.P"], scopes["m2.P_m"]) == (
        10,
        6,
        6,
        6,
        5,
    )
    m1, m2 = result["models"]["m1"], result["models"]["m2"]
    # P_m keeps only L∩P probes with both responses; the Kit report keeps every P probe (X2 too)
    assert (m1["paired"]["base"]["probes"], m1["kit_paired"]["GAcc"]["probes"]) == (6, 12)
    assert (m2["paired"]["base"]["probes"], m2["kit_paired"]["GAcc"]["probes"]) == (5, 12)


def test_kit_paired_missing_gold_gives_the_kit_delta_bounds():
    k = compute_metrics(_scoped_items(), resamples=200, seed=2027)["models"]["m2"]["kit_paired"]
    # the Kit's evaluate on the paired plan: BAcc_gold summary lower/upper 2/3 and 3/4 (F1 as 0 / as 1),
    # delta_BAcc_bounds = [lo_gold − hi_raw, hi_gold − lo_raw] = [0.08333333333333326, 0.16666666666666663]
    assert k["GAcc_gold"]["value"] is None and k["GAcc_gold"]["ci"] is None
    assert (k["GAcc_gold"]["lower"], k["GAcc_gold"]["upper"]) == (pytest.approx(2 / 3), pytest.approx(0.75))
    assert k["delta"]["value"] is None and k["delta"]["ci"] is None
    assert [k["delta"]["lower"], k["delta"]["upper"]] == pytest.approx(
        [0.08333333333333326, 0.16666666666666663], abs=1e-12
    )
    assert k["GAcc_gold"]["probes"] == 12 and k["GAcc_gold"]["parents"] == 6


def test_models_with_the_same_scope_share_the_draws():
    items = _scoped_items()
    twin = [{**it, "model": "m3"} for it in items if it["model"] == "m1"]
    shuffled = [{**it, "model": "m0"} for it in items if it["model"] == "m1"]
    result = compute_metrics(items + twin + list(reversed(shuffled)), resamples=300, seed=5)
    assert result["models"]["m3"] == result["models"]["m1"] == result["models"]["m0"]


@pytest.mark.django_db
def test_results_page_shows_the_kit_paired_table_and_the_scope_rule(client, role_users):
    from django.urls import reverse

    from evaluation.models import EvalRun

    metrics = compute_metrics(_scoped_items(), resamples=2000, seed=2027)
    run = EvalRun.objects.create(
        name="scoped", conditions=["raw", "gold"], status="completed", metrics=metrics
    )
    client.force_login(role_users["admin"])
    response = client.get(reverse("evaluation:run_detail", args=[run.pk]), HTTP_HOST="localhost")
    assert response.status_code == 200
    rows = dict((m, (stats, sup)) for m, stats, sup in response.context["tables"]["kit_paired"])
    assert [s["value"] for s in rows["m1"][0][:3]] == [
        pytest.approx(0.4166666666666667),
        pytest.approx(0.6666666666666666),
        pytest.approx(0.24999999999999994),
    ]
    assert rows["m1"][1] == "6/12" and rows["m2"][1] == "6/12"
    html = response.content.decode()
    table = html[html.index('id="table-kit-paired"') :]
    table = table[: table.index("</table>")]
    # m1 ΔG with the Kit's interval; m2's +GT is missing one response: bounds, no value
    assert '0.250<span class="muted ci">[-0.167, 0.583]</span>' in table
    assert 'bounds <span class="ci-range">0.667–0.750</span>' in table
    assert 'bounds <span class="ci-range">0.083–0.167</span>' in table
    assert "Kit paired report" in html and "own statistic's scope" in html
    assert "clusters are the parents of each statistic's own scope (10 parents in the run)" in html


def test_results_tables_of_metrics_stored_before_the_kit_paired_report():
    from evaluation.selectors import results_tables

    metrics = compute_metrics(_joint_items(), resamples=50)
    assert results_tables(metrics)["kit_paired"] == []  # no +GT: kit_paired is null
    for stats in metrics["models"].values():
        del stats["kit_paired"]
    assert results_tables(metrics)["kit_paired"] == []
