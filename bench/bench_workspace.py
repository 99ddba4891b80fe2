"""Server time and query count of the workspace endpoints for a parent with 200 regions.

Run from the project root: ``.venv/bin/python bench/bench_workspace.py [--database postgres|sqlite]``. It
writes only to its own throwaway database (``bench/_sandbox.py``; PostgreSQL ``bench_workspace_<pid>`` by
default, dropped at exit), never the app's, whatever ``DATABASE_URL`` says.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    add_sandbox_arguments(parser, database="postgres")
    args = parser.parse_args()
    if args.smoke:
        args.repeat = 3
    open_sandbox("workspace", args).start_django()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation.models import ParentProblem, ProblemImage, Source
    from annotation.services import pass_document_save

    with transaction.atomic():
        user, _ = get_user_model().objects.get_or_create(username="bench_workspace")
        user.groups.add(Group.objects.get(name="annotator"))
        source, _ = Source.objects.get_or_create(name="bench")
        parent = ParentProblem.objects.create(
            problem_id="bench_ws_200",
            source=source,
            source_split="bench",
            source_sample_id="1",
            language="en",
            answer_type="calc",
            stem="A rod.",
            query="Find T.",
        )
        ProblemImage.objects.create(
            parent=parent,
            image_id="img_0",
            ordinal=0,
            file="bench.png",
            media_type="image/png",
            width=800,
            height=600,
            byte_size=1,
            sha256="0" * 64,
            pixels_sha256="0" * 64,
        )
        nodes = [
            {
                "id": f"v{i + 1:03d}",
                "type": "text_glyph",
                "subtype": "",
                "text": f"F_{i}",
                "image_id": "img_0",
                "bbox_1000": [(i % 20) * 50, (i // 20) * 100, (i % 20) * 50 + 40, (i // 20) * 100 + 80],
                "keypoints_1000": [],
                "center_1000": [-1, -1],
                "radius_1000": -1,
                "confidence": "high",
            }
            for i in range(200)
        ]
        pass_document_save(
            parent=parent,
            pass_no=1,
            document={"problem_id": parent.problem_id, "visual_nodes": nodes, "ambiguities": []},
            actor=user,
            expected_version=None,
        )
        client = Client(HTTP_HOST="localhost")
        client.force_login(user)
        for name, url in (
            ("workspace page", f"/problems/{parent.problem_id}/passes/1/"),
            ("pass API GET", f"/api/parents/{parent.problem_id}/passes/1/"),
            ("history page", f"/problems/{parent.problem_id}/passes/1/history/"),
            ("versions API", f"/api/parents/{parent.problem_id}/passes/1/versions/"),
        ):
            client.get(url)
            times = []
            for _ in range(args.repeat):
                with CaptureQueriesContext(connection) as queries:
                    start = time.perf_counter()
                    response = client.get(url)
                    times.append((time.perf_counter() - start) * 1000)
                assert response.status_code == 200, (url, response.status_code)
            print(
                f"{name:16s} median {statistics.median(times):6.1f} ms  p90 {sorted(times)[int(0.9 * (len(times) - 1))]:6.1f} ms  "
                f"queries {len(queries.captured_queries)}  (200 regions, {len(response.content)} bytes)"
            )
        transaction.set_rollback(True)


if __name__ == "__main__":
    main()
