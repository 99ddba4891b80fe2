"""URL converters of the annotation app."""

from django.urls import register_converter


class PassNumberConverter:
    """Pass numbers 1–5 only, so /passes/6/ is a plain 404 (Kit §2.4)."""

    regex = "[1-5]"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(PassNumberConverter, "pass_no")
