"""The navigation reaches what a signed-in person needs (issue 17: it had no link to the validation
queue, the user's own page or the API token)."""

from rest_framework.authtoken.models import Token

from tests.browser_support import browser_only, log_in

pytestmark = browser_only


def test_the_navigation_leads_to_the_queue_my_page_and_the_api_token(page, client, live_server, site, validator):
    log_in(page, client, validator, live_server)
    page.goto("/")
    nav = page.locator("header nav")

    nav.get_by_role("link", name="Validate").click()
    page.get_by_role("heading", name="Validate examples").wait_for()
    page.get_by_role("link", name="Validate Sentiment").first.click()
    page.locator("#review-form").wait_for()

    nav.get_by_role("link", name="My page").click()
    page.get_by_role("heading", name=validator.username, exact=True).wait_for()

    nav.get_by_role("link", name="API token").click()
    page.get_by_role("button", name="Create my API token").click()
    token = Token.objects.get(user=validator)
    assert page.input_value("#token") == token.key
    page.get_by_role("button", name="Revoke this token").click()
    page.get_by_text("You have no token yet.").wait_for()
    assert not Token.objects.filter(user=validator).exists()
