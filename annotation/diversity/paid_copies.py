"""Which of a round's examples are near-copies of an earlier one, for the pay rule
(``validation/pay.py``: a near-copy of an example already paid earns no bonus)."""

from __future__ import annotations

import numpy as np

from annotation.diversity import calculations, encoder as encoders, rules
from annotation.diversity_models import ExampleEmbedding, SimilarityMode


def near_copies_of_earlier(*, round, example_ids) -> dict[int, int]:
    """Return ``{example id: id of the earlier example it near-copies}`` among ``example_ids``.

    Examples are taken in id order (the order they were written); each is compared with the ones
    taken before it that were not themselves near-copies (the ones paid): at cosine similarity ≥ the
    round's threshold (``rules.round_rule``) with one of them, it maps to the most similar
    (``calculations.leader_groups``). Empty when
    the round's rule is off. An example without a stored embedding of the current encoder is not
    compared (it counts as paid only when it has one).
    """
    rule = rules.round_rule(round)
    if rule.mode == SimilarityMode.OFF:
        return {}
    rows = dict(ExampleEmbedding.objects.filter(example_id__in=list(example_ids), encoder_sha256=encoders.encoder_sha256())
                .values_list("example_id", "vector"))
    ordered = sorted(rows)
    if not ordered:
        return {}
    X = np.stack([np.frombuffer(bytes(rows[example_id]), dtype="<f4") for example_id in ordered])
    leader = calculations.leader_groups(X, threshold=rule.threshold)
    return {ordered[i]: ordered[int(leader[i])] for i in range(len(ordered)) if leader[i] != i}
