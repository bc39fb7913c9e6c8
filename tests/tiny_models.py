"""Tiny Hugging Face models built on the fly for tests (~100 KB, well under a second).

A WordPiece tokenizer is trained with ``tokenizers`` on a small corpus, a 2-layer BERT
with random weights is saved with ``save_pretrained`` (safetensors). The weights are
random, so predictions are arbitrary but deterministic for a given seed.
"""

from pathlib import Path

import torch
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    BertConfig,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    PreTrainedTokenizerFast,
)

CORPUS = [
    "the food was great and the staff were friendly",
    "the service was slow and the room was dirty",
    "the museum opened in 1921 and hosts many visitors",
    "a man is playing a guitar on the street",
    "nobody is playing music outside",
    "what year did the museum open",
    "who wrote the first algorithm for a machine",
    "people from every country are welcome here",
    "i hate waiting in long queues at the airport",
    "emperor penguins breed during the antarctic winter",
]


def _tokenizer() -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(CORPUS, trainers.WordPieceTrainer(vocab_size=300, special_tokens=specials))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    from tokenizers import decoders

    tok.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=128,
    )


def _config(tokenizer, **extra) -> BertConfig:
    return BertConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=37, max_position_embeddings=128, **extra,
    )


def build_tiny_classifier(path: Path, labels: list[str], *, seed: int = 0) -> Path:
    """Save a tiny BERT sequence classifier with ``id2label`` = ``labels`` under ``path``."""
    torch.manual_seed(seed)
    tokenizer = _tokenizer()
    config = _config(
        tokenizer, num_labels=len(labels),
        id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)},
    )
    path = Path(path)
    BertForSequenceClassification(config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_qa_model(path: Path, *, seed: int = 0, max_length: int = 128) -> Path:
    """Save a tiny BERT extractive-QA model under ``path``."""
    torch.manual_seed(seed)
    tokenizer = _tokenizer()
    tokenizer.model_max_length = max_length
    path = Path(path)
    BertForQuestionAnswering(_config(tokenizer)).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path
