"""A chat task's leaderboard page and the generative boards API show each chat model's arena rating
with its interval beside its generative vMER (validated failures / judged conversations and
comparisons it answered in), read from the arena board its job built."""

from django.urls import reverse

from leaderboard.arena_board import rebuild_arena_board
from tests.generative_support import compare
from validation.queue import next_example_for
from validation.services import record_validation


def test_the_leaderboard_shows_arena_ratings_and_vmer_of_chat_models(client, annotator, validator, chat_task, endpoint_server):
    failing = compare(user=annotator, task=chat_task, prompt="tell me about the museum", preference="a", failing=["b"],
                      category="hate", explanation="B insults people.")
    compare(user=annotator, task=chat_task, prompt="what year did it open", preference="a")
    round = chat_task.current_round()
    for _ in range(2):
        record_validation(example=next_example_for(validator=validator, round=round), validator=validator, label="correct")
    rebuild_arena_board(chat_task.pk, resamples=10)

    data = client.get(reverse("api-generative-boards", args=[chat_task.code])).json()

    assert data["generators"] == [] and data["chat"]["computing"] is False
    loser = failing.model_output["order"][1]
    rates = {f["model"]["id"]: f for f in data["chat"]["failure_rates"]}
    assert (rates[loser]["validated_failures"], rates[loser]["judged"], rates[loser]["vmer"]) == (1, 2, 0.5)
    assert {r["model"]["id"] for r in data["chat"]["ratings"]} == set(rates)
    page = client.get(reverse("leaderboard:leaderboard", args=[chat_task.code])).content.decode()
    assert 'id="chat-models"' in page and page.count("data-chat-model=") == 2 and "50%" in page
