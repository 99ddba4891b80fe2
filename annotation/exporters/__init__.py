"""Exporters: the annotation work leaves as a Kit source workspace (``kit_workspace``), by ``manage.py
export_kit_workspace`` or as a zip built by a worker (``jobs``)."""

from .kit_workspace import WorkspaceExportSummary, export_kit_workspace

__all__ = ["WorkspaceExportSummary", "export_kit_workspace"]
