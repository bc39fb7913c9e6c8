"""Finding 9: the public round page shows annotators' usernames to the task's owners and admins only.

Old code listed every annotator's username with counts to anyone, and the counts could be
matched to the export's anonymised annotator ids.
"""

from tests.html_support import without_csrf_tokens
from validation.tests.conftest import make_example, make_user


def test_visitors_and_other_users_see_counts_without_names(client, sentiment_task, annotator, outsider):
    make_example(sentiment_task, annotator)
    make_example(sentiment_task, make_user("bob", "annotator"))

    anonymous = without_csrf_tokens(client.get("/tasks/sentiment/rounds/1/").content.decode())
    client.force_login(outsider)
    signed_in = without_csrf_tokens(client.get("/tasks/sentiment/rounds/1/").content.decode())

    for html in (anonymous, signed_in):
        table = html[html.index('<table id="annotators">'):]
        assert "annie" not in table and "bob" not in table
        assert table.count("an annotator") == 2


def test_an_annotator_sees_their_own_name_only(client, sentiment_task, annotator):
    make_example(sentiment_task, annotator)
    make_example(sentiment_task, make_user("bob", "annotator"))
    client.force_login(annotator)

    html = without_csrf_tokens(client.get("/tasks/sentiment/rounds/1/").content.decode())

    assert 'data-annotator="annie"' in html and "bob" not in html


def test_owners_and_admins_see_every_name(client, sentiment_task, annotator, owner, admin_user):
    make_example(sentiment_task, annotator)
    make_example(sentiment_task, make_user("bob", "annotator"))

    for viewer in (owner, admin_user):
        client.force_login(viewer)
        html = client.get("/tasks/sentiment/rounds/1/").content.decode()
        assert 'data-annotator="annie"' in html and 'data-annotator="bob"' in html
