from django.apps import AppConfig


class ValidationConfig(AppConfig):
    name = "validation"

    def ready(self):
        from validation import receivers  # noqa: F401  (registers the tally receivers)
