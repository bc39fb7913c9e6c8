"""Forms of the leaderboard pages: they parse input; the services decide."""

from django import forms


class SubmissionForm(forms.Form):
    """A model archive (zip / tar.gz of a Hugging Face directory) or a JSONL predictions file."""

    KIND_CHOICES = [("archive", "Model archive (zip or tar.gz of a Hugging Face directory)"),
                    ("predictions", "Predictions file (JSONL)")]
    kind = forms.ChoiceField(choices=KIND_CHOICES, widget=forms.RadioSelect, initial="archive")
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 5}), required=False,
                                  help_text="Model card in Markdown: what it is, training data, intended use, limits.")
    upload = forms.FileField()
    published = forms.BooleanField(required=False, initial=True, label="Show it on the leaderboard")
    anonymous = forms.BooleanField(required=False, initial=False, label="Hide my name")


class SaveLeaderboardForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, max_length=2000)
    frozen = forms.BooleanField(required=False)
