"""Badges follow the running tallies: a first example and a first fooled one show on the annotator's
page, the fooled-count milestones and a round's top annotator follow the rule; an owner turns them
off for the task and they disappear; nobody else may."""

from django.test import Client

from community.badges import badges_from
from validation.tests.conftest import make_example


def test_the_rule():
    codes = lambda **totals: [b.code for b in badges_from(top_rounds=[], **totals)]

    assert codes(collected=0, fooled=0, verified_fooled=0) == []
    assert codes(collected=3, fooled=0, verified_fooled=0) == ["first_example"]
    assert codes(collected=120, fooled=101, verified_fooled=100) == ["first_example", "first_fooled", "verified_fooled_10", "verified_fooled_100"]
    assert [b.name for b in badges_from(collected=1, fooled=1, verified_fooled=1, top_rounds=["NLI round 2"])][-1] == "Top of NLI round 2"


def test_the_page_shows_them_until_an_owner_turns_them_off(sentiment_task, annotator, owner, outsider):
    make_example(sentiment_task, annotator, model_wrong=True)
    annie, olga, otto = Client(), Client(), Client()
    annie.force_login(annotator)
    olga.force_login(owner)
    otto.force_login(outsider)

    before = annie.get(f"/users/{annotator.username}/").content.decode()
    refused = otto.post("/tasks/sentiment/badges/", {})
    olga.post("/tasks/sentiment/badges/", {})  # the box unticked: off
    after = annie.get(f"/users/{annotator.username}/").content.decode()

    assert "First example" in before and "Model fooler" in before
    assert refused.status_code == 403
    assert "Model fooler" not in after and "No badges yet" in after
    assert 'id="badges-state">off<' in olga.get("/tasks/sentiment/badges/").content.decode()
