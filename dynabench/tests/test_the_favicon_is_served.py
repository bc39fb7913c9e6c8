"""Every page links the site's icon, and ``/favicon.ico`` (asked for by browsers and crawlers
whatever the page links) leads to it instead of answering 404."""

from django.contrib.staticfiles import finders


def test_favicon_ico_redirects_to_the_icon_every_page_links(client, db):
    response = client.get("/favicon.ico")

    assert response.status_code == 301 and response["Location"] == "/static/favicon.svg"
    assert finders.find("favicon.svg") is not None
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in client.get("/accounts/login/").content.decode()
