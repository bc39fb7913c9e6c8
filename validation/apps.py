from django.apps import AppConfig


class ValidationConfig(AppConfig):
    name = "validation"

    def ready(self):
        """Register the tally receivers, and listen to ``tasks.signals.leaderboard_inputs_changed``: a model
        that joins the task gets its transfer job for every round with validated examples
        (``validation.transfer.on_models_changed``); a new example waiting for validation gets the round's
        AI validator's vote (``validation.judge.on_example_saved``)."""
        from tasks.signals import leaderboard_inputs_changed
        from validation import receivers  # noqa: F401  (registers the tally receivers)
        from validation.transfer import on_models_changed

        leaderboard_inputs_changed.connect(on_models_changed, dispatch_uid="validation.transfer.on_models_changed")

        from django.db.models.signals import post_save

        from annotation.models import Example
        from validation.judge import on_example_saved

        post_save.connect(on_example_saved, sender=Example, dispatch_uid="validation.judge.on_example_saved")
