"""In Chromium, a task owner turns on an AI validator (a judge) for the open round on the console's *AI
help* page: a stand-in OpenAI-compatible endpoint (``tests/judge_server.py``) answers each example from a
script, wrong on two of twelve. The voting job (run here as a worker would, ``run_queued_jobs``) votes on
every example already waiting for validation; four validators then settle them, three votes each, one
of the validators disagreeing twice (a fourth vote settles those), through the service the review page
calls and, for the last vote, through the review page itself in Chromium, which never shows the AI vote,
its reason or the judge's name. A new example entering the queue is voted on at once, and the judge,
now measured on twelve settled examples above the owner's threshold, counts. The round dashboard then
shows the judge's Cohen's κ against the consensus with its 95 % interval beside each validator's, the
confusion matrix and the judge's reason where it disagreed, at 1280 px and without sideways scrolling
at 390 px. No page logs a browser error.

The dashboard's card is saved as ``console-ai-validator.png`` in the test's folder (and in the folder
``DYNABENCH_SCREENSHOTS`` names, for ``docs/screenshots``)."""

import os
import shutil

import pytest
from django.test import Client
from playwright.sync_api import expect

from annotation.models import Example, ValidationState
from tasks.loop.endpoints.breaker import reset_breaker
from tasks.loop.endpoints.records import create_endpoint_model
from tests.browser_support import HANG_MS, PHONE, browser_only, console_errors, fresh_page, horizontal_overflow, log_in, run_queued_jobs
from tests.endpoint_fixtures import allow_local_server
from tests.judge_server import start_judge_server
from validation.judge_models import AIVote, RoundJudge
from validation.services import record_validation
from validation.tests.conftest import leased, make_example, make_user

pytestmark = [*browser_only, pytest.mark.django_db(transaction=True)]

JUDGE = "owl-judge"
N = 12
JUDGE_WRONG = {0, 1}  # the judge's verdict is the other one
WANDA_WRONG = {4, 6}  # wanda's vote is the other one: a fourth validator settles the example
PEOPLE = ("vera", "viktor", "wanda", "xena")
IN_CHROMIUM = N - 1  # vera's vote on this example goes through the review page
SENTENCES = ["The soup was cold and the waiter never came back.", "A lovely little film, warm and funny.",
             "The battery died after an hour.", "Best pizza I have had in years."]


def truth(i: int) -> str:
    return "correct" if i % 3 else "incorrect"


def flipped(label: str) -> str:
    return "incorrect" if label == "correct" else "correct"


def voters(i: int) -> list[str]:
    """Who votes on example ``i``, in turn: three of the four, by rotation; the fourth too where wanda disagrees."""
    order = [PEOPLE[(i + k) % 4] for k in range(4)]
    return order if i in WANDA_WRONG else order[:3]


@pytest.fixture
def judge_server(settings):
    server = start_judge_server()
    allow_local_server(settings, server.url)
    yield server
    server.stop()


