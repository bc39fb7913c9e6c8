"""The embedding job stores each example's embedding once and recomputes it only when the written text
or the encoder's weights change; the per-task index follows the stored rows."""

from annotation.diversity import embeddings, encoder, index
from annotation.diversity_models import ExampleEmbedding
from annotation.models import Example
from annotation.services import create_example


def _write(annotator, context, text):
    return create_example(user=annotator, context=context, input={"text": text}, target={"label": "positive"})


def test_a_second_run_embeds_nothing(annotator, sentiment_task, sentiment_context, tiny_sentence_encoder):
    # given
    _write(annotator, sentiment_context, "The soup was cold.")
    _write(annotator, sentiment_context, "The staff were friendly.")
    # when
    first = embeddings.embed_task(sentiment_task.pk)
    second = embeddings.embed_task(sentiment_task.pk)
    # then
    assert first == f"embedded 2 examples of task {sentiment_task.pk} with tiny-bert"
    assert second == f"embedded 0 examples of task {sentiment_task.pk} with tiny-bert"
    assert ExampleEmbedding.objects.filter(task=sentiment_task).count() == 2


def test_changed_text_is_embedded_again_as_a_new_row(annotator, sentiment_task, sentiment_context, tiny_sentence_encoder):
    example = _write(annotator, sentiment_context, "The soup was cold.")
    embeddings.embed_task(sentiment_task.pk)
    old = ExampleEmbedding.objects.get(example=example)
    Example.objects.filter(pk=example.pk).update(input={**example.input, "text": "The soup was hot."})
    assert embeddings.embed_task(sentiment_task.pk).startswith("embedded 1 ")
    new = ExampleEmbedding.objects.get(example=example)
    assert new.pk > old.pk and new.text_sha256 == embeddings.text_sha256("The soup was hot.")


def test_another_encoder_embeds_everything_again(annotator, sentiment_task, sentiment_context, tiny_sentence_encoder,
                                                 tiny_qa_dir, settings):
    _write(annotator, sentiment_context, "The soup was cold.")
    embeddings.embed_task(sentiment_task.pk)
    settings.DYNABENCH_EMBEDDING_ENCODER = {"path": str(tiny_qa_dir), "name": "other-tiny-bert"}
    assert embeddings.embed_task(sentiment_task.pk).endswith("1 examples of task %d with other-tiny-bert" % sentiment_task.pk)


def test_the_index_finds_a_stored_example_and_follows_new_ones(annotator, sentiment_task, sentiment_context, tiny_sentence_encoder):
    # given: an index built from one stored vector
    first = _write(annotator, sentiment_context, "The soup was cold.")
    embeddings.embed_task(sentiment_task.pk)
    loaded = encoder.get_encoder()
    task_index = index.task_index(sentiment_task.pk, encoder_sha256=loaded.sha256)
    query = loaded.embed(["the soup was cold."])[0]
    assert task_index.search(query, k=5)[0][0] == first.pk
    # when: another example arrives and is embedded
    second = _write(annotator, sentiment_context, "Nobody is playing music outside.")
    embeddings.embed_task(sentiment_task.pk)
    # then: the same index answers with it, without a rebuild
    found = task_index.search(loaded.embed(["nobody is playing music outside."])[0], k=5)
    assert found[0][0] == second.pk and abs(found[0][1] - 1.0) < 1e-5
    assert {key for key, _ in found} == {first.pk, second.pk}
