from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        from annotation import counters  # noqa: F401  (registers the tally receivers)
        from annotation import label_changes  # noqa: F401  (relabels examples when a label is removed)
        from annotation.diversity import refresh  # noqa: F401  (recomputes a round's diversity report as it grows)

        from annotation.campaign_metrics import campaign
        from dynabench.metrics import register_source

        register_source("campaign", campaign)
