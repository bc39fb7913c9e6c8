from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        from annotation import counters  # noqa: F401  (registers the tally receivers)
