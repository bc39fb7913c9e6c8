"""The layers hold in templates too: an app's templates load only the template tag libraries of its
own app and of the apps below it (``.importlinter``'s order), never one above, which import-linter
cannot see. A page of a lower app that shows something of a higher one leaves an empty slot that the
project's ``templates/`` folder (found before the apps' folders) fills, as
``templates/validation/_person_badges.html`` does for community's badges."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: From the top down; apps on one line are independent of each other.
LAYERS = [("console", "cycle", "community"), ("leaderboard",), ("validation",), ("annotation",), ("tasks",), ("dynabench",)]
LOAD = re.compile(r"{%\s*load\s+([^%]+?)\s*%}")


def _libraries() -> dict[str, str]:
    """Tag library name -> the app that defines it."""
    return {path.stem: path.parent.parent.name for path in REPO.glob("*/templatetags/*.py") if path.stem != "__init__"}


def _loaded(text: str) -> set[str]:
    names = set()
    for match in LOAD.finditer(text):
        words = match.group(1).split()
        names |= {words[-1]} if "from" in words else set(words)
    return names


def test_no_app_template_loads_a_tag_library_of_an_app_above_or_beside_it():
    level = {app: depth for depth, apps in enumerate(LAYERS) for app in apps}
    libraries = _libraries()
    assert libraries.get("community_tags") == "community", "the tag libraries moved: update this test"
    upward = []
    for template in REPO.glob("*/templates/**/*.html"):
        app = template.relative_to(REPO).parts[0]
        if app not in level:
            continue
        for library in _loaded(template.read_text(encoding="utf-8")):
            owner = libraries.get(library)
            if owner in level and owner != app and level[owner] <= level[app]:
                upward.append(f"{template.relative_to(REPO)} loads {library} of {owner}")
    assert upward == []