def test_the_owner_turns_on_the_judge_and_reads_its_kappa_beside_each_validators(browser, client, live_server, sentiment_task,
                                                                                 annotator, owner, judge_server, tmp_path):
    open_round = sentiment_task.current_round()
    judge = create_endpoint_model(task=sentiment_task, owner=None, name=JUDGE, base_url=judge_server.url, model_name="judge",
                                  params={"temperature": 0, "max_tokens": 64}, timeout_s=10)
    reset_breaker(judge)
    judge_server.answers = {f"k1-{i}": flipped(truth(i)) if i in JUDGE_WRONG else truth(i) for i in range(N + 1)}
    examples = [make_example(sentiment_task, annotator, text=f"[k1-{i}] {SENTENCES[i % len(SENTENCES)]}") for i in range(N)]
    people = {name: make_user(name, "validator") for name in PEOPLE}

    # 1. The owner turns the judge on: one counted vote, once its κ on 10 settled examples is above 0.5.
    owner_page = browser.new_context(base_url=live_server.url).new_page()
    owner_page.set_default_timeout(HANG_MS)
    errors = console_errors(owner_page)
    log_in(owner_page, client, owner, live_server)
    owner_page.goto(f"/tasks/{sentiment_task.code}/console/rounds/{open_round.number}/ai/")
    form = owner_page.locator("#judge form")
    form.locator("select[name=model]").select_option(label=f"{JUDGE} (endpoint)")
    form.locator("select[name=policy]").select_option("one_vote")
    form.locator("input[name=kappa_threshold]").fill("0.5")
    form.locator("input[name=min_settled]").fill("10")
    form.locator("button[type=submit]").click()
    owner_page.get_by_text(f"{JUDGE} now votes on every example entering the validation queue").wait_for()
    expect(owner_page.locator("[data-judge-on]")).to_contain_text(f"Now: {JUDGE}, policy one vote")
    expect(owner_page.locator("#judge [data-judge-counting]")).to_contain_text("Not counting yet: 0 of the 10 settled examples")
    assert RoundJudge.objects.get(round=open_round).model == judge

    # 2. The job that saving queued votes on the twelve examples waiting for validation.
    run_queued_jobs()
    assert judge_server.requests == N
    assert AIVote.objects.filter(round=open_round, model=judge, parsed=True).count() == N
    owner_page.reload()
    expect(owner_page.locator("[data-judge-last-run]")).to_contain_text(f"{N} votes (0 unparsed) of {N} examples, done")

    # 3. The validators settle them, the last vote through the review page.
    for i, example in enumerate(examples):
        for name in voters(i):
            if (i, name) == (IN_CHROMIUM, "vera"):
                continue
            label = flipped(truth(i)) if name == "wanda" and i in WANDA_WRONG else truth(i)
            record_validation(example=leased(example, people[name]), validator=people[name], label=label)
    assert Example.objects.filter(round=open_round, validation_state=ValidationState.PENDING).get() == examples[IN_CHROMIUM]

    vera_page = browser.new_context(base_url=live_server.url).new_page()
    vera_page.set_default_timeout(HANG_MS)
    errors += console_errors(vera_page)
    log_in(vera_page, Client(), people["vera"], live_server)  # a client of its own: the owner stays logged in
    vera_page.goto(f"/tasks/{sentiment_task.code}/validate/")
    card = vera_page.locator("[data-example-id]")
    expect(card).to_have_attribute("data-example-id", str(examples[IN_CHROMIUM].pk))
    vote = AIVote.objects.get(example=examples[IN_CHROMIUM])
    html = vera_page.content()
    for secret in (JUDGE, vote.reason, "AI vote", "AI validator", "judge"):
        assert secret not in html, f"the review page shows {secret!r}"
    vera_page.locator(f"input[name=label][value={truth(IN_CHROMIUM)}]").check()
    vera_page.locator("#review-form button[type=submit]").click()
    vera_page.get_by_role("heading", name="Nothing left to validate").wait_for()
    assert Example.objects.get(pk=examples[IN_CHROMIUM].pk).validation_state == ValidationState.VERIFIED_CORRECT

    # 4. A new example enters the queue: the judge votes on it, and now counts.
    fresh = make_example(sentiment_task, annotator, text=f"[k1-{N}] The ending made no sense at all.")
    run_queued_jobs()
    assert judge_server.requests == N + 1
    assert AIVote.objects.get(example=fresh).counted_as == AIVote.CountedAs.VOTE
    assert Example.objects.get(pk=fresh.pk).validation_state == ValidationState.PENDING  # no person has voted yet
    assert RoundJudge.objects.get(round=open_round).counting

    # 5. The dashboard: the judge's κ with its interval beside each validator's.
    owner_page.goto(f"/tasks/{sentiment_task.code}/console/rounds/{open_round.number}/dashboard")
    section = owner_page.locator("#judge-agreement")
    expect(section.locator("[data-judge-counting]")).to_contain_text(f"Counting: its κ against people is 0.63 on {N} settled "
                                                                     "examples, above the threshold 0.50")
    judge_row = section.locator(f"[data-rater=judge][data-model='{JUDGE}']")
    expect(judge_row.locator("[data-label='Compared on']")).to_have_text(str(N))
    expect(judge_row.locator("[data-kappa]")).to_contain_text("0.63")  # κ = 0.625 exactly: the sentence and the table agree
    expect(judge_row.locator("[data-kappa] [data-interval]")).to_have_count(1)
    for name in PEOPLE:
        row = section.locator(f"[data-rater=person][data-validator={name}]")
        expect(row.locator("[data-kappa] [data-interval]")).to_have_count(1)
        expect(row.locator("[data-kappa]")).to_contain_text("1.00" if name != "wanda" else "0.")
    section.locator("details summary", has_text="Disagreements with the consensus").click()  # the owner reads the judge's reasons
    expect(section.locator("[data-disagreements] li")).to_have_count(len(JUDGE_WRONG))
    expect(section.locator("[data-disagreements] li").first).to_be_visible()
    expect(section.locator("[data-disagreements]")).to_contain_text("the judge said correct, people incorrect: “scripted correct”")
    shot = tmp_path / "console-ai-validator.png"
    section.screenshot(path=str(shot))
    if os.environ.get("DYNABENCH_SCREENSHOTS"):
        shutil.copy(shot, os.path.join(os.environ["DYNABENCH_SCREENSHOTS"], shot.name))
    print(f"screenshot: {shot}")

    with fresh_page(browser, live_server, PHONE) as phone:
        errors += console_errors(phone)
        log_in(phone, Client(), owner, live_server)
        phone.goto(f"/tasks/{sentiment_task.code}/console/rounds/{open_round.number}/dashboard")
        phone.locator("#judge-agreement [data-rater=judge]").wait_for()
        assert horizontal_overflow(phone) == 0
        # The confusion matrix stays a matrix on a phone: its column headings show, a row's counts sit side by side.
        assert phone.locator("#judge-agreement [data-confusion] thead").bounding_box()["height"] > 1
        first_row = phone.locator("#judge-agreement [data-confusion] tbody tr").first
        tops = {round(cell.bounding_box()["y"]) for cell in first_row.locator("td").all()}
        assert len(tops) == 1, f"one row of the confusion matrix spreads over {len(tops)} lines at 390 px"
        phone.locator("#judge-agreement").screenshot(path=str(tmp_path / "console-ai-validator-390.png"))
    assert errors == []
