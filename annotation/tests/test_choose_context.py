"""choose_context follows the task's strategy: least used, uniform, least fooled; by tag; excluding one."""

import pytest

from annotation.contexts import choose_context
from annotation.models import Example
from dynabench.errors import RuleError
from tasks.models import Context


@pytest.fixture
def round1(sentiment_task):
    return sentiment_task.current_round()


def test_it_picks_a_least_used_context(round1):
    contexts = list(round1.contexts.order_by("pk"))
    Context.objects.filter(round=round1).update(times_used=5)
    Context.objects.filter(pk=contexts[3].pk).update(times_used=1)
    assert choose_context(round=round1) == contexts[3]


def test_it_spreads_ties_over_the_least_used_contexts(round1):
    chosen = {choose_context(round=round1, strategy="least_used").pk for _ in range(40)}
    assert len(chosen) > 1


def test_it_picks_any_active_context_uniformly(round1):
    Context.objects.filter(round=round1).exclude(pk=round1.contexts.first().pk).update(times_used=9)
    chosen = {choose_context(round=round1, strategy="uniform").pk for _ in range(40)}
    assert len(chosen) > 1


def test_it_picks_the_least_fooled_context(round1, annotator, sentiment_model):
    contexts = list(round1.contexts.order_by("pk"))
    for context in contexts[1:]:
        Example.objects.create(round=round1, context=context, author=annotator, model_wrong=True)
    Context.objects.filter(pk=contexts[0].pk).update(times_used=50)  # most used, but never fooled
    assert choose_context(round=round1, strategy="least_fooled") == contexts[0]


def test_it_ignores_retracted_fooling_examples_for_least_fooled(round1, annotator):
    contexts = list(round1.contexts.order_by("pk"))
    for context in contexts[1:]:
        Example.objects.create(round=round1, context=context, author=annotator, model_wrong=True)
    Example.objects.create(round=round1, context=contexts[0], author=annotator, model_wrong=True, retracted=True)
    assert choose_context(round=round1, strategy="least_fooled") == contexts[0]


def test_it_keeps_to_the_tag(round1):
    tagged = round1.contexts.order_by("pk")[2]
    tagged.tag = "hard"
    tagged.save()
    Context.objects.filter(pk=tagged.pk).update(times_used=99)
    assert choose_context(round=round1, tag="hard") == tagged


def test_it_skips_excluded_and_inactive_contexts(round1):
    contexts = list(round1.contexts.order_by("pk"))
    Context.objects.filter(pk__in=[c.pk for c in contexts[2:]]).update(active=False)
    assert choose_context(round=round1, exclude=[contexts[0].pk]) == contexts[1]


def test_it_returns_the_only_context_even_if_excluded(round1):
    only = round1.contexts.first()
    Context.objects.filter(round=round1).exclude(pk=only.pk).update(active=False)
    assert choose_context(round=round1, exclude=[only.pk]) == only


def test_it_says_when_there_is_no_context(round1):
    with pytest.raises(RuleError) as error:
        choose_context(round=round1, tag="nowhere")
    assert error.value.code == "no_context"
    assert "tagged 'nowhere'" in error.value.message


def test_it_refuses_an_unknown_strategy(round1):
    with pytest.raises(RuleError) as error:
        choose_context(round=round1, strategy="most_fun")
    assert error.value.code == "unknown_strategy"
