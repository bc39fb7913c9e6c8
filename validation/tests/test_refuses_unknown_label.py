from validation.services import record_validation
from validation.tests._refusal import assert_refused
from validation.tests.conftest import leased


def test_it_refuses_an_unknown_label(fooling_example, validator):
    assert_refused(
        lambda: record_validation(example=leased(fooling_example, validator), validator=validator, label="maybe"),
        code="unknown_label", match="Unknown label 'maybe'", example=fooling_example,
    )


def test_it_refuses_a_corrected_label_the_task_does_not_have(fooling_example, validator):
    assert_refused(
        lambda: record_validation(example=leased(fooling_example, validator), validator=validator, label="incorrect",
                                  metadata={"corrected_label": "furious"}),
        code="corrected_label_unknown", match="not a label of sentiment", example=fooling_example,
    )


def test_it_accepts_a_corrected_label_alias_and_stores_the_label(nli_task, annotator, validator):
    from validation.tests.conftest import make_example

    example = make_example(nli_task, annotator, label="entailment")
    validation = record_validation(example=leased(example, validator), validator=validator, label="incorrect", metadata={"corrected_label": "c"})

    assert validation.metadata == {"corrected_label": "contradiction"}


def test_it_refuses_a_flag_without_a_reason(fooling_example, validator):
    assert_refused(
        lambda: record_validation(example=leased(fooling_example, validator), validator=validator, label="flagged"),
        code="flag_reason_required", match="why you flag", example=fooling_example,
    )
