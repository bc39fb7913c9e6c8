"""Examples follow a task's label set: when an owner removes a label (``tasks.services.update_task_settings``
sends ``tasks.signals.labels_removed``), the examples carrying it are relabelled or marked here, in the
same transaction, so no example is left with a label the task no longer has."""

from django.dispatch import receiver

from annotation.models import Example
from tasks.signals import labels_removed

MARK_KEY = "removed_label"
"""``Example.metadata`` key of an example whose label was removed without a replacement; the
validated-example selector (``validation.selectors.validated_queryset``) leaves such examples out."""

BEFORE_KEY = "label_before_removal"
"""``Example.metadata`` key keeping the label an example carried before it was relabelled."""


@receiver(labels_removed, dispatch_uid="annotation.relabel_examples")
def relabel_examples(sender, *, task, mapping: dict, **kwargs) -> int:
    """Relabel (``{old: new}``) or mark (``{old: ""}``: ``metadata["removed_label"] = old``) every
    example of ``task`` whose target label is a removed label; the old label stays in the metadata.
    Returns how many examples changed."""
    changed = []
    for old, new in mapping.items():
        examples = Example.objects.filter(round__task=task, target__label=old).only("pk", "target", "metadata")
        for example in examples.iterator(chunk_size=1000):
            if new:
                example.target = {**example.target, "label": new}
                example.metadata = {**example.metadata, BEFORE_KEY: old}
            else:
                example.metadata = {**example.metadata, MARK_KEY: old}
            changed.append(example)
    Example.objects.bulk_update(changed, ["target", "metadata"], batch_size=1000)
    return len(changed)
