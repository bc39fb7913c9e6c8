"""The console's crowd pages are for the task's owners only, checked on the server per page and
per object: an outsider, a validator and the owner of another task get 403 on the pages, and a
study or quiz question of another task is a 404."""

import pytest

from annotation.models import CrowdStudy, Qualification, QuizItem


@pytest.fixture
def study(sentiment_task):
    return CrowdStudy.objects.create(round=sentiment_task.current_round(), platform="prolific", completion_code="C")


@pytest.fixture
def question(sentiment_task):
    quiz = Qualification.objects.create(task=sentiment_task, instructions="Read.")
    return QuizItem.objects.create(qualification=quiz, input={"text": "Fine."}, answer={"label": "positive"})


def test_people_who_do_not_own_the_task_get_403(client, outsider, validator, nli_owner, study, question):
    for user in (outsider, validator, nli_owner):
        client.force_login(user)
        for url in ("/tasks/sentiment/console/crowd/", f"/tasks/sentiment/console/crowd/studies/{study.pk}/",
                    "/tasks/sentiment/console/crowd/quiz/"):
            assert client.get(url).status_code == 403, (user, url)
        assert client.post(f"/tasks/sentiment/console/crowd/studies/{study.pk}/token").status_code == 403
        assert client.post(f"/tasks/sentiment/console/crowd/quiz/questions/{question.pk}/delete").status_code == 403
    assert QuizItem.objects.filter(pk=question.pk).exists()


def test_another_tasks_objects_are_not_found_through_ones_own_console(client, nli_owner, study, question):
    client.force_login(nli_owner)
    assert client.get(f"/tasks/nli/console/crowd/studies/{study.pk}/").status_code == 404
    assert client.post(f"/tasks/nli/console/crowd/studies/{study.pk}/token").status_code == 404
    assert client.post(f"/tasks/nli/console/crowd/quiz/questions/{question.pk}/delete").status_code == 404
    assert QuizItem.objects.filter(pk=question.pk).exists()
