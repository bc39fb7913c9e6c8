"""The same form submitted twice (a double click, a browser or network retry) makes one example
and shows the first result again (issue 17: before, each post of the form made an example)."""

from annotation.models import Example
from tests.browser_support import browser_only, log_in

pytestmark = browser_only


def test_posting_the_same_form_twice_makes_one_example(page, client, live_server, annotator, sentiment_task, sentiment_model):
    log_in(page, client, annotator, live_server)
    page.goto("/tasks/sentiment/write/")
    page.fill("textarea[name=text]", "Cold soup, warm welcome, fair price.")
    page.check("input[name=label][value=positive]")
    # What a retry sends (a network retry, a reload that re-posts): the very same form data.
    # (One after the other: the test server shares one in-memory SQLite connection between
    # its threads, so truly concurrent posts are covered by the services' lock and unique key.)
    answers = page.evaluate(
        """async () => {
            const form = document.querySelector('#workspace form');
            const data = new FormData(form);
            const out = [];
            for (let i = 0; i < 3; i++) {
                const r = await fetch(form.action, {method: 'POST', body: data, headers: {'HX-Request': 'true'}});
                const html = await r.text();
                out.push([r.status, new DOMParser().parseFromString(html, 'text/html').querySelector('[data-example-id]').dataset.exampleId]);
            }
            return out;
        }"""
    )
    example = Example.objects.get()
    assert answers == [[200, str(example.pk)]] * 3


def test_a_double_click_on_submit_makes_one_example(page, client, live_server, annotator, sentiment_task, sentiment_model):
    log_in(page, client, annotator, live_server)
    page.goto("/tasks/sentiment/write/")
    page.fill("textarea[name=text]", "Noisy at night but the bed was great.")
    page.check("input[name=label][value=negative]")
    posts = []
    page.on("request", lambda request: request.method == "POST" and posts.append(request))
    page.dblclick("button[type=submit]")
    page.locator("#outcome").wait_for()
    # Every post the double click sent has had its answer (the server wrote before answering):
    # the work's own completion signal, not a pause.
    assert posts and all(request.response() is not None for request in posts)
    assert Example.objects.count() == 1
