"""A local causal language model directory (safetensors, loaded and checked by the registry) can be
the model in the loop of an open-ended task: its answers stream in-process like an endpoint's, and
it can face an endpoint model side by side."""

import pytest
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from annotation import chat
from tasks.models import MLModel
from tests.generative_support import compare, run_turns


@pytest.fixture(scope="module")
def tiny_llama_dir(tiny_causal_lm_dir, tmp_path_factory):
    """A 2-layer Llama of random weights (``*ForCausalLM``) with the tiny GPT-2's word-level tokenizer."""
    import torch

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_lm_dir, local_files_only=True)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                         bos_token_id=1, eos_token_id=1, pad_token_id=1)
    path = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


def test_a_local_model_converses_and_compares(annotator, chat_task, endpoint_server, tiny_llama_dir):
    chat_task.config = {**chat_task.config, "max_new_tokens": 5}
    chat_task.save()
    local = MLModel.objects.create(task=chat_task, name="tiny-llama", kind=MLModel.Kind.HF_DIRECTORY, path=str(tiny_llama_dir))
    round = chat_task.current_round()
    round.target_models.set([local])
    state = run_turns(user=annotator, task=chat_task, mode=chat.CONVERSATION, prompts=["tell me about the museum", "and then"])
    example = chat.judge(user=annotator, task=chat_task, state=state, target={"verdict": "holds"})
    turns = [t for t in example.model_output["transcript"] if t["role"] == "assistant"]
    assert len(turns) == 2 and all(t["model_id"] == local.pk and t["model"] == "tiny-llama" for t in turns)
    assert turns[0]["params"] == {"max_new_tokens": 5, "do_sample": False} and turns[0]["latency_ms"] > 0
    round.target_models.set([local, chat_task.loop[0]])
    pair = compare(user=annotator, task=chat_task, prompt="who wrote the first algorithm", preference="a")
    assert sorted(pair.model_output["order"]) == sorted([local.pk, chat_task.loop[0].pk])
    assert all(pair.model_output["answers"][side]["content"] is not None for side in "ab")
