"""Issue 19 finding 4 (throwaway accounts): one client address creates at most
``SIGNUP_PER_ADDRESS_PER_DAY`` accounts a day; past it the sign-up answers 429 with a page that
says when to try again, and creates no account. Every per-account limit (daily example caps,
submissions a minute) would otherwise multiply with the number of accounts one person makes.

Old code: any number of accounts from one address.
"""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

PASSWORD = "a-long-enough-passphrase-42"


def _signup(client, n, address):
    data = {"username": f"throwaway{n}", "password1": PASSWORD, "password2": PASSWORD}
    client.logout()
    return client.post(reverse("signup"), data, REMOTE_ADDR=address)


@pytest.fixture(autouse=True)
def _limit(settings):
    settings.SIGNUP_PER_ADDRESS_PER_DAY = 3


def test_a_fourth_account_from_one_address_in_a_day_is_refused(client, db):
    created = [_signup(client, n, "203.0.113.7").status_code for n in range(3)]
    refused = _signup(client, 3, "203.0.113.7")

    assert created == [302, 302, 302]
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 86400
    assert "At most 3 accounts a day" in refused.content.decode()
    assert not User.objects.filter(username="throwaway3").exists()
    assert _signup(client, 4, "198.51.100.2").status_code == 302  # another address is not affected


def test_a_form_with_errors_does_not_count(client, db):
    for n in range(5):
        client.post(reverse("signup"), {"username": f"bad{n}", "password1": PASSWORD, "password2": "other"}, REMOTE_ADDR="203.0.113.8")

    assert _signup(client, 0, "203.0.113.8").status_code == 302


def test_zero_turns_the_limit_off(client, db, settings):
    settings.SIGNUP_PER_ADDRESS_PER_DAY = 0

    assert [_signup(client, n, "203.0.113.9").status_code for n in range(5)] == [302] * 5
