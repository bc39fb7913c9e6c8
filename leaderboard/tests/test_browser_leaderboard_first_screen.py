"""At 1280×800 the ranking is on the first screen and the weights one click away (a <details>, no
script needed); opened, a slider re-ranks the table in place; no console error on the way."""

from tests.browser_support import browser_only

pytestmark = browser_only


def test_the_table_is_on_the_first_screen_and_the_weights_one_click_away(page, ranked_sentiment, sentiment_task, sentiment_datasets):
    errors = []
    # /favicon.ico is a 404 on every page until the site has one (issue 29, "the small ones"): not this page's
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and not m.location.get("url", "").endswith("/favicon.ico") else None)
    page.on("pageerror", lambda error: errors.append(str(error)))

    page.goto(f"/tasks/{sentiment_task.code}/leaderboard/")
    table = page.locator("table.leaderboard")
    box = table.bounding_box()
    assert box["y"] + 100 < 800  # its header and first rows are above the fold
    assert not page.locator("#w_performance").is_visible()

    page.get_by_role("link", name="Weights", exact=True).click()  # the intro's link opens the <details> (no script)
    assert page.locator("#w_performance").is_visible()
    r1, r2 = sentiment_datasets
    before = [t.strip() for t in page.locator("table.leaderboard tbody tr td:nth-child(2) a").all_inner_texts()]
    page.locator(f"#d_{r2.pk}").fill("0")
    page.wait_for_function("() => document.querySelector('table.leaderboard tbody tr td:nth-child(2) a').textContent.trim() === 'alpha'")
    after = [t.strip() for t in page.locator("table.leaderboard tbody tr td:nth-child(2) a").all_inner_texts()]

    assert before == ["beta", "alpha", "gamma"] and after == ["alpha", "beta", "gamma"]
    assert page.locator("#why-this-order").is_visible()
    assert errors == []
