"""Which URLs the platform may call (server-side request forgery): the allow-list check, run when a record is saved and again before each call."""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from urllib.parse import urlsplit


from dynabench.errors import RuleError
from tasks.loop.endpoints.base import EndpointCode, setting


DEFAULT_BLOCKED = ("127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
                   "fc00::/7", "0.0.0.0/8")


def _allowlist() -> tuple[list[str], list]:
    names, networks = [], []
    for entry in setting("DYNABENCH_ENDPOINT_ALLOWLIST", []) or []:
        entry = str(entry).strip().lower()
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            if entry:
                names.append(entry)
    return names, networks


def _always_refused(address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_link_local or address.is_multicast or address.is_unspecified or address.is_reserved or (
        isinstance(address, ipaddress.IPv6Address) and address in ipaddress.ip_network("fd00:ec2::/32")
    )


def _resolve(host: str, port: int) -> list:
    try:
        return [ipaddress.ip_address(info[4][0].split("%")[0]) for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)]
    except (socket.gaierror, UnicodeError, ValueError) as error:
        raise RuleError(EndpointCode.BAD_URL, f"The endpoint's host '{host}' does not resolve ({error}).", field="base_url") from None


def check_url(url: str) -> str:
    """Return ``url`` normalised (no trailing slash) when the platform may call it; raise ``RuleError``.

    Codes: ``endpoint_bad_url`` (not http(s), credentials in the URL, no host, a host that does not
    resolve), ``endpoint_url_not_allowed`` (not on the allow-list, or an address that is refused:
    see the module docstring).
    """
    url = (url or "").strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise RuleError(EndpointCode.BAD_URL, "An endpoint URL starts with http:// or https://.", field="base_url")
    if parts.username or parts.password or "@" in parts.netloc:
        raise RuleError(EndpointCode.BAD_URL, "Put the API key in its own field, not in the URL.", field="base_url")
    host = (parts.hostname or "").lower()
    if not host:
        raise RuleError(EndpointCode.BAD_URL, "The endpoint URL has no host.", field="base_url")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise RuleError(EndpointCode.BAD_URL, "The endpoint URL's port is not a number.", field="base_url") from None
    names, networks = _allowlist()
    named = any(fnmatch.fnmatchcase(host, pattern) for pattern in names)
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    if literal is None and not named:  # refused before any DNS look-up of a name nobody listed
        raise RuleError(
            EndpointCode.URL_NOT_ALLOWED,
            f"The host '{host}' is not on the platform's endpoint allow-list; ask an admin to add it to "
            "DYNABENCH_ENDPOINT_ALLOWLIST.", field="base_url",
        )
    addresses = [literal] if literal is not None else _resolve(host, port)
    blocked = [ipaddress.ip_network(n) for n in setting("DYNABENCH_ENDPOINT_BLOCKED_NETWORKS", DEFAULT_BLOCKED)]
    for address in addresses:
        listed = any(address.version == n.version and address in n for n in networks)
        if _always_refused(address):
            raise RuleError(
                EndpointCode.URL_NOT_ALLOWED,
                f"The endpoint's host '{host}' resolves to {address}, a link-local, multicast or reserved address "
                "(such as a cloud metadata service); the platform never calls those.", field="base_url",
            )
        if not (named or listed):
            raise RuleError(
                EndpointCode.URL_NOT_ALLOWED,
                f"The host '{host}' is not on the platform's endpoint allow-list; ask an admin to add it to "
                "DYNABENCH_ENDPOINT_ALLOWLIST.", field="base_url",
            )
        if any(address.version == n.version and address in n for n in blocked) and not listed:
            raise RuleError(
                EndpointCode.URL_NOT_ALLOWED,
                f"The host '{host}' resolves to {address}, inside the platform's own network; only an allow-list "
                "entry naming that network lets the platform call it.", field="base_url",
            )
    return url.rstrip("/")


def api_url(endpoint) -> str:
    """The full URL of the endpoint's API (``.../v1/chat/completions`` or ``.../v1/completions``)."""
    base = endpoint.base_url.rstrip("/")
    if not base.endswith("/v1"):
        base += "/v1"
    return base + ("/chat/completions" if endpoint.api == endpoint.Api.CHAT else "/completions")
