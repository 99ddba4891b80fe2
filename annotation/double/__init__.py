"""Double annotation: a seeded sample of parents annotated a second time, independently and blind to the first."""
