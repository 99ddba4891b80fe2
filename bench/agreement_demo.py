"""Agreement on a double-annotated sample of the generated demo, the second annotator simulated: each perturbation
is caught by exactly its share, and the unperturbed control agrees fully.

Run from the project root: ``.venv/bin/python bench/agreement_demo.py [--count N] [--seed S] [--smoke]``. It
writes only to its own throwaway database (``bench/_sandbox.py``; a temporary SQLite file by default).

* The generated demo (``annotation.demo``, seed 2027, ``--count`` parents) is imported as the first
  annotation; ``demo_first`` is its annotator (the last saver of every pass).
* ``annotation.double.services.double_sample_request`` draws every parent (seeded) and spreads them round
  robin over five second annotators, one per simulation: ``second_control`` (an exact copy),
  ``second_shift`` (boxes shifted), ``second_drop`` (one text label dropped), ``second_unit`` (one unit
  wrong) and ``second_all`` (the three together), each made by ``annotation.agreement.perturb`` with the
  parent's own seed. Their documents are saved and submitted through the double-annotation services (so they
  pass the validator).
* ``annotation.agreement.selectors.agreement_summary`` then prints the agreement per pair and pass, and
  checks: the control is 1.0 everywhere; the shift lowers the mean IoU and unmatches nothing; the dropped
  labels lower the region recall by exactly k/n (k parents, n regions of the first annotation); the wrong
  units lower the unit agreement by exactly k/m (m matched quantities). Exit status 1 if a check fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402

VARIANTS: dict[str, dict[str, Any]] = {
    "second_control": {"shift": 0, "drop_label": False, "wrong_unit": False},
    "second_shift": {"drop_label": False, "wrong_unit": False},
    "second_drop": {"shift": 0, "wrong_unit": False},
    "second_unit": {"shift": 0, "drop_label": False},
    "second_all": {},
}


def _users() -> tuple[Any, dict[str, Any]]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    group = Group.objects.get_or_create(name="annotator")[0]
    users = {}
    for name in ("demo_first", *VARIANTS):
        user = get_user_model().objects.create_user(username=name, password=f"{name}-bench")
        user.groups.add(group)
        users[name] = user
    admin = get_user_model().objects.create_user(username="demo_admin", password="demo_admin-bench")
    admin.groups.add(Group.objects.get_or_create(name="admin")[0])
    return admin, users


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _line(pass_no: int, figures: dict[str, Any]) -> str:
    if pass_no == 1:
        r, t = figures["regions"], figures["transcription"]
        return (
            f"regions {r['matched']}/{r['first']} matched (second {r['second']}), P {_fmt(r['precision'])} "
            f"R {_fmt(r['recall'])} F1 {_fmt(r['f1'])}, mean IoU {_fmt(r['mean_score'])}; "
            f"transcription {_fmt(t['rate'])} (n {t['n']})"
        )
    if pass_no == 2:
        e, ty, b = figures["entities"], figures["entity_type"], figures["binding"]
        return (
            f"entities {e['matched']}/{e['first']} F1 {_fmt(e['f1'])}; type {_fmt(ty['rate'])}, κ "
            f"{_fmt(ty['kappa']['kappa'])} (n {ty['kappa']['n']}); binding {_fmt(b['rate'])} (n {b['n']})"
        )
    q, k = figures["quantities"], figures["quantity_kind"]
    return (
        f"quantities {q['matched']}/{q['first']} F1 {_fmt(q['f1'])}; kind {_fmt(k['rate'])}, κ "
        f"{_fmt(k['kappa']['kappa'])} (n {k['kappa']['n']}); value {_fmt(figures['quantity_value']['rate'])}, "
        f"unit {_fmt(figures['quantity_unit']['rate'])} (n {figures['quantity_unit']['n']}), owner "
        f"{_fmt(figures['quantity_owner']['rate'])}"
    )


def _rates(figures: dict[str, Any]) -> list[float | None]:
    out: list[float | None] = []
    for value in figures.values():
        if not isinstance(value, dict):
            continue
        if "rate" in value:
            out.append(value["rate"])
        if "f1" in value:
            out += [value["precision"], value["recall"], value["f1"], value["mean_score"]]
    return out


def _checks(pairs: dict[tuple[str, int], Any]) -> list[tuple[str, bool]]:
    checks: list[tuple[str, bool]] = []
    for pass_no in (1, 2, 3):
        control = pairs[("second_control", pass_no)].figures
        checks.append((f"control, Pass {pass_no}: every rate 1.0", all(v == 1.0 for v in _rates(control))))
    for name in ("second_shift", "second_all"):
        regions = pairs[(name, 1)].figures["regions"]
        checks.append((f"{name}: mean IoU {regions['mean_score']:.4f} < 1", regions["mean_score"] < 1.0))
    shift = pairs[("second_shift", 1)].figures["regions"]
    checks.append(
        ("second_shift: nothing unmatched (P = R = 1)", shift["precision"] == shift["recall"] == 1.0)
    )
    for name in ("second_drop", "second_all"):
        pair = pairs[(name, 1)]
        r = pair.figures["regions"]
        k, n = pair.parents, r["first"]
        checks.append(
            (f"{name}: recall {r['recall']:.4f} = 1 − {k}/{n}", abs(r["recall"] - (1 - k / n)) < 1e-12)
        )
        checks.append((f"{name}: precision 1.0", r["precision"] == 1.0))
    for name in ("second_unit", "second_all"):
        pair = pairs[(name, 3)]
        unit, m = pair.figures["quantity_unit"], pair.figures["quantities"]["matched"]
        k = pair.parents
        checks.append(
            (f"{name}: unit {unit['rate']:.4f} = 1 − {k}/{m}", abs(unit["rate"] - (1 - k / m)) < 1e-12)
        )
        others = [pair.figures[key]["rate"] for key in ("quantity_kind", "quantity_value", "quantity_owner")]
        checks.append((f"{name}: kind, value, owner 1.0", all(v == 1.0 for v in others)))
    return checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=50, help="generated parents, every one double-annotated")
    parser.add_argument("--seed", type=int, default=2027, help="the sample's and the perturbations' seed")
    add_sandbox_arguments(parser)
    args = parser.parse_args()
    if args.smoke:
        args.count = 10
    open_sandbox("agreement_demo", args).start_django()

    from django.db import transaction

    from annotation.agreement.perturb import perturbation
    from annotation.agreement.selectors import agreement_summary
    from annotation.demo import generate_workspace
    from annotation.double.services import double_sample_request, independent_save, independent_submit
    from annotation.importers import import_kit_workspace
    from annotation.models import PassDocument, SecondAnnotation, Source

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        generate_workspace(Path(tmp) / "ws", count=args.count, seed=2027)
        import_kit_workspace(workspace=Path(tmp) / "ws", dataset_root=None)
    admin, users = _users()
    PassDocument.objects.update(updated_by=users["demo_first"])
    source = Source.objects.get(name="physalign_demo")
    sample = double_sample_request(
        source=source,
        annotator_ids=[users[name].pk for name in VARIANTS],
        actor=admin,
        count=args.count,
        seed=args.seed,
    )
    seconds = list(SecondAnnotation.objects.filter(sample=sample).select_related("parent", "annotator"))
    for index, second in enumerate(seconds):
        firsts = dict(
            PassDocument.objects.filter(parent=second.parent, pass_no__in=(1, 2, 3)).values_list(
                "pass_no", "document"
            )
        )
        made = perturbation(firsts, seed=args.seed + index, **VARIANTS[second.annotator.get_username()])
        with transaction.atomic():
            for pass_no in (1, 2, 3):
                independent_save(
                    second=second,
                    pass_no=pass_no,
                    document=made.documents[pass_no],
                    actor=second.annotator,
                    expected_version=None,
                )
                independent_submit(second=second, pass_no=pass_no, actor=second.annotator)
    built = time.perf_counter() - started

    started = time.perf_counter()
    summary = agreement_summary(sample_id=sample.pk)
    computed = time.perf_counter() - started
    print(
        f"demo: {args.count} generated parents (seed 2027), all double-annotated (sample seed {args.seed}), "
        f"5 simulated second annotators; built in {built:.1f} s, agreement of {len(summary.parents)} "
        f"parent-passes in {computed:.2f} s"
    )
    pairs = {(p.second.name, p.pass_no): p for p in summary.pairs}
    for name in VARIANTS:
        parents = pairs[(name, 1)].parents
        print(f"\n{name} ({parents} parents, first annotator demo_first)")
        for pass_no in (1, 2, 3):
            print(f"  Pass {pass_no}: {_line(pass_no, pairs[(name, pass_no)].figures)}")
    print("\nchecks:")
    failed = 0
    for label, ok in _checks(pairs):
        failed += not ok
        print(f"  {'caught' if ok else 'FAILED'}: {label}")
    if failed:
        raise SystemExit(f"{failed} check(s) failed")


if __name__ == "__main__":
    main()
