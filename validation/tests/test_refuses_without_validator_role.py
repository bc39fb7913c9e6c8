from validation.services import record_validation
from validation.tests._refusal import assert_refused
from validation.tests.conftest import leased


def test_it_refuses_a_user_without_the_validator_role(fooling_example, outsider):
    err = assert_refused(
        lambda: record_validation(example=leased(fooling_example, outsider), validator=outsider, label="correct"),
        code="not_validator", match="validator role", example=fooling_example,
    )
    assert err.status_code == 403


def test_an_owner_without_the_role_may_validate(fooling_example, owner):
    owner.groups.clear()

    record_validation(example=leased(fooling_example, owner), validator=owner, label="correct")

    assert fooling_example.validations.filter(validator=owner).exists()
