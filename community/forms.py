"""Forms of the community pages: a task proposal and a reviewer's decision."""

import re

from django import forms

from tasks.kinds import kind_choices


class ProposalForm(forms.Form):
    """A task proposal: the form's values are set in the definition file's (``community.proposals``)."""

    code = forms.SlugField(max_length=64, help_text="The task's short name in its URLs, e.g. climate-claims.")
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=kind_choices)
    labels = forms.CharField(
        required=False, max_length=2000,
        help_text="Comma-separated, e.g. supports, refutes, not enough info (empty: the definition file's labels, or none for kinds without labels).",
    )
    instructions = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), max_length=20000,
                                   help_text="What annotators should write, in Markdown (no HTML).")
    license = forms.CharField(required=False, max_length=500, label="Licence",
                              help_text="The licence of the data collected, a URL or an SPDX id (e.g. CC-BY-4.0).")
    definition = forms.FileField(
        help_text="A task definition (.json) as manage.py create_task takes: at least its config (fields, "
                  "model inputs, model-wrong rule, metric); see tasks/data/task_definitions/.",
    )
    dataset = forms.FileField(required=False, label="First dataset (optional)",
                              help_text="A .csv or .jsonl file; once approved you map its columns on the console.")

    def __init__(self, *args, revising: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if revising:
            self.fields["definition"].required = False
            self.fields["definition"].help_text = "Leave empty to keep the file you sent; upload a corrected one otherwise."

    def proposal_fields(self) -> dict:
        """The cleaned values as ``community.proposals`` takes them (``labels`` as a list)."""
        data = dict(self.cleaned_data)
        data["labels"] = [label.strip() for label in re.split(r"[,\n]", data.get("labels") or "") if label.strip()]
        return data


class DecisionForm(forms.Form):
    """A reviewer's decision on a proposal, with a message to the proposer."""

    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("changes", "Ask for changes"), ("reject", "Reject")])
    message = forms.CharField(required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 3}))
