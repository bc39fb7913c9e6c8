"""Extractive QA reads a passage longer than one window and returns the best span as offsets into it."""

import torch

from tasks.loop.registry import get_predictor

SENTENCES = [
    "the museum opened in 1921 and hosts many visitors.",
    "emperor penguins breed during the antarctic winter.",
    "people from every country are welcome here.",
    "the service was slow and the room was dirty.",
]
PASSAGE = " ".join(SENTENCES[i % 4] for i in range(40))  # about 350 tokens; the tiny model's window is 128
QUESTION = "what year did the museum open"


def _reference_span(predictor, question, passage):
    """The best span by brute force: every window, every (start, end) pair of passage tokens."""
    encoding = predictor.tokenizer(
        question, passage, truncation="only_second", max_length=predictor.qa_max_length, stride=predictor.stride,
        return_overflowing_tokens=True, return_offsets_mapping=True,
    )
    best = (0.0, 0, 0)
    for f, ids in enumerate(encoding["input_ids"]):
        in_passage = [s == 1 for s in encoding.sequence_ids(f)]
        inputs = {k: torch.tensor([encoding[k][f]]) for k in predictor.tokenizer.model_input_names}
        with torch.inference_mode():
            out = predictor.model(**inputs)
        mask = torch.tensor(in_passage)
        p_start = out.start_logits[0][mask].softmax(-1).tolist()
        p_end = out.end_logits[0][mask].softmax(-1).tolist()
        positions = [t for t, inside in enumerate(in_passage) if inside]
        for a in range(len(positions)):
            for b in range(a, min(a + predictor.max_answer_tokens, len(positions))):
                score = p_start[a] * p_end[b]
                if score > best[0]:
                    offsets = encoding["offset_mapping"][f]
                    best = (score, offsets[positions[a]][0], offsets[positions[b]][1])
    return best, len(encoding["input_ids"])


def test_it_returns_the_best_span_over_every_window_as_offsets_into_the_passage(qa_model):
    predictor = get_predictor(qa_model)

    [output] = predictor.predict([{"question": QUESTION, "passage": PASSAGE}])

    (score, start, end), windows = _reference_span(predictor, QUESTION, PASSAGE)
    assert windows > 2
    assert PASSAGE[output["start"] : output["end"]] == output["answer"]
    assert (output["start"], output["end"]) == (start, end)
    assert abs(output["score"] - score) < 1e-5
    assert 0 < output["score"] <= 1


def test_it_keeps_answers_within_the_maximum_answer_length(qa_model):
    predictor = get_predictor(qa_model)

    [output] = predictor.predict([{"question": QUESTION, "passage": PASSAGE}])

    answer_tokens = predictor.tokenizer(output["answer"], add_special_tokens=False)["input_ids"]
    assert 1 <= len(answer_tokens) <= predictor.max_answer_tokens


def test_it_cuts_a_question_longer_than_the_window_allows(qa_model):
    question = " ".join(["what year did the museum open"] * 40)  # 240 tokens, more than the whole window

    [output] = get_predictor(qa_model).predict([{"question": question, "passage": PASSAGE}])

    assert PASSAGE[output["start"] : output["end"]] == output["answer"] != ""


def test_it_answers_nothing_for_an_empty_passage(qa_model):
    [output] = get_predictor(qa_model).predict([{"question": QUESTION, "passage": ""}])

    assert output == {"answer": "", "start": 0, "end": 0, "score": 0.0}
