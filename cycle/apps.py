from django.apps import AppConfig


class CycleConfig(AppConfig):
    """The demo driver (``manage.py run_cycle``): above every other app, it drives the platform
    through its public API (the ``dynabench_client`` module) and a real server and worker."""

    name = "cycle"
    verbose_name = "Demo cycle"
