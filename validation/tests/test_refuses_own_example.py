from django.contrib.auth.models import Group

from validation.services import record_validation
from validation.tests._refusal import assert_refused
from validation.tests.conftest import leased


def test_it_refuses_own_example(fooling_example, annotator):
    annotator.groups.add(Group.objects.get(name="validator"))
    err = assert_refused(
        lambda: record_validation(example=leased(fooling_example, annotator), validator=annotator, label="correct"),
        code="own_example", match="your own example", example=fooling_example,
    )
    assert err.status_code == 403


def test_it_refuses_own_example_even_for_an_owner(sentiment_task, owner):
    from validation.tests.conftest import make_example

    example = make_example(sentiment_task, owner)
    assert_refused(
        lambda: record_validation(example=example, validator=owner, label="correct", mode="owner"),
        code="own_example", match="your own example", example=example,
    )
