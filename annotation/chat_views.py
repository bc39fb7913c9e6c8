"""The chat pages of conversational task kinds (``open_ended``): talk with the model in the loop,
or compare two side by side, then judge. Rules in ``annotation/chat.py``.

Reloading: the page's address carries its conversation (``?resume=<token>``, set by ``chat.js``), so a
reload, or a stream cut off mid-answer, shows the conversation as the server stored it.

Streaming: a turn is a form POST. With JavaScript (``static/js/chat.js``) it is sent with
``Accept: text/event-stream`` and the answer comes back as server-sent events (``token`` per
piece as the endpoint sends it, then ``done`` with the page's new chat fragment, or ``problem``);
without JavaScript the same POST answers with the whole page once the answer is complete.
"""

from asgiref.sync import sync_to_async
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation import chat
from annotation.htmx_views import _active_task, _annotator_page, _auser, _log_in_first, _content_warning_page, _saved_example
from annotation.htmx_views import _page as _page_context
from annotation.models import Example
from dynabench.db import arelease_connections
from dynabench.errors import RuleError
from tasks.loop.chat import sse
from tasks.kinds.open_ended import PREFERENCE_LABELS, categories
from tasks.models import Context


def event_stream_response(stream) -> StreamingHttpResponse:
    """A ``text/event-stream`` answer of the async iterator ``stream`` (server-sent events), uncached,
    and marked so that a proxy in front does not hold it back."""
    response = StreamingHttpResponse(stream, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


def _task(code):
    task = _active_task(code)
    if not task.spec.conversational:
        raise Http404("This task has no chat page.")
    return task


def _fragment(request, task, state: dict, *, problem: str = "", values: dict | None = None) -> dict:
    """Template context of ``_chat.html`` for ``state``."""
    context = Context.objects.get(pk=state["context"])
    turns = [{"user": text, "answers": [a["content"] for a in answers]} for text, answers in zip(state["turns"], state["answers"])]
    side_by_side = state["mode"] == chat.SIDE_BY_SIDE
    return {
        "task": task,
        "state": state,
        "token": chat.sign_state(user=request.user, task=task, state=state),
        "side_by_side": side_by_side,
        "turns": turns,
        "turns_left": chat.max_turns(task, state) - len(state["turns"]),
        "context_fields": [(f.get("label", f["name"]), context.data.get(f["name"], "")) for f in task.config["context_fields"]
                           if context.data.get(f["name"])],
        "categories": list(categories(task.config).items()),
        "preferences": list(PREFERENCE_LABELS.items()),
        "question": task.config.get("judgment_question") or "Does the model's answer fail the rubric?",
        "problem": problem,
        "values": values or {},
    }


def _page(request, task, data: dict, *, status: int = 200):
    """The chat page with the user's counts and, for a paid-crowd worker, their study's progress."""
    return render(request, "annotation/chat.html", _page_context(request, task, data), status=status)


@require_GET
@_annotator_page
def chat_page(request, code):
    """``?mode=conversation|side_by_side`` starts a new conversation or comparison; ``?resume=<token>``
    shows a stored one as it is now (a reload mid-answer: the stored answer, or the last prompt that got
    none back in the form, with why); without either, the choice."""
    task = _task(code)
    if (warning := _content_warning_page(request, task)) is not None:
        return warning
    saved = _saved_example(request)
    mode = request.GET.get("mode")
    if (resume := request.GET.get("resume")) and not saved:
        try:
            state = chat.read_state(user=request.user, task=task, token=resume)
            prompt, why = chat.unanswered_prompt(user=request.user, task=task, token=resume)
        except RuleError as error:
            return _page(request, task, {"problem": error.message, "choose": True}, status=error.status_code)
        return _page(request, task, {"saved": None, "choose": False,
                                     **_fragment(request, task, state, problem=why, values={"prompt": prompt} if prompt else None)})
    data = {"saved": saved, "choose": not mode}
    if mode:
        try:
            state = chat.start(user=request.user, task=task, mode=mode, tag=request.GET.get("tag") or None)
        except RuleError as error:
            return _page(request, task, {**data, "problem": error.message, "choose": True}, status=error.status_code)
        data.update(_fragment(request, task, state))
    return _page(request, task, data)


async def _stream(request, task, state: dict, events):
    """The server-sent events of one turn (see the module docstring), rendered off the event loop.
    The turn starts here, in the loop that serves the stream."""
    fragment = sync_to_async(lambda state, problem="": render_to_string(
        "annotation/_chat.html", _fragment(request, task, state, problem=problem), request=request))
    try:
        async for step, side, value in events:
            if step == "token":
                yield sse("token", {"side": side, "t": value})
            elif step == "error":
                yield sse("problem", {"message": value, "html": await fragment(state, problem=value)})
            else:
                yield sse("done", {"html": await fragment(value)})
    except RuleError as error:
        yield sse("problem", {"message": error.message, "html": ""})
    finally:
        await events.aclose()


@require_POST
async def chat_turn(request, code):
    """One turn: the prompt goes to the model(s); streamed (SSE) or, without JavaScript, the whole page.

    An async view: between the checks and the last piece of the answer it holds no thread, so the
    people waiting on models never hold up anyone else's pages (``dynabench/asgi.py``)."""
    user = await _auser(request)
    if not user.is_authenticated:
        return _log_in_first(request)
    task = await sync_to_async(_task)(code)
    prompt = request.POST.get("prompt", "")
    state = None
    try:
        state = await sync_to_async(chat.read_state)(user=user, task=task, token=request.POST.get("state", ""))
        turn = await sync_to_async(chat.prepare_turn)(user=user, task=task, state=state, prompt=prompt)
    except RuleError as error:  # refused before anything is sent: an ordinary 4xx page
        message, status = error.message, error.status_code
        if state is None:
            return await sync_to_async(_page)(request, task, {"problem": message, "choose": True}, status=status)
        return await sync_to_async(lambda: _page(request, task, _fragment(request, task, state, problem=message,
                                                                          values={"prompt": prompt}), status=status))()
    events = chat.take_turn(turn)
    await arelease_connections()  # not held while the model answers (dynabench/db.py)
    if "text/event-stream" in request.headers.get("Accept", ""):
        return event_stream_response(_stream(request, task, state, events))
    new_state, problem = await chat.finish_turn(events, state)
    return await sync_to_async(lambda: _page(request, task, _fragment(request, task, new_state, problem=problem,
                                                                      values={"prompt": prompt} if problem else None),
                                             status=503 if problem else 200))()


@require_POST
@_annotator_page
def chat_judge(request, code):
    """The judgment: store the conversation or comparison as an example, then a fresh one of the same mode."""
    task = _task(code)
    post = request.POST
    try:
        state = chat.read_state(user=request.user, task=task, token=post.get("state", ""))
        target = {"verdict": post.get("verdict", ""), "preference": post.get("preference", ""),
                  "failing": post.getlist("failing"), "category": post.get("category", ""),
                  "explanation": post.get("explanation", "")}
        example = chat.judge(user=request.user, task=task, state=state, target=target, time_spent=post.get("time_spent"))
    except RuleError as error:
        if "state" not in locals():
            return _page(request, task, {"problem": error.message, "choose": True}, status=error.status_code)
        values = {k: post.get(k, "") for k in ("verdict", "preference", "category", "explanation")} | {"failing": post.getlist("failing")}
        return _page(request, task, _fragment(request, task, state, problem=error.message, values=values), status=error.status_code)
    return redirect(f"{reverse('annotation:chat', args=[task.code])}?mode={state['mode']}&saved={example.pk}")


@require_GET
@_annotator_page
def chat_example(request, code, pk):
    """One of the user's judged conversations, as validators will see it."""
    task = _task(code)
    example = get_object_or_404(Example.objects.select_related("round__task", "context"), pk=pk, author=request.user, round__task=task)
    answer = task.spec.answer_display(task.config, example.input, example.target, example.model_output)
    return _page(request, task, {"example": example, "answer": answer})
