"""While the model in the loop answers, the create page says how long it will wait
(``DYNABENCH_MODEL_WAIT_S``), the bound every endpoint's timeout keeps within."""


def test_the_create_page_says_how_long_it_waits_for_the_model(client, annotator, sentiment_task, sentiment_context, settings):
    settings.DYNABENCH_MODEL_WAIT_S = 45
    client.force_login(annotator)
    page = client.get(f"/tasks/{sentiment_task.code}/write/")
    assert "the page waits up to 45 s" in page.content.decode()
