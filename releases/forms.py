"""The owner's forms: the card's free text, and the datasets a release takes."""

from django import forms


class CardTextForm(forms.Form):
    motivation = forms.CharField(required=False, max_length=20_000, widget=forms.Textarea(attrs={"rows": 4}),
                                 help_text="Why the data was collected, and by whom (Markdown).")
    intended_uses = forms.CharField(required=False, max_length=20_000, widget=forms.Textarea(attrs={"rows": 4}),
                                    help_text="What the data is for, and what it should not be used for (Markdown).")
    limitations = forms.CharField(required=False, max_length=20_000, widget=forms.Textarea(attrs={"rows": 4}),
                                  help_text="Known limitations and biases (Markdown).")


class ReleaseForm(forms.Form):
    datasets = forms.TypedMultipleChoiceField(coerce=int, required=False, widget=forms.CheckboxSelectMultiple,
                                              help_text="Leave all unticked to release every public dataset of the closed rounds.")

    def __init__(self, *args, choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["datasets"].choices = choices
