"""The registry hands back a predictor for an endpoint model that answers like a local one, through a
real OpenAI-compatible server: the kind's output, plus what answered (parameters, raw answer, latency,
token counts); a second ask of the same input comes from the response cache."""

import pytest

from tasks.kinds.base import first_label_in
from tasks.models import EndpointResponse
from tasks.loop.registry import get_predictor


@pytest.mark.django_db
@pytest.mark.parametrize("api", ["chat", "completions"])
def test_a_classification_endpoint_answers_with_a_label_parsed_from_its_text(sentiment_task, make_endpoint_model, endpoint_server, api):
    model = make_endpoint_model(sentiment_task, api=api)

    [output] = get_predictor(model).predict([{"text": "the food was great"}])

    [request] = endpoint_server.requests
    assert request["path"] == ("/v1/chat/completions" if api == "chat" else "/v1/completions")
    assert request["body"]["model"] == "tiny-gpt2" and request["body"]["seed"] == 1 and request["body"]["max_tokens"] == 8
    info = output["endpoint"]
    assert isinstance(info["raw"]["text"], str) and info["raw"]["finish_reason"] == "stop"
    assert output["label"] == first_label_in(sentiment_task.config, info["raw"]["text"])
    assert info["params"] == {"temperature": 0.0, "max_tokens": 8, "seed": 1}
    assert info["latency_ms"] > 0 and info["prompt_tokens"] > 0 and info["completion_tokens"] >= 1
    assert info["cached"] is False
    assert EndpointResponse.objects.filter(model=model).count() == 1


@pytest.mark.django_db
def test_the_same_input_is_answered_from_the_cache_without_a_second_request(sentiment_task, make_endpoint_model, endpoint_server):
    model = make_endpoint_model(sentiment_task)
    first = get_predictor(model).predict([{"text": "the room was dirty"}])[0]
    again = get_predictor(model).predict([{"text": "the room was dirty"}, {"text": "the staff were friendly"}])

    assert len(endpoint_server.requests) == 2
    assert again[0]["label"] == first["label"] and again[0]["endpoint"]["cached"] is True
    assert again[1]["endpoint"]["cached"] is False


def test_the_label_rule_takes_the_earliest_whole_word_label(sentiment_task):
    config = sentiment_task.config
    assert first_label_in(config, "I would say Negative, not positive") == "negative"
    assert first_label_in(config, "nonpositive things") is None
    assert first_label_in(config, "") is None


@pytest.mark.django_db
def test_a_qa_endpoint_answers_with_a_span_of_the_passage_or_no_offsets(qa_task, make_endpoint_model):
    qa = make_endpoint_model(qa_task)
    [answer] = get_predictor(qa).predict([{"question": "what year did the museum open", "passage": "the museum opened in 1921"}])
    assert set(answer) >= {"answer", "score", "endpoint"}
    if "start" in answer:
        assert "the museum opened in 1921"[answer["start"]:answer["end"]] == answer["answer"]
