from __future__ import annotations

import hashlib
import io

import factory
from django.core.files.base import ContentFile
from PIL import Image

from annotation.images import inspect_image_bytes
from annotation.models import ParentProblem, PassDocument, ProblemImage, Source
from kit.canonical import digest
from models_registry.models import ModelConfig


def png_bytes(width: int = 320, height: int = 200, color: tuple[int, int, int] = (255, 255, 255)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, format="PNG")
    return buf.getvalue()


class SourceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Source
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"source-{n}")
    license = "CC BY 4.0"


class ParentProblemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ParentProblem

    problem_id = factory.Sequence(lambda n: f"prob_{n:04d}")
    source = factory.SubFactory(SourceFactory)
    source_split = "test"
    source_sample_id = factory.Sequence(lambda n: f"sample-{n}")
    language = "en"
    stem = "A block A of mass m rests on an incline."
    query = "What is the normal force on block A?"
    raw_question = factory.LazyAttribute(lambda o: f"{o.stem} {o.query}")
    answer = "SECRET-ANSWER-mg-cos-theta"
    solution = "SECRET-SOLUTION-resolve-forces"
    answer_type = "calc"
    domain = "mechanics"


class ProblemImageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ProblemImage

    parent = factory.SubFactory(ParentProblemFactory)
    image_id = factory.Sequence(lambda n: f"img_{n}")
    ordinal = factory.Sequence(lambda n: n)

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        data = kwargs.pop("data", None) or png_bytes()
        info = inspect_image_bytes(data)
        kwargs.setdefault("media_type", info.media_type)
        kwargs.setdefault("width", info.width)
        kwargs.setdefault("height", info.height)
        kwargs.setdefault("byte_size", len(data))
        kwargs.setdefault("sha256", hashlib.sha256(data).hexdigest())
        kwargs.setdefault("pixels_sha256", info.pixels_sha256)
        obj = model_class(*args, **kwargs)
        obj.file.save(f"{kwargs['image_id']}.{info.suffix}", ContentFile(data), save=False)
        obj.save()
        return obj


class PassDocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PassDocument

    parent = factory.SubFactory(ParentProblemFactory)
    pass_no = 1
    document = factory.LazyAttribute(
        lambda o: {"problem_id": o.parent.problem_id, "visual_nodes": [], "ambiguities": []}
    )
    document_sha256 = factory.LazyAttribute(lambda o: digest(o.document))


def scripted(name: str, responses: list, default: str = "{}") -> ModelConfig:
    return ModelConfig.objects.create(
        name=name,
        provider="scripted",
        model="s",
        max_retries=2,
        extra={"responses": responses, "default": default, "backoff_base_seconds": 0},
    )
