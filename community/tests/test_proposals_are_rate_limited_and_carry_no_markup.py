"""A proposer can store a few proposals a day (``TASK_PROPOSALS_PER_DAY``; forms refused for their
problems do not count); what they wrote is shown
escaped (names, labels, the definition, the reviewer's message) and the Markdown instructions go
through the nh3 sanitiser: no script or event handler reaches a page."""

import pytest
from django.test import Client

from community.proposals import submit_proposal
from community.tests.proposal_support import definition_file, proposal_fields
from dynabench.errors import FieldErrors, RateLimited


def test_the_daily_limit(researcher, settings):
    settings.TASK_PROPOSALS_PER_DAY = 2
    for _ in range(3):  # refused forms are not counted
        with pytest.raises(FieldErrors):
            submit_proposal(proposer=researcher, fields=proposal_fields(code="Not A Slug"), definition_file=definition_file())
    for i in range(2):
        submit_proposal(proposer=researcher, fields=proposal_fields(code=f"claims-{i}"), definition_file=definition_file())
    with pytest.raises(RateLimited) as refused:
        submit_proposal(proposer=researcher, fields=proposal_fields(code="claims-3"), definition_file=definition_file())
    assert refused.value.status_code == 429


def test_no_markup_reaches_the_pages(researcher, admin_user):
    evil = '<script>alert(1)</script>'
    proposal = submit_proposal(
        proposer=researcher,
        fields=proposal_fields(name=f"Claims {evil}", labels=[f"yes{evil}", "no"],
                               instructions=f'Hello {evil} <img src=x onerror="alert(2)"> [x](javascript:alert(3))'),
        definition_file=definition_file(content_warning=evil),
    )
    ada, rita = Client(), Client()
    ada.force_login(admin_user)
    rita.force_login(researcher)

    pages = [ada.get(f"/proposals/{proposal.pk}/").content.decode(), ada.get("/proposals/review/").content.decode(),
             rita.get("/proposals/").content.decode()]

    for page in pages:
        assert "<script>alert" not in page and "onerror=" not in page and "javascript:alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[0]
