"""The annotator's flows in headless Chromium (Playwright) against a live server.

Full flows for sentiment and QA (the answer span selected with the mouse and with the
keyboard), an invalid submission shown inline without a reload, retract, and the sandbox.
"""

from annotation.models import Example
from annotation.tests.conftest import model_label, other_label
from tests.browser_support import browser_only, log_in

pytestmark = browser_only


def test_sentiment_fool_the_model_explain_try_again_fail_and_retract(page, client, live_server, annotator, sentiment_task, sentiment_model):
    log_in(page, client, annotator, live_server)
    text = "The room was small but spotless and quiet."
    predicted = model_label(sentiment_task, text)
    page.goto("/tasks/sentiment/write/")
    page.evaluate("window.notReloaded = true")
    page.fill("textarea[name=text]", text)
    page.check(f"input[name=label][value={other_label(sentiment_task, predicted)}]")
    page.click("button[type=submit]")
    page.get_by_text("You fooled the model!").wait_for()
    assert page.locator(".bars [role=meter]").count() == 3
    page.fill("textarea[name=model_explanation]", "It reads 'small' as a complaint.")
    page.click("text=Save explanation")
    page.get_by_text("Explanation saved.").wait_for()

    page.click("text=Try again")
    page.locator("textarea[name=text]").wait_for()
    assert page.input_value("textarea[name=text]") == text
    page.check(f"input[name=label][value={predicted}]")
    page.click("button[type=submit]")
    page.get_by_text("The model got it right.").wait_for()
    page.click("text=Retract")
    page.get_by_text("Retracted: this example no longer counts.").wait_for()
    assert page.evaluate("window.notReloaded") is True

    fooled, retracted = Example.objects.order_by("pk")
    assert (fooled.model_wrong, fooled.retracted, fooled.metadata) == (True, False, {"model_explanation": "It reads 'small' as a complaint."})
    assert (retracted.model_wrong, retracted.retracted) == (False, True)
    page.goto("/my/examples/")
    assert page.locator("[data-count=collected]").inner_text() == "1"
    assert page.locator("[data-count=fooled]").inner_text() == "1"
    assert page.locator("#my-examples [data-retracted]").count() == 1


def _char_box(page, offset):
    return page.evaluate(
        """(offset) => {
            const node = document.querySelector('[data-passage]').firstChild;
            const r = document.createRange(); r.setStart(node, offset); r.setEnd(node, offset + 1);
            const b = r.getBoundingClientRect(); return {x: b.x, y: b.y, w: b.width, h: b.height};
        }""",
        offset,
    )


def test_qa_select_the_answer_with_mouse_and_keyboard_and_see_the_models_span(page, client, live_server, annotator, qa_task, qa_model):
    log_in(page, client, annotator, live_server)
    page.goto("/tasks/qa/write/")
    passage = page.locator("[data-passage]").text_content()
    page.fill("input[name=question]", "What is this passage about?")

    # keyboard: caret to offset 4, then Shift + Right seven times
    page.focus("[data-passage]")
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    for _ in range(7):
        page.keyboard.press("Shift+ArrowRight")
    expected = passage[4:11].strip()
    page.wait_for_function("(t) => document.querySelector('[data-answer-picked]').textContent === t", arg=expected)

    # mouse: drag over the characters of the second sentence's first words
    start = passage.index(". ") + 2
    end = start + len(" ".join(passage[start:].split(" ")[:2]))
    first, last = _char_box(page, start), _char_box(page, end - 1)
    page.mouse.move(first["x"] + 1, first["y"] + first["h"] / 2)
    page.mouse.down()
    page.mouse.move(last["x"] + last["w"] - 1, last["y"] + last["h"] / 2, steps=5)
    page.mouse.up()
    page.wait_for_function("(t) => document.querySelector('[data-answer-picked]').textContent === t", arg=passage[start:end])
    assert page.input_value("input[name=answer_start]") == str(start)

    page.click("button[type=submit]")
    page.locator("[data-model-answer]").wait_for()
    assert page.locator("[data-answer-passage] mark.model").count() >= 1
    example = Example.objects.get()
    assert example.target == {"answers": [{"text": passage[start:end], "answer_start": start}]}
    outcome = "You fooled the model!" if example.model_wrong else "The model got it right."
    assert page.get_by_text(outcome).is_visible()


def test_an_invalid_submission_is_shown_inline_without_a_reload(page, client, live_server, annotator, qa_task, qa_model):
    log_in(page, client, annotator, live_server)
    page.goto("/tasks/qa/write/")
    page.evaluate("window.notReloaded = true")
    page.fill("input[name=question]", "Who?")
    page.click("button[type=submit]")
    error = page.locator("[data-error-for=answer]")
    error.wait_for()
    assert "Select the answer in the passage" in error.inner_text()
    assert page.input_value("input[name=question]") == "Who?"
    assert page.evaluate("window.notReloaded") is True
    assert not Example.objects.exists()


def test_a_visitor_tries_the_model_in_the_sandbox(page, sentiment_task, sentiment_model):
    page.goto("/tasks/sentiment/sandbox/")
    assert page.get_by_text("nothing you type here is saved").is_visible()
    page.fill("textarea[name=text]", "Best pastry in town.")
    page.check("input[name=label][value=positive]")
    page.click("button[type=submit]")
    page.locator("[data-model-label]").wait_for()
    assert page.locator(".bars [role=meter]").count() == 3
    assert page.get_by_text("Nothing was saved.").is_visible()
    assert not Example.objects.exists()
