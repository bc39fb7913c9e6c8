"""Every model change has its migration: ``makemigrations --check`` finds nothing to write. (A task
kind's registration order is part of ``Task.kind``'s choices, so reordering the kinds package's
imports would show up here.)"""

import io

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_makemigrations_finds_nothing_to_write():
    out = io.StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()
