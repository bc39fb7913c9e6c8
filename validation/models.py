"""Validations: other people's verdicts on examples."""

from django.conf import settings
from django.db import models


class Validation(models.Model):
    """One validator's verdict on one example; unique per (example, validator).

    ``metadata`` holds what the task asks for: ``corrected_label`` or ``corrected_answer``
    (``{"text", "answer_start"}``), ``flag_reason``, ``explanation``.
    """

    class Label(models.TextChoices):
        CORRECT = "correct", "Correct"
        INCORRECT = "incorrect", "Incorrect"
        FLAGGED = "flagged", "Flagged"

    class Mode(models.TextChoices):
        USER = "user", "User"
        OWNER = "owner", "Owner"

    example = models.ForeignKey("annotation.Example", on_delete=models.CASCADE, related_name="validations")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="validations")
    label = models.CharField(max_length=16, choices=Label.choices)
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.USER)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["example", "validator"], name="one_validation_per_example_and_validator"),
        ]
        indexes = [models.Index(fields=["validator", "created_at"], name="validation_validator_recent")]

    def __str__(self):
        return f"{self.validator} says {self.label} on example {self.example_id}"
