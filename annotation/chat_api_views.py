"""``/api/v1/tasks/{code}/chat``, ``.../chat/turns`` and ``.../chat/judgments``: conversations with
the model in the loop and side-by-side comparisons over the API, the same steps as the chat pages
(``annotation/chat_views.py``).

Every rule is in ``annotation/chat.py`` (``start``, ``prepare_turn`` + ``take_turn``, ``judge``):
the API starts a conversation and gets a signed ``state`` token with it, posts each prompt with
the latest token, then posts the judgment with the last one. A turn answers as JSON once the
model(s) finished, or, with ``Accept: text/event-stream``, as server-sent events as the page
receives them: ``token`` (``{"side", "t"}``) per piece, then ``done`` (the conversation, as the
JSON answer) or ``problem`` (``{"code", "detail"}``). Refusals before anything is sent are
ordinary JSON errors whatever the ``Accept`` header.
"""

from adrf.views import APIView as AsyncAPIView
from asgiref.sync import sync_to_async
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import renderers, serializers, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation import chat
from annotation.chat_views import event_stream_response
from annotation.error_codes import AnnotationErrorCode as Code
from annotation.selectors import needs_content_warning
from annotation.serializers import ExampleSerializer
from dynabench import idempotency
from dynabench.api import StrictSerializerMixin
from dynabench.db import arelease_connections
from dynabench.errors import RuleError
from dynabench.permissions import HasRole
from dynabench.schema import AutoSchema, ErrorSerializer
from tasks.api_views import TASK_CODE, TaskScopedMixin
from tasks.kinds.open_ended import EXPLANATION_MAX, PREFERENCES, VERDICTS, categories
from tasks.loop.chat import sse
from tasks.models import Context

MODEL_ERRORS = {
    409: OpenApiResponse(ErrorSerializer, description="The round has fewer models in the loop than the mode needs, or one was removed."),
}


class EventStreamRenderer(renderers.BaseRenderer):
    """Lets a turn be asked for as ``text/event-stream``; the events themselves are written by the view."""

    media_type = "text/event-stream"
    format = "sse"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return b"" if data is None else sse("problem", data)


class ChatStartSerializer(StrictSerializerMixin, serializers.Serializer):
    """A new conversation or side-by-side comparison."""

    mode = serializers.ChoiceField(choices=chat.MODES, default=chat.CONVERSATION,
                                   help_text="`conversation` (the task's turns with one model) or `side_by_side` (one prompt, two anonymous models).")
    tag = serializers.CharField(required=False, allow_blank=True, max_length=100, help_text="Only contexts with this tag.")
    accept_content_warning = serializers.BooleanField(
        default=False, help_text="Say that you read the task's content warning (needed once, before your first example of such a task).")


class ChatTurnRequestSerializer(StrictSerializerMixin, serializers.Serializer):
    """One prompt of a conversation (or the comparison's one prompt)."""

    state = serializers.CharField(max_length=200000, help_text="The `state` of the conversation's latest answer.")
    prompt = serializers.CharField(max_length=20000, trim_whitespace=False, help_text="Your message (the task's prompt field rules apply).")


class ChatJudgmentSerializer(StrictSerializerMixin, serializers.Serializer):
    """The annotator's judgment of a conversation (``verdict``) or of a comparison (``preference``, ``failing``)."""

    state = serializers.CharField(max_length=200000, help_text="The `state` of the conversation's latest answer.")
    verdict = serializers.ChoiceField(choices=VERDICTS, required=False, help_text="A conversation: does an answer fail the rubric?")
    preference = serializers.ChoiceField(choices=PREFERENCES, required=False, help_text="A comparison: the better answer, a tie, or both bad.")
    failing = serializers.ListField(child=serializers.ChoiceField(choices=["a", "b"]), required=False, default=list, max_length=2,
                                    help_text="A comparison: the answers that fail the rubric.")
    category = serializers.CharField(required=False, allow_blank=True, max_length=100,
                                     help_text="The failure category's name (needed when an answer fails).")
    explanation = serializers.CharField(required=False, allow_blank=True, max_length=EXPLANATION_MAX,
                                        help_text="How the answer fails, in a sentence (needed when an answer fails).")
    time_spent = serializers.FloatField(required=False, allow_null=True, min_value=0, help_text="Seconds spent on the conversation.")


class ChatCategorySerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()


class ChatTurnSerializer(serializers.Serializer):
    prompt = serializers.CharField(help_text="The annotator's message.")
    answers = serializers.ListField(child=serializers.CharField(allow_blank=True),
                                    help_text="The model's answer; in a comparison A's, then B's.")


class ConversationSerializer(serializers.Serializer):
    """A conversation as the annotator sees it (models anonymous), with the signed state to go on with."""

    task = serializers.CharField()
    mode = serializers.ChoiceField(choices=chat.MODES)
    state = serializers.CharField(help_text="Signed by the server (the user's and the task's; six hours): post it with the next turn or the judgment.")
    context = serializers.DictField(help_text="The context's fields shown to the annotator, e.g. `{\"scenario\": \"...\"}`.")
    sides = serializers.IntegerField(help_text="Answers per turn: 1, or 2 (A and B) in a comparison.")
    turns = ChatTurnSerializer(many=True)
    turns_left = serializers.IntegerField(help_text="Prompts still allowed before the judgment.")
    question = serializers.CharField(help_text="The task's judgment question.")
    categories = ChatCategorySerializer(many=True, help_text="The failure categories a judgment may name.")
    content_warning = serializers.CharField(allow_blank=True)


def conversation(user, task, state: dict) -> dict:
    """The answer body (``ConversationSerializer``) of ``state``."""
    context = Context.objects.get(pk=state["context"])
    return {
        "task": task.code, "mode": state["mode"], "state": chat.sign_state(user=user, task=task, state=state),
        "context": {f["name"]: context.data.get(f["name"], "") for f in task.config["context_fields"]},
        "sides": len(state["models"]),
        "turns": [{"prompt": text, "answers": [a["content"] for a in answers]} for text, answers in zip(state["turns"], state["answers"])],
        "turns_left": chat.max_turns(task, state) - len(state["turns"]),
        "question": task.config.get("judgment_question") or "Does the model's answer fail the rubric?",
        "categories": [{"name": name, "label": label} for name, label in categories(task.config).items()],
        "content_warning": task.content_warning,
    }


