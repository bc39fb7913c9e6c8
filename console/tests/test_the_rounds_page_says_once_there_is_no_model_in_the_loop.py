"""The console's rounds page says once, among what the open round still lacks, that it has no model in
the loop (the loop's list no longer repeats it)."""


def test_an_open_round_without_a_model_says_so_once(client, owner, sentiment_task):
    sentiment_task.current_round().target_models.clear()
    client.force_login(owner)

    page = client.get(f"/tasks/{sentiment_task.code}/console/rounds/").content.decode()

    assert page.count("No model in the loop") == 1
