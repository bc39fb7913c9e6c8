"""Finding 9: ``DYNABENCH_PRODUCTION=1`` switches on the HTTPS settings; ``check --deploy`` is clean.

Old code: no ``Secure`` cookies, no HSTS, no proxy SSL header: ``check --deploy`` warned.
Each check runs ``manage.py`` in a subprocess with a controlled environment.
"""

import os
import subprocess
import sys

from django.conf import settings


def _manage(*args, extra_env: dict) -> subprocess.CompletedProcess:
    # A deployment's environment: none of the development switches (browser tests set the async one).
    dev = {"DEBUG", "DYNABENCH_PRODUCTION", "SECURE_SSL_REDIRECT", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in dev}
    env.update({"DJANGO_SETTINGS_MODULE": "dynabench.settings", "DEBUG": "0", **extra_env})
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_reports_nothing_in_production():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", extra_env={"DYNABENCH_PRODUCTION": "1"})

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_production_turns_on_hsts_secure_cookies_and_the_proxy_header():
    code = (
        "from django.conf import settings as s; "
        "print(s.SECURE_HSTS_SECONDS, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, s.SECURE_PROXY_SSL_HEADER)"
    )
    result = _manage("shell", "-c", code, extra_env={"DYNABENCH_PRODUCTION": "1"})

    assert result.stdout.split("\n")[-2] == "31536000 True True True ('HTTP_X_FORWARDED_PROTO', 'https')", result.stderr


def test_without_the_variable_a_laptop_keeps_plain_http():
    result = _manage("check", "--deploy", extra_env={})

    assert "security.W004" in result.stderr + result.stdout  # no HSTS: the warning is what production turns off
