"""Images as contexts: check, clean, store and serve images uploaded by a task's owners.

One flow for the console page, the REST API and tests (``ingest_images``):

1. Every file is read and checked before anything is stored (all-or-nothing): a single image,
   or a zip of images (members outside the zip's folder, links, too many members or too many
   unpacked bytes refuse the whole zip).
2. ``check_image`` opens each image with Pillow and refuses, with a message naming the file:
   a format outside ``ALLOWED_FORMATS`` (detected from the bytes, never the file name), more
   than ``settings.IMAGE_MAX_BYTES`` bytes, more than ``settings.IMAGE_MAX_PIXELS`` pixels or a
   side over ``settings.IMAGE_MAX_SIDE`` (read from the header before any decoding; Pillow's own
   ``Image.MAX_IMAGE_PIXELS`` decompression-bomb guard is set to the same limit and its warning
   is an error here), a file ``verify()`` rejects, a truncated file (a full decode, with
   ``ImageFile.LOAD_TRUNCATED_IMAGES`` left off; a cut inside the header fails while it is read),
   and a metadata chunk that unpacks past Pillow's own bound (a PNG text chunk inflating to
   hundreds of MB). Whatever Pillow raises on a hostile file (``DECODE_ERRORS``) becomes
   ``ImageRefused``, so every route answers 400 and stores nothing.
3. The image is re-encoded (EXIF orientation applied first) with no metadata at all: EXIF, XMP,
   ICC profiles, PNG text chunks and GIF comments are dropped, so GPS positions, camera serials
   or a label typed into a comment never reach annotators. Its stored name is the sha256 of the
   cleaned bytes (``images/<sha256>.<ext>``), so a name never carries the uploader's file name
   (which may hold the label); the original name is kept on the record for its owners only.
4. A thumbnail (``THUMB_SIZE``, JPEG) is made with Pillow directly, at upload time, and stored
   beside it (``images/thumbs/<sha256>.jpg``). Pillow directly rather than easy-thumbnails or
   sorl-thumbnail: one fixed size is needed, the image is already decoded for the checks (so the
   thumbnail costs one resize and one small encode), and those libraries would add a database
   table or key-value store and a second decode on first view.
5. Each image becomes a ``ContextImage`` (task, sha256, format, size) and a ``Context`` of the
   chosen round whose image context field holds the sha256 (uid = the sha256, so the same image
   twice is one context).

Both files go through Django's default storage (``settings.STORAGES["default"]``), as model
artefacts do (``tasks.loop.artefacts``), so an S3 bucket works the same way.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import struct
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

from dynabench.errors import FieldErrors
from dynabench.filestore import AllOrNothing
from tasks.data.image_files import CONTENT_TYPES, stored_name, thumbnail_name
from tasks.data.media_uploads import upload_target
from tasks.models import Context, ContextImage, Task

ALLOWED_FORMATS = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp", "GIF": "gif"}
"""Pillow format name → stored file extension."""
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif")
ZIP_SUFFIX = ".zip"
THUMB_SIZE = (256, 256)
MAX_GIF_FRAMES = 200
DECODE_ERRORS = (OSError, SyntaxError, ValueError, EOFError, struct.error, zlib.error)
"""What Pillow raises on a damaged, truncated or hostile file (``UnidentifiedImageError`` is an ``OSError``)."""

ImageFile.LOAD_TRUNCATED_IMAGES = False


class ImageRefused(ValueError):
    """An image that fails a check; ``str()`` says why, naming the file."""


@dataclass
class CheckedImage:
    """An image that passed every check, re-encoded without metadata.

    ``data``: the cleaned bytes; ``sha256``: their hex digest; ``ext``: ``png`` | ``jpg`` |
    ``webp`` | ``gif``; ``width``/``height`` in pixels; ``thumbnail``: JPEG bytes at most
    ``THUMB_SIZE``; ``original_name``: the uploaded file's base name.
    """

    data: bytes
    sha256: str
    ext: str
    width: int
    height: int
    thumbnail: bytes
    original_name: str

    @property
    def name(self) -> str:
        return stored_name(self.sha256, self.ext)


@dataclass
class IngestResult:
    """What ``ingest_images`` did: ``added`` new contexts, ``unchanged`` (already a context of the
    round), ``images`` (the ``ContextImage`` records, new or existing, in upload order)."""

    added: int = 0
    unchanged: int = 0
    images: list = field(default_factory=list)

    def summary(self) -> str:
        return f"{self.added} image context(s) added, {self.unchanged} already there."


def _limits() -> tuple[int, int, int]:
    return settings.IMAGE_MAX_BYTES, settings.IMAGE_MAX_PIXELS, settings.IMAGE_MAX_SIDE


def _open_checked(data: bytes, name: str) -> Image.Image:
    """Open ``data``, check format and dimensions from the header, verify, then fully decode."""
    max_bytes, max_pixels, max_side = _limits()
    if len(data) > max_bytes:
        raise ImageRefused(f"'{name}' has {len(data):,} bytes; the limit is {max_bytes:,} bytes per image.")
    if not data:
        raise ImageRefused(f"'{name}' is empty.")
    Image.MAX_IMAGE_PIXELS = max_pixels  # Pillow's decompression-bomb guard, at our limit
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            return _decode(data, name, max_pixels, max_side)
        except ImageRefused:
            raise
        except UnidentifiedImageError:
            raise ImageRefused(f"'{name}' is not an image Pillow can read as {', '.join(sorted(ALLOWED_FORMATS))}.") from None
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
            raise ImageRefused(
                f"'{name}' has more pixels than the limit of {max_pixels:,} ({error}); make it smaller."
            ) from None
        except DECODE_ERRORS as error:
            # A truncated file (OSError), or a metadata chunk that inflates past Pillow's bound (a PNG
            # zTXt/iTXt/iCCP chunk: ValueError "Decompressed data too large"), raised while the header is read.
            raise ImageRefused(_damaged(name, error)) from None


def _damaged(name: str, error: Exception) -> str:
    if "decompressed data too large" in str(error).lower():
        return (f"'{name}' has a metadata chunk (such as PNG text) that unpacks to more than Pillow's limit; "
                "save the image again without its metadata.")
    return f"'{name}' is damaged or truncated ({error}); export it again."


def _decode(data: bytes, name: str, max_pixels: int, max_side: int) -> Image.Image:
    """The header checks (format, size, frames), ``verify()``, then the full decode of every frame;
    Pillow's errors propagate to ``_open_checked``."""
    probe = Image.open(io.BytesIO(data), formats=list(ALLOWED_FORMATS))
    width, height = probe.size
    if width * height > max_pixels or max(width, height) > max_side:
        raise ImageRefused(
            f"'{name}' is {width:,} x {height:,} pixels; the limit is {max_pixels:,} pixels and {max_side:,} per side."
        )
    if probe.format not in ALLOWED_FORMATS:
        raise ImageRefused(f"'{name}' is {probe.format}; upload {', '.join(sorted(ALLOWED_FORMATS))}.")
    if getattr(probe, "n_frames", 1) > MAX_GIF_FRAMES:
        raise ImageRefused(f"'{name}' has {probe.n_frames} frames; the limit is {MAX_GIF_FRAMES}.")
    probe.verify()
    image = Image.open(io.BytesIO(data), formats=[probe.format])
    image.load()
    if getattr(image, "n_frames", 1) > 1:
        for frame in range(1, image.n_frames):
            image.seek(frame)
            image.load()
        image.seek(0)
    return image


