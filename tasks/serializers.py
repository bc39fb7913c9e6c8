"""API shapes of tasks, contexts and datasets (read), and of what owners send.

What may leave the server is decided by ``tasks/access.py`` and, for targets, ``tasks.selectors.can_see_labels``. A round with its counts and
vMER, and the round lifecycle (open, close), are shaped in ``validation/serializers.py``.
"""

from pathlib import Path

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from dynabench.api import StrictSerializerMixin
from tasks import access
from tasks.models import Context, Dataset, DatasetItem, Round, Task
from tasks.selectors import can_see_labels


class RoundBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Round
        fields = ["number", "status"]


class TaskSerializer(serializers.ModelSerializer):
    """A task with its config (labels, fields, rules), its rounds and the caller's ownership."""

    rounds = RoundBriefSerializer(many=True, read_only=True)
    current_round = serializers.SerializerMethodField(help_text="Number of the open round with the highest number.")
    is_owner = serializers.SerializerMethodField(help_text="Whether the caller owns this task.")
    labels = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = Task
        fields = ["code", "name", "kind", "instructions", "active", "labels", "config", "current_round", "rounds", "is_owner"]

    def get_current_round(self, task) -> int | None:
        current = task.current_round()
        return current.number if current else None

    def get_is_owner(self, task) -> bool:
        return task.is_owner(self.context["request"].user)


class ContextSerializer(serializers.ModelSerializer):
    round = serializers.IntegerField(source="round.number", read_only=True)

    class Meta:
        model = Context
        fields = ["id", "uid", "round", "data", "tag", "times_used", "active"]


class ContextUploadSerializer(StrictSerializerMixin, serializers.Serializer):
    """A JSONL or CSV file of contexts for a round, read by the foundation importer (``tasks.data.importers``)."""

    file = serializers.FileField(help_text="JSONL (one JSON object per line) or CSV with a header row, UTF-8.")
    format = serializers.ChoiceField(choices=["jsonl", "csv"], required=False, help_text="Default: from the file name's extension.")
    map = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, default=list, max_length=50,
        help_text="`context field=file field` pairs, e.g. `prompt=sentence`; repeat the field for several.",
    )
    uid_field = serializers.CharField(required=False, default="uid", max_length=200, help_text="The file field holding each row's uid.")
    uid_from = serializers.ChoiceField(
        choices=["field", "line", "content"], required=False, default="field",
        help_text="Where uids come from: `uid_field`, the line number, or a hash of the content.",
    )
    tag_field = serializers.CharField(required=False, max_length=200, help_text="The file field copied to each context's tag.")


class ImportResultSerializer(serializers.Serializer):
    added = serializers.IntegerField(help_text="Rows stored now.")
    unchanged = serializers.IntegerField(help_text="Rows already stored with the same content (skipped).")
    repeated = serializers.IntegerField()
    filtered_out = serializers.IntegerField()
    checksum = serializers.CharField(help_text="sha256 of the file.")
    summary = serializers.CharField()


class DatasetSerializer(serializers.ModelSerializer):
    """A dataset with its provenance. ``label_visibility`` is the dataset's setting (public or
    hidden); ``labels_hidden`` says whether it is a hidden set, the same for every reader (its targets
    never leave the server for researchers; a task's owners and admins still read them);
    ``targets_visible`` says whether *this reader's* requests get its items with targets
    (``tasks.selectors.can_see_labels``)."""

    task = serializers.SlugRelatedField(slug_field="code", read_only=True)
    round = serializers.IntegerField(source="round.number", read_only=True, allow_null=True)
    item_count = serializers.SerializerMethodField(help_text="Number of items.")
    labels_hidden = serializers.SerializerMethodField(
        help_text="True for a hidden set (its labels stay on the server for researchers), whoever asks; owners and admins "
        "still get its targets: see targets_visible."
    )
    targets_visible = serializers.SerializerMethodField(help_text="True when your requests get the items with their targets.")
    source = serializers.SerializerMethodField(help_text="Round and split, or the name of the imported file.")

    class Meta:
        model = Dataset
        fields = [
            "id", "task", "round", "name", "description", "access", "split", "weight", "item_count",
            "label_visibility", "labels_hidden", "targets_visible", "labels_published_at", "version", "checksum", "source",
            "source_checksum", "created_at", "content_changed_at",
        ]

    def get_item_count(self, dataset) -> int:
        counted = getattr(dataset, "n_items", None)
        return dataset.item_count if counted is None else counted

    def get_labels_hidden(self, dataset) -> bool:
        return dataset.labels_hidden

    def get_targets_visible(self, dataset) -> bool:
        request = self.context.get("request")
        return can_see_labels(getattr(request, "user", None), dataset)

    def get_source(self, dataset) -> str:
        # An imported file is named by its file name only: the server's paths stay on the server.
        return dataset.source if dataset.source.startswith("round ") or not dataset.source else Path(dataset.source).name


