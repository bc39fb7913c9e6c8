"""Options shared by ``import_contexts`` and ``import_dataset``, and their translation to a ``FileSpec``."""

from pathlib import Path

from django.core.management.base import CommandError

from dynabench.errors import RuleError
from tasks.data.importers.files import FORMATS, FileSpec, parse_assignments
from tasks.models import Task


def add_file_arguments(parser) -> None:
    parser.add_argument("file", type=Path, help="A .jsonl or .csv file (UTF-8 unless --encoding).")
    parser.add_argument("--format", choices=FORMATS, help="Override the format guessed from the extension.")
    parser.add_argument(
        "--map", action="append", default=[], metavar="FIELD=SOURCE",
        help="Read task field FIELD from file field SOURCE; SOURCE may be a dotted path into nested JSON "
        "(e.g. --map prompt=prompt_data.prompt_sentence). Repeatable. Unmapped fields read the same name.",
    )
    uid = parser.add_mutually_exclusive_group()
    uid.add_argument("--uid", default="uid", metavar="FIELD", help="File field holding each row's unique id (default: uid).")
    uid.add_argument("--uid-from-line", action="store_true", help="Use the line number as uid (line-N) when the file has no id.")
    uid.add_argument(
        "--uid-from-content", action="store_true",
        help="Use a hash of the mapped fields as uid; identical rows are imported once.",
    )
    parser.add_argument("--tag", metavar="FIELD", help="File field copied to the row's tag (e.g. round, type).")
    parser.add_argument(
        "--filter", action="append", default=[], metavar="FIELD=VALUE",
        help="Import only rows whose FIELD equals VALUE (e.g. --filter round.base=2). Repeatable; all must match.",
    )
    parser.add_argument("--encoding", default="utf-8", help="Text encoding of the file, ASCII-compatible (default utf-8).")
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar (shown on a terminal).")


def file_spec(options, *, meta_fields=()) -> FileSpec:
    try:
        mapping = parse_assignments(options["map"], option="--map")
        filters = parse_assignments(options["filter"], option="--filter")
    except RuleError as exc:
        raise CommandError(exc.message) from None
    uid_from = "line" if options["uid_from_line"] else "content" if options["uid_from_content"] else "field"
    return FileSpec(
        path=options["file"], format=options["format"], mapping=mapping, uid_field=options["uid"], uid_from=uid_from,
        tag_field=options["tag"], filters=filters, meta_fields=tuple(meta_fields), encoding=options["encoding"],
    )


def progress(options):
    return False if options["no_progress"] else None


def get_task(code: str) -> Task:
    task = Task.objects.filter(code=code).first()
    if task is None:
        known = ", ".join(Task.objects.values_list("code", flat=True)) or "none; run manage.py seed"
        raise CommandError(f"no task '{code}' (tasks: {known})")
    return task
