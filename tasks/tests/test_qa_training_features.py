"""SQuAD-style training features: answer token positions per window, [CLS] where a window misses the answer."""

from transformers import AutoTokenizer

from tasks.kinds import qa_features
from tasks.loop.training.base_encoder import minilm_encoder
from tasks.loop.training.examples import TrainingExample

PASSAGE = (
    "The lighthouse at Kerrow Point was built in 1857 to warn ships away from the reef below the cliffs. "
    "Its lamp was first fuelled by whale oil and later by paraffin, before it was electrified in 1936. "
    "The last keeper, a man named Duncan Reid, left in 1989, when the light became fully automatic."
)


def _example(question, answer):
    return TrainingExample(
        uid="q", input={"question": question, "passage": PASSAGE},
        target={"answers": [{"text": answer, "answer_start": PASSAGE.index(answer)}]}, source="seed",
    )


def _tokenizer():
    """MiniLM's WordPiece tokenizer (the tiny test tokenizer's 300-word vocabulary has no digits)."""
    return AutoTokenizer.from_pretrained(minilm_encoder().path, local_files_only=True)


def test_the_positions_point_at_the_answer_tokens_when_the_passage_fits():
    tokenizer = _tokenizer()
    example = _example("Who was the last keeper?", "Duncan Reid")

    [feature] = qa_features(tokenizer, [example], question_field="question", passage_field="passage", max_length=128, doc_stride=32)

    span = feature["input_ids"][feature["start_positions"]:feature["end_positions"] + 1]
    assert tokenizer.decode(span) == "duncan reid"


def test_a_long_passage_is_cut_into_overlapping_windows_and_only_windows_with_the_answer_point_at_it():
    tokenizer = _tokenizer()
    example = _example("When did the last keeper leave?", "1989")

    features = qa_features(tokenizer, [example], question_field="question", passage_field="passage", max_length=40, doc_stride=12)

    assert len(features) > 2
    assert all(len(f["input_ids"]) <= 40 for f in features)
    hits = [f for f in features if f["start_positions"] != 0]
    misses = [f for f in features if f["start_positions"] == 0]
    assert hits and misses
    for feature in hits:
        assert tokenizer.decode(feature["input_ids"][feature["start_positions"]:feature["end_positions"] + 1]) == "1989"
    assert all(f["end_positions"] == 0 for f in misses)
