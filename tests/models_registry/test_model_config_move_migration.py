"""Moving ModelConfig from evaluation to models_registry keeps every config and every link to it (an eval run's
models, a draft run's model) on a database with rows, and the database still refuses to orphan them."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from tests.migration_helpers import apps_at, back_to_latest, migrate_to, migrate_to_latest  # noqa: F401 (fixture)

BEFORE = [("evaluation", "0003_solving_debate"), ("annotation", "0006_event_moves_to_audit")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_configs_and_their_links_survive_the_move():
    old = apps_at(migrate_to([*BEFORE, ("models_registry", None)]), BEFORE)
    configs = old.get_model("evaluation", "ModelConfig")
    simulated = configs.objects.create(
        name="sim", provider="simulated", model="m1", extra={"seed": 7}, price_in_per_mtok="1.5"
    )
    other = configs.objects.create(name="other", provider="scripted", model="m2")
    run = old.get_model("evaluation", "EvalRun").objects.create(name="r", conditions=["raw"])
    run.model_configs.add(simulated, other)
    draft_run = old.get_model("annotation", "DraftRun").objects.create(
        model_config=simulated, pass_no=1, prompt_version="v1"
    )

    new = migrate_to_latest()
    moved = new.get_model("models_registry", "ModelConfig")
    assert moved._meta.db_table == "models_registry_modelconfig"
    assert "evaluation_modelconfig" not in connection.introspection.table_names()
    kept = moved.objects.get(pk=simulated.pk)
    assert (kept.name, kept.provider, kept.model, kept.extra, str(kept.price_in_per_mtok)) == (
        "sim",
        "simulated",
        "m1",
        {"seed": 7},
        "1.500000",
    )
    new_run = new.get_model("evaluation", "EvalRun").objects.get(pk=run.pk)
    assert sorted(new_run.model_configs.values_list("name", flat=True)) == ["other", "sim"]
    assert (
        new.get_model("annotation", "DraftRun").objects.get(pk=draft_run.pk).model_config_id == simulated.pk
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM models_registry_modelconfig WHERE id = %s", [simulated.pk])
    with pytest.raises(IntegrityError), transaction.atomic():
        moved.objects.create(name="bad", provider="not-a-provider", model="x")
