"""LLM drafts of the answer-blind passes: ``prompts`` (what a drafter is sent), ``services`` (runs, execution
under a lease, accepting and discarding), ``views`` and ``urls`` (the pages). The API is annotation/api/drafts.py."""
