from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"

    def ready(self):
        """Listen to ``tasks.signals.leaderboard_inputs_changed``: lower layers announce a changed
        round, dataset or model, and ``leaderboard.scheduling.schedule_evaluations`` queues the
        missing evaluation runs."""
        from leaderboard.scheduling import on_leaderboard_inputs_changed
        from tasks.signals import leaderboard_inputs_changed

        leaderboard_inputs_changed.connect(on_leaderboard_inputs_changed, dispatch_uid="leaderboard.schedule_evaluations")
