"""``dynabench``: the command line of the Dynabench client, for researchers' shells and scripts.

Installed with the client (``pip install ./dynabench_client``; ``make install`` does it for the
repository's virtualenv), or run as ``python -m dynabench_client`` from the repository root.
Every command talks to the public REST API through ``DynabenchClient``; the checks of a
submission are the server's own (``dynabench check`` asks a dry run that stores nothing), never a
copy here.

Commands: ``login``, ``tasks``, ``download ROUND``, ``check FILE``, ``submit predictions FILE``,
``submit model DIR``, ``submit selection FILE``, ``submit endpoint URL``, ``status MODEL``, ``wait MODEL``,
``leaderboard TASK``, ``chat TASK PROMPTS`` (``dynabench_client/chat_cli.py``), ``release list TASK`` and ``release download TASK VERSION`` (``dynabench_client/release_cli.py``). Results go to standard output (``--json`` for JSON); messages and
progress bars to standard error. The exit status says what happened (``EXIT_CODES``)::

    id=$(dynabench submit predictions preds.jsonl --task nli) && dynabench wait "$id" && echo ranked

Where the server and the token come from, first found wins: ``--url``/``--token``, the
environment (``DYNABENCH_URL``, ``DYNABENCH_API_KEY``), the file ``dynabench login`` wrote
(``DYNABENCH_CONFIG``, default ``~/.config/dynabench/config.json``, readable by its owner only).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import requests

from dynabench_client import chat_cli, release_cli
from dynabench_client import (
    AuthenticationError,
    BadRequest,
    DynabenchClient,
    DynabenchError,
    NotFound,
    PermissionDenied,
    RateLimited,
)

OK = 0
#: An unexpected failure: a server error (5xx) or an answer the command did not expect.
FAILED = 1
#: The command line itself is wrong (argparse's own status).
USAGE = 2
#: The server refused the input (400/413/415): a check found problems, a submission was refused.
REFUSED = 3
#: No or a wrong API token (401), or the token's user may not do this (403).
NOT_ALLOWED = 4
#: No such task, round or model (404), or a local file or directory that does not exist.
NOT_FOUND = 5
#: A rate limit or the daily submission limit was reached (429).
RATE_LIMITED = 6
#: The model's evaluation failed (``status``, ``wait``).
MODEL_FAILED = 7
#: ``wait`` gave up before the model was evaluated.
TIMED_OUT = 8
#: ``status``: the model is still being unpacked, trained or evaluated.
IN_PROGRESS = 9
#: The server could not be reached.
UNREACHABLE = 10

#: Exit status → meaning, as documented in the README ("Command line").
EXIT_CODES = {
    OK: "done (wait/status: the model is evaluated)",
    FAILED: "server error or unexpected answer",
    USAGE: "wrong command line",
    REFUSED: "the server refused the input (bad file, failed check)",
    NOT_ALLOWED: "not logged in, bad token, or not allowed",
    NOT_FOUND: "no such task, round, model or local file",
    RATE_LIMITED: "rate limit or daily submission limit reached",
    MODEL_FAILED: "the model's evaluation failed",
    TIMED_OUT: "wait timed out",
    IN_PROGRESS: "status: the model is not evaluated yet",
    UNREACHABLE: "the server could not be reached",
}

_IN_PROGRESS = {"uploaded", "unpacking", "training", "queued", "evaluating"}


def config_path() -> Path:
    """The file ``dynabench login`` writes: ``$DYNABENCH_CONFIG`` or ``~/.config/dynabench/config.json``."""
    return Path(os.environ.get("DYNABENCH_CONFIG") or Path.home() / ".config" / "dynabench" / "config.json")


def _read_config() -> dict:
    try:
        data = json.loads(config_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_config(data: dict) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.chmod(path, 0o600)
    return path


def _url(args) -> str:
    return args.url or os.environ.get("DYNABENCH_URL") or _read_config().get("url") or "http://127.0.0.1:8000"


def _client(args) -> DynabenchClient:
    token = args.token or os.environ.get("DYNABENCH_API_KEY") or _read_config().get("token")
    return DynabenchClient(api_key=token, base_url=_url(args), timeout=args.http_timeout)


def _say(message: str) -> None:
    print(message, file=sys.stderr)


def _emit(args, data, text: str) -> None:
    """Print ``data`` as JSON with ``--json``, else ``text``, on standard output."""
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else text)


@contextmanager
def _bar(args, description: str, unit: str = "B") -> Iterator:
    """A tqdm progress bar on standard error (off with ``--quiet`` or when stderr is no terminal);
    yields a ``progress(done, total)`` callback for the client."""
    from tqdm import tqdm

    bar = tqdm(desc=description, unit=unit, unit_scale=unit == "B", unit_divisor=1024 if unit == "B" else 1000,
               file=sys.stderr, disable=True if args.quiet else None, leave=False)

    def progress(done: int, total: int | None) -> None:
        if total is not None and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        bar.close()


def _table(rows: list[list], header: list[str]) -> str:
    cells = [header] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)


# -- commands --------------------------------------------------------------------------------


def cmd_login(args) -> int:
    username = args.username or input("Username: ")
    password = sys.stdin.readline().rstrip("\n") if args.password_stdin else getpass.getpass("Password: ")
    client = DynabenchClient.login(username, password, base_url=_url(args), timeout=args.http_timeout)
    path = _write_config({"url": client.base_url, "token": client.api_key})
    _say(f"Logged in to {client.base_url} as {username}; the API token is in {path}.")
    return OK


def cmd_tasks(args) -> int:
    tasks = _client(args).tasks()
    rows = [[t["code"], t["kind"], t.get("current_round"), t["name"]] for t in tasks]
    _emit(args, tasks, _table(rows, ["task", "kind", "round", "name"]))
    return OK


def cmd_download(args) -> int:
    """Write the round's public rows as JSONL. A round with no row this account may download writes
    no file (an empty one would pass for data) and says why, with exit 0: nothing went wrong."""
    output = Path(args.output or f"{args.task}-round{args.round}.jsonl")
    client = _client(args)
    with _bar(args, f"{args.task} round {args.round}", unit="rows") as progress:
        rows = client.download_round(args.task, args.round, progress=progress)
    if not rows:
        later = "" if client.round(args.task, args.round).get("examples_downloadable") else (
            "; its validated examples come once the round closes")
        _say(f"Nothing to download for {args.task} round {args.round}: it has no public dataset items{later}. "
             f"No file written.")
        if args.json:
            _emit(args, {"path": None, "rows": 0}, "")
        return OK
    with open(output, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    _say(f"{len(rows):,} rows of {args.task} round {args.round} written to {output}.")
    _emit(args, {"path": str(output), "rows": len(rows)}, str(output))
    return OK


def _is_model(path: Path) -> bool:
    return path.is_dir() or path.name.lower().endswith((".zip", ".tar", ".tar.gz", ".tgz"))


def _check(args, client: DynabenchClient, path: Path, name: str = "") -> dict:
    """Run the server's dry run for ``path`` (a predictions file, a model directory or archive)."""
    if path.is_dir():
        return client.check_model(path, args.task, name or None)
    if _is_model(path):
        with _bar(args, f"checking {path.name}") as progress:
            return client.check_model_archive(path, args.task, name or None, progress=progress)
    with _bar(args, f"checking {path.name}") as progress:
        return client.check_predictions(path, args.task, name, progress=progress)


