from validation.services import record_validation
from validation.tests._refusal import assert_refused
from validation.tests.conftest import leased


def test_it_refuses_a_corrected_answer_that_is_not_in_the_passage(qa_example, validator):
    assert_refused(
        lambda: record_validation(example=leased(qa_example, validator), validator=validator, label="incorrect",
                                  metadata={"corrected_answer": {"text": "the moon landing"}}),
        code="corrected_answer_not_a_span", match="not a span of the passage", example=qa_example,
    )


def test_it_refuses_a_corrected_answer_at_the_wrong_offset(qa_example, validator):
    passage = qa_example.input["passage"]
    word = passage.split()[5]
    assert_refused(
        lambda: record_validation(example=leased(qa_example, validator), validator=validator, label="incorrect",
                                  metadata={"corrected_answer": {"text": word, "answer_start": passage.find(word) + 1}}),
        code="corrected_answer_not_a_span", match="not a span", example=qa_example,
    )


def test_it_accepts_a_span_and_finds_its_offset(qa_example, validator):
    passage = qa_example.input["passage"]
    span = " ".join(passage.split()[5:8])

    validation = record_validation(example=leased(qa_example, validator), validator=validator, label="incorrect",
                                   metadata={"corrected_answer": span})

    assert validation.metadata["corrected_answer"] == {"text": span, "answer_start": passage.find(span)}
