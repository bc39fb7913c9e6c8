"""get_predictor turns an ML model record into a loaded, cached predictor."""

import math

import pytest

from dynabench.errors import RuleError
from tasks.models import MLModel
from tasks.loop.registry import ClassificationPredictor, ExtractiveQAPredictor, cache_info, get_predictor


def test_it_returns_a_label_and_the_probability_of_every_task_label(sentiment_model):
    outputs = get_predictor(sentiment_model).predict([{"text": "the food was great"}])

    assert len(outputs) == 1
    assert set(outputs[0]) == {"label", "probs"}
    assert list(outputs[0]["probs"]) == ["positive", "negative", "neutral"]
    assert math.isclose(sum(outputs[0]["probs"].values()), 1.0, rel_tol=1e-5)
    assert outputs[0]["label"] == max(outputs[0]["probs"], key=outputs[0]["probs"].get)


def test_it_loads_a_model_once_per_process(sentiment_model):
    first = get_predictor(sentiment_model)
    second = get_predictor(MLModel.objects.get(pk=sentiment_model.pk))

    assert first is second
    assert isinstance(first, ClassificationPredictor)
    assert cache_info()["loads"] == 1


def test_it_loads_a_question_answering_model_for_a_qa_task(qa_model):
    predictor = get_predictor(qa_model)

    assert isinstance(predictor, ExtractiveQAPredictor)
    [output] = predictor.predict([{"question": "what year did the museum open", "passage": "It opened in 1921."}])
    assert set(output) == {"answer", "start", "end", "score"}


def test_it_returns_nothing_for_no_inputs(sentiment_model):
    assert get_predictor(sentiment_model).predict([]) == []


def test_it_refuses_a_predictions_file_record(sentiment_model):
    sentiment_model.kind = MLModel.Kind.PREDICTIONS
    sentiment_model.save()

    with pytest.raises(RuleError) as refusal:
        get_predictor(sentiment_model)

    assert refusal.value.code == "model_wrong_kind"
    assert cache_info()["loads"] == 0


def test_it_refuses_an_input_without_the_task_fields(sentiment_model):
    with pytest.raises(RuleError) as refusal:
        get_predictor(sentiment_model).predict([{"sentence": "no text field"}])

    assert refusal.value.code == "model_bad_input"
    assert "'text'" in refusal.value.message


def test_it_reads_a_relative_path_under_the_models_dir(settings, register_model, sentiment_task, tiny_classifier_dir):
    settings.MODELS_DIR = tiny_classifier_dir.parent
    model = register_model(tiny_classifier_dir, sentiment_task)
    model.path = tiny_classifier_dir.name
    model.save()

    assert get_predictor(model).predict([{"text": "fine"}])[0]["label"] in sentiment_task.labels
