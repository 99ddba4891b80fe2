"""Annotation: sources, parent problems, images, pass documents, importers, workspace."""
