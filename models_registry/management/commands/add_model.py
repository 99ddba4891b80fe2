"""Create or update a model configuration. The API key itself is never given: only its variable.

Every rule is the service's (``models_registry.services``), the endpoint policy on key variables and base
URLs included, so the command refuses exactly what the API refuses."""

from __future__ import annotations

import json
from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError

from models_registry.models import ModelConfig
from models_registry.services import model_config_create, model_config_update
from physalign_site.errors import ApplicationError


class Command(BaseCommand):
    help = "Add (or with --update, change) a model configuration."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--provider", required=True, choices=ModelConfig.Provider.values)
        parser.add_argument("--model", required=True)
        parser.add_argument(
            "--base-url",
            default="",
            help="http(s) URL on a public host (loopback/private only with "
            "PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS)",
        )
        parser.add_argument(
            "--api-key-env",
            default="",
            help="the environment variable holding the key: matches PHYSALIGN_MODEL_KEY_ENV_PATTERN "
            "(default NAME_API_KEY), never one of the app's own variables",
        )
        parser.add_argument("--max-output-tokens", type=int)
        parser.add_argument("--temperature", type=float)
        parser.add_argument(
            "--reasoning",
            default="",
            help='JSON or key=value, e.g. \'{"effort": "low"}\', effort=low, budget_tokens=2048',
        )
        parser.add_argument("--image-policy", choices=ModelConfig.ImagePolicy.values, default="send")
        parser.add_argument(
            "--price-in", type=Decimal, default=Decimal(0), help="USD per million input tokens"
        )
        parser.add_argument(
            "--price-out", type=Decimal, default=Decimal(0), help="USD per million output tokens"
        )
        parser.add_argument("--rpm", type=int, help="requests per minute, shared by all workers")
        parser.add_argument("--concurrency", type=int, help="concurrent requests, shared by all workers")
        parser.add_argument("--timeout", type=float, default=120.0)
        parser.add_argument("--max-retries", type=int, default=2)
        parser.add_argument(
            "--extra", default="", help="provider-specific JSON (simulated: seed, latency_ms, faults)"
        )
        parser.add_argument("--update", action="store_true", help="change an existing configuration")

    def handle(self, *args, **opts):
        fields = {
            "provider": opts["provider"],
            "model": opts["model"],
            "base_url": opts["base_url"],
            "api_key_env": opts["api_key_env"],
            "max_output_tokens": opts["max_output_tokens"],
            "temperature": opts["temperature"],
            "reasoning": _reasoning(opts["reasoning"]),
            "image_policy": opts["image_policy"],
            "price_in_per_mtok": opts["price_in"],
            "price_out_per_mtok": opts["price_out"],
            "requests_per_minute": opts["rpm"],
            "max_concurrency": opts["concurrency"],
            "timeout_seconds": opts["timeout"],
            "max_retries": opts["max_retries"],
            "extra": _json(opts["extra"], "--extra"),
        }
        try:
            existing = ModelConfig.objects.filter(name=opts["name"]).first()
            if existing is not None:
                if not opts["update"]:
                    raise CommandError(f"A model named {opts['name']!r} exists; pass --update to change it.")
                config = model_config_update(config=existing, **fields)
                verb = "Updated"
            else:
                config = model_config_create(name=opts["name"], **fields)
                verb = "Added"
        except ApplicationError as exc:
            raise CommandError(f"{exc.message} ({exc.code})") from exc
        self.stdout.write(f"{verb} model {config.name}: {config.provider}:{config.model}")


def _json(text: str, flag: str) -> dict:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CommandError(f"{flag} must be JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise CommandError(f"{flag} must be a JSON object.")
    return value


def _reasoning(text: str) -> dict:
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        return _json(text, "--reasoning")
    out: dict = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        if not value:
            raise CommandError("--reasoning takes JSON or key=value pairs (effort=low, budget_tokens=2048).")
        out[key.strip()] = int(value) if value.strip().lstrip("-").isdigit() else value.strip()
    return out
