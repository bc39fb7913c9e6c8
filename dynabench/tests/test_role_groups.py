"""The role groups exist after ``migrate``, so fixtures and sign-up can put people in them."""

from django.contrib.auth.models import Group

from dynabench.roles import ROLES, has_role


def test_migrate_creates_the_role_groups(db):
    assert set(Group.objects.values_list("name", flat=True)) >= set(ROLES)


def test_the_role_fixtures_are_in_their_groups(annotator, validator, researcher, outsider):
    assert has_role(annotator, "annotator") and not has_role(annotator, "validator")
    assert has_role(validator, "validator") and has_role(researcher, "researcher")
    assert not any(has_role(outsider, role) for role in ROLES)
