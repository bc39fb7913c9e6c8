"""Contexts and dataset uploads over ``CONSOLE_UPLOAD_MAX_BYTES`` are refused while they arrive
(``dynabench.upload_limits``): a 413 naming the limit, the body read no further than about the
limit (not at all when its Content-Length is over it), and nothing stored, on the console page,
the uploads API and the contexts API."""

import select
import socket
from urllib.parse import urlsplit

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.urls import get_resolver
from rest_framework.authtoken.models import Token

from tasks.models import Context, Upload
from tests.upload_support import CountingPayload

LIMIT = 256 * 1024
READ_AHEAD = 4 * 64 * 1024  # Django's parser reads the body in 64 KiB chunks
PAGE = "/tasks/sentiment/console/uploads/"
API = "/api/v1/tasks/sentiment/uploads"
CONTEXTS_API = "/api/v1/tasks/sentiment/rounds/1/contexts"
ROUTES = [PAGE, API, CONTEXTS_API]


@pytest.fixture(autouse=True)
def small_limit(settings, tmp_path):
    settings.CONSOLE_UPLOAD_MAX_BYTES = LIMIT
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "incoming")
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # every file goes to a temporary file, so a partial one would show
    (tmp_path / "incoming").mkdir()
    return tmp_path / "incoming"


def _csv(size: int) -> bytes:
    lines, total = ["id,sentence"], 12
    i = 0
    while total < size:
        i += 1
        line = f"ctx-{i},Sentence number {i} about the service and the food."
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()[:size]


def _body(content: bytes) -> bytes:
    return encode_multipart(BOUNDARY, {"target": "contexts", "round": "1", "file": _named(content)})


def _named(content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile("contexts.csv", content, content_type="text/csv")


def _post(client, path: str, body: bytes, **extra):
    payload = CountingPayload(body)
    response = client.generic("POST", path, body, content_type=MULTIPART_CONTENT, **{"wsgi.input": payload, **extra})
    return response, payload


@pytest.fixture
def logged_in(client, owner):
    client.force_login(owner)
    return client


@pytest.mark.parametrize("path", ROUTES)
def test_a_file_over_the_limit_is_refused_before_the_rest_of_it_is_read(logged_in, small_limit, path):
    body = _body(_csv(4 * LIMIT))
    response, payload = _post(logged_in, path, body)
    assert response.status_code == 413
    text = response.content.decode()
    assert f"the limit is {LIMIT:,} bytes (256 KiB)" in text
    assert payload.bytes_read < LIMIT + READ_AHEAD < len(body)
    assert not Upload.objects.exists() and not Context.objects.filter(uid__startswith="ctx-").exists()
    assert list(small_limit.iterdir()) == []  # the partly written temporary file is gone
    if path.startswith("/api/"):
        assert response.json()["code"] == "upload_too_large" and response.json()["field"] == "file"


@pytest.mark.parametrize("path", ROUTES)
def test_a_content_length_over_the_limit_is_refused_without_reading_the_body(logged_in, path):
    body = _body(_csv(1000))
    response, payload = _post(logged_in, path, body, CONTENT_LENGTH=str(50 * 1024**3))
    assert response.status_code == 413
    assert f"it has {50 * 1024**3:,} bytes" in response.content.decode()
    assert payload.bytes_read == 0


def test_a_file_of_exactly_the_limit_is_kept_on_the_page_and_the_api(logged_in):
    content = _csv(LIMIT)
    response, _ = _post(logged_in, PAGE, _body(content))
    assert response.status_code == 302, response.content.decode()[:500]
    response, _ = _post(logged_in, API, _body(content))
    assert response.status_code == 201, response.content.decode()[:500]
    assert [u.size for u in Upload.objects.all()] == [LIMIT, LIMIT]


def test_the_limit_holds_for_anyone_and_the_page_says_what_to_do(client):
    response, payload = _post(client, PAGE, _body(_csv(2 * LIMIT)))
    assert response.status_code == 413 and payload.bytes_read < 2 * LIMIT
    assert "Split the file" in response.content.decode() and 'href="/tasks/sentiment/console/uploads/"' in response.content.decode()


def test_every_limited_route_exists():
    names = set()

    def walk(patterns, namespace=""):
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                walk(pattern.url_patterns, f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace)
            elif pattern.name:
                names.add(f"{namespace}{pattern.name}")

    walk(get_resolver().url_patterns)
    assert set(django_settings.UPLOAD_LIMITS) <= names
    assert all(isinstance(getattr(django_settings, s), int) for s in django_settings.UPLOAD_LIMITS.values())


@pytest.mark.django_db(transaction=True)
def test_a_streamed_body_gets_its_413_while_it_is_still_being_sent(live_server, owner):
    """A real HTTP connection: the client sends at most half of a 1 MiB file (twice the limit) in
    16 KiB pieces, then stops sending and waits: the 413 must come while the rest of the body is
    still unsent, whatever the machine's speed (no clock in the verdict)."""
    token, _ = Token.objects.get_or_create(user=owner)
    body = _body(_csv(4 * LIMIT))
    host = urlsplit(live_server.url)
    head = (
        f"POST {API} HTTP/1.1\r\nHost: {host.hostname}:{host.port}\r\nAuthorization: Token {token.key}\r\n"
        f"Content-Type: {MULTIPART_CONTENT}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    sent, answer = 0, b""
    # 300 s: a ceiling on each socket call that only catches a hung server.
    with socket.create_connection((host.hostname, host.port), timeout=300) as sock:
        sock.sendall(head)
        half = len(body) // 2
        while sent < half:
            piece = body[sent : min(sent + 16 * 1024, half)]
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(piece)
            if select.select([sock], [], [], 0)[0]:
                break
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < len(body), f"sent {sent} of {len(body)} bytes before the answer"
    assert not Upload.objects.exists()
