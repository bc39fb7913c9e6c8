"""κ and α are computed by a job and cached; a round's statistics ask for a new run when stale, at most once a minute."""

from datetime import timedelta

from django.utils import timezone

from validation.jobs import compute_round_agreement
from validation.models import RoundAgreement
from validation.round_statistics import AGREEMENT_MIN_INTERVAL, round_agreement, round_stats
from validation.services import record_validation
from validation.tests.conftest import make_example, make_user, leased


def _validate(task, author, people, labels):
    example = make_example(task, author)
    for person, label in zip(people, labels):
        record_validation(example=leased(example, person), validator=person, label=label)
    return example


def test_the_job_stores_what_a_full_scan_gives_and_the_stats_read_it(sentiment_task, annotator, django_capture_on_commit_callbacks):
    round = sentiment_task.current_round()
    people = [make_user(f"r{i}", "validator") for i in range(3)]
    for labels in [("correct",) * 3, ("correct", "incorrect", "correct"), ("incorrect",) * 3]:
        _validate(sentiment_task, annotator, people, labels)

    with django_capture_on_commit_callbacks() as asked:
        before = round_stats(round)
    summary = compute_round_agreement(round.pk)
    after = round_stats(round)

    assert before.agreement is None and before.agreement_stale and len(asked) == 1
    assert summary.startswith(f"agreement of round {round.pk} over 3 examples")
    assert after.agreement == round_agreement(round) and not after.agreement_stale
    assert after.agreement_as_of is not None and after.validations == 9


def test_a_new_validation_makes_it_stale_and_it_is_asked_for_once_a_minute(sentiment_task, annotator, django_capture_on_commit_callbacks):
    round = sentiment_task.current_round()
    people = [make_user(f"r{i}", "validator") for i in range(3)]
    _validate(sentiment_task, annotator, people, ("correct", "incorrect", "correct"))
    _validate(sentiment_task, annotator, people, ("incorrect",) * 3)
    compute_round_agreement(round.pk)
    old = round_stats(round).agreement
    _validate(sentiment_task, annotator, people[:2], ("correct", "correct"))

    with django_capture_on_commit_callbacks() as asked:
        stale = [round_stats(round) for _ in range(3)]
    RoundAgreement.objects.filter(round=round).update(requested_at=timezone.now() - AGREEMENT_MIN_INTERVAL - timedelta(seconds=1))
    with django_capture_on_commit_callbacks() as asked_later:
        round_stats(round)

    assert all(s.agreement_stale and s.agreement == old for s in stale)
    assert len(asked) == 1 and len(asked_later) == 1


def test_too_few_validations_need_no_job(sentiment_task, annotator, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as asked:
        stats = round_stats(sentiment_task.current_round())

    assert not asked and not RoundAgreement.objects.exists()
    assert stats.agreement.fleiss_kappa is None and "needs at least 2 examples" in stats.agreement.reason
