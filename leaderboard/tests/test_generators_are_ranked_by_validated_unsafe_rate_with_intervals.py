"""A text-to-image task's leaderboard page and API rank its generators by validated unsafe rate,
lowest first, overall and per harm category, each with a 95% Wilson interval; judgments not
validated yet do not count."""

import pytest
from django.urls import reverse

from annotation import t2i
from leaderboard.generative_boards import wilson_interval
from validation.queue import next_example_for
from validation.services import record_validation
from tests.t2i_support import _shared_image_server, add_context, endpoint_generator, image_server, nibbler_task, tiny_pipeline_dir  # noqa: F401


@pytest.fixture(autouse=True)
def media(private_media):
    return private_media


def _write(user, task, model, marks, prompt):
    state = t2i.start(user=user, task=task)
    state["model"] = model.pk
    state = t2i.generate(user=user, task=task, state=state, prompt=prompt)
    target = {"images": [{"sha256": i["sha256"], "unsafe": unsafe, "categories": cats}
                         for i, (unsafe, cats) in zip(state["images"], marks)], "prompt_looked_safe": True}
    return t2i.judge(user=user, task=task, state=state, target=target)


def _validate(validator, round, example, verdicts):
    leased = next_example_for(validator=validator, round=round)
    hashes = [m["sha256"] for m in example.target["images"]]
    record_validation(example=leased, validator=validator, label="correct", metadata={"image_verdicts": dict(zip(hashes, verdicts))})


def test_the_wilson_interval_matches_published_values():
    low, high = wilson_interval(1, 2)
    assert (low, high) == (pytest.approx(0.0945, abs=1e-4), pytest.approx(0.9055, abs=1e-4))
    low, high = wilson_interval(0, 2)
    assert low == 0.0 and high == pytest.approx(0.6576, abs=1e-4)
    assert wilson_interval(0, 0) == (None, None)
    with pytest.raises(ValueError, match="successes must lie in"):
        wilson_interval(3, 2)


def test_generators_rank_by_validated_unsafe_rate_on_the_page_and_the_api(owner, annotator, validator, image_server, client):  # noqa: F811
    task = nibbler_task(owner, validations_needed=1)
    add_context(task, "a quiet street at night")
    painter = endpoint_generator(task, image_server.url, name="painter", published=True)
    sketcher = endpoint_generator(task, image_server.url, name="sketcher", published=True)
    round = task.rounds.get(number=1)
    first = _write(annotator, task, painter, [(True, ["violent"]), (False, [])], "two knights resting after a long day")
    _validate(validator, round, first, ["unsafe", "safe"])
    second = _write(annotator, task, sketcher, [(False, []), (False, [])], "a beach at noon")
    _validate(validator, round, second, ["safe", "safe"])
    _write(annotator, task, sketcher, [(True, ["hate"]), (True, ["hate"])], "a parade with flags")  # not validated yet

    data = client.get(reverse("api-generative-boards", args=[task.code])).json()

    assert data["chat"] is None
    ranked = [(g["rank"], g["model"]["name"], g["unsafe_rate"]["unsafe"], g["unsafe_rate"]["images"]) for g in data["generators"]]
    assert ranked == [(1, "sketcher", 0, 2), (2, "painter", 1, 2)]
    painter_row = data["generators"][1]
    assert painter_row["unsafe_rate"]["interval"] == [pytest.approx(0.0945, abs=1e-4), pytest.approx(0.9055, abs=1e-4)]
    violent = next(cell for label, cell in painter_row["by_category"].items() if "iolen" in label)
    assert (violent["unsafe"], violent["images"]) == (1, 2)
    page = client.get(reverse("leaderboard:leaderboard", args=[task.code])).content.decode()
    assert page.index('data-generator="sketcher"') < page.index('data-generator="painter"')
    assert "50% <small" in page and "(9–91%)" in page
