"""Procedural demo data: physics diagram problems written as a kit source workspace.

Pure Python (Pillow + stdlib + ``kit.canonical``); no Django import.
"""

from annotation.demo.generator import GenerationSummary, generate_problem, generate_workspace

__all__ = ["GenerationSummary", "generate_problem", "generate_workspace"]
