"""Blind-first probe review, adjudication, batch audit and signoff (DESIGN §2)."""
