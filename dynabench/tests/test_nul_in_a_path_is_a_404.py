"""Issue 28 (inputs): ``/users/%00/`` (and a console person page with ``%00``) answered 500 on
PostgreSQL, which refuses NUL in the look-up. No object is named with NUL, so any path holding one
is a 404 on every database. Run with ``DATABASE_URL=postgres://...`` to check it there."""

import pytest


@pytest.mark.parametrize("path", [
    "/users/%00/", "/users/a%00b/", "/tasks/senti%00ment/", "/tasks/sentiment/leaderboard/%00",
    "/tasks/sentiment/console/people/%00/", "/tasks/sentiment/console/people/olga%00/",  # the console's person page
])
def test_a_page_path_with_a_nul_is_a_404(client, admin_user, sentiment_task, path):
    client.force_login(admin_user)

    assert client.get(path).status_code == 404


def test_an_api_path_with_a_nul_is_a_404_in_the_api_shape(client, admin_user, sentiment_task):
    client.force_login(admin_user)

    response = client.get("/api/v1/tasks/senti%00ment")

    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_a_user_page_without_nul_still_answers(client, admin_user):
    client.force_login(admin_user)

    assert client.get(f"/users/{admin_user.username}/").status_code == 200
