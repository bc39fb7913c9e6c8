from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The task owner's console: pages and API read models to run a campaign. Like Django's admin,
    it sits above every app whose records it edits and holds no models of its own."""

    name = "console"
