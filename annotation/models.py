"""Examples written by annotators against the model in the loop."""

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, IntegerField, Q, Value
from django.db.models.functions import Greatest

from dynabench.errors import RuleError


class ValidationState(models.TextChoices):
    PENDING = "pending", "Pending"
    VERIFIED_CORRECT = "verified_correct", "Verified correct"
    VERIFIED_INCORRECT = "verified_incorrect", "Verified incorrect"
    FLAGGED = "flagged", "Flagged"


#: The examples that count as validated (DESIGN.md "vMER"): validated as correct (validator
#: consensus or an owner's decision) and not retracted. vMER counts them here
#: (``annotation.selectors``); their final labels come from ``validation.selectors.validated_examples``.
VALIDATED = Q(validation_state=ValidationState.VERIFIED_CORRECT, retracted=False)


class Example(models.Model):
    """An example written by an annotator for a context, with the model's answer to it.

    - ``input``: every model input field, context fields included, e.g.
      ``{"premise": "...", "hypothesis": "..."}``.
    - ``target``: the annotator's answer, ``{"label": "..."}`` or
      ``{"answers": [{"text": "...", "answer_start": 17}]}``.
    - ``model_output``: the model's full answer, ``{"label", "probs"}`` or
      ``{"answer", "start", "end", "score"}``; ``model_wrong`` is decided on the server.
    - ``validation_state`` and the ``*_count`` columns are derived from the example's
      validations and written in the same transaction as each validation
      (``validation/consensus.py``); ``manage.py reconcile_counters`` rechecks them.
    - ``submission_key``: the one-time key of the submission that wrote it; a repeat with
      the same key returns this example (``dynabench/idempotency.py``).
    - ``leased_to``/``leased_until``: the review queue's lease, so two validators are never
      handed the same example at the same time.
    """

    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="examples")
    context = models.ForeignKey("tasks.Context", on_delete=models.CASCADE, related_name="examples")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="examples")
    input = models.JSONField(default=dict)
    target = models.JSONField(default=dict)
    model = models.ForeignKey(
        "tasks.MLModel", on_delete=models.SET_NULL, null=True, blank=True, related_name="examples"
    )
    model_output = models.JSONField(default=dict)
    model_wrong = models.BooleanField()
    metadata = models.JSONField(default=dict, blank=True, help_text="Explanations, flag reason.")
    tag = models.CharField(max_length=64, blank=True, default="")
    retracted = models.BooleanField(default=False)
    flagged = models.BooleanField(default=False, help_text="Flagged by its author.")
    split = models.CharField(max_length=8, blank=True, default="", help_text="train/dev/test once the round is closed.")
    time_spent = models.FloatField(null=True, blank=True, help_text="Seconds from context shown to submit.")
    submission_key = models.CharField(
        max_length=64, blank=True, default="",
        help_text="The one-time key of the form or API call that wrote it (dynabench/idempotency.py).",
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    validation_state = models.CharField(
        max_length=24, choices=ValidationState.choices, default=ValidationState.PENDING
    )
    validation_count = models.PositiveIntegerField(default=0)
    correct_count = models.PositiveIntegerField(default=0)
    incorrect_count = models.PositiveIntegerField(default=0)
    flagged_count = models.PositiveIntegerField(default=0)
    leased_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    leased_until = models.DateTimeField(null=True, blank=True)
    disagreeing = models.GeneratedField(
        expression=F("validation_count") - Greatest(F("correct_count"), F("incorrect_count"), F("flagged_count"), Value(0)),
        output_field=IntegerField(),
        db_persist=True,
        help_text="Validations that differ from the most common label: how contested the example is (owner queue).",
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # The owner queue: most flagged, most contested, oldest (validation.queue_selectors.owner_queue).
            models.Index(
                "round", F("flagged_count").desc(), F("disagreeing").desc(), "created_at", "id",
                name="example_owner_queue", condition=Q(retracted=False),
            ),
            # The review queue: fooling first, fewest validations, oldest.
            models.Index(
                fields=["round", "validation_state", "model_wrong", "validation_count", "created_at"],
                name="example_review_queue",
            ),
            # Flagged examples to decide, most flags first (validation.selectors.round_dashboard).
            models.Index(
                "round", F("flagged_count").desc(), "created_at", name="example_flagged_pending",
                condition=Q(retracted=False, validation_state="pending") & (Q(flagged_count__gte=1) | Q(flagged=True)),
            ),
            models.Index(fields=["author", "created_at"], name="example_author_daily"),
            models.Index(fields=["round", "author"], name="example_round_author"),
        ]
        constraints = [
            # A repeated submission (same author, same key) returns the first example instead.
            models.UniqueConstraint(
                fields=["author", "submission_key"], condition=~Q(submission_key=""), name="example_submission_key_once"
            ),
        ]

    def __str__(self):
        return f"example {self.pk} ({self.round})"


class Tally(models.Model):
    """Running counts of a round's examples, kept in the same transaction as each write.

    ``collected``: examples not retracted; ``fooled``: of those, the ones that fooled the
    model; ``verified_fooled``: fooled and validated correct (``VALIDATED``), the numerator
    of vMER. ``annotation/counters.py`` changes them (example created, deleted, retracted,
    its validation state changed); ``manage.py reconcile_counters`` rechecks them against
    the examples.
    """

    collected = models.IntegerField(default=0)
    fooled = models.IntegerField(default=0)
    verified_fooled = models.IntegerField(default=0)

    class Meta:
        abstract = True


class RoundTally(Tally):
    """A round's running counts (``Tally``) plus its examples by validation state (retracted
    ones left out), its retracted examples and its validations (every mode, retracted
    examples included), so the round page never rescans the round."""

    round = models.OneToOneField("tasks.Round", on_delete=models.CASCADE, primary_key=True, related_name="tally")
    retracted = models.IntegerField(default=0)
    pending = models.IntegerField(default=0)
    verified_correct = models.IntegerField(default=0)
    verified_incorrect = models.IntegerField(default=0)
    flagged = models.IntegerField(default=0, help_text="Examples the validators (or an owner) flagged.")
    validations = models.IntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"tally of round {self.round_id}"


class RoundHourTally(models.Model):
    """A round's non-retracted examples written in one UTC ``hour`` against one model
    (``model_id``; 0 when the example has no model), kept by ``annotation.counters`` with the
    round's other tallies: the owner's dashboard reads per-hour and per-model figures from
    these few rows instead of grouping the round's examples."""

    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="hour_tallies")
    hour = models.DateTimeField()
    model_id = models.IntegerField(default=0)
    collected = models.IntegerField(default=0)
    fooled = models.IntegerField(default=0)
    verified_fooled = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["round", "hour", "model_id"], name="round_hour_tally_unique")]

    def __str__(self):
        return f"tally of round {self.round_id} at {self.hour:%Y-%m-%d %H}:00, model {self.model_id}"


