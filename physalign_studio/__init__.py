"""PhysAlign releases in the harnesses evaluators already use: the inspect_ai task (``inspect_task``).

Django-free: it reads an exported release (the Kit folder layout or the Hugging Face export) and scores with the
app's pure parsing and scoring core (``evaluation.parsing``, ``evaluation.scoring``).
"""