def _describe_check(result: dict) -> str:
    if "selected" in result:
        return f"OK: {result['selected']:,} uids of {result['pool']} would be trained on."
    if "predictions" in result:
        per = ", ".join(f"{n}: {c:,}" for n, c in sorted(result["datasets"].items()))
        return f"OK: {result['predictions']:,} predictions would be scored ({per})."
    return f"OK: the model's {len(result['files'])} files ({result['kept_bytes'] / 2**20:,.1f} MiB) pass the checks."


def cmd_check(args) -> int:
    path = Path(args.file)
    if not path.exists():
        _say(f"No such file or directory: {path}")
        return NOT_FOUND
    if args.selection:
        try:
            uids = _read_uids(path)
        except (ValueError, UnicodeDecodeError) as error:
            _say(f"{path} is neither a JSON list nor UTF-8 lines of uids ({error}).")
            return REFUSED
        result = _client(args).check_selection(uids, args.task)
    else:
        result = _check(args, _client(args), path)
    _emit(args, result, _describe_check(result))
    return OK


def _preflight(args, client: DynabenchClient, path: Path, name: str) -> None:
    if args.no_check:
        return
    _say(_describe_check(_check(args, client, path, name)))


def _submitted(args, model_id: int) -> int:
    _say(f"Submitted: model {model_id}. Follow it with `dynabench wait {model_id}`.")
    _emit(args, {"id": model_id}, str(model_id))
    return OK


