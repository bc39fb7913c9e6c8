"""Finding 9: password reset emails are sent, through a backend chosen by environment variable.

Old code: no ``EMAIL_BACKEND`` setting, so Django's SMTP default to localhost:25 was used
and reset emails were never sent.
"""

import ast
import os
import re
import subprocess
import sys

from django.conf import settings
from django.core import mail


def _email_settings(**env) -> list:
    """The email settings a fresh process computes from ``env`` (settings are read at start-up)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("EMAIL_")}
    environment.update({"DJANGO_SETTINGS_MODULE": "dynabench.settings", **env})
    code = (
        "from django.conf import settings as s; "
        "print(repr([s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_USE_TLS]))"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=settings.BASE_DIR, env=environment,
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])


def test_the_backend_is_the_console_by_default_or_chosen_by_environment_variable():
    assert _email_settings()[0] == "django.core.mail.backends.console.EmailBackend"
    assert _email_settings(EMAIL_URL="smtp://mailer:secret@mail.example.org:587/?tls=True") == [
        "django.core.mail.backends.smtp.EmailBackend", "mail.example.org", 587, True,
    ]
    assert _email_settings(EMAIL_BACKEND="django.core.mail.backends.filebased.EmailBackend")[0] == (
        "django.core.mail.backends.filebased.EmailBackend"
    )


def test_the_reset_flow_sends_a_link_that_sets_a_new_password(client, researcher):
    researcher.email = "rita@example.org"
    researcher.save(update_fields=["email"])

    form = client.get("/accounts/password_reset/")
    sent = client.post("/accounts/password_reset/", {"email": "rita@example.org"}, follow=True)

    assert "Reset your password" in form.content.decode()
    assert "Check your email" in sent.content.decode()
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["rita@example.org"]
    assert mail.outbox[0].subject == "Reset your Dynabench password"
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", mail.outbox[0].body).group(1)
    page = client.get(link, follow=True)
    done = client.post(page.redirect_chain[-1][0], {"new_password1": "a-New-passw0rd!", "new_password2": "a-New-passw0rd!"}, follow=True)

    assert "Password set" in done.content.decode()
    researcher.refresh_from_db()
    assert researcher.check_password("a-New-passw0rd!")
