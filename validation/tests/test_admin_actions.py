"""The round admin actions close rounds and export them."""

import json

from django.contrib.admin import ModelAdmin, site
from django.contrib.messages.storage.fallback import FallbackStorage
from django.test import RequestFactory

from tasks.models import Round
from validation.admin_actions import close_rounds_into_datasets, export_rounds_jsonl
from validation.services import record_validation
from validation.tests.conftest import make_example


def _request(user):
    request = RequestFactory().post("/admin/tasks/round/", {"confirm": "yes"})
    request.user = user
    request.session = {}
    request._messages = FallbackStorage(request)
    return request


def test_the_close_action_builds_datasets_and_the_export_action_streams(sentiment_task, hate_task, annotator, admin_user):
    make_example(hate_task, annotator)  # another task's example: not in the export
    made = [make_example(sentiment_task, annotator) for _ in range(10)]  # 8/1/1 at the default ratios: no empty split
    for example in made:
        record_validation(example=example, validator=admin_user, label="correct", mode="owner")
    rounds = Round.objects.filter(pk=sentiment_task.current_round().pk)
    modeladmin = ModelAdmin(Round, site)

    close_rounds_into_datasets(modeladmin, _request(admin_user), rounds)
    response = export_rounds_jsonl(modeladmin, _request(admin_user), rounds)

    assert rounds.get().status == "closed"
    assert sentiment_task.datasets.count() == 3
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert [line["id"] for line in lines] == [e.pk for e in made]
    assert {line["validation_state"] for line in lines} == {"verified_correct"}


def test_non_owners_are_refused(sentiment_task, validator):
    validator.is_staff = True
    rounds = Round.objects.filter(pk=sentiment_task.current_round().pk)
    request = _request(validator)

    close_rounds_into_datasets(ModelAdmin(Round, site), request, rounds)

    assert rounds.get().status == "open"
    assert "Only an owner" in str(list(request._messages)[0])
