"""``manage.py physics_check (--all | --parent ID) [--json]``: every physics finding of the stored Pass 1–4
documents (``annotation.physics``), one line each, and a summary; always exits 0 (findings are warnings here)."""

from __future__ import annotations

import json
from collections import Counter

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import ParentProblem
from annotation.physics.checks import load_rules
from annotation.physics.selectors import physics_findings_of_parents


class Command(BaseCommand):
    help = (
        "Run the physics checks (annotation/physics/rules.json) over the stored Pass 1-4 documents of every "
        "problem (--all) or of one (--parent PROBLEM_ID) and print every finding: problem id, pass, code, record "
        "id, path, message and rule, then a summary count by code. --json prints one JSON object instead."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--all", action="store_true", dest="every", help="every problem")
        which.add_argument("--parent", metavar="ID", help="one problem, by its problem id (or database id)")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print the findings as one JSON object"
        )

    def handle(self, *args, every: bool, parent: str | None, as_json: bool, **options) -> None:
        parents = ParentProblem.objects.all()
        if parent is not None:
            match = parents.filter(problem_id=parent)
            if not match.exists() and parent.isdigit():
                match = parents.filter(pk=int(parent))
            if not match.exists():
                raise CommandError(f"No problem has the id {parent!r}.")
            parents = match
        rules = load_rules()
        rows: list[dict[str, object]] = []
        problems = documents = 0
        for result in physics_findings_of_parents(parents=parents, rules=rules):
            problems += 1
            for pass_no, findings in result.findings.items():
                documents += 1
                rows.extend(
                    {"problem_id": result.problem_id, "pass_no": pass_no, **f.as_issue()} for f in findings
                )
        by_code = dict(sorted(Counter(str(row["code"]) for row in rows).items()))
        summary = {"problems": problems, "documents": documents, "findings": len(rows), "by_code": by_code}
        if as_json:
            payload = {"rules_version": rules.version, "findings": rows, "summary": summary}
            self.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2, sort_keys=True))
            return
        for row in rows:
            self.stdout.write(
                f"{row['problem_id']}  pass {row['pass_no']}  {row['code']}  {row['record_id']}  {row['path']}  "
                f"{row['message']}  [rule {row['rule']}]"
            )
        counts = ", ".join(f"{code} {n}" for code, n in by_code.items()) or "none"
        self.stdout.write(
            f"Rules {rules.version}: {_count(len(rows), 'finding')} in {_count(documents, 'document')} of "
            f"{_count(problems, 'problem')} ({counts})."
        )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
