"""The admin's round form applies the console's loop rules: the last model cannot leave an open
round's loop (it could then take no example and never close)."""

from django.urls import reverse

from tasks.models import MLModel


def test_emptying_an_open_rounds_loop_is_refused(client, admin_user, sentiment_task):
    round1 = sentiment_task.current_round()
    model = MLModel.objects.create(task=sentiment_task, name="only", path="/models/only")
    round1.target_models.set([model])
    client.force_login(admin_user)

    response = client.post(reverse("admin:tasks_round_change", args=[round1.pk]), {
        "task": sentiment_task.pk, "number": 1, "start": "", "end": "", "target_models": [],
        "contexts-TOTAL_FORMS": 0, "contexts-INITIAL_FORMS": 0, "contexts-MIN_NUM_FORMS": 0, "contexts-MAX_NUM_FORMS": 1000,
    })

    assert response.status_code == 200
    assert "Round 1 is open: keep at least one model in its loop" in response.content.decode()
    assert list(round1.target_models.all()) == [model]
