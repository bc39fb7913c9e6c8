"""warm_up loads the models in the loop of open rounds; a broken model is skipped and counted."""

import shutil

from tasks.models import Round
from tasks.loop.registry import cache_info, models_in_the_loop, warm_up


def test_it_loads_the_models_in_the_loop_of_open_rounds(sentiment_model, nli_model, qa_model, sentiment_task, nli_task):
    sentiment_task.rounds.get(number=1).target_models.add(sentiment_model)
    nli_round = nli_task.rounds.get(number=1)
    nli_round.status = Round.Status.CLOSED
    nli_round.save()
    nli_round.target_models.add(nli_model)

    summary = warm_up(models_in_the_loop())

    assert summary == "Warmed up 1 model(s), 0 failed."
    assert [key[0] for key in cache_info()["models"]] == [sentiment_model.pk]


def test_it_skips_a_model_that_cannot_be_loaded(tmp_path, register_model, sentiment_task, sentiment_model):
    broken = register_model(shutil.copytree(sentiment_model.path, tmp_path / "broken"), sentiment_task)
    (tmp_path / "broken" / "model.safetensors").unlink()

    summary = warm_up([broken, sentiment_model])

    assert summary == "Warmed up 1 model(s), 1 failed."
    assert [key[0] for key in cache_info()["models"]] == [sentiment_model.pk]
