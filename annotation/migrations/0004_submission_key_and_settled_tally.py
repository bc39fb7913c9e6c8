# One-time submission keys on examples (dynabench/idempotency.py), and each author's count of
# settled examples per round (AuthorTally.settled), filled in from the examples.

from django.conf import settings
from django.db import migrations, models


def count_settled(apps, schema_editor):
    """Fill ``AuthorTally.settled``: each author's non-retracted, non-pending examples per round."""
    Example = apps.get_model("annotation", "Example")
    AuthorTally = apps.get_model("annotation", "AuthorTally")
    rows = (
        Example.objects.filter(retracted=False).exclude(validation_state="pending")
        .order_by().values("round_id", "author_id").annotate(n=models.Count("id"))
    )
    for row in rows.iterator():
        AuthorTally.objects.filter(round_id=row["round_id"], author_id=row["author_id"]).update(settled=row["n"])


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0003_tallies'),
        ('tasks', '0003_dataset_label_visibility_provenance'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='authortally',
            name='settled',
            field=models.IntegerField(default=0),
        ),
        migrations.AddField(
            model_name='example',
            name='submission_key',
            field=models.CharField(blank=True, default='', help_text='The one-time key of the form or API call that wrote it (dynabench/idempotency.py).', max_length=64),
        ),
        migrations.AddConstraint(
            model_name='example',
            constraint=models.UniqueConstraint(condition=models.Q(('submission_key', ''), _negated=True), fields=('author', 'submission_key'), name='example_submission_key_once'),
        ),
        migrations.RunPython(count_settled, migrations.RunPython.noop),
    ]