class RoundVoteTally(models.Model):
    """How many of a round's non-retracted examples are ``settled`` (not pending) or not with
    ``votes`` counted validations (``Example.validation_count``), kept by
    ``annotation.counters``: the adaptive vote budget (``validation.round_statistics.vote_budget``)
    reads these few rows instead of scanning the round."""

    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="vote_tallies")
    settled = models.BooleanField()
    votes = models.IntegerField()
    examples = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["round", "settled", "votes"], name="round_vote_tally_unique")]

    def __str__(self):
        return f"tally of round {self.round_id}: {self.examples} {'settled' if self.settled else 'pending'} with {self.votes} votes"


class AuthorTally(Tally):
    """One annotator's running counts (``Tally``) in one round: the round page's per-annotator
    table and each user's vMER. ``settled``: of the collected examples, those whose validation
    is decided (not pending), so a person's vMER can read "—" until one is."""

    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="author_tallies")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    settled = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["round", "author"], name="one_tally_per_round_and_author")]
        indexes = [
            models.Index(
                "round", F("verified_fooled").desc(), F("fooled").desc(), "author", name="author_tally_ranking"
            ),
            models.Index(fields=["author", "round"], name="author_tally_by_author"),
        ]

    def __str__(self):
        return f"tally of user {self.author_id} in round {self.round_id}"