def _valid(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class ChatTaskMixin(TaskScopedMixin):
    permission_classes = [HasRole("annotator")]
    throttle_scope = "examples"

    def get_chat_task(self):
        """The task of the URL (404 when not visible), refused when it has no conversations."""
        task = self.get_task()
        if not task.spec.conversational:
            raise RuleError("not_conversational", f"{task.name} is not a conversation task.")
        return task


class StartChatView(ChatTaskMixin, APIView):
    """Start a conversation or a comparison (``chat.start``) on a context of the open round."""

    @extend_schema(
        summary="Start a conversation or a side-by-side comparison (annotators of a conversation task)",
        description="Draws a context (and, side by side, two of the loop's models, anonymous as A and B). Nothing is stored "
        "until the judgment. A task with a content warning needs `accept_content_warning: true` before your first example of it.",
        parameters=[TASK_CODE], request=ChatStartSerializer, responses={200: ConversationSerializer, **MODEL_ERRORS},
    )
    def post(self, request, task_code):
        task = self.get_chat_task()
        data = _valid(ChatStartSerializer, request.data)
        if needs_content_warning(user=request.user, task=task, acknowledged=data["accept_content_warning"]):
            raise RuleError("content_warning", f"{task.name} warns: {task.content_warning} Read it, then start again with "
                            "accept_content_warning: true.", field="accept_content_warning")
        state = chat.start(user=request.user, task=task, mode=data["mode"], tag=data.get("tag") or None)
        return Response(conversation(request.user, task, state))


class TurnSchema(AutoSchema):
    """Error answers of a turn are JSON only (``ChatTurnView.finalize_response``)."""

    def map_renderers(self, attribute):
        return [r for r in super().map_renderers(attribute) if r not in (EventStreamRenderer.media_type, EventStreamRenderer.format)]


class ChatTurnView(ChatTaskMixin, AsyncAPIView):
    """Send one prompt to the conversation's model(s): ``chat.prepare_turn``, then ``chat.take_turn``."""

    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, EventStreamRenderer]
    schema = TurnSchema()

    @extend_schema(
        summary="Send a prompt and get the model's answer, whole or streamed (annotators)",
        description="With `Accept: text/event-stream` the answer comes as server-sent events: `token` "
        "(`{\"side\": 0|1, \"t\": \"piece\"}`) per piece as the model sends it, then `done` (the conversation, as the JSON "
        "answer) or `problem` (`{\"code\": \"model_failed\", \"detail\"}`: the turn was not counted; the earlier state stays "
        "valid). Otherwise the answer is the conversation once the model finished (503 when it failed). Refusals before "
        "anything is sent (bad or expired state, no turns left, a refused prompt) are JSON errors either way.",
        parameters=[TASK_CODE], request=ChatTurnRequestSerializer,
        responses={
            (200, "application/json"): ConversationSerializer,
            (200, "text/event-stream"): OpenApiResponse(OpenApiTypes.STR, description="Server-sent events: `token`..., then `done` or `problem`."),
            **MODEL_ERRORS,
            503: OpenApiResponse(ErrorSerializer, description="A model failed mid-answer; the turn was not counted, send it again."),
        },
    )
    async def post(self, request, task_code):
        """An async handler (adrf): the checks run on a thread (``sync_to_async``); the wait for the
        models holds none. A streamed turn starts in the loop that serves the stream."""
        task = await sync_to_async(self.get_chat_task)()
        data = _valid(ChatTurnRequestSerializer, request.data)
        user = request.user
        state = await sync_to_async(chat.read_state)(user=user, task=task, token=data["state"])
        turn = await sync_to_async(chat.prepare_turn)(user=user, task=task, state=state, prompt=data["prompt"])
        events = chat.take_turn(turn)  # nothing starts until it is iterated
        await arelease_connections()  # not held while the model answers (dynabench/db.py)
        if isinstance(request.accepted_renderer, EventStreamRenderer):
            return event_stream_response(_stream(user, task, events))
        new_state, problem = await chat.finish_turn(events, state)
        if problem:
            raise RuleError(Code.MODEL_FAILED, problem, status_code=503)
        return Response(await sync_to_async(conversation)(user, task, new_state))

    def finalize_response(self, request, response, *args, **kwargs):
        """Error answers (a ``Response``, not the stream) are JSON even when the stream was asked for."""
        if isinstance(response, Response) and isinstance(getattr(request, "accepted_renderer", None), EventStreamRenderer):
            request.accepted_renderer, request.accepted_media_type = renderers.JSONRenderer(), "application/json"
        return super().finalize_response(request, response, *args, **kwargs)


async def _stream(user, task, events):
    """The server-sent events of one turn (module docstring)."""
    try:
        async for step, side, value in events:
            if step == "token":
                yield sse("token", {"side": side, "t": value})
            elif step == "error":
                yield sse("problem", {"code": Code.MODEL_FAILED.value, "detail": value})
            else:
                yield sse("done", await sync_to_async(conversation)(user, task, value))
    except RuleError as error:
        yield sse("problem", error.as_dict())
    finally:
        await events.aclose()


class JudgeChatView(ChatTaskMixin, APIView):
    """Store the judged conversation or comparison as one example (``chat.judge``)."""

    @extend_schema(
        summary="Judge a conversation or comparison; it is stored as one example (annotators)",
        description="A conversation takes `verdict`; a comparison `preference` and optionally `failing`. When an answer "
        "fails, `category` and `explanation` are needed. Posting the same state again returns the first example "
        "(200, `Idempotent-Replayed: true`).",
        parameters=[TASK_CODE], request=ChatJudgmentSerializer,
        responses={201: ExampleSerializer, 200: OpenApiResponse(ExampleSerializer, description="A repeat of a judged state.")},
    )
    def post(self, request, task_code):
        task = self.get_chat_task()
        data = _valid(ChatJudgmentSerializer, request.data)
        state = chat.read_state(user=request.user, task=task, token=data["state"])
        target = {k: data.get(k, "") for k in ("verdict", "preference", "category", "explanation")} | {"failing": list(data["failing"])}
        example = chat.judge(user=request.user, task=task, state=state, target=target, time_spent=data.get("time_spent"))
        body = ExampleSerializer(example, context={"request": request}).data
        if getattr(example, "replayed", False):
            return Response(body, status=status.HTTP_200_OK, headers={idempotency.REPLAYED_HEADER: "true"})
        return Response(body, status=status.HTTP_201_CREATED)
