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


def _tokenizer(corpus: list[str] | None = None, vocab_size: int = 300) -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(corpus or CORPUS, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials))
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
    defaults = dict(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=37, max_position_embeddings=128,
    )
    return BertConfig(**{**defaults, **extra})


def build_tiny_classifier(
    path: Path, labels: list[str], *, seed: int = 0, corpus: list[str] | None = None, vocab_size: int = 300, **size,
) -> Path:
    """Save a tiny BERT sequence classifier with ``id2label`` = ``labels`` under ``path``.

    ``corpus``: texts the WordPiece vocabulary (``vocab_size`` entries) is trained on, so that a
    tiny encoder can learn something from real data (default: a built-in 20-sentence corpus).
    ``size`` overrides the BERT config (``hidden_size``, ``num_hidden_layers``, ...) for tests and
    benchmarks that need a model slow enough to measure or to interrupt.
    """
    torch.manual_seed(seed)
    tokenizer = _tokenizer(corpus, vocab_size)
    config = _config(
        tokenizer, **size, num_labels=len(labels),
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


def build_tiny_seq2seq_model(path: Path, *, seed: int = 0) -> Path:
    """Save a tiny T5 encoder-decoder (``T5ForConditionalGeneration``) with the tiny WordPiece tokenizer under ``path``.

    Its output is untrained but deterministic (greedy decoding): enough to run ``generate`` end to end.
    """
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    tokenizer = _tokenizer()
    tokenizer.eos_token = "[SEP]"
    pad, eos = tokenizer.convert_tokens_to_ids("[PAD]"), tokenizer.convert_tokens_to_ids("[SEP]")
    config = T5Config(
        vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=37, num_layers=1, num_decoder_layers=1, num_heads=2,
        pad_token_id=pad, eos_token_id=eos, decoder_start_token_id=pad,
    )
    path = Path(path)
    T5ForConditionalGeneration(config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_image_classifier(path: Path, labels: list[str], *, seed: int = 0, image_size: int = 32, **size) -> Path:
    """Save a tiny ViT image classifier (``ViTForImageClassification``, random weights, safetensors)
    with ``id2label`` = ``labels`` and its ``ViTImageProcessor`` (resize to ``image_size``) under ``path``.

    ``size`` overrides the ViT config (``hidden_size``, ``num_hidden_layers``, ...).
    """
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    torch.manual_seed(seed)
    defaults = dict(
        image_size=image_size, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=37,
    )
    config = ViTConfig(
        **{**defaults, **size}, num_labels=len(labels),
        id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)},
    )
    path = Path(path)
    ViTForImageClassification(config).save_pretrained(path, safe_serialization=True)
    ViTImageProcessor(size={"height": image_size, "width": image_size}).save_pretrained(path)
    return path
