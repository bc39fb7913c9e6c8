"""A local causal language model (a safetensors directory the task's owner owns, run in-process by the
model registry) can be a round's AI validator: the job asks it through the gate, which records no call
and charges no budget for a local model, and stores its vote; a random-weight model's answer is no
verdict, so the vote is stored unparsed with its text, and the job goes on. A new example waiting for
validation queues the job once the transaction commits."""

import json

import pytest

from tasks.loop.gate_models import ModelCall
from tasks.data.seed import create_task
from tasks.models import MLModel
from tests.generative_fixtures import DEFINITIONS
from validation import judge as judge_module
from validation.judge import judge_examples, set_judge
from validation.judge_models import AIVote
from validation.tests.conftest import make_example


@pytest.fixture(scope="module")
def tiny_llama_dir(tiny_causal_lm_dir, tmp_path_factory):
    """A 2-layer Llama of random weights (``*ForCausalLM``) with the tiny GPT-2's word-level tokenizer."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_lm_dir, local_files_only=True)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                         bos_token_id=1, eos_token_id=1, pad_token_id=1)
    path = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture
def local_judge(owner, tiny_llama_dir):
    definition = json.loads((DEFINITIONS / "adversarial-safety-chat.json").read_text())
    definition["config"]["max_new_tokens"] = 6
    chat, _ = create_task(definition)
    return MLModel.objects.create(task=chat, owner=owner, name="tiny-local-judge", kind=MLModel.Kind.HF_DIRECTORY,
                                  path=str(tiny_llama_dir), checksum="a" * 64)


def test_the_local_model_votes_and_an_unreadable_answer_is_kept_unparsed(sentiment_task, annotator, owner, local_judge):
    round = sentiment_task.current_round()
    examples = [make_example(sentiment_task, annotator) for _ in range(2)]
    set_judge(round=round, model=local_judge, acting_user=owner)

    summary = judge_examples(round.pk)

    assert "2 votes" in summary and "done" in summary, summary
    votes = AIVote.objects.filter(round=round, model=local_judge)
    assert sorted(votes.values_list("example_id", flat=True)) == sorted(e.pk for e in examples)
    for vote in votes:
        assert vote.settings_checksum == "a" * 64 and vote.completion_tokens > 0
        assert vote.parsed == bool(vote.label)
        assert vote.parsed or vote.raw  # what it said is kept when it is no verdict
    assert not ModelCall.objects.filter(model=local_judge).exists()


def test_a_new_example_in_the_queue_is_sent_to_the_judge(sentiment_task, annotator, owner, local_judge, monkeypatch,
                                                         django_capture_on_commit_callbacks):
    round = sentiment_task.current_round()
    queued = []
    monkeypatch.setattr(judge_module, "enqueue", lambda round_id, example_ids=None: queued.append((round_id, example_ids)))
    with django_capture_on_commit_callbacks(execute=True):
        set_judge(round=round, model=local_judge, acting_user=owner)
    with django_capture_on_commit_callbacks(execute=True):
        fooled = make_example(sentiment_task, annotator)
        make_example(sentiment_task, annotator, model_wrong=False)  # not for the validators: no vote

    assert queued == [(round.pk, None), (round.pk, [fooled.pk])]
