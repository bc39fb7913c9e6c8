"""Every proposal route checks on the server who asks: anonymous users go to the login page, another
user gets a 404 for someone else's proposal and a 403 from the queue and the decision route (a task
owner too: owners are staff, not reviewers), a decided proposal cannot be decided again, and only the
proposer revises, only when changes were requested."""

import pytest
from django.test import Client

from community.proposals import decide_proposal, revise_proposal, submit_proposal
from community.tests.proposal_support import definition_file, proposal_fields
from dynabench.errors import NotAllowed, RuleError


def test_routes_and_rules_refuse_the_wrong_people(researcher, outsider, owner, admin_user):
    proposal = submit_proposal(proposer=researcher, fields=proposal_fields(), definition_file=definition_file())
    anonymous, otto, olga, rita, ada = Client(), Client(), Client(), Client(), Client()
    otto.force_login(outsider)
    olga.force_login(owner)
    rita.force_login(researcher)
    ada.force_login(admin_user)

    assert anonymous.get("/proposals/new/").status_code == 302
    assert anonymous.post(f"/proposals/{proposal.pk}/decide/", {"decision": "approve"}).status_code == 302
    assert otto.get(f"/proposals/{proposal.pk}/").status_code == 404
    assert otto.get(f"/proposals/{proposal.pk}/revise/").status_code == 404
    assert olga.get("/proposals/review/").status_code == 403
    assert olga.post(f"/proposals/{proposal.pk}/decide/", {"decision": "approve"}).status_code == 403
    assert rita.post(f"/proposals/{proposal.pk}/decide/", {"decision": "approve"}).status_code == 403
    assert rita.get(f"/proposals/{proposal.pk}/").status_code == 200
    assert ada.get("/proposals/review/").status_code == 200
    with pytest.raises(NotAllowed):
        decide_proposal(proposal=proposal, reviewer=owner, decision="approve")
    with pytest.raises(RuleError) as not_revisable:
        revise_proposal(proposal=proposal, proposer=researcher, fields=proposal_fields())
    assert not_revisable.value.status_code == 409

    decide_proposal(proposal=proposal, reviewer=admin_user, decision="reject", message="Out of scope.")
    with pytest.raises(RuleError) as twice:
        decide_proposal(proposal=proposal, reviewer=admin_user, decision="approve")
    with pytest.raises(NotAllowed):
        revise_proposal(proposal=proposal, proposer=outsider, fields=proposal_fields())
    assert twice.value.status_code == 409
    assert otto.get("/admin/community/taskproposal/").status_code in (302, 403)
    assert ada.get("/admin/community/taskproposal/").status_code == 200
