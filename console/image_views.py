"""The owner's image page: ``/tasks/<code>/console/images/``: upload images (files or zips) as
contexts of a round, and see the task's images as thumbnails. The rules are in ``tasks.data.images``."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect

from console.forms import FieldErrorsMixin
from console.views import _page, owner_console
from dynabench.errors import FieldErrors
from tasks.data import images

PAGE_SIZE = 60


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """A file field that takes several files (Django's documented recipe)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": "image/png,image/jpeg,image/webp,image/gif,.zip"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(d, initial) for d in data]
        return [single(data, initial)] if data else []


class ImageUploadForm(FieldErrorsMixin, forms.Form):
    """Images or zips of images, and the round whose contexts they become."""

    round = forms.TypedChoiceField(coerce=int, help_text="The round the image contexts are for.")
    files = MultipleFileField(required=False, label="Images or zips", help_text="PNG, JPEG, WebP or GIF; or .zip files of them.")

    def __init__(self, *args, task, **kwargs):
        super().__init__(*args, **kwargs)
        rounds = list(task.rounds.order_by("-number").values_list("number", flat=True))
        self.fields["round"].choices = [(n, f"Round {n}") for n in rounds]


@owner_console
def images_page(request, task):
    """GET: the upload form and the task's latest images. POST: check and store the images as
    contexts (``tasks.data.images.ingest_images``, all-or-nothing); a refusal shows why, 400."""
    form = ImageUploadForm(request.POST or None, request.FILES or None, task=task)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                result = images.ingest_images(
                    task=task, acting_user=request.user, files=form.cleaned_data["files"], round_number=form.cleaned_data["round"],
                )
            except FieldErrors as refused:
                form.add_field_errors(refused)
            else:
                messages.success(request, result.summary())
                return redirect("console:images", code=task.code)
    latest = task.images.all()[:PAGE_SIZE]
    return _page(
        request, task, "images.html", "images", status=status, form=form, latest=latest, total=task.images.count(),
        image_field=images.image_context_field(task.config),
    )
