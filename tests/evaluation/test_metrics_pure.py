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


def item(probe, parent, *, model="m1", condition="raw", task="T03", pools=("B",), status="completed", C=None,
         G=0, K=4, gold=1, nearest="not_applicable", interface=None):
    return {"model": model, "condition": condition, "probe_id": probe, "parent_id": parent, "task_id": task,
            "interface": interface or ("T02-single" if task == "T02" else "T03-image"), "pools": list(pools),
            "status": status, "C": C, "G": G, "K": K, "gold_alias_count": gold, "nearest": nearest}


def test_equal_parents_within_a_type_one_third_not_one_half():
    items = [item("a1", "A", G=1), item("a2", "A", G=1), item("a3", "A", G=0), item("b1", "B", G=0)]
    gacc = compute_metrics(items, resamples=50)["models"]["m1"]["GAcc"]
    assert gacc["value"] == pytest.approx(1 / 3)
    assert (gacc["parents"], gacc["probes"]) == (2, 4)
    assert gacc["lower"] == gacc["upper"] == gacc["value"]


def test_types_weighted_equally_t03_image_and_text_are_one_type():
    items = [item("a1", "A", G=1), item("a2", "A", G=1, interface="T03-text"), item("a3", "A", G=0),
             item("b1", "B", G=0), item("c1", "C", task="T02", G=1)]
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
        item("p1", "A", condition="no_image", G=0), item("p2", "A", condition="no_image", G=0),
        item("p3", "B", condition="no_image", G=0), item("p4", "C", condition="no_image", G=0),
        item("p1", "A", condition="reordered", G=1), item("p2", "A", condition="reordered", G=0),
        item("p3", "B", condition="reordered", G=1), item("p4", "C", condition="reordered", G=0),
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
    assert set(stat) == {"value", "ci", "lower", "upper", "parents", "probes"}
    assert set(written["models"]["m1"]) >= {"GAcc", "CAcc", "JAcc", "GAcc_L", "GAcc_given_C", "GErr_given_C",
                                             "quadrants", "paired", "no_image", "reordered", "H", "H_hard"}