def cmd_submit_predictions(args) -> int:
    path = Path(args.file)
    if not path.is_file():
        _say(f"No such file: {path}")
        return NOT_FOUND
    client = _client(args)
    name = args.name or path.stem
    _preflight(args, client, path, name)
    with _bar(args, f"uploading {path.name}") as progress:
        model_id = client.submit_predictions(path, args.task, name, args.description, progress=progress)
    return _submitted(args, model_id)


def cmd_submit_model(args) -> int:
    path = Path(args.directory)
    if not path.exists():
        _say(f"No such file or directory: {path}")
        return NOT_FOUND
    client = _client(args)
    name = args.name or path.name.split(".")[0]
    _preflight(args, client, path, name)
    with _bar(args, f"uploading {path.name}") as progress:
        if path.is_dir():
            model_id = client.submit_model(path, args.task, args.description, name, progress=progress)
        else:
            model_id = client.submit_model_archive(path, args.task, args.description, name, progress=progress)
    return _submitted(args, model_id)


def _read_uids(path: Path) -> list:
    """A selection file: a JSON list of uids, or one uid per non-empty line."""
    text = path.read_text(encoding="utf-8-sig")
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [line.strip() for line in text.splitlines() if line.strip()]


def cmd_submit_selection(args) -> int:
    path = Path(args.file)
    if not path.is_file():
        _say(f"No such file: {path}")
        return NOT_FOUND
    try:
        uids = _read_uids(path)
    except (ValueError, UnicodeDecodeError) as error:
        _say(f"{path} is neither a JSON list nor UTF-8 lines of uids ({error}).")
        return REFUSED
    client, name = _client(args), args.name or path.stem
    if not args.no_check:
        _say(_describe_check(client.check_selection(uids, args.task, name)))
    model_id = client.submit_selection(uids, args.task, name, args.description)
    return _submitted(args, model_id)


def cmd_submit_endpoint(args) -> int:
    given = (("temperature", args.temperature), ("max_tokens", args.max_tokens), ("seed", args.seed), ("language", args.language))
    params = {k: v for k, v in given if v is not None}
    model_id = _client(args).submit_endpoint(
        args.task, args.name or args.model_name, args.base_url, args.model_name, api=args.api, params=params,
        description=args.description, max_concurrency=args.max_concurrency, loop_allowed=args.allow_loop,
    )
    return _submitted(args, model_id)


def _status_line(results: dict) -> str:
    line = f"model {results['id']} ({results['name']}, {results['task']}): {results['status']}"
    if results.get("dynascore") is not None:
        line += f", Dynascore {results['dynascore']:.2f}"
    if results.get("failure_reason"):
        line += f": {results['failure_reason']}"
    elif results.get("waiting_for_dataset"):
        line += ": its task has no dataset yet; it is scored once one is added or a round closes"
    return line


