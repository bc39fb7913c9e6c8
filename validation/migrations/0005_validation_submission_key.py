# One-time submission keys on validations (dynabench/idempotency.py).

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('validation', '0004_crowd_round_pay'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='validation',
            name='submission_key',
            field=models.CharField(blank=True, default='', help_text='The one-time key of the form or API call that recorded it (dynabench/idempotency.py).', max_length=64),
        ),
        migrations.AddConstraint(
            model_name='validation',
            constraint=models.UniqueConstraint(condition=models.Q(('submission_key', ''), _negated=True), fields=('validator', 'submission_key'), name='validation_submission_key_once'),
        ),
    ]
