"""Forms of the validation pages: they parse input; the rules live in ``services``."""

from django import forms

from annotation.models import ValidationState


class ValidationForm(forms.Form):
    """A verdict as posted by the review queue or the owner queue.

    ``submission_key``: the form's one-time key (``dynabench/idempotency.py``); a repeated
    post returns the first validation instead of failing as "already validated".
    """

    label = forms.CharField(max_length=16, error_messages={"required": "Choose correct, incorrect or flagged."})
    corrected_label = forms.CharField(max_length=64, required=False)
    corrected_answer = forms.CharField(max_length=2000, required=False, strip=False)
    answer_start = forms.IntegerField(required=False, min_value=0)
    own_answer = forms.CharField(max_length=200, required=False)
    flag_reason = forms.CharField(max_length=2000, required=False)
    explanation = forms.CharField(max_length=2000, required=False, widget=forms.Textarea)
    expected_state = forms.ChoiceField(choices=ValidationState.choices, required=False)
    submission_key = forms.CharField(max_length=64, required=False)

    def metadata(self) -> dict:
        data = self.cleaned_data
        meta = {k: data.get(k) for k in ("corrected_label", "flag_reason", "explanation", "own_answer")}
        if data.get("corrected_answer"):
            meta["corrected_answer"] = {"text": data["corrected_answer"], "answer_start": data.get("answer_start")}
        # Per-image verdicts of a text-to-image example: ``verdict_<sha256>`` = unsafe | safe.
        verdicts = {key.removeprefix("verdict_"): str(value)[:16] for key, value in self.data.items()
                    if key.startswith("verdict_") and value}
        if verdicts:
            meta["image_verdicts"] = dict(list(verdicts.items())[:32])
        # The harm categories ticked for an image judged unsafe (``categories_<sha256>``); the boxes of
        # an image judged safe are ignored (the annotator's choice is ticked in advance).
        categories = {sha: self.data.getlist(f"categories_{sha}")[:30] for sha, verdict in verdicts.items()
                      if verdict == "unsafe" and hasattr(self.data, "getlist") and self.data.getlist(f"categories_{sha}")}
        if categories:
            meta["image_categories"] = dict(list(categories.items())[:32])
        return meta

    def first_error(self) -> str:
        field, errors = next(iter(self.errors.items()))
        return f"{field}: {errors[0]}" if field != "__all__" else errors[0]


class CloseRoundForm(forms.Form):
    """Optional overrides of the task's split ratios and seed when closing a round."""

    train = forms.FloatField(required=False, min_value=0, max_value=1)
    dev = forms.FloatField(required=False, min_value=0, max_value=1)
    test = forms.FloatField(required=False, min_value=0, max_value=1)
    seed = forms.IntegerField(required=False)
    open_next = forms.BooleanField(required=False, label="Open the next round in the same step, with this round's contexts")
    next_loop = forms.ChoiceField(
        choices=[("current", "with this round's model(s) in the loop"),
                 ("retrained", "with a model retrained on every validated example (takes the loop once trained)")],
        required=False, initial="current", label="Next round's model in the loop",
    )
    merge_small = forms.BooleanField(
        required=False, label="Merge a dev or test split below the task's minimum size (dev into test, or both into train) instead of refusing",
    )
    confirm = forms.BooleanField(
        required=False, label="I have checked the preview: close the round, build its datasets and re-score every model",
    )

    def ratios(self) -> dict | None:
        values = [self.cleaned_data.get(s) for s in ("train", "dev", "test")]
        if all(v is None for v in values):
            return None
        return {s: (v or 0.0) for s, v in zip(("train", "dev", "test"), values)}


class OwnerQueueFilter(forms.Form):
    min_flags = forms.IntegerField(required=False, min_value=0, label="At least this many flags")
    disagreement = forms.BooleanField(required=False, label="Validators disagree")
    state = forms.ChoiceField(choices=[("", "Any state"), *ValidationState.choices], required=False)