def _status_code(results: dict) -> int:
    if results["status"] == "evaluated":
        return OK
    if results["status"] == "failed":
        return MODEL_FAILED
    return IN_PROGRESS


def cmd_status(args) -> int:
    results = _client(args).get_results(args.model)
    _emit(args, results, _status_line(results))
    return _status_code(results)


def cmd_wait(args) -> int:
    seen = []

    def report(results: dict) -> None:
        if not seen or seen[-1] != results["status"]:
            seen.append(results["status"])
            _say(_status_line(results))

    try:
        results = _client(args).wait_for_results(args.model, timeout=args.timeout, poll=args.poll, on_status=report)
    except TimeoutError as error:
        _say(str(error))
        return TIMED_OUT
    _emit(args, results, _status_line(results))
    return _status_code(results)


def cmd_leaderboard(args) -> int:
    board = _client(args).leaderboard(args.task)
    rows = [[r["rank"], r["name"], r["owner"], None if r["dynascore"] is None else f"{r['dynascore']:.2f}"] for r in board["rows"]]
    _emit(args, board, _table(rows, ["rank", "model", "owner", "dynascore"]) if rows else f"No ranked model on {args.task} yet.")
    return OK


def cmd_chat(args) -> int:
    """Run and judge the conversations of a prompts file (``chat_cli``); a bad line is refused before any is sent."""
    try:
        chat_cli.run_chat(args, _client(args))
    except chat_cli.PromptFileError as error:
        _say(f"{args.prompts}: {error}")
        return REFUSED
    return OK


