"""Settings of the end-to-end tests' scratch platforms (``tests.worker_stack.WorkerStack``): the
platform's own ``dynabench.settings``, with the cheap password hasher the suite uses in its own
processes (``conftest._fast_password_hashing``). With Django's default (PBKDF2, 1,000,000
iterations) every user a stack creates and every log-in its web server checks costs about
0.4 CPU-seconds; the campaign test alone creates eight users and logs in eight times."""

from dynabench.settings import *  # noqa: F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
