"""Issue 28 (small ones): ``GET /api/v1/me`` counted an author's examples in hidden splits, so the
totals less the examples the API shows told the author how the hidden ones did (fooled, verified).
The author's own figures now leave those examples out; an owner of the task still sees them all."""

from annotation.models import Example, ValidationState
from tests.api.conftest import client_for, sentiment_datasets  # noqa: F401  (dev public, test hidden, round 1)


def _example(round, author, *, split, fooled, state):
    return Example.objects.create(
        round=round, context=round.contexts.first(), author=author, input={"text": "x"}, target={"label": "positive"},
        model_output={"label": "negative" if fooled else "positive"}, model_wrong=fooled, validation_state=state, split=split,
    )


def test_an_authors_figures_leave_out_their_examples_in_hidden_splits(annotator, owner, sentiment_task, sentiment_datasets):
    round1 = sentiment_task.rounds.get(number=1)
    _example(round1, annotator, split="dev", fooled=True, state=ValidationState.VERIFIED_CORRECT)  # public split
    _example(round1, annotator, split="test", fooled=True, state=ValidationState.VERIFIED_CORRECT)  # hidden split
    _example(round1, annotator, split="test", fooled=False, state=ValidationState.VERIFIED_INCORRECT)  # hidden split
    _example(round1, owner, split="test", fooled=True, state=ValidationState.VERIFIED_CORRECT)  # the owner's own

    mine = client_for(annotator).get("/api/v1/me").json()
    owners = client_for(owner).get("/api/v1/me").json()

    assert mine["examples"] == {"collected": 1, "fooled": 1, "verified_fooled": 1, "vmer": 1.0, "mer": 1.0}
    assert mine["examples_by_task"] == [{"task": "sentiment", **mine["examples"]}]
    listed = client_for(annotator).get("/api/v1/examples", {"mine": "true"}).json()["results"]
    assert sorted(e["model_wrong"] for e in listed if not e["labels_hidden"]) == [True]  # what the figures agree with
    assert owners["examples"]["collected"] == 1 and owners["examples"]["verified_fooled"] == 1  # owns the task: counted


def test_nothing_changes_while_no_split_is_hidden(annotator, sentiment_task):
    round1 = sentiment_task.rounds.get(number=1)
    _example(round1, annotator, split="test", fooled=True, state=ValidationState.VERIFIED_CORRECT)

    assert client_for(annotator).get("/api/v1/me").json()["examples"]["verified_fooled"] == 1