# -- parsing and running ------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``dynabench`` argument parser (one sub-command per action)."""
    epilog = "exit status:\n" + "\n".join(f"  {code:>2}  {meaning}" for code, meaning in EXIT_CODES.items())
    parser = argparse.ArgumentParser(
        prog="dynabench", description="Dynabench from the shell: data, submissions, results.",
        epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", help="the server's root (default: $DYNABENCH_URL, the login file, http://127.0.0.1:8000)")
    parser.add_argument("--token", help="an API token (default: $DYNABENCH_API_KEY, then the login file)")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--http-timeout", type=float, default=300.0, help="seconds per HTTP request (default 300)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    login = commands.add_parser("login", help="get an API token and keep it in the login file")
    login.add_argument("--username", "-u")
    login.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    login.set_defaults(run=cmd_login)

    commands.add_parser("tasks", help="list the tasks").set_defaults(run=cmd_tasks)

    download = commands.add_parser("download", help="download a round's public data as JSONL")
    download.add_argument("round", type=int, metavar="ROUND")
    download.add_argument("--task", "-t", required=True)
    download.add_argument("--output", "-o", help="the JSONL file to write (default TASK-roundN.jsonl)")
    download.set_defaults(run=cmd_download)

    check = commands.add_parser("check", help="ask the server's checks of a predictions file or a model (stores nothing)")
    check.add_argument("file", metavar="FILE", help="a predictions JSONL, a model directory or a model archive")
    check.add_argument("--task", "-t", required=True)
    check.add_argument("--selection", action="store_true", help="FILE is a data-centric selection (one uid a line, or a JSON list)")
    check.set_defaults(run=cmd_check)

    submit = commands.add_parser("submit", help="submit predictions, a model or a selection")
    kinds = submit.add_subparsers(dest="kind", required=True, metavar="KIND")
    for submission, metavar, run, what in (
        ("predictions", "FILE", cmd_submit_predictions, "a predictions JSONL file"),
        ("model", "DIR", cmd_submit_model, "a Hugging Face model directory (safetensors) or its archive"),
        ("selection", "FILE", cmd_submit_selection, "a data-centric selection: one uid a line, or a JSON list"),
    ):
        sub = kinds.add_parser(submission, help=f"submit {what}")
        sub.add_argument("directory" if submission == "model" else "file", metavar=metavar)
        sub.add_argument("--task", "-t", required=True)
        sub.add_argument("--name", help="the model's name (default: the file's or directory's name)")
        sub.add_argument("--description", default="", help="model card, Markdown")
        sub.add_argument("--no-check", action="store_true", help="skip the dry run before the upload")
        sub.set_defaults(run=run)
    endpoint = kinds.add_parser("endpoint", help="submit a model served behind an OpenAI-compatible API")
    endpoint.add_argument("base_url", metavar="URL", help="e.g. https://models.example.org/v1 (on the platform's allow-list)")
    endpoint.add_argument("--task", "-t", required=True)
    endpoint.add_argument("--model-name", required=True, help="the `model` the API serves")
    endpoint.add_argument("--name", help="the model's name on the leaderboard (default: the model name)")
    endpoint.add_argument("--description", default="", help="model card, Markdown")
    endpoint.add_argument("--api", choices=["chat", "completions", "transcriptions"], default=None,
                          help="the API to call (default: the first the task's kind takes)")
    endpoint.add_argument("--temperature", type=float)
    endpoint.add_argument("--max-tokens", type=int)
    endpoint.add_argument("--seed", type=int)
    endpoint.add_argument("--language", help="transcriptions: the clips' language, ISO 639-1 (e.g. en)")
    endpoint.add_argument("--max-concurrency", type=int, default=4, help="calls at a time (default 4)")
    endpoint.add_argument("--allow-loop", action="store_true",
                          help="let the task's owners put it in an annotation loop (annotators' texts then go to it "
                               "under your key); off by default. The key: $DYNABENCH_ENDPOINT_API_KEY")
    endpoint.set_defaults(run=cmd_submit_endpoint)

    status = commands.add_parser("status", help="a model's status (exit 0 evaluated, 7 failed, 9 in progress)")
    status.add_argument("model", type=int, metavar="MODEL")
    status.set_defaults(run=cmd_status)

    wait = commands.add_parser("wait", help="wait until a model is evaluated and ranked (exit 0) or failed (7)")
    wait.add_argument("model", type=int, metavar="MODEL")
    wait.add_argument("--timeout", type=float, default=3600.0, help="seconds before giving up (exit 8; default 3600)")
    wait.add_argument("--poll", type=float, default=2.0, help="seconds between polls (default 2)")
    wait.set_defaults(run=cmd_wait)

    board = commands.add_parser("leaderboard", help="a task's leaderboard by Dynascore")
    board.add_argument("task", metavar="TASK")
    board.set_defaults(run=cmd_leaderboard)

    chat_cli.add_parser(commands)
    commands.choices["chat"].set_defaults(run=cmd_chat)
    release_cli.add_parser(commands)
    commands.choices["release"].set_defaults(run=lambda args: release_cli.run_release(args, _client(args)))
    return parser


def _error_code(error: DynabenchError) -> int:
    if isinstance(error, BadRequest):
        return REFUSED
    if isinstance(error, (AuthenticationError, PermissionDenied)):
        return NOT_ALLOWED
    if isinstance(error, NotFound):
        return NOT_FOUND
    if isinstance(error, RateLimited):
        return RATE_LIMITED
    return FAILED


def main(argv: list[str] | None = None) -> int:
    """Run ``dynabench`` with ``argv`` (default: the process's arguments); return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except DynabenchError as error:
        _say(f"{error.detail}\n({error.status} {error.code})" if error.detail else str(error))
        return _error_code(error)
    except FileNotFoundError as error:
        _say(str(error))
        return NOT_FOUND
    except requests.ConnectionError as error:
        _say(f"Cannot reach {_url(args)}: {error.__class__.__name__}.")
        return UNREACHABLE
    except KeyboardInterrupt:
        return 130


def run() -> None:
    """The console script's entry point (``dynabench``)."""
    sys.exit(main())


if __name__ == "__main__":
    run()