def _encode(image: Image.Image, fmt: str) -> bytes:
    """Re-encode ``image`` (already oriented, or an animated GIF) in ``fmt`` with no metadata
    (EXIF, XMP, ICC, text chunks, comments)."""
    out = io.BytesIO()
    if fmt == "GIF" and getattr(image, "n_frames", 1) > 1:
        frames = []
        for n in range(image.n_frames):
            image.seek(n)
            frames.append(image.copy())
        for frame in frames:
            frame.info = {}
        frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], loop=0,
                       duration=image.info.get("duration", 100))
        image.seek(0)
        return out.getvalue()
    image.info = {}
    if fmt == "JPEG":
        if image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
        image.save(out, format="JPEG", quality=90)
    elif fmt == "WEBP":
        image.save(out, format="WEBP", quality=90)
    else:
        image.save(out, format=fmt)
    return out.getvalue()


def _thumbnail(image: Image.Image) -> bytes:
    """A JPEG at most ``THUMB_SIZE``, aspect kept (one resize, no copy of the full image)."""
    scale = min(THUMB_SIZE[0] / image.width, THUMB_SIZE[1] / image.height, 1.0)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    thumb = image if image.mode in ("RGB", "RGBA", "LA", "L", "P") else image.convert("RGB")
    thumb = thumb.resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0)
    if thumb.mode not in ("RGB", "L"):
        rgba = thumb.convert("RGBA")
        thumb = Image.new("RGB", thumb.size, (255, 255, 255))
        thumb.paste(rgba, mask=rgba.getchannel("A"))
    out = io.BytesIO()
    thumb.save(out, format="JPEG", quality=80)
    return out.getvalue()


