"""A validator who marks a QA example incorrect corrects its answer by selecting the span in the
passage: the corrected answer and its character offset follow the selection, and the server
stores exactly that span (without JavaScript the typed field still works)."""

from tests.browser_support import browser_only, log_in
from validation.models import Validation
from validation.tests.conftest import make_example

pytestmark = browser_only

SELECT = """(wanted) => {
  const passage = document.querySelector('[data-review-passage]');
  const at = passage.textContent.indexOf(wanted);
  const walker = document.createTreeWalker(passage, NodeFilter.SHOW_TEXT);
  let node, seen = 0, range = document.createRange(), started = false;
  while ((node = walker.nextNode())) {
    const end = seen + node.length;
    if (!started && at < end) { range.setStart(node, at - seen); started = true; }
    if (started && at + wanted.length <= end) { range.setEnd(node, at + wanted.length - seen); break; }
    seen = end;
  }
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  return at;
}"""


def test_selecting_the_span_fills_the_correction(page, client, live_server, validator, annotator, qa_task):
    example = make_example(qa_task, annotator)
    passage = example.input["passage"]
    wanted = " ".join(passage.split()[5:7])
    log_in(page, client, validator, live_server)
    page.goto("/tasks/qa/validate/")
    page.locator("#review-form").wait_for()

    page.keyboard.press("2")  # incorrect: the correction field opens
    start = page.evaluate(SELECT, wanted)
    page.wait_for_function("(w) => document.querySelector('#corrected_answer').value === w", arg=wanted)
    assert page.input_value("input[name=answer_start]") == str(start) == str(passage.index(wanted))
    page.click("#review-form button[type=submit]")
    page.get_by_role("heading", name="Nothing left to validate").wait_for()

    validation = Validation.objects.get(example=example)
    assert validation.metadata["corrected_answer"] == {"text": wanted, "answer_start": passage.index(wanted)}
