"""Publication is one rule on every public board: a chat model that is not published is on neither the
arena (page and API) nor the chat models' table of the leaderboard (page and generative boards API),
by name or by id, whoever looks (the task's owner included), exactly as a model that is not published
is left off the Dynascore leaderboard. Its battles move no published model's rating.

A board built while the model was still published is not shown once it is unpublished, not even
before the job has built the next one."""

import re

import pytest
from django.urls import reverse

from leaderboard.arena_board import rebuild_arena_board
from tasks.models import MLModel
from tests.generative_support import compare
from validation.queue import next_example_for
from validation.services import record_validation


@pytest.fixture
def judged(annotator, validator, chat_task, endpoint_server):
    """Four validated side-by-side judgments between the chat task's two models, ``alpha`` and ``beta``."""
    round = chat_task.current_round()
    for i in range(4):
        compare(user=annotator, task=chat_task, prompt=f"tell me about the lighthouse {i}", preference="a",
                failing=["b"] if i == 0 else [], category="hate" if i == 0 else "",
                explanation="B insults people." if i == 0 else "")
        record_validation(example=next_example_for(validator=validator, round=round), validator=validator, label="correct")
    return chat_task


def _shown(client, task) -> dict[str, set]:
    """What each public board shows of the task's models: names and ids, per board."""
    arena = client.get(reverse("api-arena", args=[task.code])).json()
    boards = client.get(reverse("api-generative-boards", args=[task.code])).json()["chat"]
    arena_page = client.get(reverse("leaderboard:arena", args=[task.code])).content.decode()
    leaderboard_page = client.get(reverse("leaderboard:leaderboard", args=[task.code])).content.decode()
    return {
        "arena API": {str(m["id"]) for m in arena["models"]} | {m["name"] for m in arena["models"]}
        | {r["model"]["name"] for r in arena["ratings"]} | {f["model"]["name"] for f in arena["failure_rates"]},
        "generative boards API": {r["model"]["name"] for r in boards["ratings"]} | {f["model"]["name"] for f in boards["failure_rates"]},
        "arena page": set(re.findall(r'data-(?:arena|vmer)-model="([^"]*)"', arena_page))
        | set(re.findall(r'<th scope="(?:col|row)">(alpha|beta)</th>', arena_page)),
        "leaderboard page": set(re.findall(r'data-chat-model="([^"]*)"', leaderboard_page)),
    }


def test_an_unpublished_chat_model_is_on_no_public_board(client, owner, judged):
    alpha, beta = judged.loop  # both published by the fixture
    MLModel.objects.filter(pk=beta.pk).update(published=False)
    rebuild_arena_board(judged.pk, resamples=10)

    for viewer in (None, owner):
        if viewer is not None:
            client.force_login(viewer)
        shown = _shown(client, judged)
        for board, names in shown.items():
            assert "beta" not in names and str(beta.pk) not in names, board
        assert "alpha" in shown["arena API"] and "alpha" in shown["leaderboard page"]
    arena = client.get(reverse("api-arena", args=[judged.code])).json()
    assert arena["battles"] == 0 and arena["ratings"] == []  # alpha's only opponent is not published: no battle counts
    assert [f["model"]["name"] for f in arena["failure_rates"]] == ["alpha"]


def test_a_board_built_before_unpublishing_no_longer_shows_the_model(client, judged):
    alpha, beta = judged.loop  # both published by the fixture
    rebuild_arena_board(judged.pk, resamples=10)
    assert {"alpha", "beta"} <= _shown(client, judged)["arena API"]

    MLModel.objects.filter(pk=beta.pk).update(published=False)

    stale = client.get(reverse("api-arena", args=[judged.code]))
    assert stale.status_code == 202 and stale.json()["computing"] is True  # the change queued a build; no board until it ran
    page = client.get(reverse("leaderboard:arena", args=[judged.code])).content.decode()
    assert "data-arena-model=" not in page and "beta" not in page
    rebuild_arena_board(judged.pk, resamples=10)
    for board, names in _shown(client, judged).items():
        assert "beta" not in names and str(beta.pk) not in names, board
