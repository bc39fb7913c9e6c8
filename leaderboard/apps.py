from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"

    def ready(self):
        """Listen to ``tasks.signals.leaderboard_inputs_changed``: lower layers announce a changed
        round, dataset or model, and ``leaderboard.scheduling.schedule_evaluations`` queues the
        missing evaluation runs. Listen to ``tasks.signals.example_settled``: a settled judgment queues
        the rebuild of its task's arena board (``leaderboard.arena_board.on_example_settled``)."""
        from leaderboard.arena_board import on_example_settled
        from leaderboard.scheduling import on_leaderboard_inputs_changed
        from tasks.signals import example_settled, leaderboard_inputs_changed

        leaderboard_inputs_changed.connect(on_leaderboard_inputs_changed, dispatch_uid="leaderboard.schedule_evaluations")
        example_settled.connect(on_example_settled, dispatch_uid="leaderboard.rebuild_arena_board")
