"""Finding 1: no template of ours holds inline script, event-handler or style attributes.

The Content-Security-Policy allows scripts and styles from our static files only, so such
markup would be blocked in the browser (and it is where injected script would hide).
"""

import re
from pathlib import Path

from django.conf import settings

INLINE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=|\sstyle\s*=|\shx-on|javascript:", re.I)


def _templates():
    root = Path(settings.BASE_DIR)
    yield from (root / "templates").rglob("*.html")
    for app in ("dynabench", "tasks", "annotation", "validation", "leaderboard"):
        yield from (root / app / "templates").rglob("*.html")


def test_no_template_has_inline_script_handlers_or_styles():
    found = [
        f"{path.relative_to(settings.BASE_DIR)}: {match.group(0).strip()}"
        for path in _templates()
        for match in INLINE.finditer(path.read_text())
    ]

    assert len(list(_templates())) > 20
    assert found == []


def test_htmx_runs_without_eval_or_injected_styles():
    base = (Path(settings.BASE_DIR) / "templates" / "base.html").read_text()
    annotation = (Path(settings.BASE_DIR) / "annotation" / "templates" / "annotation" / "_htmx_config.html").read_text()

    for html in (base, annotation):
        assert '"allowEval":false' in html and '"includeIndicatorStyles":false' in html
