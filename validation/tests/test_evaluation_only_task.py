"""An evaluation-only task (collection switched off) has no create or validation pages, only its
datasets, submissions and leaderboard; the home page shows it as a benchmark."""

from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.services import create_example
from dynabench.errors import RuleError
from tasks.models import Round, Task
from validation.queue import next_example_for

DEFINITION = Path(__file__).resolve().parents[2] / "tasks" / "data" / "task_definitions" / "flores-mini.json"


@pytest.fixture
def benchmark(db):
    call_command("create_task", str(DEFINITION))
    return Task.objects.get(code="flores-mini")


def test_the_home_page_shows_it_as_a_benchmark(benchmark, client):
    page = client.get(reverse("annotation:task_list")).content.decode()
    card = page[page.index('data-task="flores-mini"'):]
    card = card[: card.index("</div>")]
    assert "data-benchmark" in card and "Benchmark" in card
    assert reverse("leaderboard:leaderboard", args=["flores-mini"]) in card
    assert reverse("leaderboard:submit", args=["flores-mini"]) in card
    assert reverse("annotation:create", args=["flores-mini"]) not in card
    detail = client.get(reverse("annotation:task_detail", args=["flores-mini"])).content.decode()
    assert "Benchmark" in detail and "Write examples" not in detail and "Validate examples" not in detail


@pytest.mark.parametrize("route", ["annotation:create", "annotation:sandbox", "validation:queue"])
def test_it_has_no_create_or_validation_pages(benchmark, client, annotator, validator, route):
    client.force_login(validator if route.startswith("validation") else annotator)
    assert client.get(reverse(route, args=["flores-mini"])).status_code == 404


def test_the_services_refuse_examples_and_serve_nothing_to_validate(benchmark, annotator, validator):
    round_ = Round.objects.create(task=benchmark, number=1)  # even a round made by hand collects nothing
    context = round_.contexts.create(uid="c1", data={"language_pair": "eng_Latn-fra_Latn"})
    with pytest.raises(RuleError) as info:
        create_example(user=annotator, context=context, input={"source": "Hello."}, target={"references": ["Bonjour."]})
    assert (info.value.code, info.value.status_code) == ("not_collecting", 409)
    assert "evaluation-only benchmark" in info.value.message
    assert next_example_for(validator=validator, round=round_) is None
    assert not round_.examples.exists()
