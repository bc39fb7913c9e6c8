"""``/api/docs/`` renders every operation in a real browser, offline (no CDN request)."""

from urllib.parse import urlparse

from rest_framework.test import APIClient

from tests.browser_support import HANG_MS, browser_only

pytestmark = browser_only


def test_the_docs_page_shows_every_operation_without_a_cdn(live_server, default_tasks, browser):
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    operations = sum(1 for ops in schema["paths"].values() for m in ops if m in {"get", "post", "put", "patch", "delete"})
    host = urlparse(live_server.url).netloc
    foreign = []

    page = browser.new_page()
    page.route("**/*", lambda route: (foreign.append(route.request.url), route.abort()) if urlparse(route.request.url).netloc != host else route.continue_())
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".opblock", timeout=HANG_MS)
    shown = page.locator(".opblock").count()
    summary_texts = page.locator(".opblock-summary-path").all_inner_texts()
    page.context.close()

    assert foreign == []
    assert shown == operations
    assert any("/api/v1/tasks/{task_code}/rounds" in text.replace("\u200b", "") for text in summary_texts)
