"""Which URLs the platform may call (server-side request forgery): the allow-list check, run when a record is saved and again before each call.

An allow-list entry (``settings.DYNABENCH_ENDPOINT_ALLOWLIST``) names a host and the ports the
platform may call on it:

- a host name or ``*.suffix`` pattern, an IPv4 address or network, or an IPv6 address or network
  in brackets (``api.openai.com``, ``*.together.xyz``, ``127.0.0.1/32``, ``[::1]/128``);
- then ``:PORT`` or ``:FIRST-LAST`` (``127.0.0.1/32:8000``, ``[::1]/128:8000``,
  ``10.0.0.0/8:8000-8100``). An entry **without a port allows only the URL scheme's default port**
  (80 for ``http``, 443 for ``https``), so listing ``127.0.0.1/32`` never opens the machine's
  other services (Redis, PostgreSQL) to endpoint records. An IPv6 network without brackets
  (``fc00::/7``) takes no port.

An entry that does not parse allows nothing (and is logged).

A URL is normalised once, by ``normalise_url`` (spaces around it and trailing slashes dropped; a
space or control character inside it refused), and ``check_url`` checks and returns that normalised
URL: what the allow-list passed is what the record stores and what a call sends.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import ipaddress
import re
import socket
import unicodedata
from urllib.parse import urlsplit


from dynabench.errors import RuleError
from tasks.loop.endpoints.base import EndpointCode, logger, setting


DEFAULT_BLOCKED = ("127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
                   "fc00::/7", "0.0.0.0/8")

DEFAULT_PORTS = {"http": 80, "https": 443}

_NAME = re.compile(r"^[a-z0-9*_-][a-z0-9.*_-]*$")
_PORTS = re.compile(r"^(\d{1,5})(?:-(\d{1,5}))?$")


@dataclasses.dataclass(frozen=True)
class AllowEntry:
    """One allow-list entry: a host ``pattern`` (a name or ``*.suffix``) or a ``network``, and the
    ``ports`` range ``(first, last)`` it allows, inclusive (None: the URL scheme's default port only)."""

    pattern: str | None = None
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None
    ports: tuple[int, int] | None = None

    def allows_port(self, port: int, default_port: int) -> bool:
        """True when the entry allows ``port`` on a URL whose scheme's default port is ``default_port``."""
        if self.ports is None:
            return port == default_port
        return self.ports[0] <= port <= self.ports[1]


def _ports(text: str) -> tuple[int, int]:
    match = _PORTS.match(text)
    if not match:
        raise ValueError(f"the port '{text}' is not a number or a range FIRST-LAST")
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if not 1 <= first <= last <= 65535:
        raise ValueError(f"the ports '{text}' do not lie between 1 and 65535, the first not above the last")
    return first, last


def parse_entry(entry: str) -> AllowEntry:
    """Return the :class:`AllowEntry` of one allow-list entry (see the module docstring for the forms);
    raise ``ValueError`` saying what is wrong with it."""
    text = str(entry).strip().lower()
    port_text = None
    if text.startswith("["):  # [v6], [v6]/len, [v6]:port, [v6]/len:port
        close = text.find("]")
        if close < 0:
            raise ValueError("an opening '[' without its ']'")
        host, rest = text[1:close], text[close + 1:]
        prefix, colon, port_text = rest.partition(":")
        if prefix and not prefix.startswith("/") or (colon and not port_text):
            raise ValueError("after ']' comes '/LENGTH', ':PORT' or both")
        host, port_text = host + prefix, (port_text if colon else None)
        network = ipaddress.ip_network(host, strict=False)
        if network.version != 6:
            raise ValueError("brackets are for IPv6 addresses")
        return AllowEntry(network=network, ports=_ports(port_text) if port_text is not None else None)
    if text.count(":") > 1:  # an IPv6 network without brackets: no port
        return AllowEntry(network=ipaddress.ip_network(text, strict=False))
    host, colon, port_text = text.partition(":")
    ports = _ports(port_text) if colon else None
    try:
        return AllowEntry(network=ipaddress.ip_network(host, strict=False), ports=ports)
    except ValueError:
        if not _NAME.match(host):
            raise ValueError(f"'{host}' is neither a host name, a '*.suffix' pattern nor a network") from None
        return AllowEntry(pattern=host, ports=ports)


def _allowlist() -> list[AllowEntry]:
    entries = []
    for entry in setting("DYNABENCH_ENDPOINT_ALLOWLIST", []) or []:
        if not str(entry).strip():
            continue
        try:
            entries.append(parse_entry(entry))
        except ValueError as error:
            logger.warning("DYNABENCH_ENDPOINT_ALLOWLIST entry %r allows nothing: %s", entry, error)
    return entries


def _always_refused(address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    if address.is_loopback:  # ::1 lies in ::/8, which Python counts as reserved; loopback is a blocked network instead
        return False
    return address.is_link_local or address.is_multicast or address.is_unspecified or address.is_reserved or (
        isinstance(address, ipaddress.IPv6Address) and address in ipaddress.ip_network("fd00:ec2::/32")
    )


def _resolve(host: str, port: int) -> list:
    try:
        return [ipaddress.ip_address(info[4][0].split("%")[0]) for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)]
    except (socket.gaierror, UnicodeError, ValueError) as error:
        raise RuleError(EndpointCode.BAD_URL, f"The endpoint's host '{host}' does not resolve ({error}).", field="base_url") from None


def suggested_entry(host: str, port: int, default_port: int) -> str:
    """The allow-list entry that would let the platform call ``host`` (a name or an address) on ``port``:
    ``name:port``, ``a.b.c.d/32:port`` or ``[v6]/128:port``, without the port when it is the scheme's default."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        entry = host
    else:
        entry = f"{address}/32" if address.version == 4 else f"[{address}]/128"
    return entry if port == default_port else f"{entry}:{port}"


def _not_listed(host: str, port: int, default_port: int, entry: str | None = None) -> RuleError:
    return RuleError(
        EndpointCode.URL_NOT_ALLOWED,
        f"Port {port} of the host '{host}' is not on the platform's endpoint allow-list (an entry without a port "
        f"allows only port 80 for http and 443 for https); ask an admin to add the entry "
        f"'{entry or suggested_entry(host, port, default_port)}' to DYNABENCH_ENDPOINT_ALLOWLIST.", field="base_url",
    )


_CHARACTER_NAMES = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return", " ": "a space"}


def _refused_character(character: str) -> str:
    return _CHARACTER_NAMES.get(character) or f"the character U+{ord(character):04X}"


def normalise_url(url, *, field: str = "base_url", label: str = "The base URL") -> str:
    """Return ``url`` as the platform stores and calls it: spaces and line breaks around it dropped, then
    trailing slashes. Raise ``RuleError`` ``endpoint_bad_url`` (on ``field``) when a space or a control
    or formatting character (Unicode categories Z and C: tabs, line breaks, NUL, zero-width and
    direction marks) remains inside it: Python's URL parser drops some of them silently, so the URL
    checked would not be the URL sent. The message names the field and the character."""
    url = str(url or "").strip()
    for character in url:
        if character.isspace() or unicodedata.category(character)[0] in "CZ":
            raise RuleError(
                EndpointCode.BAD_URL, f"{label} ({field}) contains {_refused_character(character)}; a URL has no spaces or "
                "control characters inside it: remove it.", field=field,
            )
    return url.rstrip("/")


def check_url(url: str) -> str:
    """Return ``url`` normalised (``normalise_url``: no spaces around it, no trailing slash) when the
    platform may call it; raise ``RuleError``. The URL checked is the normalised one, so the caller
    stores and calls exactly what passed.

    Codes: ``endpoint_bad_url`` (a space or control character inside it, not a URL, not http(s),
    credentials in the URL, no host, a port that is not a number, a host that does not resolve),
    ``endpoint_url_not_allowed`` (host and port not on the allow-list, or an address that is refused:
    see the module docstring); the message names the entry an admin would add.
    """
    url = normalise_url(url)
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError as error:  # e.g. "http://[::1": an unclosed IPv6 bracket
        raise RuleError(
            EndpointCode.BAD_URL, f"The endpoint URL cannot be read ({error}); an IPv6 address goes in brackets, "
            "e.g. http://[::1]:8000/v1.", field="base_url",
        ) from None
    if parts.scheme not in DEFAULT_PORTS:
        raise RuleError(EndpointCode.BAD_URL, "An endpoint URL starts with http:// or https://.", field="base_url")
    if parts.username or parts.password or "@" in parts.netloc:
        raise RuleError(EndpointCode.BAD_URL, "Put the API key in its own field, not in the URL.", field="base_url")
    if not host:
        raise RuleError(EndpointCode.BAD_URL, "The endpoint URL has no host.", field="base_url")
    default_port = DEFAULT_PORTS[parts.scheme]
    try:
        port = parts.port or default_port
    except ValueError:
        raise RuleError(EndpointCode.BAD_URL, "The endpoint URL's port is not a number from 1 to 65535.", field="base_url") from None
    entries = [e for e in _allowlist() if e.allows_port(port, default_port)]
    named = any(e.pattern is not None and fnmatch.fnmatchcase(host, e.pattern) for e in entries)
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    if literal is None and not named:  # refused before any DNS look-up of a name nobody listed
        raise _not_listed(host, port, default_port)
    addresses = [literal] if literal is not None else _resolve(host, port)
    blocked = [ipaddress.ip_network(n) for n in setting("DYNABENCH_ENDPOINT_BLOCKED_NETWORKS", DEFAULT_BLOCKED)]
    for address in addresses:
        listed = any(e.network is not None and address.version == e.network.version and address in e.network for e in entries)
        if _always_refused(address):
            raise RuleError(
                EndpointCode.URL_NOT_ALLOWED,
                f"The endpoint's host '{host}' resolves to {address}, a link-local, multicast or reserved address "
                "(such as a cloud metadata service); the platform never calls those.", field="base_url",
            )
        if not (named or listed):
            raise _not_listed(host, port, default_port)
        if any(address.version == n.version and address in n for n in blocked) and not listed:
            raise RuleError(
                EndpointCode.URL_NOT_ALLOWED,
                f"The host '{host}' resolves to {address}, inside the platform's own network; only an allow-list "
                f"entry naming that network and port lets the platform call it: ask an admin to add "
                f"'{suggested_entry(str(address), port, default_port)}' to DYNABENCH_ENDPOINT_ALLOWLIST.", field="base_url",
            )
    return url


def api_url(endpoint) -> str:
    """The full URL of the endpoint's API: its label (``Endpoint.Api``: ``/v1/chat/completions``,
    ``/v1/completions`` or ``/v1/audio/transcriptions``) after the base URL, whether or not that ends in ``/v1``."""
    base = endpoint.base_url.rstrip("/")
    base = base[: -len("/v1")] if base.endswith("/v1") else base
    return base + str(endpoint.Api(endpoint.api).label)
