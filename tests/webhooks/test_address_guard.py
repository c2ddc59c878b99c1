"""The webhook address guard (docs/contract.md "Provisioning", "Webhooks"): only globally
routable addresses, no user info, and the address checked is the address connected to.

DNS is a stub (`resolver`) and a test firewall refuses every connection that is not to
loopback, so no traffic ever leaves the machine; the receivers are real local HTTP(S) servers.
"""

from urllib.parse import urlsplit

import pytest

from tests import builders
from tests.conftest import assert_error
from tests.webhooks.conftest import STUB_HOST
from webhooks import tasks
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus

pytestmark = pytest.mark.django_db

NOT_PUBLIC = (
    "webhookUrl must not point to a private, loopback, link-local or other non-public address"
)
USER_INFO = "webhookUrl must not contain user information (user:password@)"

#: a globally routable address; the firewall keeps the tests from ever reaching it
PUBLIC = "93.184.215.14"

REFUSED_ADDRESSES = [
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1",  # shared address space (carrier-grade NAT)
    "0.0.0.0",  # noqa: S104 (an address to refuse, not one to bind)
    "192.0.0.9",
    "198.18.0.1",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fec0::1",
    "ff0e::1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:169.254.169.254",
    "::127.0.0.1",  # IPv4-compatible
    "2002:7f00:1::1",  # 6to4 around 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 around 169.254.169.254
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo (client 127.0.0.1)
    "64:ff9b::7f00:1",  # NAT64 around 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 around 169.254.169.254
    "64:ff9b:1::a00:1",  # local-use NAT64
]

ACCEPTED_ADDRESSES = [
    PUBLIC,
    "2606:4700:4700::1111",
    "::ffff:93.184.215.14",
    "64:ff9b::5db8:d70e",  # NAT64 around 93.184.215.14
    "2002:5db8:d70e::1",  # 6to4 around 93.184.215.14
]


def keys_url(organization) -> str:
    return f"/api/provisioning/organizations/{organization.id}/api-keys"


def connects_to(firewall, port: int) -> list[tuple[str, int]]:
    """The connections made to `port` (the process also talks to Redis on loopback)."""
    return [connect for connect in firewall.connects if connect[1] == port]


def erp_key_with_hook(provisioning_client, organization, webhook_url: str):
    """Provisions an ERP key of `organization` sending its webhooks to `webhook_url`."""
    return provisioning_client.post(
        keys_url(organization),
        {"name": "ERP", "platform": "erp", "webhookUrl": webhook_url},
        format="json",
    )


