"""In Chromium, an owner asks for a round's diversity report on the console's Diversity page: the page
shows the queued report's progress bar, and when a worker has computed it (with the packaged MiniLM
encoder) the page reloads by itself and shows the Vendi score and the clusters of the round's validated
fooling examples with their top terms: here two quirks, one about cold soup, one about a rude waiter."""

from annotation.models import Example, ValidationState
from tests.api.conftest import run_worker
from tests.browser_support import browser_only, log_in

pytestmark = browser_only

SOUP = [f"The soup was {word} cold when it reached our table." for word in
        ("really", "totally", "quite", "fairly", "very", "oddly", "utterly", "rather")]
WAITER = [f"Our waiter was {word} rude and ignored us all evening." for word in
          ("really", "totally", "quite", "fairly", "very", "oddly", "utterly", "rather")]
OTHERS = ["The museum opened in 1921.", "Parking was easy to find.", "They play jazz on Fridays.",
          "The menu changes every season."]


def test_the_owner_watches_the_report_and_reads_the_clusters(page, client, live_server, owner, annotator, sentiment_task):
    round1 = sentiment_task.current_round()
    context = round1.contexts.first()
    for text in SOUP + WAITER + OTHERS:
        fooling = text not in OTHERS
        Example.objects.create(round=round1, context=context, author=annotator, input={"text": text},
                               target={"label": "positive"}, model_output={"label": "negative"}, model_wrong=fooling,
                               validation_state=ValidationState.VERIFIED_CORRECT if fooling else ValidationState.PENDING)
    log_in(page, client, owner, live_server)
    page.goto(f"/tasks/sentiment/console/rounds/{round1.number}/diversity/")

    page.click("#diversity-report button[type=submit]")
    bar = page.locator("#diversity-status progress")
    bar.wait_for()
    assert "queued" in page.locator("#diversity-status").inner_text()
    run_worker()  # the job, while the page polls its progress

    page.locator("[data-clusters]").wait_for()  # the page reloaded itself once the job was done
    assert float(page.locator("td[data-vendi]").inner_text().split()[0]) > 1
    terms = page.locator("[data-clusters] tbody tr td:nth-child(4)").all_inner_texts()
    assert len(terms) == 2, terms
    assert any("soup" in t for t in terms) and any("waiter" in t or "rude" in t for t in terms), terms
    assert page.locator("#diversity-status progress").count() == 0
