"""A release's public part in the formats evaluators already use: a Hugging Face dataset (``hf``).

Every export reads the release folder's ``public/`` part only, and is checked with the release leakage scan
(``leakage``) before it is handed out.
"""
