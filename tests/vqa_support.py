"""For the tests of visual question answering: a tiny ViLT built on the fly (random weights,
safetensors, its own image processor and a fast WordPiece tokenizer), and the ``colours-vqa``
task of ``tasks/data/task_definitions/colours-vqa.json`` (owner given)."""

import json
from pathlib import Path

DEFINITION = Path(__file__).resolve().parents[1] / "tasks" / "data" / "task_definitions" / "colours-vqa.json"
ANSWERS = ["yes", "no", "2", "3", "red", "blue", "yellow", "circle", "square", "triangle"]
QUESTIONS = [
    "what colour is the shape", "how many shapes are there", "is there a circle", "what shape is in the picture",
    "is the background blue", "what is the colour of the square",
]


def build_tiny_vilt(path: Path, *, answers: list[str] = ANSWERS, seed: int = 0, image_size: int = 32) -> Path:
    """Save a tiny ``ViltForQuestionAnswering`` (2 layers, hidden size 32, random weights) whose
    ``id2label`` is ``answers``, with a ``ViltProcessor`` (``ViltImageProcessor`` resizing to
    ``image_size``, a WordPiece ``BertTokenizerFast`` trained on ``QUESTIONS``) under ``path``."""
    import torch
    from transformers import BertTokenizerFast, ViltConfig, ViltForQuestionAnswering, ViltImageProcessor, ViltProcessor

    from tests.tiny_models import _tokenizer

    torch.manual_seed(seed)
    fast = _tokenizer(QUESTIONS + [" ".join(ANSWERS)] + ["the a an of in on"], vocab_size=200)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(path)
    tokenizer = BertTokenizerFast(tokenizer_file=str(path / "tokenizer.json"), model_max_length=40)
    config = ViltConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
        image_size=image_size, patch_size=8, max_position_embeddings=40, max_image_length=-1,
        num_labels=len(answers), id2label=dict(enumerate(answers)), label2id={a: i for i, a in enumerate(answers)},
    )
    ViltForQuestionAnswering(config).save_pretrained(path, safe_serialization=True)
    image_processor = ViltImageProcessor(size={"shortest_edge": image_size}, size_divisor=8)
    ViltProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(path)
    return path


def vqa_task(owner=None):
    """Create the ``colours-vqa`` task (round 1 open), owned by ``owner`` if given."""
    from tasks.data.seed import create_task

    task, _ = create_task(json.loads(DEFINITION.read_text(encoding="utf-8")))
    if owner is not None:
        task.owners.add(owner)
    return task
