"""Forms of the annotation pages: they parse what was posted; the rules are in ``services``.

The example form is built from the task config (its input fields, its labels, or the QA
answer span). It does not repeat the services' checks (required fields, length caps,
label set, answer span): those raise ``RuleError`` and ``add_rule_error`` shows them on
the field they name, so every surface gives the same message.
"""

import time

from django import forms
from django.core import signing

from annotation.example_checks import DEFAULT_MAX_LENGTH, EXPLANATION_LABELS, EXPLANATION_MAX_LENGTH, FLAG_REASON_MAX_LENGTH
from dynabench import hotsql, idempotency
from tasks.models import Context, Round

TOKEN_SALT = "annotation.context"
TOKEN_MAX_AGE_S = 24 * 3600


def context_token(context: Context) -> str:
    """Return a signed token naming ``context`` and the time it was shown (for time spent)."""
    return signing.dumps({"c": context.pk, "t": round(time.time(), 3)}, salt=TOKEN_SALT)


def _text_field(field: dict, *, required: bool = False) -> forms.CharField:
    # No ``maxlength`` attribute: the browser would cut longer text silently. The page shows
    # a counter (``data-max-length``, static/js/annotate.js) and the service refuses too long
    # text with a message naming the limit.
    cap = field.get("max_length", DEFAULT_MAX_LENGTH)
    attrs = {
        "data-max-length": cap, "autocomplete": "off", "data-field": field["name"],
        "aria-describedby": f"id_{field['name']}-count",
    }
    if field.get("widget") == "textarea":
        widget = forms.Textarea(attrs={**attrs, "rows": 3})
    else:
        widget = forms.TextInput(attrs=attrs)
    return forms.CharField(
        label=field.get("label", field["name"]), help_text=field.get("help", ""),
        required=required, strip=False, widget=widget,
    )


class RuleErrorsMixin:
    field_aliases: dict = {}

    def add_rule_error(self, error) -> None:
        """Show a service's ``RuleError`` on the field it names (or above the form)."""
        field = self.field_aliases.get(error.field, error.field)
        self.add_error(field if field in self.fields else None, error.message)


class ExampleForm(RuleErrorsMixin, forms.Form):
    """The annotator's example for one context of ``task``.

    Fields: ``token`` (signed context id and time shown), ``submission_key`` (a one-time key,
    new at every rendering: a repeated post returns the first example), the task's input fields, then
    ``label`` (classification) or hidden ``answer_text`` + ``answer_start`` (QA, filled by
    ``static/js/annotate.js`` from the selection in the passage).
    """

    field_aliases = {"answer": "answer_text"}
    token = forms.CharField(widget=forms.HiddenInput)
    submission_key = forms.CharField(
        widget=forms.HiddenInput, required=False, initial=idempotency.new_key, max_length=idempotency.MAX_LENGTH
    )
    # The writing assistant's signed suggestion the example started from (``annotation/assist.py``); empty: unaided.
    suggestion = forms.CharField(widget=forms.HiddenInput, required=False, max_length=20000)

    def __init__(self, *args, task, **kwargs):
        super().__init__(*args, **kwargs)
        self.task = task
        self.context = None
        self.shown_at = None
        for field in task.config["input_fields"]:
            self.fields[field["name"]] = _text_field(field)
        target = task.spec.form_fields(task.config)
        self.target_names = list(target)
        self.fields.update(target)

    @property
    def input_names(self) -> list[str]:
        return [f["name"] for f in self.task.config["input_fields"]]

    def input_fields(self):
        return [self[name] for name in self.input_names]

    def target_fields(self):
        """The visible fields of the target, as the task's kind defines them (a generation task's reference)."""
        return [self[name] for name in self.target_names if not self[name].is_hidden]

    def clean_token(self):
        try:
            data = signing.loads(self.cleaned_data["token"], salt=TOKEN_SALT, max_age=TOKEN_MAX_AGE_S)
        except signing.SignatureExpired:
            raise forms.ValidationError("This context was shown more than a day ago; take a new context.")
        except signing.BadSignature:
            raise forms.ValidationError("This form was tampered with or is broken; take a new context.")
        row = hotsql.fetch_one(hotsql.statement("annotation.token_context", _token_context_sql), [data.get("c"), self.task.pk])
        if row is None:
            raise forms.ValidationError("This context no longer exists; take a new context.")
        self.context, context_round = hotsql.load_row(row, Context, Round)
        context_round.task = self.task  # the form's task, loaded once
        self.context.round = context_round
        self.shown_at = data.get("t")
        return self.cleaned_data["token"]

    def annotator_input(self) -> dict:
        return {name: self.cleaned_data.get(name) or "" for name in self.input_names}

    def target(self) -> dict:
        return self.task.spec.target_from_form(self.cleaned_data)

    def time_spent(self) -> float | None:
        """Seconds from the context being shown (server clock, signed) to this submission."""
        return max(0.0, time.time() - self.shown_at) if self.shown_at is not None else None


def _token_context_sql() -> str:
    """The context a token names, with its round, if the round belongs to the form's task."""
    c, r = Context, Round
    return (
        f"SELECT {hotsql.select_list(c, r)} FROM {hotsql.table(c)} INNER JOIN {hotsql.table(r)} "
        f"ON {hotsql.qualified(r, 'id')} = {hotsql.qualified(c, 'round')} "
        f"WHERE {hotsql.qualified(c, 'id')} = %s AND {hotsql.qualified(r, 'task')} = %s"
    )


class ExplanationForm(RuleErrorsMixin, forms.Form):
    """The author's explanations: why the example is correct, why the model got it wrong."""

    def __init__(self, *args, example, **kwargs):
        super().__init__(*args, **kwargs)
        names = example.round.task.config.get("explanation_fields") or list(EXPLANATION_LABELS)
        for name in names:
            if name == "model_explanation" and not example.model_wrong:
                continue
            self.fields[name] = forms.CharField(
                label=EXPLANATION_LABELS.get(name, name.replace("_", " ").capitalize()), required=False,
                widget=forms.Textarea(attrs={"rows": 2, "data-max-length": EXPLANATION_MAX_LENGTH}),
                initial=example.metadata.get(name, ""),
            )


class FlagForm(RuleErrorsMixin, forms.Form):
    reason = forms.CharField(
        required=False, label="Why do you flag it?",
        widget=forms.TextInput(attrs={"maxlength": FLAG_REASON_MAX_LENGTH, "placeholder": "e.g. I picked the wrong label"}),
    )


class SandboxForm(RuleErrorsMixin, forms.Form):
    """Every model input of ``task`` (context fields included) and an optional label or answer."""

    field_aliases = {"answer": "answer_text"}

    def __init__(self, *args, task, **kwargs):
        super().__init__(*args, **kwargs)
        self.task = task
        config = task.config
        known = {f["name"]: f for f in config["context_fields"] + config["input_fields"]}
        for name in config["model_inputs"]:
            field = known[name]
            if name in {f["name"] for f in config["context_fields"]}:
                field = {**field, "widget": "textarea", "max_length": field.get("max_length", 10000)}
            self.fields[name] = _text_field(field)
        self.fields.update(task.spec.form_fields(task.config, optional_label=True))

    def model_inputs(self) -> dict:
        return {name: self.cleaned_data.get(name) or "" for name in self.task.config["model_inputs"]}

    def target(self) -> dict | None:
        return self.task.spec.target_from_form(self.cleaned_data, optional=True)
