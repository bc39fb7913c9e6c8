"""API shapes of releases: a published release with its files (download URLs) and changelog."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from django.urls import reverse

from releases.models import Release


class ReleaseFileSerializer(serializers.Serializer):
    """One public file of a release (its manifest's entry) and where to download it (``Range`` resumes)."""

    name = serializers.CharField(help_text="Path inside the release, e.g. `data/round1-dev.parquet`.")
    format = serializers.CharField(help_text="jsonl, parquet, md, json, cff or bib.")
    size = serializers.IntegerField(help_text="Bytes.")
    sha256 = serializers.CharField()
    rows = serializers.IntegerField(allow_null=True, help_text="Examples in a data file; null for the card, Croissant and citations.")
    round = serializers.IntegerField(allow_null=True)
    split = serializers.CharField(allow_null=True)
    url = serializers.CharField(help_text="Absolute download URL.")


class ChangeSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    uids = serializers.ListField(child=serializers.CharField(), help_text="At most 1,000 uids listed.")


class ChangelogSerializer(serializers.Serializer):
    previous = serializers.CharField(allow_null=True, help_text="The previous release's version; null for the first.")
    new_rounds = serializers.ListField(child=serializers.IntegerField())
    added = ChangeSerializer()
    removed = ChangeSerializer()
    relabelled = ChangeSerializer()


class ReleaseSerializer(serializers.ModelSerializer):
    """A published release: version, date, licence, content sha256, size, examples, changelog, files."""

    task = serializers.CharField(source="task.code")
    changelog = ChangelogSerializer()
    files = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()

    class Meta:
        model = Release
        fields = ["task", "version", "published_at", "license", "sha256", "example_count", "size", "changelog", "files", "page"]

    @extend_schema_field(ReleaseFileSerializer(many=True))
    def get_files(self, release: Release) -> list[dict]:
        request = self.context["request"]
        return [{**entry, "url": request.build_absolute_uri(reverse("releases:file", args=[release.task.code, release.version, entry["name"]]))}
                for entry in release.manifest.get("files", [])]

    def get_page(self, release: Release) -> str:
        return self.context["request"].build_absolute_uri(reverse("releases:release", args=[release.task.code, release.version]))
