"""The review card speaks to the validator (issue 17): for QA the annotator's answer is marked in
the passage, headings are the fields' names in words (never raw config names), and the
annotator's own field is "The annotator's sentence", not "Your sentence"."""

from tests.browser_support import browser_only, log_in
from validation.tests.conftest import make_example

pytestmark = browser_only


def test_qa_marks_the_annotators_answer_in_the_passage(page, client, live_server, qa_task, annotator, validator):
    example = make_example(qa_task, annotator, model_wrong=True)
    answer = example.target["answers"][0]
    log_in(page, client, validator, live_server)
    page.goto("/tasks/qa/validate/")
    marked = page.locator("[data-review-passage] mark[data-annotator-span]")
    assert marked.count() == 1
    assert marked.inner_text() == answer["text"]
    passage = page.locator("[data-review-passage]").inner_text()
    assert passage.index(answer["text"]) == answer["answer_start"]
    headings = page.locator("#review h3").all_inner_texts()
    assert headings == ["Passage", "Question"]
    assert "yellow: the annotator's answer" in page.locator("#review .legend").inner_text()


def test_headings_are_for_the_validator_not_the_annotator(page, client, live_server, sentiment_task, nli_task, annotator, validator):
    make_example(sentiment_task, annotator, model_wrong=True)
    make_example(nli_task, annotator, model_wrong=True)
    log_in(page, client, validator, live_server)
    page.goto("/tasks/sentiment/validate/")
    card = page.locator("#review").inner_text()
    assert "Your sentence" not in card
    assert page.locator("#review h3").all_inner_texts() == ["Prompt sentence", "The annotator's sentence"]

    page.goto("/tasks/nli/validate/")
    assert page.locator("#review h3").all_inner_texts() == ["Premise", "Hypothesis"]


def test_the_owner_queue_names_fields_in_words(page, client, live_server, qa_task, annotator, owner):
    make_example(qa_task, annotator, model_wrong=True)
    log_in(page, client, owner, live_server)
    page.goto("/tasks/qa/rounds/1/owner/")
    row = page.locator("#owner-queue tr[id^=owner-row]").first.inner_text()
    assert "Passage:" in row and "Question:" in row
    assert "passage:" not in row and "question:" not in row