def check_image(data: bytes, *, name: str, original_name: str | None = None) -> CheckedImage:
    """Check one image (``data``: its bytes; ``name``: its file name, for messages) and return it
    cleaned; raise ``ImageRefused`` saying what is wrong (see the module docstring).
    ``original_name``: the name kept for its owners (default the base name of ``name``)."""
    image = _open_checked(data, name)
    fmt = image.format
    try:
        if getattr(image, "n_frames", 1) > 1:
            clean, oriented = _encode(image, fmt), image
        else:
            oriented = ImageOps.exif_transpose(image)  # reads the EXIF block, which may itself be damaged
            clean = _encode(oriented, fmt)
        thumbnail = _thumbnail(oriented)
    except DECODE_ERRORS as error:
        raise ImageRefused(_damaged(name, error)) from None
    return CheckedImage(
        data=clean, sha256=hashlib.sha256(clean).hexdigest(), ext=ALLOWED_FORMATS[fmt],
        width=oriented.width, height=oriented.height, thumbnail=thumbnail,
        original_name=(original_name or posixpath.basename(name))[:255],
    )


def _zip_members(data: bytes, name: str) -> list[tuple[str, bytes]]:
    """The image members of a zip as ``(name, bytes)``; refuse the zip as a whole when any member
    would land outside its folder, is a link, or the zip is too big unpacked."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ImageRefused(f"'{name}' is not a readable zip file.") from None
    max_bytes, _, _ = _limits()
    members, total = [], 0
    infos = archive.infolist()
    if len(infos) > settings.IMAGE_ZIP_MAX_MEMBERS:
        raise ImageRefused(f"'{name}' holds {len(infos):,} files; the limit is {settings.IMAGE_ZIP_MAX_MEMBERS:,} per zip.")
    for info in infos:
        member = info.filename.replace("\\", "/")
        parts = member.split("/")
        if member.startswith("/") or ".." in parts or (parts and ":" in parts[0]):
            raise ImageRefused(f"'{name}' has the member '{info.filename}', whose path leads outside the zip's folder; nothing was stored.")
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            raise ImageRefused(f"'{name}' has the link '{info.filename}'; put the image itself in the zip.")
        if info.is_dir() or any(p.startswith(("__MACOSX", ".")) for p in parts):
            continue
        if not member.lower().endswith(IMAGE_SUFFIXES):
            raise ImageRefused(f"'{name}' has '{info.filename}', which is not an image ({', '.join(IMAGE_SUFFIXES)}).")
        if info.file_size > max_bytes:
            raise ImageRefused(f"'{info.filename}' in '{name}' has {info.file_size:,} bytes unpacked; the limit is {max_bytes:,}.")
        total += info.file_size
        if total > settings.IMAGE_ZIP_MAX_BYTES:
            raise ImageRefused(f"'{name}' unpacks to more than {settings.IMAGE_ZIP_MAX_BYTES:,} bytes; split it.")
        with archive.open(info) as fh:
            content = fh.read(max_bytes + 1)
        if len(content) > max_bytes:
            raise ImageRefused(f"'{info.filename}' in '{name}' unpacks to more than {max_bytes:,} bytes.")
        members.append((member, content))
    if not members:
        raise ImageRefused(f"'{name}' holds no images.")
    return members


def read_uploads(files) -> list[CheckedImage]:
    """Check every uploaded file (Django ``UploadedFile`` s or objects with ``name`` and ``read()``):
    images and zips of images. Return the cleaned images; raise ``ImageRefused`` at the first bad one."""
    checked = []
    for upload in files:
        name = posixpath.basename(str(upload.name).replace("\\", "/"))
        data = upload.read(settings.IMAGE_ZIP_MAX_BYTES + 1)
        if name.lower().endswith(ZIP_SUFFIX):
            checked.extend(
                check_image(content, name=f"{name}/{member}", original_name=member) for member, content in _zip_members(data, name)
            )
        elif name.lower().endswith(IMAGE_SUFFIXES):
            checked.append(check_image(data, name=name))
        else:
            raise ImageRefused(f"'{name}' is neither an image ({', '.join(IMAGE_SUFFIXES)}) nor a .zip of images.")
    return checked


def image_context_fields(config: dict) -> list[str]:
    """The names of the task config's context fields of ``"type": "image"`` (they hold an image's sha256)."""
    return [f["name"] for f in config.get("context_fields", []) if f.get("type") == "image"]


def image_context_field(config: dict) -> str | None:
    """The name of the task's first context field of ``"type": "image"``, or None."""
    return next(iter(image_context_fields(config)), None)


