"""While Redis cannot be reached, an API call that needs it (here the throttle of ``POST /api/v1/auth/token``,
counted in Redis) answers 503 in the API's error shape ``{"code", "detail"}`` with ``Retry-After``, not
a bare 500; once Redis answers again, the same call goes through without restarting anything."""

from django.test import Client

CREDENTIALS = {"username": "annie", "password": "pw-annie"}


def ask_for_a_token(client):
    return client.post("/api/v1/auth/token", CREDENTIALS, content_type="application/json")


def test_a_throttled_call_answers_503_while_redis_is_down_then_works_again(annotator, cache_on_private_redis):
    client = Client(raise_request_exception=False)  # as a real server: the exception becomes the answer
    assert ask_for_a_token(client).status_code in (200, 201)

    cache_on_private_redis.stop()
    response = ask_for_a_token(client)

    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "redis_unavailable"
    assert "Redis" in body["detail"] and "Try again" in body["detail"]
    assert int(response["Retry-After"]) > 0

    cache_on_private_redis.start()  # back, and empty
    response = ask_for_a_token(client)

    assert response.status_code in (200, 201) and response.json()["username"] == "annie"
