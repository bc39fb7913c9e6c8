"""A release's ``croissant.json`` carries the Croissant RAI fields, ``mlcroissant validate`` accepts
it without warnings, and beside the downloaded files ``mlcroissant.Dataset`` reads each round's
records (every file's sha256 checked)."""

import json

from releases.tests.support import download_folder, released
from tests.croissant_support import records_script, validate_and_load

LOAD = records_script("round2-dev")


def test_the_release_s_croissant_validates_and_loads_round_two(dynasent_task, owner, tmp_path):
    release = released(dynasent_task, owner)
    folder = download_folder(release, tmp_path / "release")
    description = json.loads((folder / "croissant.json").read_text())

    validated, loaded = validate_and_load(folder / "croissant.json", LOAD, tmp_path / "cache")

    rai = {key for key in description if key.startswith("rai:")}
    assert {"rai:dataCollection", "rai:dataAnnotationProtocol", "rai:dataLimitations", "rai:dataUseCases",
            "rai:personalSensitiveInformation", "rai:dataReleaseMaintenancePlan"} <= rai
    said = validated.stdout + validated.stderr
    assert validated.returncode == 0 and "Done." in said and "WARNING" not in said, said
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    records = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert len(records) == 720
    row = next(r for r in records if r["uid"] == "r2-0018536")
    assert row["label"] == "neutral" and int(row["round"]) == 2
    assert row["text"] == "The vegetable risotto would have to be listed as a vegetarian special."
