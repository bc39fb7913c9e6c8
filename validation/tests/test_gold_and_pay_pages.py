"""The owner's gold and pay pages: owners only, marking gold items with clear refusals, pay
settings checked, bonus files downloaded."""

from django.urls import reverse

from annotation.tests.crowd_helpers import enter
from annotation.models import CrowdStudy
from validation.models import GoldItem, RoundPay
from validation.services import record_validation
from validation.tests.conftest import make_example


def test_only_owners_see_the_gold_and_pay_pages_and_files(client, sentiment_task, validator):
    client.force_login(validator)
    assert client.get(reverse("validation:gold", args=["sentiment"])).status_code == 403
    assert client.get(reverse("validation:pay", args=["sentiment", 1])).status_code == 403
    assert client.get(reverse("validation:pay_file", args=["sentiment", 1, "prolific"])).status_code == 403


def test_an_owner_marks_a_decided_example_gold_and_is_told_why_not_otherwise(client, sentiment_task, annotator, owner):
    decided = make_example(sentiment_task, annotator, text="Decided")
    record_validation(example=decided, validator=owner, label="incorrect", mode="owner")
    pending = make_example(sentiment_task, annotator, text="Not yet")
    client.force_login(owner)

    ok = client.post(reverse("validation:gold", args=["sentiment"]), {"example": decided.pk, "active": "on"})
    assert ok.status_code == 302 and GoldItem.objects.get().verdict == "incorrect"
    refused = client.post(reverse("validation:gold", args=["sentiment"]), {"example": pending.pk, "active": "on"})
    assert refused.status_code == 400 and b"only an example validated correct or incorrect can be gold" in refused.content
    missing = client.post(reverse("validation:gold", args=["sentiment"]), {"example": 999999})
    assert missing.status_code == 400 and b"has no example 999999" in missing.content

    page = client.get(reverse("validation:gold", args=["sentiment"]))
    assert page.status_code == 200 and f'<tr data-gold-example="{decided.pk}">'.encode() in page.content


def test_an_owner_sets_pay_and_downloads_the_bonus_files(client, sentiment_task, owner):
    round = sentiment_task.current_round()
    study = CrowdStudy.objects.create(round=round, platform="prolific", required=1, platform_study_id="T")
    session = enter(study, "PIDX", "S")
    example = make_example(sentiment_task, session.worker.user, model_wrong=True)
    record_validation(example=example, validator=owner, label="correct", mode="owner")
    client.force_login(owner)

    bad = client.post(reverse("validation:pay", args=["sentiment", 1]), {
        "currency": "GBP", "per_example": "0.5", "per_validation": "abc", "bonus_per_fooling": "1", "reason": ""})
    assert bad.status_code == 400 and b"per_validation must be" in bad.content and not RoundPay.objects.exists()
    saved = client.post(reverse("validation:pay", args=["sentiment", 1]), {
        "currency": "GBP", "per_example": "0.5", "per_validation": "0.1", "bonus_per_fooling": "1", "reason": ""})
    assert saved.status_code == 302

    page = client.get(reverse("validation:pay", args=["sentiment", 1]))
    assert page.status_code == 200 and b'id="total-prolific">1.50<' in page.content and b"PIDX" not in page.content
    bonus = client.get(reverse("validation:pay_file", args=["sentiment", 1, "prolific"]))
    assert bonus["Content-Type"] == "text/csv" and bonus.content == b"PIDX,1.50\n"
    summary = client.get(reverse("validation:pay_file", args=["sentiment", 1, "summary"])).content.decode().splitlines()
    assert summary[-1] == "TOTAL,1,0,1,0.50,1.00,1.50"


def test_an_owner_writes_a_new_gold_item_on_the_page(client, sentiment_task, owner, tiny_classifier_dir):
    from tasks.models import MLModel

    model = MLModel.objects.create(task=sentiment_task, name="tiny", kind=MLModel.Kind.HF_DIRECTORY, path=str(tiny_classifier_dir))
    sentiment_task.current_round().target_models.add(model)
    client.force_login(owner)

    empty = client.post(reverse("validation:gold", args=["sentiment"]), {"supply": "1", "verdict": "correct", "input_text": "", "label": "positive"})
    assert empty.status_code == 400 and not GoldItem.objects.exists()
    done = client.post(reverse("validation:gold", args=["sentiment"]), {
        "supply": "1", "verdict": "correct", "input_text": "Lovely staff, lovely room.", "label": "positive"})
    assert done.status_code == 302, done.content.decode()[-1500:]
    item = GoldItem.objects.get()
    assert (item.verdict, item.example.author, item.example.validation_state) == ("correct", owner, "verified_correct")
    assert item.example.model_output["label"] in sentiment_task.labels  # the model in the loop answered it
