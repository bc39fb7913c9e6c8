"""The missing-metric choice of a saved leaderboard becomes its own field.

Until now it was stored as a fake weight named ``_missing_metric`` inside ``metric_weights``;
the data migration moves it into ``missing_metric`` (unknown values fall back on
``drop_metric``, the default) and the reverse puts it back.
"""

from django.db import migrations, models

FAKE_WEIGHT = "_missing_metric"
CHOICES = ("drop_metric", "exclude_model")


def move_choice_to_field(apps, schema_editor):
    LeaderboardConfig = apps.get_model("leaderboard", "LeaderboardConfig")
    for config in LeaderboardConfig.objects.filter(metric_weights__has_key=FAKE_WEIGHT).iterator():
        weights = dict(config.metric_weights)
        choice = weights.pop(FAKE_WEIGHT)
        config.missing_metric = choice if choice in CHOICES else "drop_metric"
        config.metric_weights = weights
        config.save(update_fields=["missing_metric", "metric_weights"])


def move_choice_back_to_weights(apps, schema_editor):
    LeaderboardConfig = apps.get_model("leaderboard", "LeaderboardConfig")
    for config in LeaderboardConfig.objects.iterator():
        config.metric_weights = {**config.metric_weights, FAKE_WEIGHT: config.missing_metric}
        config.save(update_fields=["metric_weights"])


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0003_config_slug_fits_its_column'),
    ]

    operations = [
        migrations.AddField(
            model_name='leaderboardconfig',
            name='missing_metric',
            field=models.CharField(choices=[('drop_metric', 'Rank them; leave that metric out for everyone'), ('exclude_model', 'List them as pending; keep the metric')], default='drop_metric', help_text='Models without a weighted metric (e.g. prediction files: no throughput or memory).', max_length=16),
        ),
        migrations.RunPython(move_choice_to_field, move_choice_back_to_weights),
    ]
