"""Every variable with a row in docs/operate/configuration.md is still read by the platform."""

from dynabench.tests.test_configuration_reference import variables_documented, variables_read


def test_every_row_of_the_configuration_reference_names_a_variable_the_platform_reads():
    stale = sorted(variables_documented() - set(variables_read()))

    assert not stale, "docs/operate/configuration.md has rows for variables nothing reads any more: " + ", ".join(stale)
