"""The create page's readout embeds the draft while the annotator types; submitting that same text
reads the vector back from the cache (``annotation/diversity/rules.py``: ``text_vector``), so the
near-copy check adds no second forward pass of the encoder to the submission. Another text is embedded."""

import pytest

from annotation.diversity import encoder as encoders
from annotation.diversity import rules
from annotation.services import create_example
from dynabench.errors import RuleError

TEXT = "The waiter was friendly but the soup was cold."


def test_the_submission_of_the_read_out_text_runs_no_forward_pass(annotator, owner, sentiment_context, tiny_sentence_encoder,
                                                                    monkeypatch):
    # given: a refusing round with one example, and the readout of a near-copy of it
    round_ = sentiment_context.round
    rules.set_round_rule(round=round_, acting_user=owner, threshold=0.999, mode="refuse")
    create_example(user=annotator, context=sentiment_context, input={"text": TEXT}, target={"label": "positive"})
    read_out = rules.closeness(round=round_, user=annotator, text=TEXT.upper())
    assert read_out.in_round == 1
    forwards = []
    encoder = encoders.get_encoder()
    monkeypatch.setattr(type(encoder), "embed", lambda self, texts, **kw: forwards.append(texts) or pytest.fail("embedded again"))
    # when: the annotator submits the text the readout saw
    with pytest.raises(RuleError) as refused:
        create_example(user=annotator, context=sentiment_context, input={"text": TEXT.upper()}, target={"label": "negative"})
    # then: refused from the cached vector, with no forward pass
    assert refused.value.code == "near_duplicate"
    assert forwards == []


def test_a_text_the_readout_did_not_see_is_embedded(annotator, owner, sentiment_context, tiny_sentence_encoder):
    round_ = sentiment_context.round
    rules.set_round_rule(round=round_, acting_user=owner, threshold=0.999, mode="refuse")
    rules.closeness(round=round_, user=annotator, text=TEXT)
    encoder = encoders.get_encoder()
    other = "Nothing about this place was right."
    assert (rules.text_vector(encoder, other) == encoder.embed([other])[0]).all()
