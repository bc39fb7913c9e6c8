
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def carry_over(apps, schema_editor):
    """A submitter's loop consent becomes the ``loop`` purpose; each round's spend starts at what its
    endpoint models used so far (``EndpointUsage``, which ``RoundSpend`` replaces)."""
    from django.db.models import Sum

    Endpoint = apps.get_model("tasks", "Endpoint")
    EndpointUsage = apps.get_model("tasks", "EndpointUsage")
    RoundSpend = apps.get_model("tasks", "RoundSpend")
    Endpoint.objects.filter(loop_allowed=True).update(consents=["loop"])
    for row in EndpointUsage.objects.values("round_id").annotate(calls=Sum("calls"), tokens=Sum("tokens")):
        RoundSpend.objects.create(round_id=row["round_id"], calls=row["calls"] or 0, tokens=row["tokens"] or 0)


class Migration(migrations.Migration):

    dependencies = [
        ('tasks', '0014_endpoint_transcriptions_api'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='RoundSpend',
            fields=[
                ('round', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='spend', serialize=False, to='tasks.round')),
                ('calls', models.PositiveIntegerField(default=0)),
                ('tokens', models.BigIntegerField(default=0)),
            ],
        ),
        migrations.AddField(
            model_name='endpoint',
            name='consents',
            field=models.JSONField(blank=True, default=list, help_text="The purposes besides evaluation its submitter lets the task's owners use it for (tasks.loop.gate_models.Purpose: loop, assist, generate, transfer, judge). Only the submitter gives or revokes them."),
        ),
        migrations.CreateModel(
            name='ModelCall',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('purpose', models.CharField(choices=[('evaluation', 'Leaderboard evaluation'), ('loop', 'Model in the loop (answers, chat turns, side by side)'), ('assist', 'Writing assistant (Suggest)'), ('generate', 'Generated candidates'), ('transfer', 'Transfer to other models'), ('judge', 'AI validator'), ('test', 'Test connection')], max_length=16)),
                ('status', models.CharField(choices=[('ok', 'Answered'), ('failed', 'Failed'), ('refused_consent', 'Refused: no consent'), ('refused_budget', 'Refused: budget spent')], max_length=16)),
                ('prompt_tokens', models.PositiveIntegerField(default=0)),
                ('completion_tokens', models.PositiveIntegerField(default=0)),
                ('latency_ms', models.FloatField(default=0.0)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('model', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='calls', to='tasks.mlmodel')),
                ('round', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='tasks.round')),
                ('task', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tasks.task')),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'indexes': [models.Index(fields=['model', 'purpose'], name='modelcall_model_purpose'), models.Index(fields=['model', 'created_at'], name='modelcall_model_created')],
            },
        ),
        migrations.RunPython(carry_over, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='endpoint',
            name='loop_allowed',
        ),
        migrations.DeleteModel(
            name='EndpointUsage',
        ),
        migrations.AlterField(
            model_name='round',
            name='endpoint_call_budget',
            field=models.PositiveIntegerField(blank=True, help_text='Most calls to endpoint models in this round (blank: no limit); reserved and counted in RoundSpend.', null=True),
        ),
    ]
