"""A kind's ``written_text`` is the annotator's own fields (the hypothesis, the question, the
sentence), never the context they were shown: what diversity and near-duplicates embed."""


def test_nli_gives_the_hypothesis_not_the_premise(nli_task):
    example_input = {"premise": "A man plays a guitar.", "hypothesis": "  Nobody plays music. "}
    assert nli_task.spec.written_text(nli_task.config, example_input) == "Nobody plays music."


def test_qa_gives_the_question_not_the_passage(qa_task):
    question = next(f["name"] for f in qa_task.config["input_fields"])
    example_input = {"passage": "The museum opened in 1921.", question: "When did the museum open?"}
    assert qa_task.spec.written_text(qa_task.config, example_input) == "When did the museum open?"


def test_sentiment_gives_the_rewritten_sentence_not_the_prompt(sentiment_task):
    example_input = {"prompt": "The food was great.", "text": "The food was great, said nobody."}
    assert sentiment_task.spec.written_text(sentiment_task.config, example_input) == "The food was great, said nobody."


def test_no_written_field_gives_empty_text(nli_task):
    assert nli_task.spec.written_text(nli_task.config, {"premise": "A man plays a guitar."}) == ""
