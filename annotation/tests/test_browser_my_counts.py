"""What annotators read about their own numbers (issue 17): the create page's "You in round N"
line follows each submission, an example that did not fool the model is not "Pending" forever
on My examples, and a vMER with nothing validated yet reads "—", not "0.0%"."""

from annotation.models import Example
from annotation.tests.conftest import model_label, other_label
from tests.browser_support import browser_only, log_in

pytestmark = browser_only


def submit(page, text, label):
    page.fill("textarea[name=text]", text)
    page.check(f"input[name=label][value={label}]")
    page.keyboard.press("Control+Enter")


def test_the_round_counter_follows_each_submission(page, client, live_server, annotator, sentiment_task, sentiment_model):
    log_in(page, client, annotator, live_server)
    page.goto("/tasks/sentiment/write/")
    counts = page.locator("#my-round-counts [data-count=collected]")
    assert counts.inner_text() == "0"

    text = "The staff forgot our order twice, then smiled."
    predicted = model_label(sentiment_task, text)
    submit(page, text, other_label(sentiment_task, predicted))
    page.get_by_text("You fooled the model!").wait_for()
    page.wait_for_function("() => document.querySelector('#my-round-counts [data-count=collected]').textContent === '1'")
    assert page.locator("#my-round-counts [data-count=fooled]").inner_text() == "1"

    page.click("text=New context")
    page.locator("textarea[name=text]").wait_for()
    text = "Lovely view, lovely food, lovely people."
    submit(page, text, model_label(sentiment_task, text))
    page.get_by_text("The model got it right.").wait_for()
    page.wait_for_function("() => document.querySelector('#my-round-counts [data-count=collected]').textContent === '2'")
    assert page.locator("#my-round-counts [data-count=fooled]").inner_text() == "1"
    assert Example.objects.count() == 2


def make_example(task, author, *, model_wrong, **state):
    """An example of ``task``'s round 1 by ``author``, with the model's answer already decided."""
    context = task.current_round().contexts.order_by("pk").first()
    label, other = task.labels[0], task.labels[1]
    return Example.objects.create(
        round=context.round, context=context, author=author, input={**context.data, "text": f"Written by {author} ({model_wrong})"},
        target={"label": label}, model_output={"label": other if model_wrong else label, "probs": {}}, model_wrong=model_wrong, **state,
    )


def test_my_examples_says_which_examples_wait_for_validators(page, client, live_server, annotator, sentiment_task, sentiment_model):
    fooling = make_example(sentiment_task, annotator, model_wrong=True)
    not_fooling = make_example(sentiment_task, annotator, model_wrong=False)
    log_in(page, client, annotator, live_server)
    page.goto("/my/examples/")
    assert page.locator(f"tr[data-example-id='{fooling.pk}'] [data-validation]").inner_text() == "Waiting for validation"
    assert page.locator(f"tr[data-example-id='{not_fooling.pk}'] [data-validation]").inner_text() == "Not validated: it did not fool the model"
    # nothing validated yet: no vMER to speak of
    assert page.locator("[data-count=vmer]").inner_text() == "—"
    assert page.locator(f"tr[data-task='{sentiment_task.code}'] td").nth(4).inner_text() == "—"
    page.goto("/tasks/sentiment/write/")
    assert page.locator("#my-round-counts [data-count=vmer]").inner_text() == "—"


def test_the_vmer_shows_once_an_example_is_validated(page, client, live_server, annotator, sentiment_task, sentiment_model):
    make_example(sentiment_task, annotator, model_wrong=True, validation_state="verified_correct", validation_count=3, correct_count=3)
    make_example(sentiment_task, annotator, model_wrong=True)
    log_in(page, client, annotator, live_server)
    page.goto("/my/examples/")
    assert page.locator("[data-count=vmer]").inner_text() == "50.0%"
