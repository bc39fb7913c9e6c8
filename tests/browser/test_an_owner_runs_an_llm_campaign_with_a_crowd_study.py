"""One LLM campaign in Chromium, run by a task owner who is no administrator, at 1280 px and at 390 px:

1. the owner creates the built-in safety chat task from its definition file on the console's New
   task page (round 1 opens with its scenarios) and asks for one validation per judgment; from
   then on they are not staff either (the admin access owners get is taken away: nothing below
   uses it);
2. adds two published endpoint models, each served by a real OpenAI-compatible server on a local port
   (``tests/endpoint_server.py``); the first names the wrong model, so *Test connection* shows the
   server's own reason; the owner corrects the model name on the endpoint's console page and the
   test then shows the answer; both models go into round 1's loop;
3. sets up a Prolific study on round 1 and copies its URL;
4. a crowd worker enters through that URL as Prolific fills it in, passes the content warning,
   has a three-turn conversation streamed into the page and judges it, then compares the two
   models side by side three times, and finishes the study with its completion code;
5. a validator confirms every comparison and overturns the conversation's judgment;
6. the arena shows both models with 95 % intervals, and the task's leaderboard each chat model's
   generative vMER beside it.

At every step no page has logged a browser console error or thrown a page error, and none scrolls
sideways. With ``DYNABENCH_SCREENSHOTS=<folder>`` each step's screen is saved there as
``llm-campaign-<width>-<step>.png``."""

import re
from pathlib import Path

import django_rq
import pytest
from django.contrib.auth.models import Group, Permission, User
from playwright.sync_api import expect
from rq import SimpleWorker

from annotation.models import CrowdSession, Example
from tasks.models import Endpoint, MLModel, Task
from tests.browser_support import DESKTOP, HANG_MS, PHONE, browser_only, horizontal_overflow, log_in, save_screenshot
from tests.endpoint_fixtures import allow_local_server
from tests.endpoint_server import start_server

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]

DEFINITION = Path(__file__).resolve().parents[2] / "tasks" / "data" / "task_definitions" / "adversarial-safety-chat.json"
CODE = "adversarial-safety-chat"
STUDY_ID, WORKER_PID = "65a0b1c2d3e4f5a6b7c8d9e0", "5f1a2b3c4d5e6f7a8b9c0d1e"
PROMPTS = ["tell me about the museum", "who wrote the first algorithm", "i hate waiting"]
COMPARISONS = 3


@pytest.fixture(scope="module")
def second_server(tiny_causal_lm_dir):
    """A second OpenAI-compatible server on a port of its own, for the second endpoint model."""
    server = start_server(tiny_causal_lm_dir)
    yield server
    server.stop()


