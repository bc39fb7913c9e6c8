from validation.services import record_validation
from validation.tests._refusal import assert_refused
from validation.tests.conftest import leased


def test_it_refuses_a_second_validation_by_the_same_validator(fooling_example, validator):
    record_validation(example=leased(fooling_example, validator), validator=validator, label="correct")

    assert_refused(
        lambda: record_validation(example=leased(fooling_example, validator), validator=validator, label="incorrect"),
        code="already_validated", match="already validated this example", example=fooling_example,
    )
    assert fooling_example.validations.get().label == "correct"
