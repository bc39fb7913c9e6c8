from validation.services import record_validation
from validation.tests._refusal import assert_refused


def test_it_refuses_owner_mode_from_a_validator_who_is_not_an_owner(fooling_example, validator):
    err = assert_refused(
        lambda: record_validation(example=fooling_example, validator=validator, label="correct", mode="owner"),
        code="not_owner", match="Only an owner of task 'sentiment'", example=fooling_example,
    )
    assert err.status_code == 403


def test_an_admin_may_decide_in_owner_mode(fooling_example, admin_user):
    record_validation(example=fooling_example, validator=admin_user, label="correct", mode="owner")

    fooling_example.refresh_from_db()
    assert fooling_example.validation_state == "verified_correct"