class DatasetItemSerializer(serializers.ModelSerializer):
    """One item; ``target`` and ``metadata`` are null unless the reader may see the dataset's labels."""

    target = serializers.SerializerMethodField(help_text='`{"label": ..}` or `{"answers": [..]}`; null when the labels are hidden from you.')
    metadata = serializers.SerializerMethodField(help_text="Null when the labels are hidden from you.")

    class Meta:
        model = DatasetItem
        fields = ["uid", "input", "target", "tag", "metadata"]

    def _hidden(self) -> bool:
        if "labels_hidden" not in self.context:
            request = self.context.get("request")
            self.context["labels_hidden"] = not can_see_labels(getattr(request, "user", None), self.context["dataset"])
        return self.context["labels_hidden"]

    @extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
    def get_target(self, item):
        return None if self._hidden() else item.target

    @extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
    def get_metadata(self, item):
        return None if self._hidden() else item.metadata


# --- the owner's console (tasks/api_views.py: settings, roles, bans, uploads) ---------------


class TaskSettingsSerializer(serializers.Serializer):
    """A task's owner-editable settings and the ``version`` they were read at (send it back when
    changing them: a change made from an older version is refused with 409)."""

    name = serializers.CharField(max_length=200, required=False)
    instructions = serializers.CharField(required=False, allow_blank=True, help_text="Markdown.")
    labels = serializers.ListField(child=serializers.CharField(max_length=64), required=False, max_length=100)
    validations_needed = serializers.IntegerField(required=False)
    daily_example_cap = serializers.IntegerField(required=False, help_text="0: no cap.")
    min_scoring_items = serializers.IntegerField(
        required=False, help_text="The fewest items a round's dev or test set may hold when it closes.",
    )
    content_warning = serializers.CharField(required=False, allow_blank=True)
    version = serializers.IntegerField(min_value=1)


class TaskSettingsChangeSerializer(StrictSerializerMixin, TaskSettingsSerializer):
    """What an owner sends to change settings: any of the fields, plus the ``version`` read, and
    ``removed_labels`` (``{old: new}`` relabels, ``{old: ""}`` marks the examples of a removed label)."""

    removed_labels = serializers.DictField(
        child=serializers.CharField(max_length=64, allow_blank=True), required=False,
        help_text='For labels removed that examples carry: `{"old": "new"}` relabels them, `{"old": ""}` marks them.',
    )


class RoleChangeSerializer(StrictSerializerMixin, serializers.Serializer):
    """Grant or revoke ``role`` (annotator, validator, owner) of ``user`` (a username) on the task."""

    user = serializers.CharField(max_length=150, help_text="Username.")
    role = serializers.ChoiceField(choices=["annotator", "validator", "owner"])


class BanSerializer(StrictSerializerMixin, serializers.Serializer):
    """Ban ``user`` (a username) from the task, or lift the ban."""

    user = serializers.CharField(max_length=150, help_text="Username.")
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True)


class TaskRoleSerializer(serializers.Serializer):
    """A person's roles on a task."""

    user = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    banned = serializers.BooleanField()


class UploadCreateSerializer(serializers.Serializer):
    """A contexts or dataset file (multipart) and where it goes."""

    file = serializers.FileField()
    target = serializers.ChoiceField(choices=["contexts", "dataset"])
    round = serializers.IntegerField(required=False, allow_null=True, help_text="Contexts: the round (it must exist).")
    name = serializers.CharField(required=False, allow_blank=True, max_length=128, help_text="Dataset: its name, a slug.")
    split = serializers.ChoiceField(choices=["", "train", "dev", "test"], required=False)
    access = serializers.ChoiceField(choices=["scoring", "standard"], required=False)
    label_visibility = serializers.ChoiceField(choices=["", "public", "hidden"], required=False)


