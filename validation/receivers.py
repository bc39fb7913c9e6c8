"""Keeps the round tally's ``validations`` count (``annotation.counters``) in step with the
validation rows, in the transaction that writes them: every verdict, owner decision and gold
check counts. Bulk writes that skip model signals (the vote importer) recount the round."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from annotation import counters
from validation.models import Validation


def _round_and_author(validation) -> tuple[int, int]:
    example = validation.example  # already loaded by the services that write validations
    return example.round_id, example.author_id


@receiver(post_save, sender=Validation, dispatch_uid="validation.receivers.validation_saved")
def _validation_saved(sender, instance, created, raw=False, **kwargs):
    if created and not raw:
        round_id, author_id = _round_and_author(instance)
        counters.count_change(round_id=round_id, author_id=author_id, before=None, after=None, validations=1)


@receiver(post_delete, sender=Validation, dispatch_uid="validation.receivers.validation_deleted")
def _validation_deleted(sender, instance, **kwargs):
    round_id, author_id = _round_and_author(instance)
    counters.count_change(round_id=round_id, author_id=author_id, before=None, after=None, validations=-1)
