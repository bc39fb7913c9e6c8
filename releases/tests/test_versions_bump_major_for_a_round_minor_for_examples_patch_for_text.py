"""``next_version``: the first release is 1.0.0; a new round bumps the major version, examples added,
removed or relabelled the minor, only the card's text the patch; nothing changed is refused.
``changes_between`` names the uids of each change."""

import pytest

from releases.calculations import changes_between, content_digest, next_version

OLD = {(1, "dev", "a"): ("positive",), (1, "dev", "b"): ("negative",), (1, "dev", "c"): ("neutral",)}


def test_next_version_of_each_kind_of_change():
    relabelled = changes_between(OLD, {**OLD, (1, "dev", "b"): ("positive",)})
    added_round = changes_between(OLD, {**OLD, (2, "dev", "x"): ("neutral",)})
    removed = changes_between(OLD, {k: v for k, v in OLD.items() if k[2] != "c"})
    same = changes_between(OLD, dict(OLD))

    assert next_version(None, changes_between(None, OLD), text_changed=False) == "1.0.0"
    assert (relabelled.relabelled, relabelled.added, relabelled.removed) == (["b"], [], [])
    assert next_version("1.0.0", relabelled, text_changed=False) == "1.1.0"
    assert added_round.new_rounds == [2] and next_version("1.1.0", added_round, text_changed=False) == "2.0.0"
    assert removed.removed == ["c"] and next_version("2.3.1", removed, text_changed=True) == "2.4.0"
    assert next_version("1.1.0", same, text_changed=True) == "1.1.1"
    with pytest.raises(ValueError, match="nothing changed since 1.1.0"):
        next_version("1.1.0", same, text_changed=False)


def test_the_content_digest_does_not_depend_on_the_files_order():
    files = [{"name": "data/round1-dev.jsonl", "sha256": "a" * 64}, {"name": "data/round1-dev.parquet", "sha256": "b" * 64}]

    assert content_digest(files) == content_digest(list(reversed(files)))
    assert content_digest(files) != content_digest([files[0]])
