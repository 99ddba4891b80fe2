"""Assignment of problems to annotators and source reviewers: the admins' page and API."""
