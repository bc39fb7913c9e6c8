"""A turn still running long after the page's wait for a model (its web process was killed) is failed
when the conversation is next read: the reloaded page says why and puts the prompt back in the form,
and the conversation goes on. Drafts nobody judged expire, are removed and never become examples."""

import datetime
import re

from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from annotation.chat_drafts import DRAFT_MAX_AGE_S, STOPPED
from annotation.models import ChatDraft, ChatTurn, Example


def _state(html):
    return re.search(r'name="state" value="([^"]+)"', html).group(1)


def test_a_stalled_turn_is_failed_and_its_prompt_offered_again(client, annotator, chat_task, endpoint_server, settings):
    client.force_login(annotator)
    client.post(reverse("annotation:acknowledge_warning", args=[chat_task.code]))
    page = reverse("annotation:chat", args=[chat_task.code])
    state = _state(client.get(page + "?mode=conversation").content.decode())
    draft = ChatDraft.objects.get()
    turn = ChatTurn.objects.create(draft=draft, number=0, prompt="what happens at closing time?")
    ChatTurn.objects.filter(pk=turn.pk).update(
        started_at=timezone.now() - datetime.timedelta(seconds=settings.DYNABENCH_MODEL_WAIT_S + 120))

    reloaded = client.get(page, {"resume": state}).content.decode()

    turn.refresh_from_db()
    assert turn.status == "failed" and turn.reason == STOPPED
    assert "got no answer" in reloaded and "what happens at closing time?</textarea>" in reloaded
    answered = client.post(reverse("annotation:chat_turn", args=[chat_task.code]), {"state": state, "prompt": turn.prompt})
    assert answered.status_code == 200
    assert ChatTurn.objects.filter(draft=draft, status="done").count() == 1
    assert "got no answer" not in client.get(page, {"resume": state}).content.decode()


def test_drafts_nobody_judged_expire_and_are_no_examples(client, annotator, chat_task, endpoint_server):
    client.force_login(annotator)
    client.post(reverse("annotation:acknowledge_warning", args=[chat_task.code]))
    page = reverse("annotation:chat", args=[chat_task.code])
    state = _state(client.get(page + "?mode=conversation").content.decode())
    client.post(reverse("annotation:chat_turn", args=[chat_task.code]), {"state": state, "prompt": "hello"})
    ChatDraft.objects.update(updated_at=timezone.now() - datetime.timedelta(seconds=DRAFT_MAX_AGE_S + 1))

    expired = client.get(page, {"resume": state})
    assert expired.status_code == 400 and "expired" in expired.content.decode()
    call_command("remove_stale_chat_drafts")
    assert not ChatDraft.objects.exists() and not ChatTurn.objects.exists() and not Example.objects.exists()
