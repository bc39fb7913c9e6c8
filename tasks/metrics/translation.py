"""Translation metrics from the ``sacrebleu`` package: BLEU, chrF++ and spBLEU, with their signatures.

The scores are sacreBLEU's own (Post, "A Call for Clarity in Reporting BLEU Scores", WMT 2018),
computed by its ``BLEU`` and ``CHRF`` classes exactly as ``sacrebleu REF -i HYP -m bleu chrf
--chrf-word-order 2`` does on the same lines, so a leaderboard figure can be reproduced with
the command line. Each metric's signature string (``nrefs:1|case:mixed|eff:no|tok:13a|...``)
says how it was computed and is stored next to the score.

- BLEU: ``BLEU()`` (13a tokenisation, exponential smoothing), corpus level.
- chrF++: ``CHRF(word_order=2)`` (Popović, WMT 2017), corpus level; per sentence for the
  model-wrong rule and the per-item scores.
- spBLEU: ``BLEU(tokenize="flores200")`` (Goyal et al., "The FLORES-101 Evaluation Benchmark",
  TACL 2022; NLLB Team 2022): BLEU over the FLORES-200 SentencePiece pieces. sacreBLEU reads
  that model from ``$SACREBLEU/models/flores200sacrebleuspm``; no hub is reachable from the
  platform, so spBLEU is computed only when the file is installed there and is otherwise left
  out with the reason in its signature (``spbleu_unavailable``).

Scores are returned in [0, 1] (sacreBLEU's 0..100 divided by 100), the platform's scale for
performance metrics.
"""

from __future__ import annotations

import os

SPBLEU_TOKENIZER = "flores200"


def _sacrebleu():
    import sacrebleu  # imported lazily: the web process need not load it

    return sacrebleu


def spbleu_model_path() -> str:
    """Where sacreBLEU looks for the FLORES-200 SentencePiece model (``$SACREBLEU/models/...``)."""
    from sacrebleu.tokenizers import tokenizer_spm

    name = os.path.basename(tokenizer_spm.SPM_MODELS[SPBLEU_TOKENIZER]["url"])
    return os.path.join(tokenizer_spm.SACREBLEU_DIR, "models", name)


def spbleu_unavailable() -> str | None:
    """None when spBLEU can be computed offline; else the reason (the missing file or package)."""
    try:
        import sentencepiece  # noqa: F401
    except ImportError:
        return "not computed: the sentencepiece package is not installed"
    path = spbleu_model_path()
    if not os.path.isfile(path):
        return f"not computed: the FLORES-200 SentencePiece model is not installed at {path}"
    return None


def reference_streams(references: list[list[str]]) -> list[list[str | None]]:
    """Turn per-sentence reference lists into sacreBLEU's reference streams (one list per reference
    position), padding sentences with fewer references with ``None``.

    sacreBLEU drops ``None`` references of a sentence (``Metric._cache_references`` in
    ``sacrebleu/metrics/base.py``) and, when sentences then have different numbers of references,
    says ``nrefs:var`` in the signature. An empty string would instead count as a real reference
    of length 0: it would match an empty hypothesis and lift the brevity penalty.
    """
    width = max((len(r) for r in references), default=0)
    return [[refs[i] if i < len(refs) else None for refs in references] for i in range(width)]


def corpus_scores(hypotheses: list[str], references: list[list[str]]) -> tuple[dict, dict]:
    """Return ``({"bleu", "chrfpp"[, "spbleu"]} in [0, 1], {metric: signature string})`` for the corpus.

    ``references[i]`` lists the reference texts of sentence ``i`` (at least one; sentences may
    have different numbers, passed to sacreBLEU as ``None``-padded streams, signature
    ``nrefs:var``). spBLEU is computed only when ``spbleu_unavailable()`` is None. The
    signatures are taken after scoring, so they carry the number of references seen; an empty
    corpus scores 0 and, having no references to count, its signatures say so.
    """
    sacrebleu = _sacrebleu()
    streams = reference_streams(references)
    metrics = {"bleu": sacrebleu.BLEU(), "chrfpp": sacrebleu.CHRF(word_order=2)}
    missing = spbleu_unavailable()
    if missing is None:
        metrics["spbleu"] = sacrebleu.BLEU(tokenize=SPBLEU_TOKENIZER)
    scores, signatures = {}, {}
    for name, metric in metrics.items():
        if not hypotheses:  # sacreBLEU has no signature before it has seen references
            scores[name], signatures[name] = 0.0, "not computed: no sentences to score"
            continue
        scores[name] = metric.corpus_score(hypotheses, streams).score / 100.0
        signatures[name] = str(metric.get_signature())
    if missing is not None:
        signatures["spbleu"] = missing
    return scores, signatures


def sentence_chrfpp(hypothesis: str, references: list[str]) -> float:
    """chrF++ of one sentence against its references, in [0, 1] (sacreBLEU's ``sentence_score``)."""
    references = [r for r in references if r] or [""]
    return _sacrebleu().CHRF(word_order=2).sentence_score(hypothesis, references).score / 100.0


def sentence_chrfpp_many(hypotheses: list[str], references: list[list[str]]) -> list[float]:
    """chrF++ in [0, 1] of each sentence against its own references (one scorer for the whole list)."""
    chrf = _sacrebleu().CHRF(word_order=2)
    return [chrf.sentence_score(h, [r for r in refs if r] or [""]).score / 100.0 for h, refs in zip(hypotheses, references)]
