"""A fresh task owner runs a round of sentiment from the browser alone (headless Chromium):
closes round 1, opens round 2 with two models in the loop, uploads a 1,000-row CSV of contexts
with a column mapping, grants a new user the annotator role, sees that user's example on the
round dashboard, and closes round 2.

With ``DYNABENCH_SCREENSHOTS=<folder>`` it saves a 1280×800 screenshot of each console page
there (``docs/screenshots/`` holds the committed ones, linked from the README).
"""


import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import Example
from tasks.models import MLModel, Round, Upload
from tasks.services import add_task_owner
from tests.browser_support import browser_only, save_screenshot
from tests.tiny_models import build_tiny_classifier
from validation.tests.conftest import make_example

pytestmark = browser_only


def _page(browser, live_server, client, user):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 800})
    client.force_login(user)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(20000)
    return page


def _split_40_30_30(page):
    for name, value in (("train", "0.4"), ("dev", "0.3"), ("test", "0.3")):
        page.fill(f"input[name={name}]", value)


@pytest.fixture
def two_models(sentiment_task, tiny_classifier_dir, tmp_path_factory):
    second = build_tiny_classifier(tmp_path_factory.mktemp("tiny-sentiment-b"), ["positive", "negative", "neutral"], seed=3)
    return [
        MLModel.objects.create(task=sentiment_task, name=name, kind=MLModel.Kind.HF_DIRECTORY, path=str(path))
        for name, path in (("tiny-sentiment-a", tiny_classifier_dir), ("tiny-sentiment-b", second))
    ]


def test_a_fresh_owner_runs_round_2_of_sentiment_from_the_browser(browser, live_server, client, sentiment_task, two_models, admin_user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    owner = User.objects.create_user(username="fresh-owner", password="pw-fresh-owner")
    add_task_owner(task=sentiment_task, user=owner, acting_user=admin_user)
    newcomer = User.objects.create_user(username="newcomer", password="pw-newcomer")
    page = _page(browser, live_server, client, owner)

    # Settings: the live preview renders the Markdown as it is typed.
    page.goto("/console/")
    page.click("text=Sentiment Analysis")
    page.fill("textarea[name=instructions]", "Write **one** sentence about a *restaurant*.")
    page.locator("#instructions-preview strong", has_text="one").wait_for()
    save_screenshot(page, "console-settings", full_page=False)
    page.click("text=Save settings")
    page.get_by_text("Settings saved.").wait_for()

    # Rounds: close round 1 (after its preview), open round 2 with both models, least fooled first.
    # A round closes only when its dev and test splits get examples: 20 validated ones, split 40/30/30.
    for _ in range(20):
        make_example(sentiment_task, admin_user, validation_state="verified_correct")
    page.click("nav.tabs >> text=Rounds")
    page.click("tr[data-round='1'] >> text=Close round…")
    page.locator("[data-validated]").wait_for()
    save_screenshot(page, "console-close-round", full_page=False)
    _split_40_30_30(page)
    page.click("button:has-text('Update the preview')")
    page.locator("tr[data-split='dev'] >> text=6").wait_for()
    page.check("input[name=confirm]")
    page.click("button:has-text('Close round 1')")
    page.get_by_text("Round 1 is closed.").wait_for()
    for model in two_models:
        page.check(f"input[name=target_models][value='{model.pk}']")
    page.check("input[name=loop_rule][value=least_fooled]")
    page.check("input[name=contexts_from][value='']")  # new contexts come from the upload below
    page.click("button:has-text('Open round 2')")
    page.get_by_text("Round 2 is open with 2 model(s) in the loop.").wait_for()
    save_screenshot(page, "console-rounds", full_page=False)
    round2 = Round.objects.get(task=sentiment_task, number=2)
    assert round2.status == "open" and round2.target_models.count() == 2 and round2.loop_rule == "least_fooled"

    # Contexts: a 1,000-row CSV whose text column is called 'sentence', mapped onto 'prompt'.
    csv_path = tmp_path / "round2-contexts.csv"
    csv_path.write_text("id,sentence,source\n" + "".join(f"r2-{i},The dessert number {i} was a surprise.,menu\n" for i in range(1000)))
    page.click("nav.tabs >> text=Contexts & datasets")
    page.select_option("select[name=round]", "2")
    page.set_input_files("input[name=file]", str(csv_path))
    save_screenshot(page, "console-uploads", full_page=False)
    page.click("text=Upload and map columns")
    page.locator("[data-mapping-form]").wait_for()
    page.select_option("select[name=field_prompt]", "sentence")
    page.locator("#mapping-preview td", has_text="The dessert number 0 was a surprise.").wait_for()
    page.select_option("select[name=uid]", "id")
    page.select_option("select[name=tag]", "source")
    save_screenshot(page, "console-mapping", full_page=False)
    page.click("text=Check and import")
    page.locator("[data-summary]", has_text="1000 added").wait_for()
    save_screenshot(page, "console-upload-done", full_page=False)
    assert round2.contexts.count() == 1000 and Upload.objects.get().status == "done"

    # People: find the newcomer and grant the annotator role.
    page.click("nav.tabs >> text=People")
    page.fill("input[name=q]", "newcom")
    page.click("button:has-text('Search')")
    page.click("tr[data-person='newcomer'] [data-grant='annotator']")
    page.get_by_text("newcomer is now annotator on sentiment.").wait_for()
    save_screenshot(page, "console-people", full_page=False)

    # The newcomer writes an example; the owner sees it on the dashboard.
    writer = _page(browser, live_server, Client(), newcomer)  # its own session: the owner's stays
    writer.goto("/tasks/sentiment/write/")
    writer.fill("textarea[name=text]", "The dessert was a lovely surprise.")
    writer.check("input[name=label][value=positive]")
    writer.click("button[type=submit]")
    writer.locator("text=/You fooled the model!|The model got it right./").wait_for()
    writer.context.close()
    example = Example.objects.get(author=newcomer)
    assert example.round == round2 and example.model in two_models

    page.click("nav.tabs >> text=Round dashboard")
    assert page.locator("[data-count=collected]").inner_text() == "1"
    assert page.locator("table[data-per-model]").get_by_text(example.model.name).is_visible()
    assert page.locator("svg.dash-plot").count() == 2
    save_screenshot(page, "console-dashboard", full_page=False)
    page.click("nav.tabs >> text=People")
    page.click("tr[data-person='newcomer'] >> text=newcomer")
    page.locator("table[data-person-examples]", has_text="The dessert was a lovely surprise.").wait_for()
    save_screenshot(page, "console-person", full_page=False)

    # Close round 2, once it has validated examples for every split.
    for _ in range(20):
        make_example(sentiment_task, admin_user, round=round2, validation_state="verified_correct")
    page.click("nav.tabs >> text=Rounds")
    page.click("tr[data-round='2'] >> text=Close round…")
    _split_40_30_30(page)
    page.check("input[name=confirm]")
    page.click("button:has-text('Close round 2')")
    page.get_by_text("Round 2 is closed.").wait_for()
    assert Round.objects.get(pk=round2.pk).status == "closed"
    page.context.close()
