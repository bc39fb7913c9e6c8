"""A Python client for the Dynabench REST API (``/api/v1/``), for researchers' scripts.

Needs only ``requests`` (and ``tqdm`` for the command line's progress bars); it does not import
Django. Install it with ``pip install ./dynabench_client`` (from the repository root, where it is
also importable as is); that also installs the ``dynabench`` command (``dynabench_client/cli.py``)::

    from dynabench_client import DynabenchClient

    client = DynabenchClient(api_key="...", base_url="http://127.0.0.1:8000")
    rows = client.download_round("sentiment", 1)
    example = client.create_example("sentiment", text="The soup was cold but the staff were lovely.", label="positive")
    print(example["model_wrong"], example["model_output"])
    model_id = client.submit_model(model_path="my-model/", task="sentiment", description="MiniLM fine-tuned on R1")
    print(client.wait_for_results(model_id))

Every error answer of the server raises a ``DynabenchError`` (``BadRequest`` for 400,
``AuthenticationError`` 401, ``PermissionDenied`` 403, ``NotFound`` 404,
``RateLimited`` 429) carrying the server's ``code`` and ``detail``.
"""

from __future__ import annotations

import json
import os
import tarfile
import tempfile
import time
import uuid
from pathlib import Path
from typing import IO, Any, Callable, Iterator

import requests

from dynabench_client.chat import ChatMixin, TurnStream
from dynabench_client.releases import ReleasesMixin
from dynabench_client.errors import (
    ERRORS as _ERRORS,
    AuthenticationError,
    BadRequest,
    DynabenchError,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServerError,
)

__all__ = [
    "DynabenchClient", "DynabenchError", "BadRequest", "AuthenticationError", "PermissionDenied", "NotFound",
    "RateLimited", "ServerError", "TurnStream",
]

#: Short names of the task performance metrics, used in ``round<N>_<short>`` result keys.
METRIC_SHORT_NAMES = {"accuracy": "acc", "macro_f1": "macro_f1", "squad_f1": "f1"}

#: The metrics a leaderboard weighs (the API's ``w_<metric>`` parameters).
LEADERBOARD_METRICS = ("performance", "throughput", "memory", "robustness", "fairness")


#: ``progress(done, total)``: called as a transfer goes on; ``total`` is None when unknown.
Progress = Callable[[int, "int | None"], None]


