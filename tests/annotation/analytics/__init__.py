"""Tests of annotation analytics (issue 30 §3)."""
