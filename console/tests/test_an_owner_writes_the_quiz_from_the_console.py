"""An owner writes the qualification quiz from the console: settings in a form, each question in
the task's own shape (the fields a worker reads and the kind's answer widget: a label to pick,
a span to type), never raw JSON; the page says when the pool is too small to be safe."""

from annotation.models import Qualification, QuizItem

QUIZ = "/tasks/{}/console/crowd/quiz/"
SETTINGS = {"instructions": "Label the **sentiment**.", "pass_mark": "0.8", "questions_per_attempt": 5, "max_attempts": 3,
            "cooloff_minutes": 60, "attempts_per_hour": 60, "retire_after_passes": 1, "grants_validator": "on", "active": "on"}


def test_an_owner_saves_the_quiz_and_adds_labelled_questions(client, owner, sentiment_task):
    client.force_login(owner)
    assert client.post(QUIZ.format("sentiment"), SETTINGS).status_code == 302
    page = client.get(QUIZ.format("sentiment")).content.decode()
    assert 'name="input_text"' in page and 'type="radio" name="label"' in page and "{" not in page.split("data-add-question")[1][:2000]

    added = client.post(QUIZ.format("sentiment") + "questions", {"input_text": "What a lovely hotel.", "label": "positive"})
    assert added.status_code == 302
    item = QuizItem.objects.get()
    assert (item.input, item.answer) == ({"text": "What a lovely hotel."}, {"label": "positive"})

    page = client.get(QUIZ.format("sentiment")).content.decode()
    assert "data-pool-problem" in page and "needs at least 15" in page


def test_a_question_without_its_answer_is_refused_naming_the_field(client, owner, sentiment_task):
    client.force_login(owner)
    client.post(QUIZ.format("sentiment"), SETTINGS)
    refused = client.post(QUIZ.format("sentiment") + "questions", {"input_text": "No answer given."})
    assert refused.status_code == 400 and not QuizItem.objects.exists()
    bad_settings = client.post(QUIZ.format("sentiment"), {**SETTINGS, "pass_mark": "3", "instructions": ""})
    assert bad_settings.status_code == 400 and 'data-error-for="pass_mark"' in bad_settings.content.decode()


def test_a_qa_question_takes_a_typed_span_of_its_passage(client, owner, qa_task):
    client.force_login(owner)
    assert client.post(QUIZ.format("qa"), SETTINGS).status_code == 302
    passage = "The Nile flows north through Egypt into the Mediterranean Sea."
    added = client.post(QUIZ.format("qa") + "questions", {"input_passage": passage, "input_question": "Where does it flow?",
                                                          "answer_text": "into the Mediterranean Sea"})
    assert added.status_code == 302, added.content.decode()[:2000]
    item = QuizItem.objects.get(qualification=Qualification.objects.get(task=qa_task))
    assert item.answer["answers"][0] == {"text": "into the Mediterranean Sea", "answer_start": passage.find("into")}
    refused = client.post(QUIZ.format("qa") + "questions", {"input_passage": passage, "input_question": "Where?",
                                                            "answer_text": "not in the passage"})
    assert refused.status_code == 400