@pytest.fixture
def production(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False


@pytest.mark.parametrize("address", REFUSED_ADDRESSES)
def test_a_host_resolving_to_a_non_public_address_is_refused(
    provisioning_client, organization, production, resolver, firewall, address
):
    resolver.answers = [[address]]
    response = erp_key_with_hook(provisioning_client, organization, f"https://{STUB_HOST}/hook")
    assert_error(response, 400, NOT_PUBLIC)
    assert connects_to(firewall, 443) == []  # checked, never contacted


@pytest.mark.parametrize("address", REFUSED_ADDRESSES)
def test_a_non_public_address_literal_is_refused(
    provisioning_client, organization, production, firewall, address
):
    host = f"[{address}]" if ":" in address else address
    response = erp_key_with_hook(provisioning_client, organization, f"http://{host}:8080/hook")
    assert_error(response, 400, NOT_PUBLIC)
    assert connects_to(firewall, 8080) == []


@pytest.mark.parametrize("address", ACCEPTED_ADDRESSES)
def test_a_globally_routable_address_is_accepted(
    provisioning_client, organization, production, resolver, firewall, address
):
    resolver.answers = [[address]]
    response = erp_key_with_hook(provisioning_client, organization, f"https://{STUB_HOST}/hook")
    assert response.status_code == 201, response.content
    assert connects_to(firewall, 443) == []


def test_every_answer_must_be_public(provisioning_client, organization, production, resolver):
    resolver.answers = [[PUBLIC, "10.0.0.7"]]
    response = erp_key_with_hook(provisioning_client, organization, f"https://{STUB_HOST}/hook")
    assert_error(response, 400, NOT_PUBLIC)


@pytest.mark.parametrize(
    "url",
    [
        f"https://user:secret@{STUB_HOST}/hook",
        f"https://token@{STUB_HOST}/hook",
        f"https://{PUBLIC}@127.0.0.1/hook",
        f"https://:@{STUB_HOST}/hook",
    ],
)
def test_user_info_is_refused_at_create_and_update_even_in_development(
    provisioning_client, organization, url
):
    # WEBHOOK_ALLOW_PRIVATE_URLS is on here (tests/conftest.py): user info is refused anyway.
    response = provisioning_client.post(
        keys_url(organization), {"name": "ERP", "webhookUrl": url}, format="json"
    )
    assert_error(response, 400, USER_INFO)

    created = provisioning_client.post(
        keys_url(organization), {"name": "Partner", "platform": "partner_a"}, format="json"
    ).json()
    response = provisioning_client.post(
        f"{keys_url(organization)}/{created['id']}", {"webhookUrl": url}, format="json"
    )
    assert_error(response, 400, USER_INFO)


@pytest.mark.parametrize(
    "url", [f"https://{STUB_HOST}/ho ok", f"https://{STUB_HOST}/ho\nok", "https://hooks\t.test/"]
)
def test_whitespace_in_a_url_is_refused(provisioning_client, organization, url):
    response = provisioning_client.post(
        keys_url(organization), {"name": "ERP", "webhookUrl": url}, format="json"
    )
    assert_error(response, 400, "webhookUrl must be an absolute http or https URL")


def test_update_to_a_non_public_address_is_refused(
    provisioning_client, organization, production, resolver
):
    resolver.answers = [[PUBLIC], ["10.0.0.7"]]
    created = erp_key_with_hook(provisioning_client, organization, f"https://{STUB_HOST}/a")
    assert created.status_code == 201, created.content
    response = provisioning_client.post(
        f"{keys_url(organization)}/{created.json()['id']}",
        {"webhookUrl": f"https://{STUB_HOST}/b"},
        format="json",
    )
    assert_error(response, 400, NOT_PUBLIC)


# ----- at delivery time -----


def emit(organization) -> Delivery:
    builders.order_event(organization)
    return Delivery.objects.get(organization=organization)


def port_of(url: str) -> int:
    return urlsplit(url).port


def test_rebinding_after_the_check_is_never_followed(
    organization, receiver, resolver, firewall, settings
):
    """DNS answers a public address, then (rebinding) the receiver's loopback address: the
    delivery connects to the address it checked, never to the second answer."""
    port = port_of(receiver.url)
    builders.api_key(organization, "partner_a", webhook_url=f"http://{STUB_HOST}:{port}/hook")
    delivery = emit(organization)
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    resolver.answers = [[PUBLIC], ["127.0.0.1"]]

    assert tasks.deliver(str(delivery.id)) is True

    assert receiver.requests == []
    assert resolver.lookups == 1  # resolved once for the delivery
    assert connects_to(firewall, port) == [(PUBLIC, port)]
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert attempt.error.startswith(f"ConnectionError: {PUBLIC}:")
    assert attempt.succeeded is False


def test_a_delivery_to_an_address_that_became_private_is_refused_without_traffic(
    organization, receiver, resolver, firewall, settings
):
    port = port_of(receiver.url)
    builders.api_key(organization, "partner_a", webhook_url=f"http://{STUB_HOST}:{port}/hook")
    delivery = emit(organization)
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    resolver.answers = [["127.0.0.1"]]

    tasks.deliver(str(delivery.id))

    assert receiver.requests == []
    assert connects_to(firewall, port) == []
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_error) == (DeliveryStatus.PENDING, NOT_PUBLIC)


def test_the_request_carries_the_urls_host_and_resolves_once(organization, receiver, resolver):
    port = port_of(receiver.url)
    builders.api_key(organization, "partner_a", webhook_url=f"http://{STUB_HOST}:{port}/hook?a=1")
    resolver.answers = [["127.0.0.1"], ["10.9.9.9"]]

    tasks.deliver(str(emit(organization).id))

    (request,) = receiver.wait_for(1)
    assert request.headers["Host"] == f"{STUB_HOST}:{port}"
    assert resolver.lookups == 1
    assert Delivery.objects.get(organization=organization).status == DeliveryStatus.DELIVERED


def test_https_uses_the_host_name_for_sni_and_the_certificate(
    organization, resolver, tls_receiver_for
):
    tls = tls_receiver_for(STUB_HOST)
    builders.api_key(organization, "partner_a", webhook_url=f"https://{STUB_HOST}:{tls.port}/hook")
    resolver.answers = [["127.0.0.1"]]

    tasks.deliver(str(emit(organization).id))

    (request,) = tls.receiver.wait_for(1)
    assert request.headers["Host"] == f"{STUB_HOST}:{tls.port}"
    assert tls.server_names == [STUB_HOST]
    assert Delivery.objects.get(organization=organization).status == DeliveryStatus.DELIVERED


def test_a_certificate_for_another_host_is_refused(organization, resolver, tls_receiver_for):
    tls = tls_receiver_for("other.example.test")
    builders.api_key(organization, "partner_a", webhook_url=f"https://{STUB_HOST}:{tls.port}/hook")
    resolver.answers = [["127.0.0.1"]]

    tasks.deliver(str(emit(organization).id))

    assert tls.receiver.requests == []
    delivery = Delivery.objects.get(organization=organization)
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.last_error.startswith("SSLError:")
    assert "other.example.test" not in tls.server_names  # SNI named the URL's host
