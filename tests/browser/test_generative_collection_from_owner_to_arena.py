"""Issue 31 in Chromium, as new users would do it: an owner creates the built-in safety chat task
and adds two endpoint models (the local OpenAI-compatible server) in the console; an annotator has
a three-turn conversation streamed into the page and judges it, then does five side-by-side
comparisons; a validator confirms and overturns judgments in the review queue; the arena page
shows both models with intervals, and the task's leaderboard page the arena beside each chat
model's generative vMER. The owner is no administrator; no page logs a browser console error, at
1280 px or at 390 px."""

import re
from pathlib import Path

import django_rq
import pytest
from playwright.sync_api import expect
from rq import SimpleWorker
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from annotation.models import Example
from tasks.models import MLModel, Task
from tests.browser_support import PHONE, browser_only, console_errors, fresh_page, log_in, save_screenshot

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]

DEFINITION = Path(__file__).resolve().parents[2] / "tasks" / "data" / "task_definitions" / "adversarial-safety-chat.json"


def _user(username, *roles):
    user = User.objects.create_user(username=username, password="pw-12345-long")
    for role in roles:
        user.groups.add(Group.objects.get(name=role))
    return user


def test_owner_annotator_validator_and_arena(page, browser, client, live_server, endpoint_server, settings):
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    errors = console_errors(page)
    owner = _user("oona", "annotator", "validator")
    assert not owner.is_staff and not owner.is_superuser  # an owner of the task, no administrator
    annotator = _user("ari", "annotator")
    validator = _user("vera", "validator")

    # The owner creates the task from its definition file and becomes its owner.
    call_command("create_task", str(DEFINITION))
    task = Task.objects.get(code="adversarial-safety-chat")
    task.owners.add(owner)

    # In the console: one validation settles a judgment (a small crowd), two endpoint models.
    log_in(page, client, owner, live_server)
    page.goto(f"/tasks/{task.code}/console/")
    page.locator("input[name=validations_needed]").fill("1")
    page.locator("input[name=validations_needed]").press("Enter")
    page.wait_for_load_state()
    task.refresh_from_db()
    assert task.config["validations_needed"] == 1
    for name, max_tokens in (("alpha", "6"), ("beta", "4")):
        page.goto(f"/tasks/{task.code}/console/rounds/")
        form = page.locator("form[data-add-endpoint]")
        form.locator("input[name=name]").fill(name)
        form.locator("input[name=base_url]").fill(endpoint_server.url)
        form.locator("input[name=model_name]").fill("tiny-gpt2")
        form.locator("input[name=max_tokens]").fill(max_tokens)
        form.locator("button[type=submit]").click()
        page.wait_for_load_state()
    assert MLModel.objects.filter(task=task, kind=MLModel.Kind.ENDPOINT).count() == 2
    # ... and puts both in the loop of round 1, which the definition opened with its scenarios.
    for name in ("alpha", "beta"):
        page.goto(f"/tasks/{task.code}/console/rounds/")
        form = page.locator("form[data-add-loop-model]")
        form.locator("select[name=model]").select_option(form.locator("option", has_text=name).get_attribute("value"))
        form.locator("button[type=submit]").click()
        page.get_by_text(f"{name} is now in the loop").wait_for()
    assert sorted(task.current_round().target_models.values_list("name", flat=True)) == ["alpha", "beta"]

    # The annotator: past the content warning, a three-turn conversation, streamed.
    page.context.clear_cookies()
    log_in(page, client, annotator, live_server)
    page.goto(f"/tasks/{task.code}/write/")
    page.get_by_role("button", name="I understand, continue").click()
    page.locator("[data-start=conversation]").click()
    for n, prompt in enumerate(["tell me about the museum", "who wrote the first algorithm", "i hate waiting"], start=1):
        page.locator("#prompt").fill(prompt)
        page.locator("[data-send]").click()
        expect(page.locator("#chat [data-turn=model]")).to_have_count(n)  # the fragment swapped in after "done"
        expect(page.locator("[data-streaming]")).to_have_count(0)
    assert page.evaluate("window.chatFirstToken > 0")  # tokens came as server-sent events
    assert page.locator("form[data-chat-stream]").count() == 0  # three turns used
    answers = page.locator("#chat [data-turn=model] .text").all_inner_texts()
    assert all(a.strip() for a in answers)
    save_screenshot(page, "chat-conversation")
    page.locator("input[name=verdict][value=fails]").check()
    page.locator("#category").select_option("hate")
    page.locator("#explanation").fill("The model repeats hateful words when asked.")
    page.locator("[data-judge]").click()
    page.wait_for_selector("[data-saved-example]")
    conversation = Example.objects.get(input__mode="conversation")
    assert [t["content"] for t in conversation.model_output["transcript"] if t["role"] == "assistant"] == [a.strip() for a in answers]

    # Five side-by-side comparisons.
    for n in range(5):
        page.goto(f"/tasks/{task.code}/chat/?mode=side_by_side")
        page.locator("#prompt").fill(f"what year did the museum open {n}")
        page.locator("[data-send]").click()
        page.wait_for_selector("#chat [data-judge-form]")
        assert page.locator("#chat [data-answer-side]").count() == 2
        if n == 0:
            save_screenshot(page, "chat-side-by-side")
        page.locator(f"input[name=preference][value={'ab'[n % 2] if n < 4 else 'both_bad'}]").check()
        if n == 4:
            page.locator("input[name=failing][value=a]").check()
            page.locator("#category").select_option("violence")
            page.locator("#explanation").fill("A describes how to hurt someone.")
        page.locator("[data-judge]").click()
        page.wait_for_selector("[data-saved-example]")
    assert Example.objects.filter(input__mode="side_by_side").count() == 5

    # The validator confirms every judgment but one, which they overturn.
    page.context.clear_cookies()
    log_in(page, client, validator, live_server)
    page.goto(f"/tasks/{task.code}/validate/")
    seen = []
    for n in range(6):
        card = page.locator("[data-example-id]")
        card.wait_for()
        example_id = card.get_attribute("data-example-id")
        assert example_id not in seen
        seen.append(example_id)
        assert page.locator("[data-judgment]").count() == 1
        if n == 1:
            save_screenshot(page, "review-judgment")
        verdict = "incorrect" if n == 2 else "correct"
        page.locator(f"input[name=label][value={verdict}]").check()
        page.locator("#review-form button[type=submit]").click()
        expect(page.locator(f"[data-example-id='{example_id}']")).to_have_count(0)
    states = Example.objects.values_list("validation_state", flat=True)
    assert sorted(states) == ["verified_correct"] * 5 + ["verified_incorrect"]

    # The arena shows both models with intervals, and the validated failure rates, once the worker has
    # built the board (the judgments' settling queued the job; leaderboard/arena_board.py).
    django_rq.get_worker("default", worker_class=SimpleWorker).work(burst=True)
    page.goto(f"/tasks/{task.code}/arena/", timeout=120_000)
    expect(page.locator("[data-arena-status]")).to_contain_text("As of")
    rows = page.locator("#arena-table tbody tr")
    assert rows.count() == 2
    assert set(page.locator("[data-arena-model]").evaluate_all("rows => rows.map(r => r.dataset.arenaModel)")) == {"alpha", "beta"}
    for interval in page.locator("[data-interval]").all_inner_texts():
        assert re.fullmatch(r"\d+ – \d+", interval.strip())
    save_screenshot(page, "arena")

    # The task's leaderboard page: the arena ratings beside each chat model's generative vMER.
    page.goto(f"/tasks/{task.code}/leaderboard/")
    chat_rows = page.locator("#chat-table [data-chat-model]")
    assert sorted(chat_rows.evaluate_all("rows => rows.map(r => r.dataset.chatModel)")) == ["alpha", "beta"]
    assert all(re.fullmatch(r"\d+%", v.strip()) for v in page.locator("#chat-table [data-vmer]").all_inner_texts())
    assert errors == []

    # The same pages on a phone.
    with fresh_page(browser, live_server, PHONE) as phone:
        phone_errors = console_errors(phone)
        log_in(phone, client, annotator, live_server)
        for path in (f"/tasks/{task.code}/chat/?mode=conversation", f"/tasks/{task.code}/chat/?mode=side_by_side",
                     f"/tasks/{task.code}/arena/", f"/tasks/{task.code}/leaderboard/"):
            phone.goto(path)
            if "mode=conversation" in path:  # one streamed turn at 390 px
                phone.locator("#prompt").fill("tell me about the museum")
                phone.locator("[data-send]").click()
                expect(phone.locator("#chat [data-turn=model]")).to_have_count(1)
            phone.wait_for_load_state("networkidle")
    assert phone_errors == []
