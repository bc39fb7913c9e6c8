"""The text-to-image writing page (spec ``generates_images``): write a prompt, see the generator's
images (blurred until clicked, with the task's content warning), mark the unsafe ones and why.
Rules in ``annotation/t2i.py``; plain form posts, so the page works without JavaScript (the images
then stay blurred: revealing one needs its button, ``static/js/reveal.js``)."""

from asgiref.sync import sync_to_async
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation import t2i
from annotation.htmx_views import _active_task, _annotator_page, _auser, _content_warning_page, _log_in_first, _my_progress, _saved_example
from annotation.models import Example
from dynabench.errors import RuleError
from tasks.kinds.text_to_image import harm_categories, images_per_prompt
from tasks.models import Context


def _task(code):
    task = _active_task(code)
    if not task.spec.generates_images:
        raise Http404("This task generates no images.")
    return task


def _page(request, task, data: dict, *, status: int = 200):
    round = task.current_round()
    state = data.get("state")
    if state is not None:
        context = Context.objects.filter(pk=state["context"]).first()
        data = {
            **data,
            "token": t2i.sign_state(user=request.user, task=task, state=state),
            "images": [{**image, "n": n} for n, image in enumerate(state.get("images") or [], start=1)],
            "context_fields": [(f.get("label", f["name"]), (context.data if context else {}).get(f["name"], ""))
                               for f in task.config["context_fields"]],
            "prompt_field": task.spec.prompt_field(task.config),
        }
    values = data.get("values") or {}
    data["marks"] = [{"n": image["n"], "sha256": image["sha256"], "width": image.get("width"),
                      "unsafe": values.get(f"unsafe_{image['n']}", ""),
                      "categories": values.get(f"categories_{image['n']}", [])} for image in data.get("images", [])]
    return render(request, "annotation/t2i.html", {
        **data, "task": task, "round": round, "categories": list(harm_categories(task.config).items()),
        "images_per_prompt": images_per_prompt(task.config),
        **_my_progress(request.user, task, round)}, status=status)


@require_GET
@_annotator_page
def t2i_page(request, code):
    """A new attempt on a context of the open round (``?saved=<id>`` says the last one was stored)."""
    task = _task(code)
    if (warning := _content_warning_page(request, task)) is not None:
        return warning
    saved = _saved_example(request)
    try:
        state = t2i.start(user=request.user, task=task, tag=request.GET.get("tag") or None)
    except RuleError as error:
        return _page(request, task, {"saved": saved, "problem": error.message}, status=error.status_code)
    return _page(request, task, {"saved": saved, "state": state})


def _state(request, task):
    return t2i.read_state(user=request.user, task=task, token=request.POST.get("state", ""))


@require_POST
async def t2i_generate(request, code):
    """The prompt goes to the generator; the page comes back with its images (or the reason it refused).
    An async view: waiting for an endpoint generator holds no thread."""
    user = await _auser(request)
    if not user.is_authenticated:
        return _log_in_first(request)
    task = await sync_to_async(_task)(code)
    prompt = request.POST.get("prompt", "")
    try:
        state = t2i.read_state(user=user, task=task, token=request.POST.get("state", ""))
    except RuleError as error:
        return await sync_to_async(_page)(request, task, {"problem": error.message}, status=error.status_code)
    try:
        state = await t2i.agenerate(user=user, task=task, state=state, prompt=prompt)
    except RuleError as error:
        return await sync_to_async(_page)(request, task, {"state": state, "problem": error.message, "prompt": prompt},
                                          status=error.status_code)
    return await sync_to_async(_page)(request, task, {"state": state, "prompt": state["prompt"]})


@require_POST
@_annotator_page
def t2i_judge(request, code):
    """Store the judged images as an example, then a fresh attempt."""
    task = _task(code)
    post = request.POST
    try:
        state = _state(request, task)
    except RuleError as error:
        return _page(request, task, {"problem": error.message}, status=error.status_code)
    target = t2i.target_from_post(post, state.get("images") or [])
    try:
        example = t2i.judge(user=request.user, task=task, state=state, target=target, time_spent=post.get("time_spent") or None)
    except RuleError as error:
        values = {k: post.get(k, "") for k in post if k.startswith("unsafe_") or k == "prompt_looked_safe"}
        values |= {k: post.getlist(k) for k in post if k.startswith("categories_")}
        return _page(request, task, {"state": state, "problem": error.message, "prompt": state.get("prompt") or "",
                                     "values": values}, status=error.status_code)
    return redirect(f"{reverse('annotation:t2i', args=[task.code])}?saved={example.pk}")


@require_GET
@_annotator_page
def t2i_example(request, code, pk):
    """One of the user's judged prompts with its images (blurred until clicked)."""
    task = _task(code)
    example = get_object_or_404(Example.objects.select_related("round__task"), pk=pk, author=request.user, round__task=task)
    answer = task.spec.answer_display(task.config, example.input, example.target, example.model_output)
    prompt = example.input.get(task.spec.prompt_field(task.config), "")
    return _page(request, task, {"example": example, "answer": answer, "example_prompt": prompt})
