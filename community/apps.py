from django.apps import AppConfig


class CommunityConfig(AppConfig):
    """Notifications (in-app bell and email, per-user preferences). The top layer: it receives the
    signals lower layers send (``tasks.signals``) and does its work in RQ jobs (``community.jobs``)."""

    name = "community"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from community import receivers  # noqa: F401  (connects the signal receivers)
