"""An annotator's own page shows, per round with a diversity report, their own Vendi score with its 95 %
bootstrap interval beside the round's, and which of their examples were near-copies of which (their own,
or another annotator's, never that one's id)."""

import re

from annotation.diversity_models import ExampleDiversity, RoundDiversity
from validation.tests.conftest import make_example, make_user


def test_the_annotator_sees_their_vendi_and_their_near_copies(client, sentiment_task, annotator):
    other = make_user("otto", "annotator")
    round1 = sentiment_task.current_round()
    mine = [make_example(sentiment_task, annotator) for _ in range(3)]
    theirs = make_example(sentiment_task, other)
    places = ((theirs, theirs, 2), (mine[0], mine[0], 2), (mine[1], mine[0], 2), (mine[2], theirs, 2))
    for example, leader, size in places:
        ExampleDiversity.objects.create(example=example, round=round1, cluster=-1, representative=leader, group_size=size)
    RoundDiversity.objects.create(round=round1, status="done", figures={
        "examples": 40, "vendi": 21.3, "vendi_low": 17.9, "vendi_high": 19.6,
        "per_author": [{"author_id": annotator.pk, "examples": 12, "vendi": 6.24, "low": 4.5, "high": 5.74}]})
    client.force_login(annotator)

    page = client.get(f"/users/{annotator.username}/").content.decode()

    row = re.search(r'<tr data-round="%d">.*?</tr>' % round1.pk, page, re.S).group(0)
    assert "6.2 <small class=\"muted\">[4.5, 5.7]</small> over 12 examples" in row
    assert "21.3" in row and "[17.9, 19.6]" in row
    assert f"#{mine[1].pk} of your #{mine[0].pk}" in row and f"#{mine[2].pk} of another annotator's example" in row
    assert f"#{theirs.pk}" not in row and 'data-near-copies="2"' in row
