"""Issue 28 (small ones): an owner's API view said ``labels_hidden: false`` for a hidden set, while the
docs call a hidden set hidden. ``labels_hidden`` now says whether the set (or example) is hidden, for
every reader; ``targets_visible`` says whether this reader's requests get the targets."""

import pytest

from annotation.models import Example, ValidationState
from tests.api.conftest import client_for, sentiment_datasets  # noqa: F401  (dev public, test hidden, round 1)


@pytest.mark.parametrize("who", ["anonymous", "researcher", "owner", "admin_user"])
def test_a_hidden_set_says_so_to_every_reader_and_only_owners_get_its_targets(who, request, sentiment_datasets):
    user = None if who == "anonymous" else request.getfixturevalue(who)
    client = client_for(user)

    rows = {d["name"]: d for d in client.get("/api/v1/datasets", {"task": "sentiment"}).json()["results"]}
    hidden_items = client.get(f"/api/v1/datasets/{sentiment_datasets['hidden'].pk}/items").json()["results"]

    privileged = who in ("owner", "admin_user")
    assert (rows["sent-r1-test"]["labels_hidden"], rows["sent-r1-test"]["targets_visible"]) == (True, privileged)
    assert (rows["sent-r1-dev"]["labels_hidden"], rows["sent-r1-dev"]["targets_visible"]) == (False, True)
    assert all((item["target"] is not None) == privileged for item in hidden_items)


def test_an_example_in_a_hidden_split_says_so_to_its_tasks_owner_too(annotator, owner, sentiment_task, sentiment_datasets):
    round1 = sentiment_task.rounds.get(number=1)
    example = Example.objects.create(
        round=round1, context=round1.contexts.first(), author=annotator, input={"text": "x"}, target={"label": "positive"},
        model_output={"label": "negative"}, model_wrong=True, validation_state=ValidationState.VERIFIED_CORRECT, split="test",
    )

    as_author = client_for(annotator).get(f"/api/v1/examples/{example.pk}").json()
    as_owner = client_for(owner).get(f"/api/v1/examples/{example.pk}").json()

    assert (as_author["labels_hidden"], as_author["target"]) == (True, None)
    assert (as_owner["labels_hidden"], as_owner["target"]) == (True, {"label": "positive"})
