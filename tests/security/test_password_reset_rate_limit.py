"""Issue 19 (worth a look): password reset requests are limited per client address and per email
address, with a 429 page that says when to try again, and no email sent past the limit.

Old code: Django's own view took any number of requests, each sending an email.
"""

import pytest
from django.core import mail

RESET = "/accounts/password_reset/"


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.PASSWORD_RESET_PER_EMAIL_PER_HOUR = 2
    settings.PASSWORD_RESET_PER_ADDRESS_PER_HOUR = 4


@pytest.fixture
def rita(researcher):
    researcher.email = "rita@example.org"
    researcher.save(update_fields=["email"])
    return researcher


def test_one_email_address_gets_at_most_the_limit_of_reset_emails_an_hour(client, rita):
    sent = [client.post(RESET, {"email": "rita@example.org"}, REMOTE_ADDR=f"10.0.0.{i}").status_code for i in range(2)]
    refused = client.post(RESET, {"email": "Rita@Example.org "}, REMOTE_ADDR="10.0.0.9")

    assert sent == [302, 302]
    assert refused.status_code == 429 and int(refused["Retry-After"]) <= 3600
    page = refused.content.decode()
    assert "At most 2 reset requests an hour" in page and "for one email address" in page and "Try again in" in page
    assert len(mail.outbox) == 2


def test_an_address_without_an_account_is_limited_alike(client, rita):
    answers = [client.post(RESET, {"email": "nobody@example.org"}, REMOTE_ADDR=f"10.0.1.{i}").status_code for i in range(3)]

    assert answers == [302, 302, 429]  # the same as for an existing account: the limit tells nothing
    assert mail.outbox == []


def test_one_client_address_is_limited_whatever_emails_and_forwarded_for_it_sends(client, rita):
    answers = [
        client.post(RESET, {"email": f"someone{i}@example.org"}, REMOTE_ADDR="10.0.2.1", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}").status_code
        for i in range(5)
    ]
    refused = client.post(RESET, {"email": "rita@example.org"}, REMOTE_ADDR="10.0.2.1")
    elsewhere = client.post(RESET, {"email": "rita@example.org"}, REMOTE_ADDR="10.0.2.2")

    assert answers == [302, 302, 302, 302, 429]
    assert refused.status_code == 429 and "from one address" in refused.content.decode()
    assert elsewhere.status_code == 302 and len(mail.outbox) == 1


def test_a_bad_email_is_still_a_form_error(client):
    response = client.post(RESET, {"email": "not-an-email"})

    assert response.status_code == 200 and "Enter a valid email address" in response.content.decode()
