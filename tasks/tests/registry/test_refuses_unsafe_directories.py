"""Directories that are unsafe or incomplete are refused before anything is loaded, saying what to fix."""

import json
import shutil

import pytest

from dynabench.errors import RuleError
from tasks.loop.model_checks import check_model_directory
from tasks.loop.registry import cache_info, get_predictor, load_predictor
from tests.tiny_models import build_tiny_classifier

LABELS = ["positive", "negative", "neutral"]


@pytest.fixture
def model_dir(tmp_path):
    return build_tiny_classifier(tmp_path / "model", LABELS)


def _edit_config(path, **changes):
    config = json.loads((path / "config.json").read_text())
    config.update(changes)
    (path / "config.json").write_text(json.dumps(config))


def _refusal(path, task) -> RuleError:
    with pytest.raises(RuleError) as refusal:
        check_model_directory(path, task=task)
    return refusal.value


@pytest.mark.parametrize("name", ["pytorch_model.bin", "weights.pt", "optimizer.pth", "last.ckpt", "extra/vocab.pkl"])
def test_it_refuses_a_directory_with_a_pickle_file(model_dir, sentiment_task, name):
    (model_dir / name).parent.mkdir(exist_ok=True)
    (model_dir / name).write_bytes(b"\x80\x04K\x01.")

    refusal = _refusal(model_dir, sentiment_task)

    assert refusal.code == "model_pickle_file"
    assert name in refusal.message and "model.safetensors" in refusal.message


def test_it_refuses_remote_code_in_config(model_dir, sentiment_task):
    _edit_config(model_dir, auto_map={"AutoModelForSequenceClassification": "modeling_evil.EvilModel"})

    refusal = _refusal(model_dir, sentiment_task)

    assert refusal.code == "model_custom_code"
    assert "auto_map" in refusal.message


def test_it_refuses_remote_code_in_the_tokenizer_config(model_dir, sentiment_task):
    config = json.loads((model_dir / "tokenizer_config.json").read_text())
    config["auto_map"] = {"AutoTokenizer": ["tokenization_evil.EvilTokenizer", None]}
    (model_dir / "tokenizer_config.json").write_text(json.dumps(config))

    assert _refusal(model_dir, sentiment_task).code == "model_custom_code"


def test_it_refuses_python_files(model_dir, sentiment_task):
    (model_dir / "modeling_evil.py").write_text("import os\n")

    refusal = _refusal(model_dir, sentiment_task)

    assert refusal.code == "model_custom_code"
    assert "modeling_evil.py" in refusal.message


def test_it_refuses_links_inside_the_directory(model_dir, sentiment_task, tmp_path):
    (tmp_path / "elsewhere.txt").write_text("secret")
    (model_dir / "notes.txt").symlink_to(tmp_path / "elsewhere.txt")

    refusal = _refusal(model_dir, sentiment_task)

    assert refusal.code == "model_symlink"
    assert "notes.txt" in refusal.message


def test_it_refuses_a_model_type_without_a_model_for_the_task_kind(model_dir, sentiment_task):
    _edit_config(model_dir, model_type="vit", architectures=["ViTForSequenceClassification"])

    refusal = _refusal(model_dir, sentiment_task)

    assert refusal.code == "model_wrong_architecture"
    assert "'vit'" in refusal.message


def test_it_refuses_a_directory_without_safetensors_weights(model_dir, sentiment_task):
    (model_dir / "model.safetensors").unlink()

    refusal = _refusal(model_dir, sentiment_task)

    assert refusal.code == "model_no_safetensors"
    assert "safe_serialization=True" in refusal.message


def test_it_accepts_sharded_safetensors_with_every_shard_present(model_dir, sentiment_task):
    (model_dir / "model.safetensors").rename(model_dir / "model-00001-of-00001.safetensors")
    (model_dir / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": {"bert.embeddings.word_embeddings.weight": "model-00001-of-00001.safetensors"}})
    )

    assert check_model_directory(model_dir, task=sentiment_task)["model_type"] == "bert"

    (model_dir / "model-00001-of-00001.safetensors").unlink()
    assert _refusal(model_dir, sentiment_task).code == "model_no_safetensors"


def test_it_refuses_a_directory_without_tokenizer_files(model_dir, sentiment_task):
    for name in ("tokenizer.json", "vocab.txt"):
        (model_dir / name).unlink(missing_ok=True)

    refusal = _refusal(model_dir, sentiment_task)

    assert refusal.code == "model_no_tokenizer"
    assert "tokenizer.json" in refusal.message


def test_it_refuses_a_directory_without_config(model_dir, sentiment_task):
    (model_dir / "config.json").unlink()

    assert _refusal(model_dir, sentiment_task).code == "model_bad_config"


def test_it_refuses_a_model_type_transformers_does_not_know(model_dir, sentiment_task):
    _edit_config(model_dir, model_type="evil-bert")

    refusal = _refusal(model_dir, sentiment_task)

    assert refusal.code == "model_unknown_type"
    assert "evil-bert" in refusal.message


def test_it_refuses_a_question_answering_model_for_a_classification_task(tiny_qa_dir, sentiment_task):
    refusal = _refusal(tiny_qa_dir, sentiment_task)

    assert refusal.code == "model_wrong_architecture"
    assert "BertForQuestionAnswering" in refusal.message and "ForSequenceClassification" in refusal.message


def test_it_refuses_a_classifier_for_a_qa_task(model_dir, qa_task):
    assert _refusal(model_dir, qa_task).code == "model_wrong_architecture"


def test_it_refuses_weights_that_would_leave_the_head_random(tmp_path, tiny_qa_dir, sentiment_task):
    # The config claims a classifier but the weights hold a QA head: the classifier would be random.
    path = shutil.copytree(tiny_qa_dir, tmp_path / "lying")
    _edit_config(
        path, architectures=["BertForSequenceClassification"],
        id2label={str(i): label for i, label in enumerate(LABELS)}, label2id={label: i for i, label in enumerate(LABELS)},
    )
    check_model_directory(path, task=sentiment_task)  # the files look right ...

    with pytest.raises(RuleError) as refusal:  # ... but loading finds missing weights
        load_predictor(path, task=sentiment_task)

    assert refusal.value.code == "model_wrong_architecture"
    assert "classifier" in refusal.value.message


def test_get_predictor_refuses_a_missing_directory(register_model, sentiment_task, model_dir):
    model = register_model(model_dir, sentiment_task)
    shutil.rmtree(model_dir)

    with pytest.raises(RuleError) as refusal:
        get_predictor(model)

    assert refusal.value.code == "model_not_a_directory"
    assert cache_info()["loads"] == 0