class UploadMappingSerializer(StrictSerializerMixin, serializers.Serializer):
    """The column of the file for each task field, the uid column (or ``__line__`` /
    ``__content__``) and the tag column (empty: none)."""

    fields = serializers.DictField(child=serializers.CharField(allow_blank=True), help_text="{task field: column}")
    uid = serializers.CharField(required=False, default="__content__")
    tag = serializers.CharField(required=False, allow_blank=True, default="")


class UploadSerializer(serializers.Serializer):
    """An upload: its columns and record count, the suggested or chosen mapping, its status
    (mapping, queued, running, done, failed), progress (0..1), the summary or the first 20
    line-numbered problems with their total."""

    id = serializers.IntegerField()
    target = serializers.CharField()
    original_name = serializers.CharField()
    format = serializers.CharField()
    size = serializers.IntegerField()
    rows = serializers.IntegerField()
    columns = serializers.ListField(child=serializers.CharField())
    options = serializers.DictField()
    mapping = serializers.DictField()
    status = serializers.CharField()
    progress = serializers.FloatField()
    result = serializers.DictField()
    errors = serializers.ListField(child=serializers.DictField())
    error_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class ImageUploadSerializer(serializers.Serializer):
    """Images (PNG, JPEG, WebP, GIF) and/or zips of them (multipart, field ``files``, repeatable) and the
    round whose contexts they become."""

    files = serializers.ListField(child=serializers.FileField(), allow_empty=False,
                                  help_text="One or more images or .zip files of images (repeat the field).")
    round = serializers.IntegerField(min_value=1, max_value=2**31 - 1, help_text="The round (it must exist).")


class ContextImageSerializer(serializers.Serializer):
    """An uploaded image: its content hash (its name everywhere), size, and where to read it and its thumbnail."""

    sha256 = serializers.CharField()
    ext = serializers.CharField()
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    size = serializers.IntegerField(help_text="Bytes of the cleaned image.")
    original_name = serializers.CharField(help_text="The uploaded file's name (owners only: it may carry a label).")
    url = serializers.CharField()
    thumbnail_url = serializers.CharField()


class ImageUploadResultSerializer(serializers.Serializer):
    added = serializers.IntegerField(help_text="New contexts of the round.")
    unchanged = serializers.IntegerField(help_text="Images already contexts of the round.")
    images = ContextImageSerializer(many=True)


class AudioUploadSerializer(serializers.Serializer):
    """Audio clips (WAV, FLAC, OGG Vorbis/Opus, MP3) and/or zips of them (multipart, field ``files``,
    repeatable) and the round whose contexts they become."""

    files = serializers.ListField(child=serializers.FileField(), allow_empty=False,
                                  help_text="One or more clips or .zip files of clips (repeat the field).")
    round = serializers.IntegerField(min_value=1, max_value=2**31 - 1, help_text="The round (it must exist).")


class ContextAudioSerializer(serializers.Serializer):
    """An uploaded clip: its content hash (its name everywhere), what it was, and where to play it."""

    sha256 = serializers.CharField()
    source_format = serializers.CharField(help_text="WAV, FLAC, OGG or MP3, as uploaded.")
    sample_rate = serializers.IntegerField(help_text="Hz, as uploaded.")
    channels = serializers.IntegerField()
    duration_s = serializers.FloatField(help_text="Seconds.")
    size = serializers.IntegerField(help_text="Bytes of the stored FLAC.")
    original_name = serializers.CharField(help_text="The uploaded file's name (owners only: it may carry a label).")
    url = serializers.CharField(help_text="The stored clip (FLAC, channels and rate as uploaded).")


class AudioUploadResultSerializer(serializers.Serializer):
    added = serializers.IntegerField(help_text="New contexts of the round.")
    unchanged = serializers.IntegerField(help_text="Clips already contexts of the round.")
    clips = ContextAudioSerializer(many=True)
