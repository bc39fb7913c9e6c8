"""A real OpenAI-compatible transcription server for tests: ``POST /v1/audio/transcriptions`` on a local
port, answered by a tiny random CTC model (``tests.audio_support.build_tiny_ctc``: a 1-layer
``Wav2Vec2ForCTC`` with a character tokenizer, safetensors) decoded greedily.

The request is read as vLLM and OpenAI read it: ``multipart/form-data`` with the clip as ``file`` and the
text fields ``model``, ``response_format`` (only ``json`` is served), and optionally ``language``,
``prompt`` and ``temperature``. The clip is decoded with ``soundfile`` (any format libsndfile reads),
mixed to mono and brought to 16 kHz when it is not; the answer is ``{"text": transcript, "usage":
{"type": "duration", "seconds": ...}}`` as vLLM sends it. Refusals carry OpenAI's error body
(``{"error": {"message": ...}}``): a request for another model than ``model_name`` (400 ``Model
'<name>' is not served here; this server serves '<model_name>'``), no ``file`` or a file that is not
audio (400), another ``response_format`` (400), another path (404).

Tests drive it through its attributes: ``scripted`` (texts to answer the next requests with, in
order, instead of the model's transcript), ``fail_next`` (statuses to answer the next requests with);
``requests`` records each request (``path``, ``fields``, ``filename``, ``content_type``, ``rate``,
``channels``, ``frames``, ``authorization``, and ``answer``: the text answered with 200) and ``answered`` each
such text in the order answered (concurrent requests may be answered in another order than received).
``start_transcription_server(model_dir, port=0)`` binds a free port.
"""

from __future__ import annotations

import email.parser
import email.policy
import io
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import numpy as np

from tests.endpoint_server import QuietHandler

RATE = 16000


def parse_multipart(content_type: str, body: bytes) -> tuple[dict, dict]:
    """``(text fields, files)`` of a ``multipart/form-data`` body; a file is ``{"filename", "content_type", "data"}``."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    fields, files = {}, {}
    if not message.is_multipart():
        return fields, files
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True) or b""
        if part.get_filename() is not None:
            files[name] = {"filename": part.get_filename(), "content_type": part.get_content_type(), "data": data}
        else:
            fields[name] = data.decode("utf-8")
    return fields, files


class _Handler(QuietHandler):
    server: "TranscriptionServer"

    def _refuse(self, status: int, message: str):
        self._send(status, {"error": {"message": message, "type": "BadRequestError", "code": status}})

    def do_POST(self):
        import soundfile

        server = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        fields, files = parse_multipart(self.headers.get("Content-Type", ""), body)
        clip = files.get("file")
        record = {"path": self.path, "fields": fields, "authorization": self.headers.get("Authorization"),
                  "filename": clip and clip["filename"], "content_type": clip and clip["content_type"]}
        with server.lock:
            server.requests.append(record)
            status = server.fail_next.pop(0) if server.fail_next else None
        if self.path != "/v1/audio/transcriptions":
            return self._refuse(404, f"No route {self.path}.")
        if status is not None:
            return self._refuse(status, f"Failing on purpose with HTTP {status}.")
        if fields.get("model") != server.model_name:
            return self._refuse(400, f"Model '{fields.get('model')}' is not served here; this server serves '{server.model_name}'.")
        if fields.get("response_format", "json") != "json":
            return self._refuse(400, f"response_format '{fields['response_format']}' is not served; use json.")
        if clip is None:
            return self._refuse(400, "The request has no 'file' part: send the audio as multipart/form-data.")
        try:
            samples, rate = soundfile.read(io.BytesIO(clip["data"]), dtype="float32", always_2d=True)
        except (RuntimeError, soundfile.LibsndfileError) as error:
            return self._refuse(400, f"The file is not audio libsndfile reads ({error}).")
        record.update(rate=rate, channels=samples.shape[1], frames=samples.shape[0])
        with server.lock:
            scripted = server.scripted.pop(0) if server.scripted else None
        text = scripted if scripted is not None else server.transcribe(samples.mean(axis=1), rate)
        with server.lock:
            server.answered.append(text)
            record["answer"] = text
        self._send(200, {"text": text, "usage": {"type": "duration", "seconds": round(samples.shape[0] / rate, 3)}})


class TranscriptionServer(ThreadingHTTPServer):
    """The transcriptions API server (see the module docstring); ``url`` is its base URL."""

    daemon_threads = True

    def __init__(self, model_dir: Path, *, model_name: str = "tiny-ctc", port: int = 0):
        import torch
        from transformers import Wav2Vec2ForCTC, Wav2Vec2Processor

        super().__init__(("127.0.0.1", port), _Handler)
        self.torch, self.model_name = torch, model_name
        self.model = Wav2Vec2ForCTC.from_pretrained(model_dir, local_files_only=True, use_safetensors=True).eval()
        self.processor = Wav2Vec2Processor.from_pretrained(model_dir, local_files_only=True)
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.requests, self.answered, self.scripted, self.fail_next = [], [], [], []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def transcribe(self, samples: np.ndarray, rate: int) -> str:
        """The model's greedy CTC transcript of mono ``samples`` at ``rate`` Hz (brought to 16 kHz by linear interpolation)."""
        if rate != RATE:
            samples = np.interp(np.arange(int(len(samples) * RATE / rate)) * rate / RATE, np.arange(len(samples)), samples)
        features = self.processor(samples.astype(np.float32), sampling_rate=RATE, return_tensors="pt")
        with self.lock, self.torch.inference_mode():
            ids = self.model(features.input_values).logits.argmax(-1)
        return self.processor.batch_decode(ids)[0]

    def stop(self):
        self.shutdown()
        self.server_close()


def start_transcription_server(model_dir: Path, *, model_name: str = "tiny-ctc", port: int = 0) -> TranscriptionServer:
    """Start a ``TranscriptionServer`` in a daemon thread; return it (``stop()`` ends it)."""
    server = TranscriptionServer(model_dir, model_name=model_name, port=port)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server
