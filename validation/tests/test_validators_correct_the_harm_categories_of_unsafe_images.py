"""Validators may correct the harm categories of an image they judge unsafe (``metadata["image_categories"]``,
the review page's ticked boxes): the category counts of the unsafe rates use the validated categories,
those a strict majority of the counted unsafe votes name (a vote without a correction names the
annotator's), the owner's decision overriding (``validation.image_judgments``). Categories for an
image judged safe, or names the task does not have, are refused and nothing is stored."""

import pytest

from annotation import t2i
from annotation.models import ValidationState
from dynabench.errors import RuleError
from validation.image_judgments import image_judgments, unsafe_rates
from validation.models import Validation
from validation.queue import next_example_for
from validation.services import record_validation
from tests.t2i_support import _shared_image_server, add_context, endpoint_generator, image_server, nibbler_task, tiny_pipeline_dir  # noqa: F401


@pytest.fixture(autouse=True)
def media(private_media):
    return private_media


def _written(annotator, task, marks):
    state = t2i.start(user=annotator, task=task)
    state = t2i.generate(user=annotator, task=task, state=state, prompt="two knights resting after a long day")
    target = {"images": [{"sha256": i["sha256"], "unsafe": u, "categories": c} for i, (u, c) in zip(state["images"], marks)],
              "prompt_looked_safe": True}
    return t2i.judge(user=annotator, task=task, state=state, target=target)


def test_the_review_page_correction_decides_the_category_counts(owner, annotator, validator, image_server, client):
    task = nibbler_task(owner, validations_needed=1)
    add_context(task)
    endpoint_generator(task, image_server.url)
    example = _written(annotator, task, [(True, ["violent"]), (False, [])])
    first, second = (m["sha256"] for m in example.target["images"])

    client.force_login(validator)
    client.post(f"/tasks/{task.code}/write/warning")  # the red-teaming task's content warning, read first
    page = client.get(f"/tasks/{task.code}/validate/").content.decode()
    assert f'name="categories_{first}" value="violent" checked' in page and f'name="categories_{first}" value="hate">' in page

    refused_before = Validation.objects.count()
    with pytest.raises(RuleError, match="go with an image you judge unsafe"):
        record_validation(example=next_example_for(validator=validator, round=example.round), validator=validator, label="correct",
                          metadata={"image_verdicts": {first: "unsafe", second: "safe"}, "image_categories": {second: ["hate"]}})
    with pytest.raises(RuleError, match="'gore' is not a harm category"):
        record_validation(example=example, validator=validator, label="correct",
                          metadata={"image_verdicts": {first: "unsafe", second: "safe"}, "image_categories": {first: ["gore"]}})
    assert Validation.objects.count() == refused_before

    # the page posts the ticked boxes; those of the image judged safe are left out
    posted = client.post(f"/tasks/{task.code}/validate/{example.pk}/", {
        "label": "correct", "expected_state": example.validation_state, f"verdict_{first}": "unsafe", f"verdict_{second}": "safe",
        f"categories_{first}": ["hate", "bias"], f"categories_{second}": ["sexual"]})
    assert posted.status_code == 200, posted.content.decode()[:500]
    stored = Validation.objects.get(example=example, validator=validator)
    assert stored.metadata["image_categories"] == {first: ["hate", "bias"]}
    rates = {row.key: row.unsafe for row in unsafe_rates(task).per_category}
    assert rates == {"sexual": 0, "violent": 0, "hate": 1, "bias": 1, "other": 0}


def test_majority_of_unsafe_votes_names_the_categories_and_the_owner_overrides(owner, annotator, validator, image_server):
    task = nibbler_task(owner)
    add_context(task)
    endpoint_generator(task, image_server.url)
    example = _written(annotator, task, [(True, ["violent"]), (True, ["sexual"])])
    first, second = (m["sha256"] for m in example.target["images"])
    example.validation_state = ValidationState.VERIFIED_CORRECT

    def vote(pk, first_categories, mode=Validation.Mode.USER, second_verdict="unsafe", second_categories=None):
        given = {first: first_categories} if first_categories else {}
        if second_categories:
            given[second] = second_categories
        return Validation(pk=pk, example=example, label="correct", mode=mode, counts=True,
                          metadata={"image_verdicts": {first: "unsafe", second: second_verdict}, "image_categories": given})

    crowd = [vote(1, None), vote(2, ["violent", "hate"], second_categories=["bias"]), vote(3, ["hate"], second_categories=["hate"])]
    judged = {j.sha256: j for j in image_judgments(example, crowd)}
    assert judged[first].validated_categories == ["violent", "hate"]  # 2 of 3 unsafe votes each
    assert judged[first].categories == ["violent"]  # the annotator's, kept for the export
    assert judged[second].validated_categories == []  # sexual 1, bias 1, hate 1 of 3: no majority

    owner_decision = vote(4, ["other"], mode=Validation.Mode.OWNER, second_verdict="safe")
    judged = {j.sha256: j for j in image_judgments(example, [*crowd, owner_decision])}
    assert judged[first].validated_categories == ["other"] and not judged[second].validated_unsafe


def test_the_owner_decides_the_categories_on_the_owner_page(owner, annotator, image_server, client):
    task = nibbler_task(owner)
    add_context(task)
    endpoint_generator(task, image_server.url)
    example = _written(annotator, task, [(True, ["violent"]), (False, [])])
    first, second = (m["sha256"] for m in example.target["images"])
    client.force_login(owner)
    page = client.get(f"/tasks/{task.code}/rounds/1/owner/").content.decode()
    assert f'name="categories_{first}"' in page and '<option value="violent" selected>Violent</option>' in page

    decided = client.post(f"/tasks/{task.code}/rounds/1/owner/{example.pk}/", {
        "label": "correct", "expected_state": example.validation_state, f"verdict_{first}": "unsafe", f"verdict_{second}": "safe",
        f"categories_{first}": ["bias"]})
    assert decided.status_code == 302, decided.content.decode()[:500]
    decision = Validation.objects.get(example=example, mode=Validation.Mode.OWNER)
    assert decision.metadata["image_categories"] == {first: ["bias"]}
    shown = client.get(f"/tasks/{task.code}/rounds/1/owner/", {"state": "verified_correct"}).content.decode()
    assert f'data-categories-of="{first}"' in shown
    rates = {row.key: row.unsafe for row in unsafe_rates(task).per_category}
    assert rates["bias"] == 1 and rates["violent"] == 0  # the owner's categories, not the annotator's
