from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    """Dataset releases: frozen, versioned, documented versions of a task's public datasets (JSONL,
    Parquet, a dataset card, Croissant), built by an RQ job and served from Django's storage. The top
    layer: it reads the apps below it and nothing below imports it."""

    name = "releases"
    default_auto_field = "django.db.models.BigAutoField"
