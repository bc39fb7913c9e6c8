from django.apps import AppConfig


class DynabenchConfig(AppConfig):
    name = "dynabench"
    verbose_name = "Dynabench"

    def ready(self):
        from django.apps import apps
        from django.conf import settings
        from django.db.models.signals import post_migrate

        # post_migrate is only sent for apps with models: hang the role groups on auth's.
        post_migrate.connect(_create_role_groups, sender=apps.get_app_config("auth"))

        if settings.EMBEDDED_REDIS:
            from dynabench.embedded_redis import ensure_running

            ensure_running(settings.EMBEDDED_REDIS_SOCKET)

        from dynabench import metrics, metrics_sources

        metrics.register_source("rq", metrics_sources.rq_queues)
        metrics.register_source("database", metrics_sources.database_server)
        metrics.register_source("disk", metrics_sources.disk)


def _create_role_groups(**kwargs):
    from dynabench.roles import ensure_role_groups

    ensure_role_groups()
