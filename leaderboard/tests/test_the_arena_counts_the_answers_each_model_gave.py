"""The arena's failure table counts, per model, the answers it gave (one per model in a
comparison, one per assistant turn of a conversation) beside the judged conversations and
comparisons it answered in, which are the generative vMER's denominator."""

from annotation import chat
from leaderboard.arena_board import compute_arena_board
from tests.generative_support import compare, run_turns


def test_a_comparison_gives_one_answer_each_and_a_conversation_one_per_turn(annotator, chat_task, endpoint_server):
    state = run_turns(user=annotator, task=chat_task, mode=chat.CONVERSATION, prompts=["hello", "and then", "and after"])
    conversation = chat.judge(user=annotator, task=chat_task, state=state,
                              target={"verdict": "fails", "category": "violence", "explanation": "It describes an attack."})
    talker = conversation.model_output["transcript"][-1]["model_id"]
    pair = compare(user=annotator, task=chat_task, prompt="who wrote the first algorithm", preference="a")

    board = compute_arena_board(chat_task, resamples=0)

    rows = {f["model"]["id"]: f for f in board.failures}
    other = next(m for m in pair.model_output["order"] if m != talker)
    assert (rows[talker]["answered"], rows[talker]["judged"]) == (3 + 1, 2)
    assert (rows[other]["answered"], rows[other]["judged"]) == (1, 1)
    assert rows[talker]["vmer"] == 0  # the failing conversation is not validated yet