def _store_files(image: CheckedImage, files: AllOrNothing) -> None:
    """Store the image and its thumbnail through ``files`` unless already stored (content-addressed:
    same name, same bytes); a failed write (a full disk) leaves no truncated file under either name."""
    if not files.storage.exists(image.name):
        files.save(image.name, ContentFile(image.data))
    if not files.storage.exists(thumbnail_name(image.sha256)):
        files.save(thumbnail_name(image.sha256), ContentFile(image.thumbnail))


def store_image(task: Task, image: CheckedImage, *, acting_user=None) -> ContextImage:
    """Store a checked image and its thumbnail and return its ``ContextImage`` for ``task``
    (created when new). When it fails (a full disk), the files it stored are removed."""
    with AllOrNothing(default_storage) as files:
        _store_files(image, files)
        record, _ = ContextImage.objects.get_or_create(
            task=task, sha256=image.sha256,
            defaults={"ext": image.ext, "width": image.width, "height": image.height, "size": len(image.data),
                      "original_name": image.original_name, "uploaded_by": acting_user},
        )
    return record


def ingest_images(*, task: Task, acting_user, files, round_number: int) -> IngestResult:
    """Check every file, then store each image and make it a context of round ``round_number``.

    ``files``: uploaded images and/or zips of images. All-or-nothing: the first refused image
    refuses the upload and nothing is stored. Raises ``NotAllowed`` for a non-owner and
    ``FieldErrors`` (``invalid_upload``) naming the field at fault: ``files`` (the reason, naming
    the file), ``round`` (no such round, or the task has no image context field). Three queries
    for the records whatever the number of images (one select, two bulk inserts). When storing fails
    (a full disk: ``OSError``), the files this upload stored are removed and no record is kept.
    """
    field_name = image_context_field(task.config)
    files, round_ = upload_target(task=task, acting_user=acting_user, files=files, round_number=round_number,
                                  field_name=field_name, media="images", choose="Choose images (PNG, JPEG, WebP, GIF) or a zip of them.")
    try:
        checked = read_uploads(files)
    except ImageRefused as refused:
        raise FieldErrors("invalid_upload", {"files": [str(refused)]}) from None
    unique = list({image.sha256: image for image in checked}.values())
    hashes = [image.sha256 for image in unique]
    result = IngestResult()
    with AllOrNothing(default_storage) as stored, transaction.atomic():
        known = set(ContextImage.objects.filter(task=task, sha256__in=hashes).values_list("sha256", flat=True))
        for image in unique:
            if image.sha256 not in known:
                _store_files(image, stored)
        ContextImage.objects.bulk_create([
            ContextImage(task=task, sha256=i.sha256, ext=i.ext, width=i.width, height=i.height, size=len(i.data),
                         original_name=i.original_name, uploaded_by=acting_user)
            for i in unique if i.sha256 not in known
        ], ignore_conflicts=True)
        existing = set(Context.objects.filter(round=round_, uid__in=hashes).values_list("uid", flat=True))
        new = [Context(round=round_, uid=sha, data={field_name: sha}) for sha in hashes if sha not in existing]
        Context.objects.bulk_create(new)
    result.added = len(new)
    result.unchanged = len(checked) - len(new)
    result.images = list(ContextImage.objects.filter(task=task, sha256__in=hashes))
    return result


