"""Annotation analytics for admins: time, submissions, rejections, draft and OCR acceptance, physics findings."""
