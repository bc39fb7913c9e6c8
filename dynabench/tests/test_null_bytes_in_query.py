"""A NUL character in a query parameter is refused with a 400, never a database error."""


def test_it_refuses_a_nul_in_an_api_query_parameter(client, sentiment_task, validator):
    client.force_login(validator)

    response = client.get("/api/v1/validations/next", {"task": "senti\x00ment"})

    assert response.status_code == 400
    assert response.json()["code"] == "null_character" and response.json()["field"] == "task"


def test_it_refuses_a_nul_in_a_page_query_parameter(client, sentiment_task):
    response = client.get("/tasks/sentiment/write/", {"tag": "\x00"})

    assert response.status_code == 400
    assert b"contains a NUL character" in response.content


def test_it_lets_ordinary_query_parameters_through(client, sentiment_task, validator):
    client.force_login(validator)

    assert client.get("/api/v1/validations/next", {"task": "sentiment"}).status_code in (200, 204)
