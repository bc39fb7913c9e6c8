"""A paid-crowd worker on a chat task works on the chat page (the write page sends them there): it
shows their study's progress as the write page does, counted up by each judged conversation or
comparison, with the link to the study page where they finish."""

import re

from django.urls import reverse

from annotation.tests.crowd_helpers import enter, pid, prolific_study


def _state(html: str) -> str:
    return re.search(r'name="state" value="([^"]+)"', html).group(1)


def test_the_chat_page_shows_the_crowd_workers_progress(client, chat_task, endpoint_server):
    study = prolific_study(chat_task.current_round(), required=2)
    session = enter(study, pid(1), "session-1")
    client.force_login(session.worker.user)
    client.post(reverse("annotation:acknowledge_warning", args=[chat_task.code]))
    chat = reverse("annotation:chat", args=[chat_task.code])
    progress = reverse("annotation:crowd_progress", args=[chat_task.code, 1, "prolific", "write"])

    page = client.get(chat + "?mode=side_by_side").content.decode()
    assert 'data-crowd-progress="0"' in page and "0 of 2 examples done" in page
    page = client.post(reverse("annotation:chat_turn", args=[chat_task.code]),
                       {"state": _state(page), "prompt": "what year did the museum open"}).content.decode()
    judged = client.post(reverse("annotation:chat_judge", args=[chat_task.code]), {"state": _state(page), "preference": "a"})
    assert judged.status_code == 302
    page = client.get(judged["Location"]).content.decode()
    assert 'data-crowd-progress="1"' in page and "1 of 2 examples done" in page and f'href="{progress}"' in page


def test_the_chat_page_shows_no_study_to_others(client, chat_task, annotator, endpoint_server):
    prolific_study(chat_task.current_round(), required=2)
    client.force_login(annotator)
    client.post(reverse("annotation:acknowledge_warning", args=[chat_task.code]))
    page = client.get(reverse("annotation:chat", args=[chat_task.code]) + "?mode=conversation").content.decode()
    assert "crowd-banner" not in page
