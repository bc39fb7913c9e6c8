"""The dataset checksum that keys ``perturbable_counts`` leaves the items' metadata out, yet audio
fairness counts speaker groups from it: the same clips, uids and targets with speaker groups added
are counted anew, so fairness becomes measurable instead of staying "not applicable"."""

from leaderboard import scoring
from leaderboard.scoring import perturbable_counts
from tests.audio_support import audio_task

CHECKSUM = "c" * 64


def _items(speakers):
    return [{"uid": f"u{i}", "input": {"clip": f"{i:064x}"}, "target": {"label": "stop"}, "tag": "", "metadata": meta}
            for i, meta in enumerate(speakers)]


def test_speaker_groups_added_to_the_same_items_are_counted(owner, monkeypatch):
    monkeypatch.setattr(scoring, "_COUNTED", {})
    task = audio_task(owner)

    without = perturbable_counts(task, _items([{}] * 4), dataset_checksum=CHECKSUM)
    grouped = perturbable_counts(task, _items([{"speaker": "a"}] * 2 + [{"speaker": "b"}] * 2), dataset_checksum=CHECKSUM)

    assert without == {"robustness": 4, "fairness": 0}
    assert grouped == {"robustness": 4, "fairness": 4}
