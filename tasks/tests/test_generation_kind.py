"""The generation kind: its target is one or more reference texts, and a translation fools the model
when its sentence chrF++ (sacreBLEU) against the annotator's reference is below the task's threshold."""

import pytest
import sacrebleu

from dynabench.errors import RuleError
from tasks.kinds import DEFAULT_CHRF_THRESHOLD, get_spec
from tasks.kinds import TargetError

SPEC = get_spec("generation")
CONFIG = {"model_inputs": ["source"], "model_wrong": {"rule": "chrf_below", "threshold": 0.5}}


def test_the_model_is_wrong_below_the_owner_set_chrf_threshold():
    target = {"references": ["Le musée ouvre à neuf heures du matin."]}
    close, far = "Le musée ouvre à neuf heures le matin.", "Le chat dort sur le canapé."
    chrf = sacrebleu.CHRF(word_order=2)
    assert chrf.sentence_score(close, target["references"]).score / 100 >= 0.5
    assert chrf.sentence_score(far, target["references"]).score / 100 < 0.5
    assert SPEC.model_wrong(CONFIG, target, {"translation": close}) is False
    assert SPEC.model_wrong(CONFIG, target, {"translation": far}) is True
    assert SPEC.model_wrong({**CONFIG, "model_wrong": {"rule": "chrf_below"}}, target, {"translation": ""}) is True
    assert DEFAULT_CHRF_THRESHOLD == 0.4


def test_the_target_is_a_non_empty_reference():
    assert SPEC.clean_target(CONFIG, {"source": "Hi."}, {"references": ["  Salut.  "]}) == {"references": ["Salut."]}
    with pytest.raises(RuleError) as info:
        SPEC.clean_target(CONFIG, {"source": "Hi."}, {"references": ["  "]})
    assert (info.value.code, info.value.field) == ("invalid_reference", "reference")
    assert SPEC.import_target(CONFIG, '["Salut.", "Bonjour."]', {}, source="refs") == {"references": ["Salut.", "Bonjour."]}
    with pytest.raises(TargetError, match="field 'refs'"):
        SPEC.import_target(CONFIG, 7, {}, source="refs")
    assert SPEC.target_from_form({"reference": "Salut."}) == {"references": ["Salut."]}
    assert SPEC.target_from_form({"reference": ""}, optional=True) is None


def test_corpus_metrics_are_sacrebleus_with_their_signatures():
    hyps, refs = ["Le chat dort.", "Il pleut."], ["Le chat dort.", "Il pleut beaucoup."]
    items = [{"uid": str(i), "target": {"references": [r]}} for i, r in enumerate(refs)]
    scores = SPEC.score({**CONFIG, "perf_metric": "bleu"}, items, [{"translation": h} for h in hyps])
    bleu = sacrebleu.BLEU()
    assert scores.metrics()["bleu"] == pytest.approx(bleu.corpus_score(hyps, [refs]).score / 100)
    assert scores.signatures["bleu"] == str(bleu.get_signature())
    assert scores.metrics([0])["bleu"] == pytest.approx(1.0)
    assert len(scores.per_item) == 2 and scores.per_item[0] == pytest.approx(1.0)


def test_an_empty_corpus_scores_zero_and_its_signatures_say_why():
    from tasks.metrics.translation import corpus_scores

    scores, signatures = corpus_scores([], [])
    assert (scores["bleu"], scores["chrfpp"]) == (0.0, 0.0)
    assert signatures["bleu"] == signatures["chrfpp"] == "not computed: no sentences to score"
