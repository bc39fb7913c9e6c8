"""No hidden target leaves the server by any GET route: every page, export, API operation and download
is fetched as anonymous, annotator, validator and researcher, for a task with a hidden test set and a
public dev set, and no response carries a hidden label; the task's owners and admins do get them.

The walk enumerates Django's URL patterns (so a new route is walked without editing this file), fills
each route's parameters with the objects of the hidden data, and looks for a marker that only the
hidden targets carry: in the hidden dataset's items, in the example that went into the hidden split,
and in the stored predictions file of a run on the hidden set.
"""

import json

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotation.models import Example, ValidationState
from leaderboard.jobs import evaluate_model, evaluate_run
from leaderboard.models import EvaluationRun, LeaderboardConfig
from leaderboard.services import submit_predictions
from tasks.models import Dataset, DatasetItem, Round

MARKER = "HIDDEN-TARGET-5c1e"
PUBLIC_MARKER = "PUBLIC-TARGET-9d2b"
SKIPPED_PREFIXES = ("django-rq", "accounts/")  # the job dashboard (superusers only) and the login pages


@pytest.fixture
def hidden_world(settings, tmp_path, sentiment_task, annotator, researcher, owner, sentiment_model):
    """Round 1 closed: a hidden test set and a published dev set (both scoring); the annotator's example in the hidden split;
    the researcher's published predictions evaluated on both sets; round 2 open."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MODEL_SUBMISSIONS_PER_DAY = 100
    round1 = sentiment_task.rounds.get(number=1)
    Round.objects.filter(pk=round1.pk).update(status=Round.Status.CLOSED)
    hidden = Dataset.objects.create(task=sentiment_task, round=round1, name="sentiment-r1-test", split="test")
    public = Dataset.objects.create(task=sentiment_task, round=round1, name="sentiment-r1-dev", split="dev",
                                    label_visibility="public")  # a scoring set whose labels the owner published
    assert hidden.labels_hidden and not public.labels_hidden
    for dataset, marker in ((hidden, MARKER), (public, PUBLIC_MARKER)):
        DatasetItem.objects.bulk_create(
            DatasetItem(dataset=dataset, uid=f"{dataset.name}-{i}", input={"text": f"{dataset.name} sentence {i}"},
                        target={"label": label, "marker": marker}, tag="food", metadata={"votes": marker})
            for i, label in enumerate(["negative", "positive"])
        )
    example = Example.objects.create(
        round=round1, context=round1.contexts.first(), author=annotator, input={"text": "my hidden example"},
        target={"label": "negative", "marker": MARKER}, model=sentiment_model,
        model_output={"label": "positive", "marker": MARKER}, model_wrong=True, metadata={"example_explanation": MARKER},
        validation_state=ValidationState.VERIFIED_CORRECT, split="test",
    )
    rows = [{"dataset": d.name, "uid": f"{d.name}-{i}", "label": "negative"} for d in (hidden, public) for i in range(2)]
    upload = "".join(json.dumps(r) + "\n" for r in rows).encode()
    model = submit_predictions(user=researcher, task=sentiment_task, upload=upload, name="guesses", published=True)
    evaluate_model(model.pk)
    for run in EvaluationRun.objects.filter(model=model):
        evaluate_run(run.pk)
    hidden_run = EvaluationRun.objects.get(model=model, dataset=hidden)
    assert hidden_run.status == "done" and hidden_run.predictions_file
    config = LeaderboardConfig.objects.create(task=sentiment_task, owner=researcher, name="fork", metric_weights={"performance": 1})
    round2 = Round.objects.create(task=sentiment_task, number=2, status=Round.Status.OPEN)
    round2.contexts.create(uid="r2-c1", data={"prompt": "A new prompt."})
    return {
        "task": sentiment_task, "hidden": hidden, "public": public, "example": example, "model": model, "run": hidden_run,
        "config": config, "annotator": annotator,
    }


def _get_routes(resolver=None, prefix="", namespace=""):
    """Yield ``(route text, url name, parameter names)`` of every URL pattern, namespaces included."""
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        text = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _get_routes(entry, text, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            yield text, namespace + entry.name, list(entry.pattern.regex.groupindex)


def _value(name, route, world):
    """The object a route parameter points at: the hidden one where there is a choice."""
    hidden, example, model, run = world["hidden"], world["example"], world["model"], world["run"]
    by_name = {
        "code": "sentiment", "task_code": "sentiment", "number": 1, "round_number": 1, "run_id": run.pk,
        "example_id": example.pk, "username": world["annotator"].username, "slug": world["config"].slug, "format": "json",
        "media": "images",
    }
    if name in by_name:
        return by_name[name]
    if name in ("pk", "object_id"):
        for key, pk in (("dataset", hidden.pk), ("example", example.pk), ("model", model.pk), ("evaluationrun", run.pk),
                        ("datasetitem", hidden.items.first().pk)):
            if key in route.replace("my/examples", "example").replace("/models/", "/model/"):
                return pk
        return example.pk
    return None


def _urls(world):
    urls = set()
    for route, name, params in _get_routes():
        if route.startswith(SKIPPED_PREFIXES) or "format" in params and route.startswith("api/v1/"):
            continue
        values = {p: _value(p, route, world) for p in params}
        if any(v is None for v in values.values()):
            continue
        try:
            urls.add(reverse(name, kwargs=values))
        except Exception:  # noqa: BLE001 - a pattern whose parameters are not all named (admin's catch-all)
            continue
    urls |= {
        f"/api/v1/datasets/{world['hidden'].pk}/items?page_size=1000",
        f"/api/v1/datasets/{world['public'].pk}/items?page_size=1000",
        "/api/v1/examples?page_size=1000", f"/api/v1/tasks/sentiment/rounds/1/examples?page_size=1000",
        "/my/examples/?task=sentiment", f"/models/{world['model'].pk}/runs/{world['run'].pk}/predictions/",
    }
    return sorted(urls)


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


def _walk(client, world):
    """Every GET route's body, by URL (following nothing: a redirect's body is what it is)."""
    return {url: _body(client.get(url)) for url in _urls(world)}


@pytest.mark.parametrize("who", ["anonymous", "annotator", "validator", "researcher"])
def test_no_route_shows_a_hidden_target(who, hidden_world, request):
    client = Client()
    if who != "anonymous":
        client.force_login(hidden_world["annotator"] if who == "annotator" else request.getfixturevalue(who))

    bodies = _walk(client, hidden_world)

    leaks = [url for url, body in bodies.items() if MARKER in body]
    assert leaks == [], f"hidden targets reached {who} through {leaks}"
    assert len(bodies) > 60  # the walk covers the pages, exports, API and admin routes
    assert any("sentiment-r1-test sentence 0" in body for body in bodies.values())  # the hidden inputs are public
    assert any(PUBLIC_MARKER in body for body in bodies.values())  # and the public targets are given


def test_the_researcher_downloads_answers_but_no_targets_or_correctness(hidden_world, researcher):
    client = Client()
    client.force_login(researcher)

    body = _body(client.get(f"/models/{hidden_world['model'].pk}/runs/{hidden_world['run'].pk}/predictions/"))

    rows = [json.loads(line) for line in body.splitlines()]
    assert rows == [{"uid": "sentiment-r1-test-0", "prediction": {"label": "negative"}},
                    {"uid": "sentiment-r1-test-1", "prediction": {"label": "negative"}}]


def test_the_author_no_longer_sees_the_label_once_the_split_is_hidden(hidden_world):
    client = Client()
    client.force_login(hidden_world["annotator"])
    example = hidden_world["example"]

    listing = client.get("/my/examples/").content.decode()
    again = client.get(f"/my/examples/{example.pk}/again").content.decode()

    row = listing.split(f'data-example-id="{example.pk}"')[1].split("</tr>")[0]
    assert "data-labels-hidden" in row and "data-outcome" not in row and "negative" not in row
    assert "my hidden example" in again and "checked" not in again


@pytest.mark.parametrize("who", ["owner", "admin_user"])
def test_owners_and_admins_see_the_hidden_targets(who, hidden_world, request):
    client = Client()
    client.force_login(request.getfixturevalue(who))

    items = client.get(f"/api/v1/datasets/{hidden_world['hidden'].pk}/items").json()["results"]
    export = client.get("/tasks/sentiment/rounds/1/export.jsonl")

    assert items[0]["target"] == {"label": "negative", "marker": MARKER}
    assert MARKER in _body(export)
