"""OCR proposals for Pass 1: Tesseract proposes text regions with their transcription; the annotator accepts,
edits or drops each one in the workspace."""
