"""Release pages: the public list and page of a task's releases, their file downloads (streamed,
resumable), the owner-only hidden-set files, and the owner's console page (card text, publish,
progress). Views parse and render; rules live in ``releases.services`` and ``releases.selectors``."""

from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.files.storage import default_storage
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from dynabench.errors import RuleError
from releases import services
from releases.downloads import file_response
from releases.forms import CardTextForm, ReleaseForm
from releases.models import Release
from releases.selectors import published_releases, release_datasets
from tasks import access
from tasks.models import Task


def _visible_task(request, code: str) -> Task:
    return get_object_or_404(access.visible_tasks(request.user), code=code)


def _published(task: Task, version: str) -> Release:
    return get_object_or_404(Release, task=task, version=version, status=Release.Status.PUBLISHED)


def card_body(release: Release) -> str:
    """The card's Markdown without its YAML header, read from the release's stored README.md."""
    with default_storage.open(release.storage_prefix + "README.md", "rb") as handle:
        text = handle.read().decode("utf-8")
    return text.split("\n---\n", 1)[1] if text.startswith("---\n") and "\n---\n" in text else text


def task_releases(request, code):
    """A task's published releases, newest first: version, date, size, examples, sha256, changelog."""
    task = _visible_task(request, code)
    return render(request, "releases/task_releases.html", {"task": task, "releases": published_releases(task)})


def release_page(request, code, version):
    """One release: its files with sizes and checksums, changelog, rendered card, BibTeX and CITATION.cff."""
    task = _visible_task(request, code)
    release = _published(task, version)
    files = {f["name"]: f for f in release.manifest.get("files", [])}
    return render(request, "releases/release.html", {
        "task": task, "release": release, "card": card_body(release),
        "data_files": [f for f in files.values() if f["rows"] is not None],
        "doc_files": [f for f in files.values() if f["rows"] is None],
        "bibtex": _text(release, "CITATION.bib"), "cff": _text(release, "CITATION.cff"),
        "is_owner": task.is_owner(request.user),
    })


def _text(release: Release, name: str) -> str:
    with default_storage.open(release.storage_prefix + name, "rb") as handle:
        return handle.read().decode("utf-8")


def release_file(request, code, version, name):
    """A public file of a published release (only names its manifest lists), streamed; ``Range`` resumes."""
    task = _visible_task(request, code)
    release = _published(task, version)
    entry = next((f for f in release.manifest.get("files", []) if f["name"] == name), None)
    if entry is None:
        raise Http404("No such file in this release.")
    return file_response(release.storage_prefix + name, entry, request.headers.get("Range"))


@login_required
def hidden_file(request, code, version, name):
    """A file of the owner-only hidden-set artefact: the task's owners (and admins) only, else 404."""
    task = _visible_task(request, code)
    if not task.is_owner(request.user):
        raise Http404("No such file.")
    release = _published(task, version)
    entry = next((f for f in release.hidden_manifest.get("files", []) if f["name"] == name), None)
    if entry is None:
        raise Http404("No such file in this release.")
    return file_response(release.hidden_prefix + name, entry, request.headers.get("Range"))


def owner_only(view):
    """Log-in required; the task named by ``code`` must be owned by the user (or an admin), else 403."""

    @wraps(view)
    @login_required
    def wrapper(request, code, *args, **kwargs):
        task = get_object_or_404(Task, code=code)
        if not task.is_owner(request.user):
            return render(request, "validation/forbidden.html",
                          {"task": task, "message": f"Only owners of task '{task.code}' make its releases."}, status=403)
        return view(request, task, *args, **kwargs)

    return wrapper


def _choices(task):
    public, hidden = release_datasets(task)
    return [(d.pk, f"round {d.round.number} · {d.split or 'unsplit'} · {d.name} ({d.item_count} items)") for d in public], hidden


@owner_only
def console_releases(request, task):
    """The owner's page: edit the card's free text, pick datasets, publish a release, follow its progress."""
    choices, hidden = _choices(task)
    if request.method == "POST":
        form = CardTextForm(request.POST)
        if form.is_valid():
            services.save_card_text(task=task, acting_user=request.user, **form.cleaned_data)
            messages.success(request, "Card text saved; the next release uses it.")
            return redirect("releases:console", task.code)
    else:
        form = CardTextForm(initial=services.card_text_of(task))
    return render(request, "releases/console.html", {
        "task": task, "section": "releases", "card_form": form, "release_form": ReleaseForm(choices=choices),
        "hidden": hidden, "releases": Release.objects.filter(task=task).order_by("-created_at")[:20],
    })


@require_POST
@owner_only
def console_publish(request, task):
    """Queue a release of the picked (or all) public datasets of the closed rounds."""
    choices, _ = _choices(task)
    form = ReleaseForm(request.POST, choices=choices)
    if form.is_valid():
        try:
            services.request_release(task=task, acting_user=request.user, dataset_ids=form.cleaned_data["datasets"])
            messages.success(request, "Release queued: it is built in the background.")
        except RuleError as exc:
            messages.error(request, exc.message)
    return redirect("releases:console", task.code)


@owner_only
def console_progress(request, task, pk):
    """The status line of one release (the console polls it with htmx while it builds)."""
    release = get_object_or_404(Release, task=task, pk=pk)
    return render(request, "releases/_release_row.html", {"task": task, "release": release})
