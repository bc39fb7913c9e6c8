from validation.services import record_validation
from validation.tests._refusal import assert_refused
from validation.tests.conftest import leased


def test_it_refuses_a_retracted_example(fooling_example, validator):
    fooling_example.retracted = True
    fooling_example.save()

    assert_refused(
        lambda: record_validation(example=leased(fooling_example, validator), validator=validator, label="correct"),
        code="retracted", match="retracted", example=fooling_example,
    )