class ImagePaths:
    """Reads the image fields of a contexts or dataset file (``tasks.data.importers``): each value names
    an image already uploaded to the task, by its path in its zip (``photos/cat-1.jpg``), its file
    name, or its sha256; ``resolve`` replaces it with the sha256. One query, on first use."""

    def __init__(self, task: Task):
        self.task = task
        self.fields = image_context_fields(task.config)
        self._names: dict[str, set[str]] | None = None

    def _index(self) -> dict[str, set[str]]:
        if self._names is None:
            self._names = {}
            for sha256, name in ContextImage.objects.filter(task=self.task).values_list("sha256", "original_name"):
                for key in {sha256, name, posixpath.basename(name)} - {""}:
                    self._names.setdefault(key, set()).add(sha256)
        return self._names

    def resolve(self, data: dict) -> dict:
        """Return ``data`` with each image field's value replaced by its image's sha256; raise
        ``ImageRefused`` when a value names no image of the task, or several."""
        for name in self.fields:
            if name not in data:
                continue
            value = str(data[name]).strip().replace("\\", "/").removeprefix("./")
            found = self._index().get(value.lower() if len(value) == 64 else value, set())
            if not found:
                raise ImageRefused(
                    f"'{value}' (for {name}) names no image of task {self.task.code}; upload the images first "
                    "(console: Images), then name each by its path in its zip, its file name or its sha256"
                )
            if len(found) > 1:
                raise ImageRefused(f"'{value}' (for {name}) names {len(found)} images; use the path in the zip or the sha256")
            data[name] = next(iter(found))
        return data


def open_image(record: ContextImage, *, thumbnail: bool = False):
    """Open an image (or its thumbnail) from the storage; return ``(file, content type)``."""
    if thumbnail:
        return default_storage.open(thumbnail_name(record.sha256), "rb"), "image/jpeg"
    return default_storage.open(stored_name(record.sha256, record.ext), "rb"), CONTENT_TYPES[record.ext]


def read_images(hashes: list[str]) -> list[Image.Image]:
    """Return the stored images with these sha256s, in order, as RGB Pillow images (one query for
    their records); raise ``FileNotFoundError`` naming the first hash that no stored image has."""
    exts = dict(ContextImage.objects.filter(sha256__in=set(hashes)).values_list("sha256", "ext"))
    out = []
    store = default_storage
    for sha256 in hashes:
        if sha256 not in exts:
            raise FileNotFoundError(f"no stored image {sha256}")
        with store.open(stored_name(sha256, exts[sha256]), "rb") as fh:
            image = Image.open(fh)
            image.load()
        out.append(image.convert("RGB"))
    return out


def read_image(sha256: str) -> Image.Image:
    """Return the stored image with this sha256 as an RGB Pillow image (for models); raise
    ``FileNotFoundError`` when no image of that hash is stored."""
    record = ContextImage.objects.filter(sha256=sha256).only("sha256", "ext").first()
    if record is None:
        raise FileNotFoundError(f"no stored image {sha256}")
    with default_storage.open(stored_name(record.sha256, record.ext), "rb") as fh:
        image = Image.open(fh)
        image.load()
    return image.convert("RGB")
