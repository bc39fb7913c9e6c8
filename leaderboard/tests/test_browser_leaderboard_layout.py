"""The leaderboard page in a browser (issue 17): the table scrolls inside its own box instead of
widening the page (at 1280×800 and on a phone), a weight slider that cannot change the ranking
says why, and each dataset is labelled with its own round."""

from tests.browser_support import PHONE, browser_only, horizontal_overflow

pytestmark = browser_only


def test_the_table_scrolls_in_its_box_not_the_page(page, ranked_sentiment, sentiment_task):
    for viewport in ({"width": 1280, "height": 800}, PHONE):
        page.set_viewport_size(viewport)
        page.goto(f"/tasks/{sentiment_task.code}/leaderboard/")
        page.locator("table.leaderboard").wait_for()
        assert horizontal_overflow(page) == 0, viewport
        box = page.locator("table.leaderboard").locator("xpath=..")
        assert box.evaluate("el => getComputedStyle(el).overflowX") == "auto"


def test_sliders_that_change_nothing_say_why(page, ranked_sentiment, sentiment_task):
    page.goto(f"/tasks/{sentiment_task.code}/leaderboard/")
    page.locator("#weights-panel > summary").click()
    # prediction files measure no throughput, memory, robustness or fairness
    for metric in ("throughput", "memory", "robustness", "fairness"):
        note = page.locator(f"[data-slider-note={metric}]")
        assert note.is_visible(), metric
        assert "measured for no ranked model" in note.inner_text()
        assert page.locator(f"#w_{metric}").get_attribute("aria-describedby") == f"note_w_{metric}"
    assert page.locator("[data-slider-note=performance]").count() == 0


def test_each_dataset_is_labelled_with_its_own_round(page, ranked_sentiment, sentiment_task, sentiment_datasets):
    page.goto(f"/tasks/{sentiment_task.code}/leaderboard/")
    page.locator("#weights-panel > summary").click()
    r1, r2 = sentiment_datasets
    assert page.locator(f"label[for=d_{r1.pk}]").inner_text().startswith("sentiment-r1-dev (round 1)")
    assert page.locator(f"label[for=d_{r2.pk}]").inner_text().startswith("sentiment-r2-dev (round 2)")
