"""Release pages: each release with its files, its public zip built on demand and downloaded, and the same public
part as a Hugging Face dataset (built on the POST, then downloaded as a zip)."""

from __future__ import annotations

from collections import defaultdict

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_POST

from physalign_site.access import require

from .datasheet.views import datasheet_context
from .exports.hf import release_hf_queue, release_hf_zip_open, release_hf_zip_ready
from .models import Release
from .permissions import can_manage_probes
from .release_store import release_listing
from .release_words import INTERFACE_TASKS, pool_rows
from .services import release_zip_open, release_zip_queue, release_zip_ready

SHOWN_ONE_BY_ONE = 2  # files this deep (e.g. public/manifest.json) are listed; deeper ones by folder


def release_files(release: Release) -> list[dict[str, object]]:
    """The release folder as rows: top files one by one, deeper files summed per folder (thousands of views).
    Read from the folder, or from the media bucket's index of it (``release_store.release_listing``)."""
    folders: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    rows: list[dict[str, object]] = []
    for name, size in release_listing(release):
        parts = name.split("/")
        if len(parts) <= SHOWN_ONE_BY_ONE:
            rows.append({"name": name, "files": 1, "bytes": size, "folder": False})
        else:
            folder = folders["/".join(parts[:SHOWN_ONE_BY_ONE]) + "/"]
            folder[0] += 1
            folder[1] += size
    rows += [{"name": name, "files": n, "bytes": size, "folder": True} for name, (n, size) in folders.items()]
    for row in rows:
        row["public"] = str(row["name"]).startswith("public/")
    return sorted(rows, key=lambda row: (not row["public"], str(row["name"])))


def release_interfaces(release: Release) -> list[dict[str, object]]:
    """Probes and parent problems per interface (T02-single, T03-image, T03-text, in the paper's order, an
    interface without probes included), from the release's items; any other interface follows."""
    found: dict[str, dict[str, int]] = {
        interface: {"probes": probes, "parents": parents}
        for interface, probes, parents in release.items.values("interface")
        .annotate(probes=Count("pk"), parents=Count("problem_id", distinct=True))
        .values_list("interface", "probes", "parents")
        .order_by()
    }
    names = [*INTERFACE_TASKS, *sorted(set(found) - set(INTERFACE_TASKS))]
    return [
        {
            "interface": name,
            "task": INTERFACE_TASKS.get(name, ""),
            "probes": found.get(name, {}).get("probes", 0),
            "parents": found.get(name, {}).get("parents", 0),
        }
        for name in names
    ]


def _release(release_id: str) -> Release:
    return get_object_or_404(Release, release_id=release_id)


@login_required
@require_GET
@require(can_manage_probes)
def release_detail(request: HttpRequest, release_id: str) -> HttpResponse:
    release = _release(release_id)
    context = {
        "release": release,
        "zip_ready": release_zip_ready(release),
        "hf_ready": release_hf_zip_ready(release),
        "nav_section": "releases",
    }
    if request.headers.get("HX-Request"):  # a panel's progress poll: no walk of the release folder
        panel = "probes/_release_hf.html" if request.GET.get("panel") == "hf" else "probes/_release_zip.html"
        return TemplateResponse(request, panel, context)
    return TemplateResponse(
        request,
        "probes/release_detail.html",
        {
            **context,
            "files": release_files(release),
            "interfaces": release_interfaces(release),
            "pools": pool_rows(release.counts or {}),
            "datasheet": datasheet_context(release),
        },
    )


@login_required
@require_POST
@require(can_manage_probes)
def release_zip(request: HttpRequest, release_id: str) -> HttpResponse:
    """Prepare the public zip (a worker builds it; the page shows its progress, then the download)."""
    release = release_zip_queue(release=_release(release_id), actor=request.user)
    messages.info(request, "Preparing the download. It appears here when the zip is ready.")
    return redirect("probes:release_detail", release_id=release.release_id)


@login_required
@require_GET
@require(can_manage_probes)
def release_download(request: HttpRequest, release_id: str) -> FileResponse:
    release = _release(release_id)
    handle = release_zip_open(release)
    if handle is None:
        raise Http404("The zip is not built yet: prepare the download on the release page first.")
    return FileResponse(
        handle,
        as_attachment=True,
        filename=f"{release.release_id}.public.zip",
        content_type="application/zip",
    )


@login_required
@require_POST
@require(can_manage_probes)
def release_hf(request: HttpRequest, release_id: str) -> HttpResponse:
    """Queue the Hugging Face dataset of the public part (a worker builds it; the page shows when it is ready)."""
    release = release_hf_queue(release=_release(release_id), actor=request.user)
    messages.info(request, "Building the Hugging Face dataset. Its download appears here when it is ready.")
    return redirect("probes:release_detail", release_id=release.release_id)


@login_required
@require_GET
@require(can_manage_probes)
def release_hf_download(request: HttpRequest, release_id: str) -> FileResponse:
    release = _release(release_id)
    handle = release_hf_zip_open(release)
    if handle is None:
        raise Http404("The dataset is not built yet: build it on the release page first.")
    return FileResponse(
        handle, as_attachment=True, filename=f"{release.release_id}.hf.zip", content_type="application/zip"
    )
