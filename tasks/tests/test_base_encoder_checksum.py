"""The base encoder's weights are checked against a pinned sha256 before any training."""

import pytest

from dynabench.errors import RuleError
from tasks.loop.training.base_encoder import BaseEncoder, MINILM_SAFETENSORS_SHA256, file_sha256, minilm_encoder, verify_base_encoder


def test_the_installed_minilm_weights_match_the_pinned_sha256():
    encoder = minilm_encoder()

    verify_base_encoder(encoder)

    assert file_sha256(encoder.path / "model.safetensors") == MINILM_SAFETENSORS_SHA256


def test_it_refuses_an_encoder_whose_weights_differ_naming_both_digests(tiny_classifier_dir):
    encoder = BaseEncoder(path=tiny_classifier_dir, sha256=MINILM_SAFETENSORS_SHA256, name="impostor")

    with pytest.raises(RuleError) as refused:
        verify_base_encoder(encoder)

    assert refused.value.code == "encoder_checksum"
    assert MINILM_SAFETENSORS_SHA256 in refused.value.message
    assert file_sha256(tiny_classifier_dir / "model.safetensors") in refused.value.message


def test_it_refuses_an_encoder_directory_without_weights(tmp_path):
    with pytest.raises(RuleError, match="does not exist") as refused:
        verify_base_encoder(BaseEncoder(path=tmp_path, sha256=MINILM_SAFETENSORS_SHA256, name="empty"))

    assert refused.value.code == "encoder_missing"
