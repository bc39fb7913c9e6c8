"""Every folder that holds test files is in pytest.ini's ``testpaths``: ``make test`` (and CI) runs
pytest without paths, so an app left out there would have its tests silently never run (community's
were, for a whole release)."""

import configparser
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_every_top_level_folder_with_tests_is_in_testpaths():
    config = configparser.ConfigParser()
    config.read(REPO / "pytest.ini")
    testpaths = set(config["pytest"]["testpaths"].split())

    with_tests = {
        path.relative_to(REPO).parts[0]
        for path in REPO.rglob("test_*.py")
        if not {".venv", "node_modules", ".git"} & set(path.relative_to(REPO).parts)
    }
    assert with_tests, "no test file found: the repository layout changed"
    assert with_tests <= testpaths, f"folders with tests that pytest never collects: {sorted(with_tests - testpaths)}"
