"""Log-in and log-out pages work with Django's auth views."""

from django.urls import reverse


def test_the_log_in_page_renders(client, db):
    response = client.get(reverse("login"))

    assert response.status_code == 200
    assert b"Log in" in response.content


def test_it_logs_in_and_goes_to_the_tasks(client, annotator):
    response = client.post(reverse("login"), {"username": "annie", "password": "pw-annie"})

    assert response.status_code == 302 and response.url == reverse("annotation:task_list")
    assert client.get(reverse("annotation:task_list")).context["user"] == annotator


def test_it_says_what_is_wrong_with_a_bad_password(client, annotator):
    response = client.post(reverse("login"), {"username": "annie", "password": "wrong"})

    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()
    assert not response.context["user"].is_authenticated


def test_it_logs_out_with_a_post_and_shows_the_log_in_link_again(client, annotator):
    client.force_login(annotator)

    response = client.post(reverse("logout"), follow=True)

    assert response.status_code == 200
    assert not response.context["user"].is_authenticated
    assert reverse("login") in response.content.decode()


def test_the_page_header_offers_log_out_to_a_logged_in_user(client, annotator):
    client.force_login(annotator)

    page = client.get(reverse("annotation:task_list")).content.decode()

    assert "annie" in page and f'action="{reverse("logout")}"' in page
