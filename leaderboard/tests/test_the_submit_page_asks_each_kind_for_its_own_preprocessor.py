"""*Submit a model* asks an archive for the preprocessor its task's kind loads (tokenizer files for a
text kind, the image processor for an image kind, ...), and its Kind choice is a labelled group, not
a label pointing at nothing (``for=""``)."""

from tests.image_support import shapes_task


def test_an_image_task_asks_for_its_image_processor(client, researcher, owner):
    task = shapes_task(owner)
    client.force_login(researcher)

    page = client.get(f"/tasks/{task.code}/submit/").content.decode()

    assert "its image processor (<code>preprocessor_config.json</code>)" in page and "tokenizer files" not in page
    assert 'for=""' not in page and "<legend>Kind</legend>" in page


def test_a_text_task_asks_for_tokenizer_files(client, researcher, sentiment_task):
    client.force_login(researcher)

    page = client.get(f"/tasks/{sentiment_task.code}/submit/").content.decode()

    assert "tokenizer files" in page and 'for=""' not in page
