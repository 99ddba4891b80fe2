from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0004_compile_chunks"),
    ]

    operations = [
        migrations.AddField(
            model_name="release",
            name="hf_status",
            field=models.CharField(default="none", max_length=10),
        ),
        migrations.AddField(
            model_name="release",
            name="hf_error",
            field=models.TextField(blank=True),
        ),
    ]
