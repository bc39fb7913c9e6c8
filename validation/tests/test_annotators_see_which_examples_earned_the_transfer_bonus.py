"""An annotator's own page lists how far each of their validated examples transfers, and which earned the
round's transfer bonus."""

from annotation.models import TransferRate
from validation import pay
from validation.services import record_validation
from validation.tests.conftest import make_example


def test_the_page_marks_the_examples_that_fool_at_least_k_other_models(sentiment_task, annotator, owner, outsider, client):
    round = sentiment_task.current_round()
    strong, weak = make_example(sentiment_task, annotator, text="strong"), make_example(sentiment_task, annotator, text="weak")
    for example, fooled in ((strong, 2), (weak, 0)):
        record_validation(example=example, validator=owner, label="correct", mode="owner")
        TransferRate.objects.create(example=example, fooled=fooled, tried=2)
    pay.set_round_pay(round=round, acting_user=owner, currency="GBP", per_example="0", per_validation="0", bonus_per_fooling="0",
                      transfer_min_models="2", transfer_bonus="0.25")
    client.force_login(annotator)

    page = client.get(f"/users/{annotator.username}/").content.decode()

    assert "transfer bonus 0.25 GBP for fooling at least 2 other models (1 earned)" in page
    assert f'<tr data-example="{strong.pk}" data-earned="1"><td>#{strong.pk}</td><td>2 of 2</td><td>100 %</td>' in page
    assert f'<tr data-example="{weak.pk}"><td>#{weak.pk}</td><td>0 of 2</td><td>0 %</td><td>—</td>' in page
    client.force_login(outsider)
    assert client.get(f"/users/{annotator.username}/").status_code == 403
