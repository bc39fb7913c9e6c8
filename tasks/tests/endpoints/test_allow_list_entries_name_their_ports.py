"""An allow-list entry names the ports it opens: a listed host is refused on any other port (so listing
127.0.0.1 for a local model does not open the machine's Redis or PostgreSQL), an entry without a port
allows only the scheme's default port, and the refusal names the entry an admin would add."""

import pytest

from dynabench.errors import RuleError
from tasks.loop.endpoints.urls import check_url, parse_entry


@pytest.mark.parametrize("url", ["http://127.0.0.1:6379", "http://127.0.0.1:5432/v1", "http://127.0.0.1:8001"])
def test_a_listed_host_is_refused_on_a_port_the_entry_does_not_name(settings, url):
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = ["127.0.0.1/32:8000"]
    with pytest.raises(RuleError) as refused:
        check_url(url)
    assert refused.value.code == "endpoint_url_not_allowed"
    port = url.split(":")[2].split("/")[0]
    assert f"'127.0.0.1/32:{port}'" in refused.value.message and "DYNABENCH_ENDPOINT_ALLOWLIST" in refused.value.message


@pytest.mark.parametrize("entry, url", [
    ("127.0.0.1/32:8000", "http://127.0.0.1:8000/v1"),
    ("127.0.0.1:8000", "http://127.0.0.1:8000"),
    ("10.0.0.0/8:8000-8100", "http://10.1.2.3:8000"),
    ("10.0.0.0/8:8000-8100", "http://10.1.2.3:8100/v1"),
    ("[::1]/128:8000", "http://[::1]:8000/v1"),
    ("[::1]:8000", "http://[::1]:8000"),
])
def test_a_listed_host_is_accepted_on_a_listed_port_or_range(settings, entry, url):
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = [entry]
    assert check_url(url) == url.rstrip("/")


@pytest.mark.parametrize("url", ["http://10.1.2.3:7999", "http://10.1.2.3:8101", "http://[::1]:8001"])
def test_ports_just_outside_a_range_are_refused(settings, url):
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = ["10.0.0.0/8:8000-8100", "[::1]/128:8000"]
    with pytest.raises(RuleError, match="not on the platform's endpoint allow-list"):
        check_url(url)


def test_an_entry_without_a_port_allows_only_the_schemes_default_port(settings):
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = ["127.0.0.1/32", "[::1]/128"]
    assert check_url("http://127.0.0.1/v1") == "http://127.0.0.1/v1"
    assert check_url("http://127.0.0.1:80/v1") == "http://127.0.0.1:80/v1"
    assert check_url("https://[::1]/v1") == "https://[::1]/v1"
    for url in ("http://127.0.0.1:6379", "http://127.0.0.1:443", "https://[::1]:8443"):
        with pytest.raises(RuleError) as refused:
            check_url(url)
        assert "an entry without a port allows only port 80 for http and 443 for https" in refused.value.message


def test_a_name_is_refused_on_an_unlisted_port_before_any_dns_look_up(settings, monkeypatch):
    def no_dns(*args, **kwargs):
        raise AssertionError("a DNS look-up was made")

    monkeypatch.setattr("socket.getaddrinfo", no_dns)
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = ["models.example.org:8000", "*.together.xyz"]
    for url, entry in (("http://models.example.org:9000", "models.example.org:9000"),
                       ("https://api.together.xyz:8443", "api.together.xyz:8443")):
        with pytest.raises(RuleError) as refused:
            check_url(url)
        assert f"'{entry}'" in refused.value.message


@pytest.mark.parametrize("entry", ["127.0.0.1/32:0", "127.0.0.1/32:99999", "10.0.0.0/8:8100-8000", "[::1/128:8000",
                                   "[::1]/128:", "127.0.0.1/32:http", "a/b"])
def test_an_entry_that_does_not_parse_allows_nothing(settings, entry):
    with pytest.raises(ValueError):
        parse_entry(entry)
    settings.DYNABENCH_ENDPOINT_ALLOWLIST = [entry]
    with pytest.raises(RuleError):
        check_url("http://127.0.0.1:8000")
