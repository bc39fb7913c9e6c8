from django.apps import AppConfig


class ValidationConfig(AppConfig):
    name = "validation"

    def ready(self):
        """Register the tally receivers, and listen to ``tasks.signals.leaderboard_inputs_changed``: a model
        that joins the task gets its transfer job for every round with validated examples
        (``validation.transfer.on_models_changed``)."""
        from tasks.signals import leaderboard_inputs_changed
        from validation import receivers  # noqa: F401  (registers the tally receivers)
        from validation.transfer import on_models_changed

        leaderboard_inputs_changed.connect(on_models_changed, dispatch_uid="validation.transfer.on_models_changed")