class MultipartBody:
    """A ``multipart/form-data`` request body streamed from its files in chunks (never whole in
    memory), calling ``progress(bytes sent, total bytes)`` as ``requests`` reads it.

    ``fields``: form fields (text); ``files``: field → ``(filename, binary file object, content
    type)``, each object seekable (its size is measured to give the body a Content-Length).
    """

    def __init__(self, fields: dict[str, str], files: dict[str, tuple[str, IO[bytes], str]], progress: Progress | None = None):
        self.boundary = uuid.uuid4().hex
        self.content_type = f"multipart/form-data; boundary={self.boundary}"
        self._parts: list[bytes | IO[bytes]] = []
        for name, value in fields.items():
            self._parts.append(
                f'--{self.boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            )
        for name, (filename, fileobj, content_type) in files.items():
            safe = filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
            self._parts.append(
                f'--{self.boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{safe}"\r\n'
                f"Content-Type: {content_type}\r\n\r\n".encode()
            )
            self._parts.append(fileobj)
            self._parts.append(b"\r\n")
        self._parts.append(f"--{self.boundary}--\r\n".encode())
        self._sizes = [len(p) if isinstance(p, bytes) else self._size(p) for p in self._parts]
        self.total = sum(self._sizes)
        self._index, self._offset, self.sent = 0, 0, 0
        self._progress = progress

    @staticmethod
    def _size(fileobj: IO[bytes]) -> int:
        start = fileobj.tell()
        end = fileobj.seek(0, os.SEEK_END)
        fileobj.seek(start)
        return end - start

    def __len__(self) -> int:
        return self.total

    def read(self, size: int = -1) -> bytes:
        """Return up to ``size`` bytes of the body (all that is left when ``size`` < 0)."""
        out = bytearray()
        while self._index < len(self._parts) and (size < 0 or len(out) < size):
            part = self._parts[self._index]
            want = -1 if size < 0 else size - len(out)
            if isinstance(part, bytes):
                chunk = part[self._offset:] if want < 0 else part[self._offset:self._offset + want]
                self._offset += len(chunk)
                done = self._offset >= len(part)
            else:
                chunk = part.read(want if want >= 0 else -1)
                done = not chunk or (want >= 0 and len(chunk) < want) or want < 0
            out += chunk
            if done:
                self._index, self._offset = self._index + 1, 0
        self.sent += len(out)
        if self._progress is not None and out:
            self._progress(self.sent, self.total)
        return bytes(out)


def pack_model_directory(directory: str | os.PathLike, *, weights: bool = True) -> tuple[IO[bytes], dict[str, int]]:
    """Pack a Hugging Face directory as a .tar.gz in a temporary file; return it (at offset 0) and
    ``{weights member: bytes}``.

    With ``weights=False`` every ``*.safetensors`` file is packed as an empty entry and only its
    size is returned: what a dry run (``check_model``) needs, without megabytes of weights.
    Raises ``FileNotFoundError`` when ``directory`` is not a directory.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory} is not a directory")
    packed = tempfile.TemporaryFile()
    sizes: dict[str, int] = {}
    with tarfile.open(fileobj=packed, mode="w:gz") as archive:
        for file in sorted(p for p in directory.rglob("*") if p.is_file()):
            name = str(file.relative_to(directory).as_posix())
            if name.endswith(".safetensors"):
                sizes[name] = file.stat().st_size
                if not weights:
                    archive.addfile(tarfile.TarInfo(name))
                    continue
            archive.add(file, arcname=name, recursive=False)
    packed.seek(0)
    return packed, sizes




class DynabenchClient(ChatMixin, ReleasesMixin):
    """Talks to one Dynabench server with one API token.

    ``api_key``: the token from ``POST /api/v1/auth/token`` (or the ``DYNABENCH_API_KEY``
    environment variable); ``base_url``: the server's root, e.g. ``http://127.0.0.1:8000``
    (or ``DYNABENCH_URL``). ``timeout``: seconds per HTTP request.
    """

    def __init__(self, api_key: str | None = None, base_url: str | None = None, *, timeout: float = 120.0):
        self.api_key = api_key or os.environ.get("DYNABENCH_API_KEY")
        self.base_url = (base_url or os.environ.get("DYNABENCH_URL") or "http://127.0.0.1:8000").rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        if self.api_key:
            self.session.headers["Authorization"] = f"Token {self.api_key}"
        self.session.headers["Accept"] = "application/json"

    @classmethod
    def login(cls, username: str, password: str, base_url: str | None = None, **kwargs) -> "DynabenchClient":
        """Return a client with the API token of ``username`` (created on first use)."""
        anonymous = cls(api_key=None, base_url=base_url, **kwargs)
        token = anonymous._request("POST", "/auth/token", json={"username": username, "password": password})["token"]
        return cls(api_key=token, base_url=base_url, **kwargs)

    # -- HTTP ---------------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs) -> Any:
        url = path if path.startswith("http") else f"{self.base_url}/api/v1{path}"
        response = self.session.request(method, url, timeout=self.timeout, **kwargs)
        if response.status_code >= 400:
            raise self._error(response)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    @staticmethod
    def _error(response: requests.Response) -> DynabenchError:
        try:
            body = response.json()
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        code = str(body.get("code") or f"http_{response.status_code}")
        detail = str(body.get("detail") or response.reason or "error")
        kwargs = {"field": body.get("field"), "errors": body.get("errors")}
        if response.status_code >= 500:
            return ServerError(response.status_code, code, detail, **kwargs)
        error_class = _ERRORS.get(response.status_code, DynabenchError)
        if error_class is RateLimited:
            retry_after = response.headers.get("Retry-After")
            return RateLimited(response.status_code, code, detail, retry_after=float(retry_after) if retry_after else None, **kwargs)
        return error_class(response.status_code, code, detail, **kwargs)

    def _pages(self, path: str, params: dict | None = None, page_size: int = 500) -> Iterator[dict]:
        """Yield every result of a paginated list, following ``next`` links."""
        body = self._request("GET", path, params={**(params or {}), "page_size": page_size})
        while True:
            yield from body["results"]
            if not body.get("next"):
                return
            body = self._request("GET", body["next"])

    # -- account ------------------------------------------------------------------------

    def me(self) -> dict:
        """Return my account: roles, owned tasks, example counts and vMER."""
        return self._request("GET", "/me")

    def revoke_token(self) -> None:
        """Revoke this client's API token (it stops working at once)."""
        self._request("DELETE", "/auth/token")

    # -- tasks, rounds, data --------------------------------------------------------------

    def tasks(self) -> list[dict]:
        """Return the tasks I can see, with their configs and rounds."""
        return list(self._pages("/tasks"))

    def task(self, task: str) -> dict:
        return self._request("GET", f"/tasks/{task}")

    def round(self, task: str, round: int) -> dict:
        """Return round ``round`` of ``task``: status, models in the loop, counts and vMER."""
        return self._request("GET", f"/tasks/{task}/rounds/{int(round)}")

    def judge_agreement(self, round_id: int) -> dict:
        """A round's AI validators measured against people (``GET /api/v1/rounds/{round_id}/judge``, the
        task's owners only): per judge and per validator, ``vs_consensus`` and ``vs_gold`` with ``n``,
        ``accuracy`` and ``kappa`` (``{"value", "low", "high"}``: 95 % bootstrap intervals), ``per_label``
        and ``confusion``; each judge's ``disagreements`` with its reasons."""
        return self._request("GET", f"/rounds/{int(round_id)}/judge")

    def round_diversity(self, round_id: int) -> dict:
        """A round's diversity report and near-duplicate rule (``GET /api/v1/rounds/{round_id}/diversity``, the
        task's owners only): ``threshold``, ``mode``, ``status`` and ``figures`` (``vendi`` with ``vendi_low`` and
        ``vendi_high``, ``distinct_1``, ``distinct_2``, ``self_bleu``, ``near_duplicate_pairs`` and ``clusters``:
        ``[{"cluster", "size", "share", "terms", "examples", "vmer"}]``)."""
        return self._request("GET", f"/rounds/{int(round_id)}/diversity")

    def datasets(self, task: str | None = None, round: int | None = None, access: str | None = None) -> list[dict]:
        params = {k: v for k, v in {"task": task, "round": round, "access": access}.items() if v is not None}
        return list(self._pages("/datasets", params))

    def dataset_items(self, dataset_id: int) -> list[dict]:
        """Return a dataset's items (``uid``, ``input``, ``target``, ``tag``); ``target`` is None when hidden."""
        return list(self._pages(f"/datasets/{int(dataset_id)}/items"))

    def download_round(
        self, task: str, round: int, path: str | os.PathLike | None = None, *, progress: Progress | None = None,
    ) -> list[dict]:
        """Return round ``round`` of ``task`` as a list of rows, or write them to ``path`` as JSONL.

        The rows are the items of the round's non-hidden datasets, then the round's
        verified examples when I may download them (owners: always; everyone: once the
        round is closed). Each row: ``{"source", "uid", "input", "target", "tag"}`` where
        ``source`` is the dataset's name or ``"examples"``. Hidden datasets are left out:
        their labels never leave the server. ``progress(rows so far, rows expected)`` follows
        the download (the round's examples are not counted in advance).
        """
        info = self.round(task, round)
        rows = []
        datasets = [d for d in self.datasets(task=task, round=round) if not d["labels_hidden"]]
        expected = sum(int(d.get("item_count") or 0) for d in datasets)

        def add(row: dict) -> None:
            rows.append(row)
            if progress is not None:
                progress(len(rows), max(expected, len(rows)))

        for dataset in datasets:
            for item in self._pages(f"/datasets/{dataset['id']}/items"):
                add({"source": dataset["name"], "uid": item["uid"], "input": item["input"], "target": item["target"], "tag": item["tag"]})
        if info.get("examples_downloadable"):
            for example in self._pages(f"/tasks/{task}/rounds/{int(round)}/examples"):
                add({"source": "examples", "uid": str(example["id"]), "input": example["input"], "target": example["target"], "tag": example.get("tag", "")})
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        return rows

    # -- examples -------------------------------------------------------------------------

    def get_context(self, task: str, tag: str | None = None) -> dict:
        """Return a context of the task's current round, chosen by the task's strategy."""
        return self._request("GET", f"/tasks/{task}/context", params={"tag": tag} if tag else None)

    def create_example(
        self, task: str, *, label: str | None = None, answer: dict | None = None, context: int | None = None,
        metadata: dict | None = None, tag: str | None = None, **fields: str,
    ) -> dict:
        """Write an example against the model in the loop and return it with the model's answer.

        ``fields`` are the task's input fields (``text=...``; ``hypothesis=...``;
        ``question=...``); ``label`` for classification, ``answer={"text", "answer_start"}``
        for QA. ``context`` is a context id; when left out, one is fetched by the task's
        strategy. The result has ``model_wrong`` (decided by the server) and
        ``model_output`` (label and probabilities, or answer span and score).
        """
        if context is None:
            context = self.get_context(task)["id"]
        body: dict[str, Any] = {"task": task, "context": context, "input": fields}
        body["target"] = {"label": label} if label is not None else {"answers": [answer]} if answer is not None else {}
        if metadata:
            body["metadata"] = metadata
        if tag:
            body["tag"] = tag
        return self._request("POST", "/examples", json=body)

    def my_examples(self, task: str | None = None) -> list[dict]:
        return list(self._pages("/examples", {"task": task} if task else None))

    # -- models and results ------------------------------------------------------------------

    def _upload(self, path: str, fields: dict[str, str], files: dict, progress: Progress | None) -> Any:
        """POST a streamed multipart body (``MultipartBody``) to ``path``, reporting upload progress."""
        body = MultipartBody(fields, files, progress)
        return self._request("POST", path, data=body, headers={"Content-Type": body.content_type})

    def submit_model(
        self, model_path: str | os.PathLike, task: str, description: str = "", name: str | None = None, *,
        progress: Progress | None = None,
    ) -> int:
        """Pack a local Hugging Face directory (safetensors) as .tar.gz, upload it, return the model id.

        The server checks the archive at once (size, paths, safetensors only, config, labels,
        tokenizer, the storage quota: ``BadRequest`` naming the problem) before loading anything,
        and answers 202: a job then unpacks it (status ``unpacking``) and queues its evaluation on
        every scoring dataset (``queued``, ``evaluating``), or fails it with a ``failure_reason``
        (e.g. a damaged weights file); ``wait_for_results`` waits through all of these. Needs the
        researcher role (``PermissionDenied``, code ``not_researcher``) and a remaining daily
        allowance (``RateLimited``; see ``submission_allowance``). ``progress(bytes sent, total)``
        follows the upload. ``check_model`` asks the same checks first without uploading weights.
        """
        directory = Path(model_path)
        packed, _ = pack_model_directory(directory)
        with packed:
            fields = {"task": task, "name": name or directory.name, "description": description}
            files = {"archive": (f"{directory.name}.tar.gz", packed, "application/gzip")}
            return self._upload("/models", fields, files, progress)["id"]

    def check_model(self, model_path: str | os.PathLike, task: str, name: str | None = None) -> dict:
        """Ask the server's own checks of a model submission, without the weights and storing nothing.

        Packs the directory with every ``*.safetensors`` file as an empty entry plus its size
        (``pack_model_directory(weights=False)``) and posts it to ``/models/check``: the server runs
        the checks ``submit_model`` would that need no weights (members, sizes, storage quota,
        config, labels, tokenizer). Returns ``{"ok": True, "files", "kept_bytes"}``, or raises what
        ``submit_model`` would (``BadRequest`` naming the problem).
        """
        directory = Path(model_path)
        packed, sizes = pack_model_directory(directory, weights=False)
        with packed:
            fields = {"task": task, "name": name or directory.name, "weights_sizes": json.dumps(sizes)}
            files = {"archive": (f"{directory.name}.tar.gz", packed, "application/gzip")}
            return self._upload("/models/check", fields, files, None)

    def check_model_archive(self, archive_path: str | os.PathLike, task: str, name: str | None = None, *, progress: Progress | None = None) -> dict:
        """Ask the server's own checks of an already packed model archive (.zip, .tar, .tar.gz), storing
        nothing; as ``check_model``, but the whole archive is uploaded."""
        path = Path(archive_path)
        with open(path, "rb") as fh:
            fields = {"task": task, "name": name or path.name.split(".")[0]}
            return self._upload("/models/check", fields, {"archive": (path.name, fh, "application/octet-stream")}, progress)

    def submit_model_archive(
        self, archive_path: str | os.PathLike, task: str, description: str = "", name: str | None = None, *,
        progress: Progress | None = None,
    ) -> int:
        """Upload an already packed model archive (.zip, .tar, .tar.gz); return the model id (as ``submit_model``)."""
        path = Path(archive_path)
        with open(path, "rb") as fh:
            fields = {"task": task, "name": name or path.name.split(".")[0], "description": description}
            return self._upload("/models", fields, {"archive": (path.name, fh, "application/octet-stream")}, progress)["id"]

    def submission_allowance(self) -> dict:
        """Return whether I may submit and how much of the daily limit is left:
        ``{"researcher": bool, "limit": int | None, "used": int, "remaining": int | None, "next_at": ISO time | None}``
        (``limit``/``remaining`` None: not limited). Submitting needs the researcher role
        (``PermissionDenied`` otherwise) and a remaining allowance (``RateLimited`` otherwise)."""
        return self._request("GET", "/models/allowance")

    def submit_predictions(
        self, predictions_path: str | os.PathLike, task: str, name: str, description: str = "", *,
        progress: Progress | None = None,
    ) -> int:
        """Upload a predictions file (JSONL: one ``{"uid", "label"}`` or ``{"uid", "answer"}`` per line); return the model id.

        The file must cover every item of the task's scoring datasets exactly once; otherwise
        ``BadRequest`` lists the problems with line numbers, and nothing is stored. Needs the
        researcher role and a remaining allowance, as ``submit_model``. ``progress(bytes sent,
        total)`` follows the upload; ``check_predictions`` asks the same checks without storing.
        """
        with open(predictions_path, "rb") as fh:
            files = {"predictions": (Path(predictions_path).name, fh, "application/jsonl")}
            fields = {"task": task, "name": name, "description": description}
            return self._upload("/models/predictions", fields, files, progress)["id"]

    def check_predictions(self, predictions_path: str | os.PathLike, task: str, name: str = "", *, progress: Progress | None = None) -> dict:
        """Ask the server's own checks of a predictions file, storing nothing (``/models/predictions/check``).

        Returns ``{"ok": True, "predictions": N, "datasets": {name: N}}`` when a submission would
        accept the file, or raises what ``submit_predictions`` would: ``BadRequest`` whose
        ``detail`` lists every problem with its line numbers.
        """
        with open(predictions_path, "rb") as fh:
            files = {"predictions": (Path(predictions_path).name, fh, "application/jsonl")}
            return self._upload("/models/predictions/check", {"task": task, "name": name}, files, progress)

    def check_selection(self, uids: list[str], task: str, name: str = "") -> dict:
        """Ask the server's own checks of a selection, storing nothing (``/models/selections/check``).

        Returns ``{"ok": True, "selected": N, "pool": name}`` when ``submit_selection`` would accept
        it, or raises what it would (``BadRequest`` naming the first offending uid).
        """
        return self._request("POST", "/models/selections/check", json={"task": task, "name": name, "uids": list(uids)})

    def submit_selection(self, uids: list[str], task: str, name: str, description: str = "") -> int:
        """Submit a training-set selection (uids of the task's candidate pool) to a data-centric task;
        return the model id. The server trains the task's fixed recipe on it, then evaluates it.
        ``name`` must be a slug. Raises ``BadRequest`` naming the first offending uid."""
        body = {"task": task, "name": name, "description": description, "uids": list(uids)}
        return self._request("POST", "/models/selections", json=body)["id"]

    def submit_endpoint(
        self, task: str, name: str, base_url: str, model_name: str, *, api: str | None = None, params: dict | None = None,
        prompt: dict | None = None, api_key: str | None = None, timeout_s: float = 30.0, max_retries: int = 3,
        max_concurrency: int = 4, description: str = "", published: bool = True, anonymous: bool = False,
        loop_allowed: bool = False, consents: list[str] | None = None,
    ) -> int:
        """Submit a model served behind an OpenAI-compatible API (vLLM, TGI, Ollama, llama.cpp, a provider);
        return the model id. The platform evaluates it by calling ``base_url`` (``/v1/chat/completions``, or
        ``/v1/completions`` with ``api="completions"``, or for a speech recognition task
        ``/v1/audio/transcriptions`` with ``api="transcriptions"``; None: the first API the task's kind takes)
        with ``model_name`` and the ``params`` (``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``stop``;
        for transcriptions ``language``, ``prompt``, ``temperature``), at most ``max_concurrency`` calls at a
        time. ``prompt`` overrides the task kind's template (``system``, ``user``). ``api_key`` (or the
        environment variable ``DYNABENCH_ENDPOINT_API_KEY``) is sent once, stored encrypted, never shown back.
        ``consents`` (none by default) lists the purposes besides evaluation the task's owners may call the
        endpoint for under this key: ``loop`` (annotators' texts go to it), ``assist``, ``generate``,
        ``transfer``, ``judge``; ``loop_allowed=True`` is the same as ``loop``. Without any the endpoint is
        only evaluated; ``set_consents`` changes them later.
        ``BadRequest`` (code ``endpoint_url_not_allowed``) when the URL is not on the platform's allow-list.
        """
        body = {
            "task": task, "name": name, "base_url": base_url, "model_name": model_name, "params": params or {},
            "prompt": prompt or {}, "api_key": api_key if api_key is not None else os.environ.get("DYNABENCH_ENDPOINT_API_KEY", ""),
            "timeout_s": timeout_s, "max_retries": max_retries, "max_concurrency": max_concurrency,
            "description": description, "published": published, "anonymous": anonymous, "loop_allowed": loop_allowed,
            "consents": list(consents or []),
        }
        if api is not None:
            body["api"] = api
        return self._request("POST", "/models/endpoint", json=body)["id"]

    def set_consents(self, model_id: int, consents: list[str]) -> list[str]:
        """Replace the purposes your endpoint model may be called for besides evaluation (``loop``, ``assist``,
        ``generate``, ``transfer``, ``judge``); return them. A purpose left out is revoked from the next call on.
        ``Forbidden`` unless you submitted the model."""
        return self._request("PUT", f"/models/{int(model_id)}/consents", json={"consents": list(consents)})["consents"]

    def model_calls(self, model_id: int) -> list[dict]:
        """The calls made under your endpoint model's key: one row per task, purpose and outcome
        (``{"task", "purpose", "status", "calls", "prompt_tokens", "completion_tokens", "last_call"}``)."""
        return self._request("GET", f"/models/{int(model_id)}/calls")

    def get_model(self, model_id: int) -> dict:
        """Return the model record with its status and the evaluation status per dataset."""
        return self._request("GET", f"/models/{int(model_id)}")

    def get_results(self, model_id: int) -> dict:
        """Return ``{"status", "dynascore", "datasets": {name: {...}}, "round1_acc": .., ...}`` for a model.

        ``datasets`` maps each dataset to its status and scores; ``round<N>_<metric>``
        (``acc``, ``macro_f1`` or ``f1`` after the task's performance metric) is the
        performance on round N's datasets; ``dynascore`` is None until the model has
        complete scores.
        """
        model = self.get_model(model_id)
        short = METRIC_SHORT_NAMES.get(model.get("perf_metric"), model.get("perf_metric") or "perf")
        results = {
            "id": model["id"], "name": model["name"], "task": model["task"], "status": model["status"], "published": model["published"],
            "dynascore": model.get("dynascore"), "failure_reason": model.get("failure_reason", ""),
            "waiting_for_dataset": bool(model.get("waiting_for_dataset")),
            "datasets": {run["dataset"]: run for run in model.get("evaluations", [])},
        }
        for row in model.get("rounds", []):
            results[f"round{row['round']}_{short}"] = row["performance"]
        return results

    def wait_for_results(
        self, model_id: int, timeout: float = 600, poll: float = 2.0, ranking_grace: float = 60.0, *,
        on_status: Callable[[dict], None] | None = None,
    ) -> dict:
        """Poll ``get_results`` until the model is evaluated or failed, or waits for its task's first dataset
        (``waiting_for_dataset``: nothing to evaluate yet); raise ``TimeoutError`` after ``timeout`` s.

        Every other status (``unpacking``, ``training``, ``queued``, ``evaluating``, ``uploaded``) is
        in progress: a submitted archive is unpacked by a job before its evaluation is queued.

        A published model is ranked by a leaderboard job that runs just after its last
        evaluation: once evaluated, this waits up to ``ranking_grace`` more seconds for its
        ``dynascore`` (which stays None if the model cannot be ranked, e.g. missing scores).
        ``on_status(results)`` is called after every poll.
        """
        deadline = time.monotonic() + timeout
        while True:
            results = self.get_results(model_id)
            if on_status is not None:
                on_status(results)
            if results["status"] == "failed" or results["waiting_for_dataset"]:  # nothing more will happen by itself
                return results
            if results["status"] == "evaluated":
                ranked_by = min(deadline, time.monotonic() + ranking_grace)
                while results["published"] and results["dynascore"] is None and time.monotonic() < ranked_by:
                    time.sleep(poll)
                    results = self.get_results(model_id)
                return results
            if time.monotonic() > deadline:
                raise TimeoutError(f"model {model_id} is still {results['status']} after {timeout} s")
            time.sleep(poll)

    def publish_model(self, model_id: int, published: bool = True) -> dict:
        return self._request("POST", f"/models/{int(model_id)}/publish", json={"published": published})

    def anonymise_model(self, model_id: int, anonymous: bool = True) -> dict:
        return self._request("POST", f"/models/{int(model_id)}/anonymise", json={"anonymous": anonymous})

    # -- leaderboard -----------------------------------------------------------------------

    def leaderboard(
        self, task: str, weights: dict[str, float] | None = None, dataset_weights: dict[str, float] | None = None,
        missing_metric: str | None = None,
    ) -> dict:
        """Return the task's leaderboard ranked by Dynascore under the given weights.

        ``weights``: metric → weight 0..5 (``performance``, ``throughput``, ``memory``,
        ``robustness``, ``fairness``), sent as the API's ``w_<metric>`` parameters;
        ``dataset_weights``: dataset name → weight 0..5, sent as ``dataset_weights=name:w,...``;
        ``missing_metric``: ``per_model`` (default) or ``exclude_model``. Missing ones keep the
        task's defaults. Each row carries ``contributions`` (each metric's part of its Dynascore);
        ``stability`` says whether the exchange rates are stable.
        Raises ``ValueError`` for a metric name the leaderboard does not have (nothing is sent), and
        ``BadRequest`` for a weight the server refuses (not a number in 0..5).
        """
        params: dict[str, Any] = {}
        for metric, weight in (weights or {}).items():
            if metric not in LEADERBOARD_METRICS:
                raise ValueError(f"unknown metric {metric!r}: the leaderboard weighs {', '.join(LEADERBOARD_METRICS)}")
            params[f"w_{metric}"] = weight
        if dataset_weights:
            params["dataset_weights"] = ",".join(f"{k}:{v}" for k, v in dataset_weights.items())
        if missing_metric:
            params["missing_metric"] = missing_metric
        return self._request("GET", f"/tasks/{task}/leaderboard", params=params)
