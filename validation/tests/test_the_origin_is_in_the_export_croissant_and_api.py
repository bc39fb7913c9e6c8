"""Where an example came from (written, assisted, generated) is in the round export (both ways of
building its lines), its Croissant description and the author's API; never in the review API."""

from annotation.models import Example
from validation.croissant import FIELDS
from validation.export import export_rows
from validation.tests.conftest import make_example


def test_the_export_carries_the_origin_and_the_edit_distance(sentiment_task, annotator):
    example = make_example(sentiment_task, annotator)
    Example.objects.filter(pk=example.pk).update(origin="assisted", suggestion={"input": {"text": "x"}, "form": {}},
                                                  suggestion_distance=4)

    [row] = list(export_rows(Example.objects.filter(pk=example.pk)))

    assert (row["origin"], row["suggestion_distance"]) == ("assisted", 4)
    assert "suggestion" not in row  # the suggestion's text stays on the platform; its distance is published


def test_the_croissant_description_names_the_origin():
    assert {"origin", "suggestion_distance"} <= {name for name, _, _ in FIELDS}


def test_the_author_sees_the_origin_over_the_api(client, sentiment_task, annotator):
    example = make_example(sentiment_task, annotator)
    client.force_login(annotator)

    answer = client.get(f"/api/v1/examples/{example.pk}").json()

    assert answer["origin"] == "written"