class AuthorDayTally(models.Model):
    """How many examples one author wrote for one task on one day (in ``settings.TIME_ZONE``),
    retracted ones included: the count the task's ``daily_example_cap`` is checked against.

    ``annotation.saving._save_example`` adds one in the statement that also serialises the
    author's concurrent submissions (an upsert on this row: the second waits for the first to
    commit), so the cap is checked without counting the author's examples of the day."""

    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    task = models.ForeignKey("tasks.Task", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    written = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["author", "task", "day"], name="one_day_tally_per_author_and_task")]

    def __str__(self):
        return f"{self.written} examples by user {self.author_id} for task {self.task_id} on {self.day}"


class Qualification(models.Model):
    """A task's onboarding: instructions to read and a short quiz of gold examples with a pass mark.

    While ``active``, a worker must pass it before writing or validating on the task
    (``annotation/qualification.py``); owners and admins are exempt. Passing grants the
    task's annotator role and, with ``grants_validator``, its validator role
    (``tasks.access.grant_role``). ``pass_mark``: the share of quiz items answered right
    (0..1); ``max_attempts``: attempts allowed per worker; ``questions_per_attempt``: how many
    questions each attempt draws from the pool of quiz items; ``cooloff_minutes``: the wait after
    a failed attempt; ``attempts_per_hour``: attempts by everyone per clock hour. A worker learns
    only pass or fail (``annotation/qualification.py``).
    """

    task = models.OneToOneField("tasks.Task", on_delete=models.CASCADE, related_name="qualification")
    instructions = models.TextField(help_text="Markdown, rendered safely; the worker confirms reading it.")
    pass_mark = models.FloatField(default=0.8, help_text="Share of quiz items right needed to pass (0..1).")
    max_attempts = models.PositiveIntegerField(default=3, help_text="Attempts allowed per worker.")
    questions_per_attempt = models.PositiveIntegerField(
        default=5, help_text="Questions drawn at random from the pool for each attempt (the pool should hold several times as many)."
    )
    cooloff_minutes = models.PositiveIntegerField(default=60, help_text="Minutes a worker waits after a failed attempt.")
    attempts_per_hour = models.PositiveIntegerField(
        default=200, help_text="Attempts by all workers together per clock hour (0: no limit): unlimited identities stay limited."
    )
    retire_after_passes = models.PositiveIntegerField(
        default=1, help_text="A question leaves the pool once it was in this many passed attempts (0: never): "
        "what a pass reveals is never asked again.",
    )
    grants_validator = models.BooleanField(default=True, help_text="Passing also grants the validator role on the task.")
    active = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(pass_mark__gte=0) & Q(pass_mark__lte=1), name="qualification_pass_mark_0_1"),
            models.CheckConstraint(condition=Q(max_attempts__gte=1), name="qualification_attempts_positive"),
            models.CheckConstraint(condition=Q(questions_per_attempt__gte=1), name="qualification_questions_positive"),
        ]

    def __str__(self):
        return f"qualification of {self.task.code}"


class QuizItem(models.Model):
    """One quiz question: ``input`` holds every field shown (context and example fields, e.g.
    ``{"prompt", "text"}`` or ``{"passage", "question"}``); ``answer`` is the gold target in the
    task's stored shape (``{"label"}`` or ``{"answers": [{"text", "answer_start"}]}``), checked
    with the task kind's ``clean_target``. ``answer`` never leaves the server. ``passes``: the
    passed attempts it was drawn in (a pass tells the worker their answers were mostly right,
    so the question retires after ``Qualification.retire_after_passes`` of them)."""

    qualification = models.ForeignKey(Qualification, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField(default=0)
    input = models.JSONField(default=dict)
    answer = models.JSONField(default=dict)
    passes = models.PositiveIntegerField(default=0, help_text="Passed attempts this question was in.")

    class Meta:
        ordering = ["qualification", "position", "id"]

    def __str__(self):
        return f"quiz item {self.pk} of {self.qualification}"

    def clean(self):
        """Check ``answer`` against the task kind (``clean_target`` on ``input``) and store it cleaned."""
        task = self.qualification.task
        try:
            self.answer = task.spec.clean_target(task.config, self.input or {}, self.answer)
        except RuleError as exc:
            raise ValidationError({"answer": exc.message}) from None


class QuizAttempt(models.Model):
    """One attempt at a qualification quiz: the questions drawn for it, then the worker's answers,
    the score and whether it passed.

    An attempt is opened when the quiz is shown (``items``: the drawn quiz item ids, in order;
    ``submitted_at`` None; ``right``/``total``/``passed`` None) and scored once when submitted.
    ``key``: the one-time key the quiz form carried, unique per worker and qualification, so
    a double-submitted form is recorded once. ``right`` is for the owner only: the worker is
    told pass or fail.
    """

    qualification = models.ForeignKey(Qualification, on_delete=models.CASCADE, related_name="attempts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="quiz_attempts")
    key = models.CharField(max_length=64)
    items = models.JSONField(default=list, help_text="Ids of the quiz items drawn for this attempt.")
    answers = models.JSONField(default=dict)
    right = models.PositiveIntegerField(null=True, blank=True)
    total = models.PositiveIntegerField(null=True, blank=True)
    passed = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["qualification", "user", "key"], name="one_attempt_per_form")]
        indexes = [models.Index(fields=["user", "qualification", "passed"], name="quiz_attempt_user")]


