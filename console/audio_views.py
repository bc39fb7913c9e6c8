"""The owner's audio page: ``/tasks/<code>/console/audio/``: upload clips (files or zips) as contexts
of a round, and play the task's clips. The rules are in ``tasks.data.audio``."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect

from console.forms import FieldErrorsMixin
from console.image_views import MultipleFileField, MultipleFileInput
from console.views import _page, owner_console
from dynabench.errors import FieldErrors
from tasks.data import audio

PAGE_SIZE = 60
ACCEPT = "audio/wav,audio/x-wav,audio/flac,audio/ogg,audio/opus,audio/mpeg,.wav,.flac,.ogg,.opus,.mp3,.zip"


class AudioUploadForm(FieldErrorsMixin, forms.Form):
    """Clips or zips of clips, and the round whose contexts they become."""

    round = forms.TypedChoiceField(coerce=int, help_text="The round the audio contexts are for.")
    files = MultipleFileField(
        required=False, label="Clips or zips", widget=MultipleFileInput(attrs={"accept": ACCEPT}),
        help_text="WAV, FLAC, OGG (Vorbis or Opus) or MP3; or .zip files of them.",
    )

    def __init__(self, *args, task, **kwargs):
        super().__init__(*args, **kwargs)
        rounds = list(task.rounds.order_by("-number").values_list("number", flat=True))
        self.fields["round"].choices = [(n, f"Round {n}") for n in rounds]


@owner_console
def audio_page(request, task):
    """GET: the upload form and the task's latest clips, each with a player. POST: check and store the
    clips as contexts (``tasks.data.audio.ingest_audio``, all-or-nothing); a refusal shows why, 400."""
    form = AudioUploadForm(request.POST or None, request.FILES or None, task=task)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                result = audio.ingest_audio(
                    task=task, acting_user=request.user, files=form.cleaned_data["files"], round_number=form.cleaned_data["round"],
                )
            except FieldErrors as refused:
                form.add_field_errors(refused)
            else:
                messages.success(request, result.summary())
                return redirect("console:audio", code=task.code)
    return _page(
        request, task, "audio.html", "audio", status=status, form=form, latest=task.audio_clips.all()[:PAGE_SIZE],
        total=task.audio_clips.count(), audio_field=audio.audio_context_field(task.config),
    )
