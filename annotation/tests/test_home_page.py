"""The home page lists the four default tasks, each linking to its page."""

from django.urls import reverse


def test_it_lists_the_four_tasks(client, default_tasks):
    response = client.get("/")

    assert response.status_code == 200
    page = response.content.decode()
    for task in default_tasks.values():
        assert f'data-task="{task.code}"' in page
        assert task.name in page
        assert reverse("annotation:task_detail", args=[task.code]) in page


def test_it_leaves_out_an_inactive_task(client, default_tasks):
    default_tasks["qa"].active = False
    default_tasks["qa"].save()

    page = client.get("/").content.decode()

    assert 'data-task="qa"' not in page and 'data-task="nli"' in page
