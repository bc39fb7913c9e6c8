"""My examples: each with outcome, validation state and retraction; my counts and vMER."""

from annotation.models import Example, ValidationState


def test_it_lists_my_examples_with_outcome_validation_and_counts(client, annotator, owner, nli_task):
    round1 = nli_task.current_round()
    context = round1.contexts.first()
    make = lambda **kw: Example.objects.create(round=round1, context=context, author=annotator, input={"premise": "p", "hypothesis": "h"}, target={"label": "neutral"}, model_output={"label": "entailment"}, **kw)
    verified = make(model_wrong=True, validation_state=ValidationState.VERIFIED_CORRECT, validation_count=3, correct_count=3)
    make(model_wrong=True)
    make(model_wrong=False)
    retracted = make(model_wrong=True, retracted=True)
    Example.objects.create(round=round1, context=context, author=owner, model_wrong=True)
    client.force_login(annotator)
    response = client.get("/my/examples/")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('<tr data-example-id="') == 4
    assert '<strong data-count="collected">3</strong>' in html
    assert '<strong data-count="fooled">2</strong>' in html
    assert '<strong data-count="verified_fooled">1</strong>' in html
    assert '<strong data-count="vmer">33.3%</strong>' in html
    row = html.split(f'data-example-id="{verified.pk}"')[1].split("</tr>")[0]
    assert "fooled" in row and "Verified correct" in row
    assert "data-retracted" in html.split(f'data-example-id="{retracted.pk}"')[1].split("</tr>")[0]


def test_it_needs_a_log_in(client):
    assert client.get("/my/examples/").status_code == 302
