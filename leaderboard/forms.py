"""Forms of the leaderboard pages: they parse input; the services decide."""

from django import forms

from leaderboard.models import MissingMetric
from tasks.models import MLModel


class SubmissionForm(forms.Form):
    """A model archive (zip / tar.gz of a Hugging Face directory), a JSONL predictions file, or a
    data-centric selection (a text file of pool uids, one per line): the choices the task's kind
    takes (``submissions``, its spec's)."""

    KIND_CHOICES = [("archive", "Model archive (zip or tar.gz of a Hugging Face directory)"),
                    ("predictions", "Predictions file (JSONL)"),
                    ("selection", "Selection of pool items (a text file, one uid per line)")]
    SUBMISSION_OF_KIND = {"archive": "model", "predictions": "predictions", "selection": "selection"}
    kind = forms.ChoiceField(choices=KIND_CHOICES, widget=forms.RadioSelect, initial="archive")
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 5}), required=False,
                                  help_text="Model card in Markdown: what it is, training data, intended use, limits.")
    upload = forms.FileField()
    published = forms.BooleanField(required=False, initial=MLModel.PUBLISHED_BY_DEFAULT, label="Show it on the leaderboard")
    anonymous = forms.BooleanField(required=False, initial=False, label="Hide my name")

    def __init__(self, *args, submissions=("model", "predictions"), **kwargs):
        super().__init__(*args, **kwargs)
        choices = [(k, label) for k, label in self.KIND_CHOICES if self.SUBMISSION_OF_KIND[k] in submissions]
        self.fields["kind"].choices = choices
        self.fields["kind"].initial = choices[0][0]


class SaveLeaderboardForm(forms.Form):
    """Save the leaderboard's current weights as a fork, or freeze a snapshot; the weights come from the sliders."""

    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, max_length=2000)
    missing_metric = forms.ChoiceField(choices=MissingMetric.choices, required=False, initial=MissingMetric.PER_MODEL,
                                       label="Models without a metric")
    frozen = forms.BooleanField(required=False)
