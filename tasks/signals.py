"""Signals that lower layers send so that the layers above can react without being imported.

``leaderboard_inputs_changed(sender, task, models=None, datasets=None)``: one side of a task's
leaderboard changed: a round closed, a dataset was imported or its content replaced, a model was
uploaded, published or retrained. ``models``/``datasets`` narrow what changed (lists of
``MLModel``/``Dataset`` rows or ids; ``None`` means all of the task's). Send it inside the
transaction that made the change; the leaderboard app's receiver
(``leaderboard.scheduling.schedule_evaluations``) queues exactly the missing evaluation runs
once that transaction commits.

``model_evaluation_finished(sender, model_id, status, reason)``: a model's evaluation ended
(``status`` ``evaluated`` or ``failed``, with the failure ``reason``). Sent once the transaction
that set the status commits (``leaderboard.evaluation.refresh_model_status``).

``example_settled(sender, example_id, author_id, state)``: validation settled an example
(``state``: ``verified_correct``, ``verified_incorrect`` or ``flagged``; an owner's decision
included). Sent once the transaction commits (``validation.consensus.settle_example``).

``round_status_changed(sender, round_id, status)``: a round opened or closed (``status``). Sent once
the transaction commits (``tasks.services.set_round_status``, ``validation.round_close.close_round``).

``crowd_study_completed(sender, session_id, user_id)``: a crowd worker finished a study and its completion
code was recorded (``annotation.crowd.complete``). Sent once the transaction commits.

``endpoint_misconfigured(sender, model_id, reason)``: an endpoint model's server refused a request as
misconfigured (an HTTP 4xx other than 408/429; ``reason``: the server's own words, bounded, without the
key). Sent by ``tasks.loop.endpoints.breaker.report_config_error`` at most once per model and reason
every ten minutes, possibly from the event loop: receivers must not touch the database there.

The ``community`` app (notifications) receives the last four and ``endpoint_misconfigured``; the senders
import nothing above them.
"""

from django.dispatch import Signal

leaderboard_inputs_changed = Signal()
model_evaluation_finished = Signal()
example_settled = Signal()
round_status_changed = Signal()
crowd_study_completed = Signal()
endpoint_misconfigured = Signal()

labels_removed = Signal()
"""``labels_removed(sender, task, mapping)``: an owner removed labels from ``task``
(``tasks.services.update_task_settings``). ``mapping`` is ``{removed label: remaining label, or ""}``:
examples carrying a removed label are relabelled to the remaining one, or marked when it is ``""``.
Sent inside the settings transaction; the annotation app's receiver
(``annotation.label_changes.relabel_examples``) rewrites the examples in it."""
