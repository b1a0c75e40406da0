"""The SSRF guard: which webhook URLs and addresses are refused, and where a request goes."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest

from backroom.core.errors import WebhookTargetRefused
from backroom.webhooks.targets import (
    IPAddress,
    Resolver,
    TargetPolicy,
    check_target,
    embedded_ipv4,
    is_public_address,
)

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.8.8.8", "loopback range"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "cloud metadata, link-local"),
    ("100.64.0.1", "CGNAT"),
    ("100.100.100.200", "CGNAT (a cloud's metadata)"),
    ("0.0.0.0", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "broadcast"),
    ("192.0.2.1", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("::1", "IPv6 loopback"),
    ("::", "IPv6 unspecified"),
    ("fe80::1", "IPv6 link-local"),
    ("fc00::1", "IPv6 unique local"),
    ("fd00:ec2::254", "a cloud's IPv6 metadata"),
    ("ff02::1", "IPv6 multicast"),
    ("::ffff:127.0.0.1", "IPv4-mapped loopback"),
    ("::ffff:169.254.169.254", "IPv4-mapped metadata"),
    ("::127.0.0.1", "IPv4-compatible loopback"),
    ("2002:7f00:1::", "6to4 of 127.0.0.1"),
    ("2002:a00:1::", "6to4 of 10.0.0.1"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo of 127.0.0.1"),
    ("64:ff9b::7f00:1", "NAT64 of 127.0.0.1"),
    ("64:ff9b::a9fe:a9fe", "NAT64 of 169.254.169.254"),
    ("64:ff9b:1::a00:1", "local-use NAT64 of 10.0.0.1"),
]

ALLOWED = [
    "93.184.215.14",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "::ffff:93.184.215.14",
    "64:ff9b::5db8:d70e",
]


@pytest.mark.parametrize(("address", "why"), REFUSED)
def test_non_public_addresses_are_refused(address: str, why: str) -> None:
    assert not is_public_address(ip_address(address)), why


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_are_allowed(address: str) -> None:
    assert is_public_address(ip_address(address))


def test_embedded_addresses_are_found_in_every_ipv6_form() -> None:
    assert embedded_ipv4(IPv6Address("::ffff:10.0.0.1")) == [IPv4Address("10.0.0.1")]
    assert IPv4Address("127.0.0.1") in embedded_ipv4(IPv6Address("2002:7f00:1::"))
    assert embedded_ipv4(IPv6Address("2606:4700:4700::1111")) == []


def resolver_of(*answers: str) -> Resolver:
    async def resolve(host: str, port: int) -> list[IPAddress]:
        return [ip_address(answer) for answer in answers]

    return resolve


async def test_a_name_is_refused_if_any_of_its_addresses_is_private() -> None:
    with pytest.raises(WebhookTargetRefused, match="non-public"):
        await check_target(
            "https://hooks.example.com/in", TargetPolicy(resolve=resolver_of("1.1.1.1", "10.0.0.5"))
        )


async def test_the_checked_address_is_the_one_connected_to() -> None:
    target = await check_target(
        "https://hooks.example.com:8443/in?x=1", TargetPolicy(resolve=resolver_of("1.1.1.1"))
    )
    assert (str(target.address), target.port, target.path) == ("1.1.1.1", 8443, "/in?x=1")
    assert target.host_header == "hooks.example.com:8443"


async def test_an_international_host_name_goes_on_the_wire_in_its_idna_form() -> None:
    target = await check_target(
        "https://bücher.example:8443/in", TargetPolicy(resolve=resolver_of("1.1.1.1"))
    )
    assert target.host_header == "xn--bcher-kva.example:8443"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("gopher://127.0.0.1/", "http:// or https://"),
        ("http://user:pw@example.com/", "user name or password"),
        ("http:///path", "no host"),
        ("http://example.com:99999/", "not valid"),
        ("http://127.0.0.1/", "non-public"),
        ("http://[::ffff:7f00:1]/", "non-public"),
        ("http://example.com/#x", "fragment"),
        ("http://" + "ä" * 70 + ".com/", "not a valid name"),
    ],
)
async def test_bad_urls_are_refused_with_a_reason(url: str, message: str) -> None:
    with pytest.raises(WebhookTargetRefused, match=message):
        await check_target(url, TargetPolicy(resolve=resolver_of("1.1.1.1")))


async def test_the_allow_list_lets_loopback_through_for_development() -> None:
    policy = TargetPolicy.from_setting("127.0.0.1, 10.0.0.0/8")
    target = await check_target("http://127.0.0.1:9000/hook", policy)
    assert (str(target.address), target.port, target.path) == ("127.0.0.1", 9000, "/hook")
    assert policy.permits(ip_address("10.2.3.4"))
    assert not policy.permits(ip_address("192.168.0.1"))


def test_a_bad_allow_list_is_a_clear_error() -> None:
    with pytest.raises(WebhookTargetRefused, match="BACKROOM_WEBHOOK_ALLOW"):
        TargetPolicy.from_setting("not-an-address")


async def test_localhost_by_name_is_refused() -> None:
    with pytest.raises(WebhookTargetRefused, match="non-public"):
        await check_target("http://localhost:8080/", TargetPolicy())