def new_entry_token() -> str:
    """A fresh per-study secret for the entry URL: 32 URL-safe characters (192 bits)."""
    return secrets.token_urlsafe(24)


class CrowdStudy(models.Model):
    """A paid-crowd study on one round: where workers from a platform enter and when they are done.

    A round has at most one study per platform and kind of work (``activity``): a writing and a
    validating study may run side by side on one platform. The study URL
    (``/crowd/<task>/r<N>/<platform>/<activity>/``) takes the platform's parameters
    (Prolific: ``PROLIFIC_PID``, ``STUDY_ID``, ``SESSION_ID``; Mechanical Turk: ``workerId``,
    ``assignmentId``, ``hitId``). ``activity``: what counts as work (examples written or
    validations given); ``required``: how many finish the study; ``completion_code``: the code
    Prolific expects (MTurk gets its submit form instead).

    What proves an entry (``annotation/crowd.py``): ``platform_study_id`` (Prolific's
    ``STUDY_ID`` or MTurk's HIT id, which the URL's study parameter must equal), ``entry_token``
    (a per-study secret the owner pastes into the platform as part of the URL),
    ``participant_cap`` (sessions at most), and optionally ``api_token`` (the owner's Prolific API
    token: each entry's ``SESSION_ID`` is then looked up and its participant and study compared;
    never shown back).
    """

    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Mechanical Turk"

    class Activity(models.TextChoices):
        WRITE = "write", "Write examples"
        VALIDATE = "validate", "Validate examples"

    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="crowd_studies")
    platform = models.CharField(max_length=16, choices=Platform.choices)
    activity = models.CharField(max_length=16, choices=Activity.choices, default=Activity.WRITE)
    required = models.PositiveIntegerField(default=5, help_text="Examples or validations that finish the study.")
    completion_code = models.CharField(max_length=64, blank=True, help_text="Prolific's completion code.")
    mturk_sandbox = models.BooleanField(default=False, help_text="Send MTurk workers to the sandbox's submit URL.")
    platform_study_id = models.CharField(
        max_length=64, blank=True, help_text="Prolific's STUDY_ID or MTurk's HIT id; entries with another are refused.",
    )
    entry_token = models.CharField(
        max_length=64, default=new_entry_token, help_text="Secret part of the study URL pasted into the platform.",
    )
    participant_cap = models.PositiveIntegerField(default=100, help_text="Workers who may start the study, at most.")
    api_token = models.CharField(
        max_length=255, blank=True, help_text="Prolific API token: look each entry's submission up (never shown back).",
    )
    active = models.BooleanField(default=True)
    ended_at = models.DateTimeField(null=True, blank=True, help_text="When the study ended (its round closed).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["round", "platform"]
        verbose_name_plural = "crowd studies"
        constraints = [
            models.UniqueConstraint(fields=["round", "platform", "activity"], name="one_crowd_study_per_round_platform_and_activity"),
            models.CheckConstraint(condition=Q(required__gte=1), name="crowd_study_required_positive"),
        ]

    def __str__(self):
        return f"{self.get_platform_display()} study of {self.round} ({self.get_activity_display().lower()})"


class CrowdWorker(models.Model):
    """A platform worker's pseudonymous account: no password, a username derived from a salted
    hash of the platform id. ``platform_worker_id`` stays on the server: only the task owner's
    pay files carry it (the platforms need it to pay); pages and exports never show it.
    ``proof_hash``: the hash of a secret cookie the creating browser got (``annotation/crowd.py``),
    so knowing a worker's id does not make another browser that worker."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="crowd_worker")
    platform = models.CharField(max_length=16, choices=CrowdStudy.Platform.choices)
    platform_worker_id = models.CharField(max_length=64)
    proof_hash = models.CharField(
        max_length=64, blank=True,
        help_text="sha256 of the browser proof issued when the account was made: only that browser re-enters it freely.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "platform_worker_id"], name="one_account_per_platform_worker")]


class CrowdSession(models.Model):
    """One worker's visit to one study: started, how much work counted (``progress``, raised in
    the transaction that stores the example or validation), and the completion recorded once.
    ``platform_session`` (Prolific's ``SESSION_ID``, MTurk's ``assignmentId``) belongs to one
    worker of the study; ``address_hash`` lets consensus count workers who entered from one
    address once (``validation/identity.py``)."""

    study = models.ForeignKey(CrowdStudy, on_delete=models.CASCADE, related_name="sessions")
    worker = models.ForeignKey(CrowdWorker, on_delete=models.CASCADE, related_name="sessions")
    platform_session = models.CharField(max_length=64, blank=True, help_text="SESSION_ID or assignmentId.")
    platform_study = models.CharField(max_length=64, blank=True, help_text="STUDY_ID or hitId.")
    progress = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    completion_code = models.CharField(max_length=64, blank=True)
    address_hash = models.CharField(
        max_length=32, blank=True, help_text="Salted hash of the client address it entered from (distinct-worker checks).",
    )
    verified = models.BooleanField(default=False, help_text="Confirmed by the platform's API (participant and study).")

    class Meta:
        ordering = ["study", "started_at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "worker"], name="one_session_per_study_and_worker"),
            models.UniqueConstraint(
                fields=["study", "platform_session"], condition=~Q(platform_session=""), name="one_worker_per_platform_session",
            ),
        ]
        indexes = [models.Index(fields=["address_hash"], name="crowd_session_address")]


class TransferResult(models.Model):
    """One other model's answer to one validated example: the raw material of the example's transfer
    rate (``validation/transfer.py``). ``output`` is the model's full answer to the example's model
    input; ``target`` the final label it was judged against; ``fooled`` the kind's ``model_wrong``
    of the two. Kept, so the rate is recomputed from these rows without running a model again
    (``validation.transfer.recompute_rates``); deleting a model deletes its rows."""

    example = models.ForeignKey(Example, on_delete=models.CASCADE, related_name="transfer_results")
    model = models.ForeignKey("tasks.MLModel", on_delete=models.CASCADE, related_name="transfer_results")
    output = models.JSONField(default=dict)
    target = models.JSONField(default=dict)
    fooled = models.BooleanField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["example", "model"], name="transfer_result_once_per_model")]

    def __str__(self):
        return f"example {self.example_id} on model {self.model_id}: {'fooled' if self.fooled else 'not fooled'}"


class TransferRate(models.Model):
    """How far a validated example transfers: of the ``tried`` other ready models of its task (every
    model that answers, the one it was written against left out), how many it ``fooled``. Derived
    from the example's ``TransferResult`` rows (``validation.transfer.recompute_rates``)."""

    example = models.OneToOneField(Example, on_delete=models.CASCADE, related_name="transfer")
    tried = models.PositiveIntegerField()
    fooled = models.PositiveIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(fooled__lte=F("tried")) & Q(tried__gte=1), name="transfer_rate_within_tried")]

    @property
    def rate(self) -> float:
        """``fooled / tried``: the share of the other models the example fools (0..1)."""
        return self.fooled / self.tried

    def as_dict(self) -> dict:
        """``{"rate", "fooled", "tried"}``: the shape of a transfer rate in the export and the API."""
        return {"rate": self.rate, "fooled": self.fooled, "tried": self.tried}

    def __str__(self):
        return f"example {self.example_id} fools {self.fooled} of {self.tried} other models"
