"""Agreement between two annotations of the same parent: the pure core (``core``), its pages and downloads."""
