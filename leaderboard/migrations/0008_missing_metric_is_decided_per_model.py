"""Models without a metric are ranked per model: the choice ``drop_metric`` (leave the metric out for
every model as soon as one ranked model lacks it) becomes ``per_model`` (score that model on the
metrics it has; everyone else keeps the metric). Saved leaderboards move to the new value; the
reverse moves them back. Only choices and the default change: no column changes.
"""

from django.db import migrations, models


def to_per_model(apps, schema_editor):
    apps.get_model("leaderboard", "LeaderboardConfig").objects.filter(missing_metric="drop_metric").update(missing_metric="per_model")


def to_drop_metric(apps, schema_editor):
    apps.get_model("leaderboard", "LeaderboardConfig").objects.filter(missing_metric="per_model").update(missing_metric="drop_metric")


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0007_evaluation_shards"),
    ]

    operations = [
        migrations.AlterField(
            model_name="leaderboardconfig",
            name="missing_metric",
            field=models.CharField(
                choices=[("per_model", "Rank them on the metrics they have; the others keep every metric"),
                         ("exclude_model", "List them as pending; keep the metric")],
                default="per_model",
                help_text="Models without a weighted metric (e.g. prediction files: no throughput or memory).",
                max_length=16,
            ),
        ),
        migrations.RunPython(to_per_model, to_drop_metric),
    ]
