"""REST routes of a task's audio clips (owners): ``GET/POST /api/v1/tasks/<code>/audio``. The POST
calls ``tasks.data.audio.ingest_audio``, as the console's *Audio* page does, so a refused file answers
400 with the same message (naming the file and what to fix) and stores nothing."""

from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from dynabench.params import whole_number
from tasks.api_views import TASK_CODE, OwnerTaskView
from tasks.data import audio
from tasks.serializers import AudioUploadResultSerializer, AudioUploadSerializer, ContextAudioSerializer

AUDIO_PAGE_SIZE = 100


def clip_body(task, record) -> dict:
    """The API's view of one ``ContextAudio`` (``ContextAudioSerializer``'s fields)."""
    return {
        "sha256": record.sha256, "source_format": record.source_format, "sample_rate": record.sample_rate,
        "channels": record.channels, "duration_s": record.duration_s, "size": record.size,
        "original_name": record.original_name, "url": reverse("tasks:clip", args=[task.code, record.sha256]),
    }


@extend_schema_view(
    get=extend_schema(summary="List a task's audio clips, newest first (owners)", parameters=[TASK_CODE],
                      responses=ContextAudioSerializer(many=True)),
    post=extend_schema(
        summary="Upload audio clips or zips of clips as contexts of a round (owners)", parameters=[TASK_CODE],
        request={"multipart/form-data": AudioUploadSerializer}, responses={201: AudioUploadResultSerializer},
    ),
)
class TaskAudioView(OwnerTaskView):
    """GET: the task's latest ``AUDIO_PAGE_SIZE`` clips (``?offset=`` pages on). POST: check every file and
    store each clip as a context of ``round`` (``tasks.data.audio.ingest_audio``): 201 with what was added."""

    parser_classes = [MultiPartParser]

    def get(self, request, task_code):
        task = self.get_task()
        offset = whole_number(request.query_params.get("offset", "0")) or 0
        records = task.audio_clips.all()[offset:offset + AUDIO_PAGE_SIZE]
        return Response(ContextAudioSerializer([clip_body(task, r) for r in records], many=True).data)

    def post(self, request, task_code):
        task = self.get_task()
        serializer = AudioUploadSerializer(data={"files": request.FILES.getlist("files"), "round": request.data.get("round")})
        serializer.is_valid(raise_exception=True)
        result = audio.ingest_audio(
            task=task, acting_user=request.user, files=serializer.validated_data["files"],
            round_number=serializer.validated_data["round"],
        )
        body = {"added": result.added, "unchanged": result.unchanged, "clips": [clip_body(task, r) for r in result.clips]}
        return Response(AudioUploadResultSerializer(body).data, status=status.HTTP_201_CREATED)