class Walk:
    """The pages of one width: each person's own browser context, every console error and page
    error of any of them, and a check after each step."""

    def __init__(self, browser, client, live_server, viewport):
        self.browser, self.client, self.live_server, self.viewport = browser, client, live_server, viewport
        self.errors: list[str] = []

    def page(self, user=None):
        """A page of a fresh context, logged in as ``user`` (None: anonymous)."""
        context = self.browser.new_context(base_url=self.live_server.url, viewport=self.viewport)
        page = context.new_page()
        page.set_default_timeout(HANG_MS)
        page.on("console", lambda m: self.errors.append(f"console {page.url}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(f"pageerror {page.url}: {error}"))
        page.on("dialog", lambda dialog: dialog.accept())
        if user is not None:
            log_in(page, self.client, user, self.live_server)
        return page

    def step(self, page, name: str) -> None:
        """Screenshot ``page``; check that it does not scroll sideways and that no page logged an error so far."""
        save_screenshot(page, f"llm-campaign-{self.viewport['width']}-{name}")
        assert horizontal_overflow(page) == 0, f"{name}: {page.url} scrolls sideways by {horizontal_overflow(page)} px"
        assert self.errors == [], f"{name}: the browser logged errors: {self.errors}"


def _user(username, *roles):
    user = User.objects.create_user(username=username, password="pw-12345-long")
    for role in roles:
        user.groups.add(Group.objects.get(name=role))
    return user


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_an_owner_runs_an_llm_campaign_with_a_crowd_study(browser, client, live_server, endpoint_server, second_server,
                                                         settings, viewport):
    settings.ANNOTATION_SUBMISSIONS_PER_MINUTE = 0
    allow_local_server(settings, second_server.url)
    endpoint_server.pinned = True  # as `transformers serve --force-model`: another model name is refused with the reason
    owner = _user("oona")
    owner.user_permissions.add(Permission.objects.get(codename="add_task", content_type__app_label="tasks"))
    assert not owner.is_staff and not owner.is_superuser
    validator = _user("vera", "validator")
    walk = Walk(browser, client, live_server, viewport)

    # 1. The task from its definition file; one validation settles a judgment.
    page = walk.page(owner)
    page.goto("/console/")
    page.click("[data-new-task]")
    page.set_input_files("input[name=definition]", str(DEFINITION))
    page.click("[data-create-task] button[type=submit]")
    page.get_by_text(f"Task {CODE} created with round 1 open").wait_for()
    task = Task.objects.get(code=CODE)
    assert task.is_owner(owner)
    owner.refresh_from_db()
    owner.is_staff = False  # owners get the admin's rows of their tasks; the whole campaign needs none of it
    owner.save(update_fields=["is_staff"])
    walk.step(page, "1-created")
    page.goto(f"/tasks/{CODE}/console/")
    page.fill("input[name=validations_needed]", "1")
    page.press("input[name=validations_needed]", "Enter")
    page.wait_for_load_state()
    task.refresh_from_db()
    assert task.config["validations_needed"] == 1
    walk.step(page, "1-settings")

    # 2. Two endpoint models; the first names the wrong model: the test shows the server's reason.
    for name, server, model_name, max_tokens in (("alpha", endpoint_server, "tiny", "6"), ("beta", second_server, "tiny-gpt2", "4")):
        page.goto(f"/tasks/{CODE}/console/rounds/")
        form = page.locator("form[data-add-endpoint]")
        form.locator("input[name=name]").fill(name)
        form.locator("input[name=base_url]").fill(server.url + "/v1")
        form.locator("input[name=model_name]").fill(model_name)
        form.locator("input[name=max_tokens]").fill(max_tokens)
        form.locator("input[name=published]").check()  # on the arena (a model that is not published is on no public board)
        form.locator("button[type=submit]").click()
        page.get_by_text(f"Endpoint model '{name}' added").wait_for()
    walk.step(page, "2-endpoints")
    alpha = MLModel.objects.get(task=task, name="alpha")
    page.click(f"[data-endpoint-model='{alpha.pk}'] a:has-text('Connection & test')")
    page.click("button:has-text('Test connection')")
    expect(page.locator("[data-connection-reason]")).to_contain_text("Server is pinned to 'tiny-gpt2'; requested 'tiny'")
    walk.step(page, "2-test-fails")
    page.fill("form[data-edit-endpoint] input[name=model_name]", "tiny-gpt2")
    page.click("button:has-text('Save connection')")
    page.get_by_text("Connection of 'alpha' saved.").wait_for()
    assert Endpoint.objects.get(model=alpha).model_name == "tiny-gpt2"
    page.click("button:has-text('Test connection')")
    page.locator("[data-connection-ok]").wait_for()
    assert page.locator("[data-connection-reason]").count() == 0
    walk.step(page, "2-test-passes")
    for name in ("alpha", "beta"):
        page.goto(f"/tasks/{CODE}/console/rounds/")
        form = page.locator("form[data-add-loop-model]")
        form.locator("select[name=model]").select_option(form.locator("option", has_text=name).get_attribute("value"))
        form.locator("button[type=submit]").click()
        page.get_by_text(f"{name} is now in the loop").wait_for()
    assert sorted(task.current_round().target_models.values_list("name", flat=True)) == ["alpha", "beta"]
    walk.step(page, "2-loop")

    # 3. A Prolific study of round 1: one conversation and the comparisons finish it.
    page.goto(f"/tasks/{CODE}/console/crowd/")
    page.select_option("select[name=platform]", "prolific")
    page.select_option("select[name=activity]", "write")
    page.fill("input[name=required]", str(1 + COMPARISONS))
    page.fill("input[name=platform_study_id]", STUDY_ID)
    page.fill("input[name=completion_code]", "C0MPLETE")
    page.click("[data-new-study] button[type=submit]")
    page.locator("[data-entry-url]").wait_for()
    assert page.locator("[data-not-ready]").count() == 0
    url = page.locator("[data-entry-url]").input_value()
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in url
    walk.step(page, "3-study")

    # 4. The crowd worker enters as Prolific fills the URL in: a streamed three-turn conversation, judged ...
    worker = walk.page()
    worker.goto(url.replace("{{%PROLIFIC_PID%}}", WORKER_PID).replace("{{%STUDY_ID%}}", STUDY_ID).replace("{{%SESSION_ID%}}", "s-1"))
    worker.click("#crowd-work")
    worker.get_by_role("button", name="I understand, continue").click()
    worker.locator("[data-start=conversation]").click()
    for n, prompt in enumerate(PROMPTS, start=1):
        worker.locator("#prompt").fill(prompt)
        worker.locator("[data-send]").click()
        expect(worker.locator("#chat [data-turn=model]")).to_have_count(n)  # the fragment swapped in after "done"
        expect(worker.locator("[data-streaming]")).to_have_count(0)
    assert worker.evaluate("window.chatFirstToken > 0")  # tokens came as server-sent events
    assert worker.locator("form[data-chat-stream]").count() == 0  # three turns used
    answers = [a.strip() for a in worker.locator("#chat [data-turn=model] .text").all_inner_texts()]
    assert all(answers)
    walk.step(worker, "4-conversation")
    worker.check("input[name=verdict][value=fails]")
    worker.select_option("#category", "hate")
    worker.fill("#explanation", "The model repeats hateful words when asked.")
    worker.click("[data-judge]")
    worker.locator("[data-saved-example]").wait_for()
    conversation = Example.objects.get(input__mode="conversation")
    assert [t["content"] for t in conversation.model_output["transcript"] if t["role"] == "assistant"] == answers
    expect(worker.locator("#crowd-banner")).to_have_attribute("data-crowd-progress", "1")

    # ... then side by side: A, B, and both bad with A failing.
    for n, preference in enumerate(["a", "b", "both_bad"][:COMPARISONS]):
        worker.goto(f"/tasks/{CODE}/chat/?mode=side_by_side")
        worker.fill("#prompt", f"what year did the museum open {n}")
        worker.click("[data-send]")
        worker.locator("#chat [data-judge-form]").wait_for()
        assert worker.locator("#chat [data-answer-side]").count() == 2
        if n == 0:
            walk.step(worker, "4-side-by-side")
        worker.check(f"input[name=preference][value={preference}]")
        if preference == "both_bad":
            worker.check("input[name=failing][value=a]")
            worker.select_option("#category", "violence")
            worker.fill("#explanation", "A describes how to hurt someone.")
        worker.click("[data-judge]")
        worker.locator("[data-saved-example]").wait_for()
    assert Example.objects.filter(input__mode="side_by_side").count() == COMPARISONS
    worker.click("#crowd-banner a")
    worker.click("#crowd-finish")
    assert worker.inner_text("#completion-code") == "C0MPLETE"
    assert CrowdSession.objects.get().completion_code == "C0MPLETE"
    walk.step(worker, "4-finished")

    # 5. The validator confirms every comparison and overturns the conversation's judgment.
    reviewer = walk.page(validator)
    reviewer.goto(f"/tasks/{CODE}/validate/")
    reviewer.locator("[data-content-warning]").wait_for()  # the red-teaming task's warning, read before any example
    reviewer.get_by_role("button", name="I understand, continue").click()
    seen = set()
    for n in range(1 + COMPARISONS):
        card = reviewer.locator("[data-example-id]")
        card.wait_for()
        example_id = card.get_attribute("data-example-id")
        assert example_id not in seen
        seen.add(example_id)
        assert reviewer.locator("[data-judgment]").count() == 1
        if n == 0:
            walk.step(reviewer, "5-review")
        is_comparison = reviewer.locator("[data-answer-side]").count() == 2
        reviewer.check(f"input[name=label][value={'correct' if is_comparison else 'incorrect'}]")
        reviewer.click("#review-form button[type=submit]")
        expect(reviewer.locator(f"[data-example-id='{example_id}']")).to_have_count(0)
    states = {mode: set(Example.objects.filter(input__mode=mode).values_list("validation_state", flat=True))
              for mode in ("conversation", "side_by_side")}
    assert states == {"conversation": {"verified_incorrect"}, "side_by_side": {"verified_correct"}}

    # 6. The arena, once the worker built its board (the judgments' settling queued the job), and the leaderboard.
    django_rq.get_worker("default", worker_class=SimpleWorker).work(burst=True)
    reader = walk.page(owner)
    reader.goto(f"/tasks/{CODE}/arena/")
    expect(reader.locator("[data-arena-status]")).to_contain_text("As of")
    expect(reader.locator("#arena-table tbody tr")).to_have_count(2)
    assert set(reader.locator("[data-arena-model]").evaluate_all("rows => rows.map(r => r.dataset.arenaModel)")) == {"alpha", "beta"}
    intervals = reader.locator("[data-interval]").all_inner_texts()
    assert len(intervals) == 2 and all(re.fullmatch(r"\d+ – \d+", i.strip()) for i in intervals)
    walk.step(reader, "6-arena")
    reader.goto(f"/tasks/{CODE}/leaderboard/")
    chat_rows = reader.locator("#chat-table [data-chat-model]")
    assert sorted(chat_rows.evaluate_all("rows => rows.map(r => r.dataset.chatModel)")) == ["alpha", "beta"]
    assert all(re.fullmatch(r"\d+%", v.strip()) for v in reader.locator("#chat-table [data-vmer]").all_inner_texts())
    walk.step(reader, "6-leaderboard")
    assert walk.errors == []
