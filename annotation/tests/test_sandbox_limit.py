"""The sandbox's hourly limit per visitor (``SANDBOX_TRIES_PER_HOUR``), counted in the cache."""

import pytest

from annotation.sandbox import sandbox_allowance, try_model
from dynabench.errors import RateLimited


def test_each_try_counts_and_the_limit_refuses_with_the_wait(settings, sentiment_task, sentiment_model):
    settings.SANDBOX_TRIES_PER_HOUR = 2
    assert sandbox_allowance(visitor="user:1").remaining == 2
    for _ in range(2):
        try_model(task=sentiment_task, input={"text": "Fine coffee."}, visitor="user:1")
    assert sandbox_allowance(visitor="user:1").remaining == 0
    with pytest.raises(RateLimited) as refused:
        try_model(task=sentiment_task, input={"text": "Fine coffee."}, visitor="user:1")
    assert refused.value.code == "sandbox_limit" and "come back in" in refused.value.message
    # another visitor has their own tries
    assert sandbox_allowance(visitor="ip:10.0.0.9").remaining == 2


def test_bad_input_does_not_use_a_try(settings, sentiment_task, sentiment_model):
    settings.SANDBOX_TRIES_PER_HOUR = 2
    with pytest.raises(Exception):
        try_model(task=sentiment_task, input={"text": ""}, visitor="user:1")
    assert sandbox_allowance(visitor="user:1").remaining == 2


def test_zero_turns_the_limit_off(settings, sentiment_task, sentiment_model):
    settings.SANDBOX_TRIES_PER_HOUR = 0
    assert sandbox_allowance(visitor="user:1").limit is None
    for _ in range(3):
        try_model(task=sentiment_task, input={"text": "Fine coffee."}, visitor="user:1")
