"""Curation: reconciling the two annotations of a pass record by record into one curated document."""
