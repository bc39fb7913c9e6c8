"""Each task kind is a short module of the ``tasks/kinds/`` package: the protocol and registry in
``base.py``, one module per kind. A module past 400 lines is a sign that a second concern moved in
(a shared helper belongs in ``base.py``, a new kind in a module of its own)."""

from pathlib import Path

import tasks.kinds

PACKAGE = Path(tasks.kinds.__file__).parent
LIMIT = 400


def test_every_kind_is_registered_from_its_own_module():
    modules = {spec.__class__.__module__ for spec in tasks.kinds.KINDS.values()}
    assert "tasks.kinds.base" not in modules
    assert len(modules) == len(tasks.kinds.KINDS)


def test_no_module_of_the_kinds_package_is_longer_than_the_limit():
    lengths = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in PACKAGE.glob("*.py")}
    assert {"base.py", "classification.py", "extractive_qa.py", "generation.py", "data_centric.py"} <= set(lengths)
    assert {name: n for name, n in lengths.items() if n > LIMIT} == {}
