"""A form loaded before other validators settled the example is refused, not counted."""

from validation.services import record_validation
from validation.tests._refusal import assert_refused
from validation.tests.conftest import leased


def test_it_refuses_a_stale_form_after_others_settled_the_example(fooling_example, validators, validator):
    shown_state = fooling_example.validation_state  # the late validator loads the form now
    for v in validators:
        record_validation(example=leased(fooling_example, v), validator=v, label="correct")

    assert_refused(
        lambda: record_validation(example=leased(fooling_example, validator), validator=validator, label="incorrect", expected_state=shown_state),
        code="stale_form", match="changed since you loaded it: it is now verified correct", example=fooling_example,
    )


def test_it_refuses_a_settled_example_without_a_form_state(fooling_example, validators, validator):
    for v in validators:
        record_validation(example=leased(fooling_example, v), validator=v, label="correct")

    assert_refused(
        lambda: record_validation(example=leased(fooling_example, validator), validator=validator, label="incorrect"),
        code="already_settled", match="already settled", example=fooling_example,
    )
