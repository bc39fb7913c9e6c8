"""Forms of the console's crowd pages: a study, the qualification quiz and one quiz question.
They parse what the owner typed; the rules live in ``annotation/crowd_setup.py``."""

from django import forms

from annotation.models import CrowdStudy
from console.forms import FieldErrorsMixin
from tasks.models import Round


class StudyForm(FieldErrorsMixin, forms.Form):
    """A Prolific or MTurk study on one round. ``api_token`` is never shown back: left empty it
    keeps the stored one; ``clear_api_token`` removes it."""

    round = forms.ModelChoiceField(queryset=Round.objects.none(), empty_label=None,
                                   help_text="A study runs on an open round only.")
    platform = forms.ChoiceField(choices=CrowdStudy.Platform.choices)
    activity = forms.ChoiceField(choices=CrowdStudy.Activity.choices, label="Workers")
    required = forms.IntegerField(min_value=1, max_value=1000, initial=5, label="Work that finishes the study",
                                  help_text="Examples written or validations given.")
    participant_cap = forms.IntegerField(min_value=1, max_value=100000, initial=100, label="Participant cap",
                                         help_text="Workers who may start the study, at most.")
    platform_study_id = forms.CharField(max_length=64, required=False, label="Platform study id",
                                        help_text="Prolific's STUDY_ID or MTurk's HIT id, once the platform shows it; "
                                                  "until then nobody can enter.")
    completion_code = forms.CharField(max_length=64, required=False, label="Completion code (Prolific)")
    mturk_sandbox = forms.BooleanField(required=False, label="MTurk sandbox")
    api_token = forms.CharField(
        max_length=255, required=False, label="Platform API token (optional)",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Prolific: your API token; MTurk: ACCESS_KEY_ID:SECRET. Each entry is then looked up on the platform. "
                  "Never shown again; leave empty to keep the stored one.",
    )
    clear_api_token = forms.BooleanField(required=False, label="Remove the stored API token")
    active = forms.BooleanField(required=False, initial=True, label="Taking workers")

    def __init__(self, *args, task, editing=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["round"].queryset = task.rounds.order_by("-number")
        self.fields["round"].label_from_instance = lambda r: f"Round {r.number} ({r.get_status_display().lower()})"
        if editing is not None:
            self.fields["round"].disabled = self.fields["platform"].disabled = True

    def api_token_change(self) -> str | None:
        """None: keep the stored token; ``""``: remove it; else the new token."""
        if self.cleaned_data.get("clear_api_token"):
            return ""
        return self.cleaned_data.get("api_token") or None

    @staticmethod
    def initial_from(study: CrowdStudy) -> dict:
        """The form's initial values from a saved study (never its API token)."""
        return {name: getattr(study, name) for name in (
            "round", "platform", "activity", "required", "participant_cap", "platform_study_id", "completion_code",
            "mturk_sandbox", "active")}


class QualificationForm(FieldErrorsMixin, forms.Form):
    """The quiz's settings (its questions are added one by one with ``QuizItemForm``)."""

    instructions = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), help_text="Markdown; read before the quiz.")
    pass_mark = forms.FloatField(min_value=0.01, max_value=1, initial=0.8, help_text="Share right to pass (0.8 = 80%).")
    questions_per_attempt = forms.IntegerField(min_value=1, max_value=100, initial=5,
                                               help_text="Drawn at random from the pool each attempt.")
    max_attempts = forms.IntegerField(min_value=1, max_value=20, initial=3, help_text="Per worker.")
    cooloff_minutes = forms.IntegerField(min_value=0, max_value=7 * 24 * 60, initial=60,
                                         help_text="Wait after a failed attempt.")
    attempts_per_hour = forms.IntegerField(min_value=0, max_value=100000, initial=200,
                                           help_text="By all workers together (0: no limit).")
    retire_after_passes = forms.IntegerField(
        min_value=0, max_value=1000, initial=1,
        help_text="A question leaves the pool after this many passed attempts (0: never). 1 is safest: "
                  "what a pass reveals is never asked again.")
    grants_validator = forms.BooleanField(required=False, initial=True, label="Passing also grants the validator role")
    active = forms.BooleanField(required=False, initial=True, label="Workers must pass it")

    @staticmethod
    def initial_from(found) -> dict:
        """The form's initial values from a saved ``Qualification``."""
        return {name: getattr(found, name) for name in (
            "instructions", "pass_mark", "questions_per_attempt", "max_attempts", "cooloff_minutes", "attempts_per_hour",
            "retire_after_passes", "grants_validator", "active")}


class QuizItemForm(FieldErrorsMixin, forms.Form):
    """One question in the task's own shape: a box per field the worker reads (the task's context
    and input fields) and the kind's answer fields (``task.spec.quiz_form_fields``), as the
    worker will see them: never raw JSON."""

    def __init__(self, *args, task, **kwargs):
        super().__init__(*args, **kwargs)
        self.task = task
        required = {f["name"] for f in task.config["input_fields"]}
        for field in [*task.config.get("context_fields", []), *task.config["input_fields"]]:
            self.fields[f"input_{field['name']}"] = forms.CharField(
                label=field.get("label", field["name"]), required=field["name"] in required,
                widget=forms.Textarea(attrs={"rows": 2}),
            )
        for name, field in task.spec.quiz_form_fields(task.config).items():
            field.label = f"Right answer: {field.label or name}" if field.label else "Right answer"
            self.fields[name] = field

    def shown(self) -> dict:
        """``{field name: text}`` of what the worker reads (the ``input_<name>`` boxes)."""
        return {name[len("input_"):]: value for name, value in self.cleaned_data.items() if name.startswith("input_")}

    def answer_values(self) -> dict:
        """The kind's answer fields as typed, for ``task.spec.quiz_target``."""
        return {name: value for name, value in self.cleaned_data.items() if not name.startswith("input_")}
