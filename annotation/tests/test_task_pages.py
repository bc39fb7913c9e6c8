"""The task list and the task page show rounds with their statistics; instructions are safe Markdown."""

from annotation.models import Example, ValidationState


def seed_examples(task, author):
    round1 = task.current_round()
    context = round1.contexts.first()
    Example.objects.create(round=round1, context=context, author=author, model_wrong=True, validation_state=ValidationState.VERIFIED_CORRECT)
    Example.objects.create(round=round1, context=context, author=author, model_wrong=True)
    Example.objects.create(round=round1, context=context, author=author, model_wrong=False)
    Example.objects.create(round=round1, context=context, author=author, model_wrong=True, retracted=True)


def test_it_lists_active_tasks_with_round_collected_and_vmer(client, default_tasks, annotator, django_assert_max_num_queries):
    seed_examples(default_tasks["nli"], annotator)
    default_tasks["hate-speech"].active = False
    default_tasks["hate-speech"].save()
    with django_assert_max_num_queries(2 + len(default_tasks)):
        response = client.get("/")
    assert response.status_code == 200
    page = response.content.decode()
    assert 'data-task="nli"' in page and 'data-task="hate-speech"' not in page
    nli_card = page.split('data-task="nli"')[1].split("</div>")[0]
    assert "Round 1" in nli_card
    assert '<span data-collected>3</span>' in nli_card
    assert '<span data-vmer>33.3%</span>' in nli_card


def test_it_shows_a_task_page_with_rounds_statistics(client, nli_task, annotator):
    seed_examples(nli_task, annotator)
    response = client.get(f"/tasks/{nli_task.code}/")
    assert response.status_code == 200
    page = response.content.decode()
    row = page.split('data-round="1"')[1].split("</tr>")[0]
    assert "<td>3</td><td>2</td><td>1</td><td>66.7%</td><td>33.3%</td>" in row


def test_it_renders_instructions_as_markdown_without_scripts(client, nli_task):
    nli_task.instructions = "Write **well**.\n\n<script>alert('x')</script><img src=x onerror=alert(1)>[link](javascript:alert(1))"
    nli_task.save()
    page = client.get(f"/tasks/{nli_task.code}/").content.decode()
    assert "<strong>well</strong>" in page
    assert "<script>alert" not in page and "onerror" not in page and "javascript:" not in page
