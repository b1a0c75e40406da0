"""Where a webhook may be sent: http(s) URLs whose every address is public.

A webhook URL comes from a tenant, and the server that sends to it sits inside someone's
network: without a guard, `http://169.254.169.254/` or `http://localhost:5432/` would
make backroom a proxy into that network (server-side request forgery). So a URL is
checked when it is registered and again at every attempt, since DNS may change between
the two, and the request then goes to the address that was checked, never to a second
lookup of the name (which a hostile DNS server could answer differently: rebinding).

An address is refused when it is not globally routable: loopback, private, link-local
(cloud metadata lives there), CGNAT (100.64.0.0/10), multicast, reserved, unspecified;
and IPv6 forms that carry such an IPv4 address inside them: IPv4-mapped, IPv4-compatible,
6to4, Teredo and NAT64. An allow-list (`BACKROOM_WEBHOOK_ALLOW`, addresses or networks)
lets development and tests deliver to 127.0.0.1.

>>> is_public_address(ip_address("93.184.215.14"))
True
>>> is_public_address(ip_address("::ffff:10.0.0.1"))
False
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from urllib.parse import urlsplit

from backroom.core.errors import WebhookTargetRefused

IPAddress = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]

_NAT64_PREFIXES = (ip_network("64:ff9b::/96"), ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ip_network("::/96")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def embedded_ipv4(address: IPv6Address) -> list[IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (mapped, compatible, 6to4, Teredo, NAT64)."""
    found: list[IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    low32 = IPv4Address(int(address) & 0xFFFFFFFF)
    if any(address in prefix for prefix in _NAT64_PREFIXES):
        found.append(low32)
    if address in _IPV4_COMPATIBLE and int(address) > 1:
        found.append(low32)
    return found


def is_public_address(address: IPAddress) -> bool:
    """Whether `address`, and every IPv4 address inside it, is globally routable."""
    if isinstance(address, IPv6Address):
        inner = embedded_ipv4(address)
        if inner:
            return all(is_public_address(v4) for v4 in inner)
    return address.is_global and not (
        address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or address.is_loopback
        or address.is_link_local
        or address.is_private
    )


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Every address the system's resolver gives for `host` (TCP)."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise WebhookTargetRefused(f"webhook host {host!r} does not resolve: {error}") from None
    return _unique(ip_address(info[4][0]) for info in infos)


def _unique(addresses: Iterable[IPAddress]) -> list[IPAddress]:
    seen: dict[IPAddress, None] = {}
    for address in addresses:
        seen.setdefault(address, None)
    return list(seen)


@dataclass(frozen=True, slots=True)
class TargetPolicy:
    """Which addresses webhooks may reach: public ones, plus the `allowed` networks.

    `resolve` looks names up (the system's resolver; tests give one that answers offline).
    """

    allowed: tuple[Network, ...] = ()
    resolve: Resolver = system_resolver

    @classmethod
    def from_setting(cls, value: str | None) -> TargetPolicy:
        """Parse `BACKROOM_WEBHOOK_ALLOW`: addresses or networks, separated by commas."""
        if not value:
            return cls()
        try:
            networks = tuple(ip_network(part.strip(), strict=False) for part in value.split(","))
        except ValueError as error:
            raise WebhookTargetRefused(f"BACKROOM_WEBHOOK_ALLOW: {error}") from None
        return cls(allowed=networks)

    def permits(self, address: IPAddress) -> bool:
        """Whether a request may be sent to `address`."""
        if any(address in network for network in self.allowed):
            return True
        return is_public_address(address)


@dataclass(frozen=True, slots=True)
class Target:
    """A checked webhook URL: the address to connect to (never a second lookup of the
    name), the name on the wire (Host header, TLS) and the path to ask for."""

    url: str
    scheme: str
    host: str
    port: int
    address: IPAddress

    @property
    def host_header(self) -> str:
        """The `Host` header: the name from the URL (in ASCII: an international name as
        its IDNA form), with its port unless it is the default."""
        name = f"[{self.host}]" if ":" in self.host else _ascii_name(self.host)
        if self.port == _DEFAULT_PORTS[self.scheme]:
            return name
        return f"{name}:{self.port}"

    @property
    def path(self) -> str:
        """What the request asks for: the URL's path and query (`/` if it has no path)."""
        parts = urlsplit(self.url)
        path = parts.path or "/"
        return f"{path}?{parts.query}" if parts.query else path


def _ascii_name(host: str) -> str:
    """`host` as it goes on the wire: an international name in its IDNA (punycode) form."""
    return host if host.isascii() else host.encode("idna").decode("ascii")


def parse_webhook_url(url: str) -> tuple[str, str, int]:
    """Scheme, host and port of a webhook URL, or `WebhookTargetRefused` saying why not."""
    if len(url) > 2048:
        raise WebhookTargetRefused("webhook URL is longer than 2048 characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise WebhookTargetRefused(f"webhook URL is not valid: {error}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise WebhookTargetRefused("webhook URL must start with http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise WebhookTargetRefused("webhook URL must not carry a user name or password")
    if not parts.hostname:
        raise WebhookTargetRefused("webhook URL has no host")
    try:
        _ascii_name(parts.hostname)
    except UnicodeError:
        raise WebhookTargetRefused("webhook URL's host is not a valid name") from None
    if parts.fragment:
        raise WebhookTargetRefused("webhook URL must not have a #fragment")
    return scheme, parts.hostname, port if port is not None else _DEFAULT_PORTS[scheme]


async def check_target(url: str, policy: TargetPolicy) -> Target:
    """Check `url` and every address its host resolves to; the first one is the one to use."""
    scheme, host, port = parse_webhook_url(url)
    try:
        addresses: list[IPAddress] = [ip_address(host)]
    except ValueError:
        addresses = await policy.resolve(host, port)
    if not addresses:
        raise WebhookTargetRefused(f"webhook host {host!r} has no address")
    refused = [address for address in addresses if not policy.permits(address)]
    if refused:
        raise WebhookTargetRefused(
            f"webhook host {host!r} resolves to a non-public address ({refused[0]}): refused"
        )
    return Target(url=url, scheme=scheme, host=host, port=port, address=addresses[0])
