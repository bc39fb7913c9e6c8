"""``dynabench release list TASK`` and ``dynabench release download TASK VERSION [--to DIR]``."""

from __future__ import annotations

import json
import sys


def add_parser(commands) -> None:
    """Add the ``release`` sub-command (``list``, ``download``) to ``commands`` (argparse sub-parsers)."""
    release = commands.add_parser("release", help="list or download a task's dataset releases")
    actions = release.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="a task's releases: version, date, examples, sha256")
    listing.add_argument("task", metavar="TASK")
    listing.add_argument("--json", action="store_true", help="print the API's answer as JSON")
    download = actions.add_parser("download", help="download a release (resumable, every file's sha256 checked)")
    download.add_argument("task", metavar="TASK")
    download.add_argument("version", metavar="VERSION")
    download.add_argument("--to", metavar="DIR", help="folder to download into (default TASK-VERSION)")


def run_release(args, client) -> int:
    """Run ``release list`` or ``release download``; print to standard output; return 0."""
    if args.action == "list":
        releases = client.releases(args.task)
        if args.json:
            print(json.dumps(releases, indent=2))
        for r in [] if args.json else releases:
            print(f"{r['version']}\t{(r['published_at'] or '')[:10]}\t{r['example_count']} examples\t{r['sha256']}")
        return 0

    def progress(name: str, done: int, total: int) -> None:
        if done >= total:
            print(f"  {name} ({total} bytes)", file=sys.stderr)

    folder = client.download_release(args.task, args.version, args.to, progress=progress)
    print(folder)
    return 0
