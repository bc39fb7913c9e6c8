"""``dynabench chat TASK PROMPTS``: script or replay conversations with a task's models in the loop.

``PROMPTS`` is a JSONL file (``-``: standard input), one prompt a line: a JSON string, or an object
``{"prompt": "...", "judgment": {...}}``. In ``--mode conversation`` the lines are the turns of one
conversation, which ends (and a new one starts) after a line with a ``judgment``, when the task's
turns are used up, or at the end of the file. In ``--mode side_by_side`` every line is a comparison
of its own. A conversation is judged with its last line's ``judgment`` (the API's fields:
``verdict``, ``preference``, ``failing``, ``category``, ``explanation``), else with the command's
``--verdict``/``--preference``/... options; with neither it is left unjudged and nothing is stored.

Standard output: each conversation as it goes (``--stream``: the model's answer as it is written),
or with ``--json`` one JSON line per conversation (``mode``, ``context``, ``turns``, ``example``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dynabench_client.chat import MODES

JUDGMENT_FIELDS = ("verdict", "preference", "failing", "category", "explanation")


class PromptFileError(ValueError):
    """A line of the prompts file is not a prompt (the message names the line)."""


def add_parser(commands) -> None:
    """Add the ``chat`` sub-command to ``commands`` (argparse sub-parsers); ``cli`` sets what it runs."""
    chat = commands.add_parser("chat", help="run conversations with a task's models from a JSONL of prompts, and judge them")
    chat.add_argument("task", metavar="TASK")
    chat.add_argument("prompts", metavar="PROMPTS", help="a JSONL file of prompts (a JSON string or {\"prompt\", \"judgment\"} a line; - for stdin)")
    chat.add_argument("--mode", choices=MODES, default="conversation", help="conversation (default) or side_by_side (a comparison a line)")
    chat.add_argument("--stream", action="store_true", help="print the model's answer as it is written")
    chat.add_argument("--accept-content-warning", action="store_true", help="say that you read the task's content warning")
    chat.add_argument("--tag", help="only contexts with this tag")
    chat.add_argument("--verdict", choices=["fails", "holds"], help="judge each conversation so (unless its line says otherwise)")
    chat.add_argument("--preference", choices=["a", "b", "tie", "both_bad"], help="judge each comparison so")
    chat.add_argument("--failing", action="append", choices=["a", "b"], help="a comparison's failing answer (repeat for both)")
    chat.add_argument("--category", default="", help="the failure category's name, when an answer fails")
    chat.add_argument("--explanation", default="", help="how the answer fails, when it does")


def read_prompts(path: str) -> list[dict]:
    """The lines of a prompts file as ``{"prompt", "judgment"}`` (``judgment`` None when the line has
    none); blank lines are skipped. Raises ``PromptFileError`` naming the first bad line."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8-sig")
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as error:
            raise PromptFileError(f"line {number}: not JSON ({error}).") from None
        if isinstance(value, str):
            value = {"prompt": value}
        if not isinstance(value, dict) or not isinstance(value.get("prompt"), str):
            raise PromptFileError(f'line {number}: a prompt is a JSON string or an object with a "prompt" string.')
        judgment = value.get("judgment")
        if judgment is not None and (not isinstance(judgment, dict) or set(judgment) - set(JUDGMENT_FIELDS)):
            raise PromptFileError(f"line {number}: a judgment is an object of {', '.join(JUDGMENT_FIELDS)}.")
        lines.append({"prompt": value["prompt"], "judgment": judgment})
    if not lines:
        raise PromptFileError(f"{path} holds no prompt.")
    return lines


def _default_judgment(args) -> dict | None:
    judgment = {"verdict": args.verdict, "preference": args.preference, "failing": args.failing or [],
                "category": args.category, "explanation": args.explanation}
    return judgment if args.verdict or args.preference else None


def _show_turn(conversation: dict, streamed: bool) -> None:
    turn = conversation["turns"][-1]
    if conversation["sides"] == 1:
        if not streamed:
            print(f"model: {turn['answers'][0]}")
        return
    for label, answer in zip("AB", turn["answers"]):
        print(f"{label}: {answer}")


def _turn(client, args, conversation: dict, prompt: str) -> dict:
    if not args.json:
        print(f"> {prompt}")
    if not args.stream:
        conversation = client.send_turn(conversation, prompt)
        if not args.json:
            _show_turn(conversation, streamed=False)
        return conversation
    stream = client.send_turn(conversation, prompt, stream=True)
    live = not args.json and conversation["sides"] == 1
    if live:
        print("model: ", end="", flush=True)
    for _side, piece in stream:
        if live:
            print(piece, end="", flush=True)
    if live:
        print()
    if not args.json:
        _show_turn(stream.conversation, streamed=True)
    return stream.conversation


def run_chat(args, client) -> list[dict]:
    """Run the conversations of ``args.prompts`` (module docstring) through ``client``; return one
    record per conversation: ``{"mode", "context", "turns", "example"}`` (``example`` None when unjudged)."""
    lines, default = read_prompts(args.prompts), _default_judgment(args)
    records, conversation = [], None
    for index, line in enumerate(lines):
        if conversation is None:
            conversation = client.start_conversation(args.task, args.mode, tag=args.tag,
                                                     accept_content_warning=args.accept_content_warning)
            if not args.json:
                shown = "; ".join(f"{k}: {v}" for k, v in conversation["context"].items() if v)
                print(f"[{args.mode} {len(records) + 1}] {shown}")
        conversation = _turn(client, args, conversation, line["prompt"])
        last = index == len(lines) - 1
        if line["judgment"] is not None or conversation["turns_left"] == 0 or last:
            records.append(_finish(client, args, conversation, line["judgment"] or default))
            conversation = None
    return records


def _finish(client, args, conversation: dict, judgment: dict | None) -> dict:
    example = None
    if judgment is not None:
        example = client.judge_conversation(conversation, **{k: v for k, v in judgment.items() if k in JUDGMENT_FIELDS and v is not None})
    record = {"mode": conversation["mode"], "context": conversation["context"], "turns": conversation["turns"],
              "example": None if example is None else {"id": example["id"], "model_wrong": example["model_wrong"]}}
    if args.json:
        print(json.dumps(record, ensure_ascii=False))
    elif example is None:
        print("not judged: nothing stored")
    else:
        print(f"judged: example {example['id']} (model wrong: {str(example['model_wrong']).lower()})")
    return record
