"""The console's people page: search any user, grant and revoke roles on the task, ban; each
person's examples, fooling rate, validation accuracy against consensus and last activity."""

from django.contrib.auth.models import User

from tasks import access
from validation.models import Validation
from validation.tests.conftest import make_example


def test_an_owner_finds_a_newcomer_and_grants_the_annotator_role(client, owner, sentiment_task):
    newcomer = User.objects.create_user(username="nina", password="pw", email="nina@example.org")
    client.force_login(owner)

    page = client.get("/tasks/sentiment/console/people/", {"q": "nin"}).content.decode()
    assert 'data-person="nina"' in page and 'data-grant="annotator"' in page

    response = client.post("/tasks/sentiment/console/people/role/grant", {"user": newcomer.pk, "role": "annotator", "q": "nin"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "nina is now annotator" in response.content.decode()
    assert access.has_task_role(newcomer, sentiment_task, "annotator")

    client.post("/tasks/sentiment/console/people/role/revoke", {"user": newcomer.pk, "role": "annotator"})
    assert not access.has_task_role(newcomer, sentiment_task, "annotator")


def test_a_refused_change_says_why(client, owner, sentiment_task):
    client.force_login(owner)
    response = client.post("/tasks/sentiment/console/people/ban/ban", {"user": owner.pk}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400 and "revoke the owner role first" in response.content.decode()


def test_the_table_shows_each_persons_record(client, owner, annotator, validator, sentiment_task):
    fooled = make_example(sentiment_task, annotator, model_wrong=True, validation_state="verified_correct")
    make_example(sentiment_task, annotator, model_wrong=False)
    Validation.objects.create(example=fooled, validator=validator, label="correct")
    client.force_login(owner)

    page = client.get("/tasks/sentiment/console/people/").content.decode()

    row = page[page.index('data-person="annie"'):]
    row = row[: row.index("</tr>")]
    assert 'data-label="Examples">2</td>' in row and "50.0%" in row
    vrow = page[page.index('data-person="val"'):]
    assert "100.0%" in vrow[: vrow.index("</tr>")]
    person = client.get("/tasks/sentiment/console/people/annie/").content.decode()
    assert person.count("<tr") == 3  # header + two examples


def test_a_ban_from_the_page_takes_the_role_and_shows_it(client, owner, annotator, sentiment_task):
    client.force_login(owner)
    client.post("/tasks/sentiment/console/people/ban/ban", {"user": annotator.pk, "reason": "spam"})
    assert not access.has_task_role(annotator, sentiment_task, "annotator")
    page = client.get("/tasks/sentiment/console/people/").content.decode()
    assert 'badge bad">banned' in page and 'data-ban="lift"' in page
