"""A real OpenAI-compatible server for tests and benchmarks: a tiny causal LM behind
``/v1/chat/completions`` and ``/v1/completions`` on a local port.

``transformers serve`` needs FastAPI, uvicorn and the ``openai`` package, none of which the
platform installs, so this is the equally real stand-in: Python's ``http.server``
(``ThreadingHTTPServer``, one thread per connection, HTTP/1.1 keep-alive) answering with a
GPT-2 of random weights (``build_tiny_causal_lm``: a word-level tokenizer over a 60-word
vocabulary that holds the default tasks' labels, 2 layers, safetensors) run with ``generate``
(greedy, at most 16 new tokens). The answers are arbitrary but deterministic; ``usage`` counts real
tokens.

Tests drive failures through the socket: ``fail_next`` (status codes to answer the next
requests with, e.g. ``[429, 503]``, each with an OpenAI-style error body; or ``(status, body)`` pairs whose
body is a dict sent as JSON or a str sent as plain text), ``pinned`` (as ``transformers serve --force-model``
does: a request for another model than ``model_name`` gets a 400 whose OpenAI-style error says
``Server is pinned to '<model_name>'; requested '<model>'``), ``stall()``/``release()`` (requests wait until released),
``kill_after(n)`` (the server answers n more requests, then drops every connection and closes
its port, as a killed process does), ``huge`` (an answer larger than the platform's bound).
``scripted``: texts to answer the next non-streamed requests with, in order, instead of generating
(a writing assistant's JSON, a generator's candidates).
``requests`` records every body received and ``answered`` every prompt answered with 200;
``in_flight`` counts the requests being answered now and ``most_in_flight`` the most at once.
Chat messages may carry images as OpenAI's ``image_url`` content parts (``data:`` URLs): the model
reads ``[image]`` in their place and ``images`` records each image's bytes.

Streaming: a chat request with ``"stream": true`` is answered with server-sent events as
OpenAI's API sends them (``data: {chunk}`` with ``choices[0].delta.content``, a last chunk with
``usage`` when ``stream_options.include_usage``, then ``data: [DONE]``), one event per generated
token, written and flushed as each token is generated (chunked transfer encoding). ``token_delay_s``
waits that long before each token (a slower model, for the streaming benchmark), and
``first_token_sent`` records ``time.perf_counter()`` right after each stream's first token was
flushed to the socket.
``start_server(model_dir, port=0)`` binds a free port (or, to bring a killed server back, the
same one).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

WORDS = (
    "positive negative neutral entailment contradiction hateful nothate yes no the a food was great and staff were "
    "friendly service slow room dirty museum opened in 1921 hosts many visitors man is playing guitar on street "
    "nobody music outside what year did open who wrote first algorithm for machine people from every country are "
    "welcome here i hate waiting"
).split()


def build_tiny_causal_lm(path: Path, *, seed: int = 0) -> Path:
    """Save a 2-layer GPT-2 with random weights and a word-level tokenizer under ``path``; return it."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    torch.manual_seed(seed)
    vocab = {word: i for i, word in enumerate(["[UNK]", "[EOS]", *dict.fromkeys(WORDS)])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    from tokenizers import decoders

    tok.decoder = decoders.WordPiece(prefix="##")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="[EOS]", pad_token="[EOS]")
    config = GPT2Config(vocab_size=len(vocab), n_positions=512, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=1, eos_token_id=1, pad_token_id=1)
    path = Path(path)
    GPT2LMHeadModel(config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


class QuietHandler(BaseHTTPRequestHandler):
    """A keep-alive HTTP/1.1 handler that logs nothing, with ``_send`` for a whole answer; the base of
    every local stand-in server here (chat, image generation, transcription)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def _send(self, status: int, body: dict | bytes | str, headers: dict | None = None):
        """Answer ``status`` with ``body``: a dict as JSON, a str as UTF-8 text, bytes as they are."""
        data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8" if isinstance(body, str) else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


class _Handler(QuietHandler):
    server: "EndpointServer"

    def _drop(self):
        self.close_connection = True
        try:
            self.connection.shutdown(2)
        except OSError:
            pass

    def do_GET(self):
        if self.path.rstrip("/") == "/v1/models":
            return self._send(200, {"object": "list", "data": [{"id": self.server.model_name, "object": "model"}]})
        self._send(404, {"error": {"message": "not found"}})

    def do_POST(self):
        server = self.server
        with server.lock:
            server.in_flight += 1
            server.most_in_flight = max(server.most_in_flight, server.in_flight)
        try:
            self._post()
        finally:
            with server.lock:
                server.in_flight -= 1

    def _post(self):
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with server.lock:
            server.requests.append({"path": self.path, "body": body, "authorization": self.headers.get("Authorization")})
            status = server.fail_next.pop(0) if server.fail_next else None
            dying = server.dead or (server.remaining is not None and server.remaining <= 0)
            if server.remaining is not None and not dying:
                server.remaining -= 1
        if dying:
            server.die()
            return self._drop()
        if isinstance(status, tuple):
            return self._send(*status)
        if status is not None:
            return self._send(status, {"error": {"message": f"told to answer {status}"}}, {"Retry-After": "0"} if status == 429 else None)
        if server.pinned and body.get("model") != server.model_name:
            said = f"Server is pinned to '{server.model_name}'; requested '{body.get('model')}'"
            return self._send(400, {"error": {"message": said, "type": "invalid_request_error"}})
        if server.stalling.is_set():
            server.released.wait(timeout=120)
        if self.path == "/v1/chat/completions":
            prompt = "\n".join(f"{m['role']}: {server.content_text(m['content'])}" for m in body.get("messages", [])) + "\nassistant:"
        elif self.path == "/v1/completions":
            prompt = body.get("prompt", "")
        else:
            return self._send(404, {"error": {"message": "not found"}})
        if server.huge:
            return self._send(200, b'{"pad": "' + b"x" * (2 * 2**20) + b'"}')
        if body.get("stream") and self.path == "/v1/chat/completions":
            return self._stream(prompt, body)
        text, n_prompt, n_completion = server.generate(prompt, int(body.get("max_tokens") or 16))
        with server.lock:
            scripted = server.scripted.pop(0) if server.scripted else None
        if scripted is not None:  # a scripted answer, its tokens counted by the model's tokenizer
            text, n_completion = scripted, len(server.tokenizer(scripted)["input_ids"])
        with server.lock:
            server.answered.append(prompt)
        choice = {"index": 0, "finish_reason": "stop"}
        if self.path == "/v1/chat/completions":
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        self._send(200, {
            "id": f"cmpl-{len(server.answered)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", server.model_name), "choices": [choice],
            "usage": {"prompt_tokens": n_prompt, "completion_tokens": n_completion, "total_tokens": n_prompt + n_completion},
        })


    def _chunk(self, event: dict | str) -> None:
        data = b"data: " + (event if isinstance(event, str) else json.dumps(event)).encode() + b"\n\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _stream(self, prompt: str, body: dict) -> None:
        """Answer ``prompt`` as server-sent events, one per generated token (see the module docstring)."""
        server = self.server
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {"id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", server.model_name)}
        self._chunk({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
        n_prompt, n_completion, text = 0, 0, ""
        for n_prompt, piece in server.generate_tokens(prompt, int(body.get("max_tokens") or 16)):
            if server.token_delay_s:
                time.sleep(server.token_delay_s)
            n_completion += 1
            text += piece
            self._chunk({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
            if n_completion == 1:
                with server.lock:
                    server.first_token_sent.append(time.perf_counter())
        self._chunk({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            self._chunk({**base, "choices": [], "usage": {"prompt_tokens": n_prompt, "completion_tokens": n_completion,
                                                          "total_tokens": n_prompt + n_completion}})
        self._chunk("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        with server.lock:
            server.answered.append(prompt)


class EndpointServer(ThreadingHTTPServer):
    """The server (see the module docstring); ``url`` is its base URL, ``port`` its port."""

    daemon_threads = True

    def __init__(self, model_dir: Path, port: int = 0, model_name: str = "tiny-gpt2"):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        super().__init__(("127.0.0.1", port), _Handler)
        self.model_name, self.model_dir = model_name, model_dir
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True, use_safetensors=True).eval()
        self.torch = torch
        self.lock = threading.Lock()
        self.stalling, self.released = threading.Event(), threading.Event()
        self.reset()

    def handle_error(self, request, client_address):
        """A client that went away (a timeout, a killed connection) is expected here: stay quiet."""
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)

    def content_text(self, content) -> str:
        """A message's content as prompt text: a string as is; a list of content parts (OpenAI's
        multimodal format) as its text parts, each ``image_url`` part as ``[image]``. The bytes of each
        ``data:`` URL image are appended to ``images`` (a URL of another scheme is recorded as is)."""
        import base64

        if isinstance(content, str):
            return content
        pieces = []
        for part in content or []:
            if part.get("type") == "image_url":
                url = (part.get("image_url") or {}).get("url", "")
                head, _, data = url.partition(",")
                with self.lock:
                    self.images.append(base64.b64decode(data) if head.startswith("data:") and head.endswith(";base64") else url)
                pieces.append("[image]")
            else:
                pieces.append(str(part.get("text", "")))
        return " ".join(pieces)

    def reset(self):
        """Forget recorded requests and every failure behaviour."""
        self.images = []
        self.requests, self.answered, self.fail_next = [], [], []
        self.scripted = []
        self.remaining, self.dead, self.huge, self.pinned = None, False, False, False
        self.token_delay_s, self.first_token_sent = 0.0, []
        self.in_flight, self.most_in_flight = 0, 0
        self.released.set()
        self.stalling.clear()

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def generate(self, prompt: str, max_tokens: int) -> tuple[str, int, int]:
        """Greedy ``generate`` of at most ``min(max_tokens, 16)`` tokens; return text and token counts."""
        ids = self.tokenizer(prompt, return_tensors="pt")["input_ids"][:, -256:]
        with self.torch.inference_mode():
            out = self.model.generate(ids, attention_mask=self.torch.ones_like(ids), max_new_tokens=max(1, min(max_tokens, 16)),
                                      do_sample=False, pad_token_id=1)
        new = out[0, ids.shape[1]:]
        return self.tokenizer.decode(new, skip_special_tokens=True), int(ids.shape[1]), int(new.shape[0])

    def generate_tokens(self, prompt: str, max_tokens: int):
        """Greedy decoding one token at a time (key/value cache): yield ``(prompt tokens, text piece)``
        per new token. The special tokens ([UNK], [EOS]) are never picked, so a streamed answer
        always has ``min(max_tokens, 16)`` visible words (random weights often favour [UNK])."""
        ids = self.tokenizer(prompt, return_tensors="pt")["input_ids"][:, -256:]
        n_prompt, past, step, new, shown = int(ids.shape[1]), None, ids, [], ""
        with self.torch.inference_mode():
            for _ in range(max(1, min(max_tokens, 16))):
                out = self.model(input_ids=step, past_key_values=past, use_cache=True)
                past = out.past_key_values
                logits = out.logits[0, -1].clone()
                logits[:2] = float("-inf")  # [UNK], [EOS]
                token = int(logits.argmax())
                new.append(token)
                text = self.tokenizer.decode(new, skip_special_tokens=True)
                piece, shown = text[len(shown):], text
                yield n_prompt, piece
                step = self.torch.tensor([[token]])

    def stall(self):
        """Make requests wait (until ``release``)."""
        self.released.clear()
        self.stalling.set()

    def release(self):
        self.stalling.clear()
        self.released.set()

    def kill_after(self, n: int):
        """Answer ``n`` more requests, then drop every connection and close the port."""
        self.remaining = n

    def die(self):
        if not self.dead:
            self.dead = True
            threading.Thread(target=self.stop, daemon=True).start()

    def stop(self):
        self.shutdown()
        self.server_close()


def start_server(model_dir: Path, *, port: int = 0) -> EndpointServer:
    """Start an ``EndpointServer`` in a daemon thread; return it (``stop()`` ends it)."""
    server = EndpointServer(model_dir, port=port)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def main() -> None:
    """``python tests/endpoint_server.py [--model-dir DIR] [--port N]``: serve until killed (builds the tiny
    model in a temporary folder when no directory is given); prints ``listening <url>`` once ready."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=main.__doc__.split("\n")[0])
    parser.add_argument("--model-dir", default="")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    model_dir = Path(args.model_dir) if args.model_dir else build_tiny_causal_lm(Path(tempfile.mkdtemp(prefix="tiny-gpt2-")))
    server = EndpointServer(model_dir, port=args.port)
    print(f"listening {server.url}", flush=True)
    server.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
