"""Helpers for open-ended (generative) task tests: a whole comparison or conversation through
``annotation/chat.py``, as the chat pages run it."""

from asgiref.sync import async_to_sync

from annotation import chat


def turn_events(*, user, task, state: dict, prompt: str) -> list[tuple]:
    """Every event of one turn (``chat.prepare_turn``, then ``chat.take_turn``, an async generator, run to its end)."""
    turn = chat.prepare_turn(user=user, task=task, state=state, prompt=prompt)
    return async_to_sync(_collect)(chat.take_turn(turn))


async def _collect(events) -> list:
    return [event async for event in events]


def run_turns(*, user, task, mode: str, prompts: list[str]) -> dict:
    """Start a ``mode`` chat, send each prompt (its answers streamed to the end); return the state."""
    state = chat.start(user=user, task=task, mode=mode)
    for prompt in prompts:
        for step, _side, value in turn_events(user=user, task=task, state=state, prompt=prompt):
            assert step != "error", value
            if step == "done":
                state = value
    return state


def compare(*, user, task, prompt: str, preference: str, failing=(), category: str = "", explanation: str = ""):
    """One side-by-side comparison judged with ``preference``; return the example."""
    state = run_turns(user=user, task=task, mode=chat.SIDE_BY_SIDE, prompts=[prompt])
    target = {"preference": preference, "failing": list(failing), "category": category, "explanation": explanation}
    return chat.judge(user=user, task=task, state=state, target=target)


@async_to_sync
async def read_stream(response) -> bytes:
    """The whole body of a streamed answer whose content is an async iterator (the chat turn's)."""
    return b"".join([chunk async for chunk in response.streaming_content])
