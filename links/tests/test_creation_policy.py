"""What a link may point at (issue #12, rows 3, 13 and 15), through the service, the API, the
bulk call and the web form alike: never back at this service (a redirect loop), never a
Location header longer than the limit once encoded, never a host IDNA refuses."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from links.cache import redirect_location
from links.models import UrlLink
from links.services.change import link_update
from links.services.create import link_create
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

REQUEST_HOST = "127.0.0.1:8000"  # where the call came in
LOOP = "This URL points back at this short-link service; shortening it would make a redirect loop."


@pytest.fixture(autouse=True)
def _deployment(settings):
    settings.SHORT_URL_BASE = "https://s.example.com/"
    hosts = ["s.example.com", "127.0.0.1", "go.example.net", ".corp.example", "testserver"]
    settings.ALLOWED_HOSTS = hosts


def refusal(long_url: str, *, request_host: str = REQUEST_HOST, user) -> str:
    with pytest.raises(ValidationError) as excinfo:
        link_create(user=user, long_url=long_url, request_host=request_host)
    assert UrlLink.objects.filter(long_url=long_url).count() == 0
    return excinfo.value.message_dict["long_url"][0]


# --- Row 3: nothing that points back at this service --------------------------------------------


@pytest.mark.parametrize(
    "long_url",
    [
        "http://localhost:8000/x",  # the request host's port, by name
        "http://LOCALHOST/x",
        "http://LocalHost./x",
        "http://app.localhost/x",  # every *.localhost is this machine (RFC 6761)
        "http://[::1]:8000/abc1234",
        "http://[0:0:0:0:0:0:0:1]/x",
        "http://[::ffff:127.0.0.1]:8000/x",
        "http://127.0.0.1:8000/x",  # the request host itself
        "http://127.0.0.1:443/x",  # … on a port a proxy in front would serve
        "http://127.0.0.2/x",  # all of 127.0.0.0/8 is loopback
        "http://127.255.255.254:8000/x",
        "http://0.0.0.0:8000/x",
        "http://[::]:8000/x",
        "https://s.example.com/abc1234",  # SHORT_URL_BASE
        "https://S.Example.COM:443/abc1234",  # … in capitals, its port spelt out
        "http://s.example.com/abc1234",  # … over http, which a proxy sends on to https
        "https://s.example.com./abc1234",
        "http://go.example.net/x",  # an ALLOWED_HOSTS entry
        "https://corp.example/x",  # an ALLOWED_HOSTS pattern's own domain (.corp.example)
    ],
)
def test_every_spelling_of_this_service_is_refused(user, long_url):
    assert refusal(long_url, user=user) == LOOP


@pytest.mark.parametrize(
    ("request_host", "long_url"),
    [
        ("[::1]:8000", "http://[::1]:8000/x"),
        ("[::1]:8000", "http://[::1]/x"),  # port 80: a proxy in front may serve it
        ("LocalHost:8000", "http://localhost:8000/x"),
        ("short.example.org", "https://SHORT.example.org/x"),
        ("short.example.org:8080", "http://short.example.org:8080/x"),
        ("xn--bcher-kva.example", "https://bücher.example/x"),  # one host, two spellings
    ],
)
def test_the_host_the_call_came_to_is_refused_on_its_port(settings, user, request_host, long_url):
    settings.ALLOWED_HOSTS = ["*"]
    assert refusal(long_url, request_host=request_host, user=user) == LOOP


@pytest.mark.parametrize(
    ("request_host", "long_url"),
    [
        ("short.example.org", "https://SHORT.example.org:444/x"),
        ("short.example.org:8080", "http://short.example.org:8081/x"),
    ],
)
def test_another_port_on_the_same_name_is_another_server(settings, user, request_host, long_url):
    settings.ALLOWED_HOSTS = ["*"]
    assert link_create(user=user, long_url=long_url, request_host=request_host).created


def test_another_port_than_short_url_bases_is_not_this_service(user):
    """SHORT_URL_BASE is https://s.example.com/ (443): s.example.com:8443 is someone else's."""
    long_url = "https://S.Example.COM:8443/abc1234"
    assert link_create(user=user, long_url=long_url, request_host=REQUEST_HOST).created


@pytest.mark.parametrize(
    ("request_host", "long_url", "named"),
    [
        # The case: this service on :8000, another app on :9999 of the same machine.
        ("127.0.0.1:8000", "http://127.0.0.1:9999/x", "127.0.0.1"),
        ("LocalHost:8000", "http://localhost:8001/x", "localhost"),
        ("127.0.0.1:8000", "http://[::1]:1/x", "::1"),
        # The service on a public name: every local address is someone's own machine.
        ("s.example.com", "http://LOCALHOST/x", "localhost"),
        ("s.example.com", "http://127.0.0.1:8000/x", "127.0.0.1"),
        ("s.example.com", "http://0.0.0.0/x", "0.0.0.0"),  # noqa: S104 - a URL, no binding
    ],
)
def test_a_local_address_that_is_not_this_service_is_refused_for_what_it_is(
    settings, user, request_host, long_url, named
):
    settings.ALLOWED_HOSTS = ["s.example.com"] if request_host == "s.example.com" else ["*"]
    assert refusal(long_url, request_host=request_host, user=user) == (
        f"This URL points at a local address ({named}) that visitors cannot reach: "
        "on their devices it means their own machine."
    )


@pytest.mark.parametrize(
    "long_url",
    [
        "https://localhost.example.com/",
        "https://example.com/localhost",
        "http://128.0.0.1/",
        "http://[::2]/",
        "https://corp.example.org/",
        "https://s.example.com.evil.test/",
        # ALLOWED_HOSTS holds .corp.example: a shortener at go.corp.example allows its own
        # domain that way, and its marketers' links to the company's site are the point.
        "https://www.corp.example/spring-sale",
    ],
)
def test_hosts_that_only_look_like_this_service_are_accepted(user, long_url):
    assert link_create(user=user, long_url=long_url, request_host=REQUEST_HOST).created


def test_allowed_hosts_star_does_not_refuse_every_host(settings, user):
    settings.ALLOWED_HOSTS = ["*"]
    assert link_create(user=user, long_url="https://example.org/", request_host=REQUEST_HOST)


def test_two_links_cannot_point_at_each_other(user):
    """A loop needs one link to point at the other's short URL: refused in every spelling, on
    create and on change, before the second link exists and after."""
    first = link_create(user=user, long_url="https://example.com/a", request_host=REQUEST_HOST)
    code = first.link.code
    assert refusal(f"http://localhost:8000/{code}", user=user) == LOOP
    second = link_create(user=user, long_url="https://example.com/b", alias="bee").link
    with pytest.raises(ValidationError, match="redirect loop"):
        link_update(
            code=code, user=user, long_url="http://[::1]:8000/bee", request_host=REQUEST_HOST
        )
    assert UrlLink.objects.get(code=code).long_url == "https://example.com/a"
    assert second.long_url == "https://example.com/b"


def test_the_api_refuses_a_loop_through_another_spelling_of_its_host(settings, user):
    """The audit's case: the request host and SHORT_URL_BASE were the only spellings refused."""
    settings.SHORT_URL_BASE = ""
    api = client_for(user, HTTP_HOST=REQUEST_HOST)
    first = api.post("/api/v1/links/", {"long_url": "https://example.com/a"}, format="json")
    assert first.status_code == 201
    assert first.json()["short_url"].startswith("http://127.0.0.1:8000/")
    code = first.json()["code"]

    pointing_back = api.post(
        "/api/v1/links/", {"long_url": f"http://localhost:8000/{code}"}, format="json"
    )
    assert pointing_back.status_code == 400
    assert pointing_back.json() == {"long_url": [LOOP]}

    second = api.post("/api/v1/links/", {"long_url": "https://example.com/b"}, format="json")
    changed = api.patch(
        f"/api/v1/links/{code}/",
        {"long_url": f"http://[::1]:8000/{second.json()['code']}"},
        format="json",
    )
    assert changed.status_code == 400
    assert changed.json() == {"long_url": [LOOP]}

    bulk = api.post(
        "/api/v1/links/bulk/", {"items": [{"long_url": "http://LOCALHOST/x"}]}, format="json"
    )
    assert bulk.json()["results"][0]["errors"] == {"long_url": [LOOP]}


def test_the_form_refuses_a_link_back_to_this_service(client, user):
    client.force_login(user)
    page = client.post(reverse("home"), {"long_url": "http://LOCALHOST/x", "redirect_type": "302"})
    assert page.status_code == 200
    assert page.context["form"].errors["long_url"] == [LOOP]
    assert not UrlLink.objects.exists()


def test_the_api_and_form_name_a_local_address_on_another_port_for_what_it_is(client, user):
    """The issue's case over the API and the form: the service on 127.0.0.1:8000, the link to
    127.0.0.1:9999 was refused as pointing back at it."""
    long_url = "http://127.0.0.1:9999/x"
    api = client_for(user, HTTP_HOST=REQUEST_HOST)
    answer = api.post("/api/v1/links/", {"long_url": long_url}, format="json")
    assert answer.status_code == 400
    (message,) = answer.json()["long_url"]
    assert "local address (127.0.0.1) that visitors cannot reach" in message
    client.force_login(user)
    page = client.post(
        reverse("home"), {"long_url": long_url, "redirect_type": "302"}, HTTP_HOST=REQUEST_HOST
    )
    assert page.context["form"].errors["long_url"] == [message]
    assert not UrlLink.objects.exists()


# --- Row 13: the Location header is bounded by its encoded length --------------------------------

EMOJI_URL = "https://example.com/" + "😀" * 2001  # 2,021 characters, 24,032 once encoded


def test_a_short_url_of_emoji_is_refused_by_its_encoded_length(user):
    assert len(EMOJI_URL) == 2021
    message = refusal(EMOJI_URL, user=user)
    assert message == (
        "URLs can be at most 2048 characters (this one has 24,032 once its non-ASCII "
        "characters are percent-encoded)."
    )


def test_a_url_exactly_at_the_limit_once_encoded_is_accepted_and_redirects_whole(client, user):
    at_limit = "https://example.com/" + "é" * 338  # 20 + 338 × 6 = 2,048 once encoded
    assert len(redirect_location(at_limit)) == 2048
    link = link_create(user=user, long_url=at_limit).link
    response = client.get(f"/{link.code}")
    assert response.status_code == 302
    assert len(response["Location"].encode()) == 2048
    assert "at most 2048" in refusal(at_limit + "x", user=user)


def test_ascii_characters_that_browsers_need_escaped_count_too(user):
    assert "at most 2048" in refusal("https://example.com/" + "|" * 700, user=user)


def test_a_change_cannot_lengthen_a_link_past_the_limit(user):
    link = link_create(user=user, long_url="https://example.com/short").link
    with pytest.raises(ValidationError, match="at most 2048"):
        link_update(code=link.code, user=user, long_url=EMOJI_URL)
    assert UrlLink.objects.get(code=link.code).long_url == "https://example.com/short"


def test_the_api_and_the_form_refuse_the_emoji_url(client, user):
    api = client_for(user)
    response = api.post("/api/v1/links/", {"long_url": EMOJI_URL}, format="json")
    assert response.status_code == 400
    assert "24,032" in response.json()["long_url"][0]
    bulk = api.post("/api/v1/links/bulk/", {"items": [{"long_url": EMOJI_URL}]}, format="json")
    assert "24,032" in bulk.json()["results"][0]["errors"]["long_url"][0]

    client.force_login(user)
    page = client.post(reverse("home"), {"long_url": EMOJI_URL, "redirect_type": "302"})
    assert "24,032" in page.context["form"].errors["long_url"][0]
    assert not UrlLink.objects.exists()


# --- Row 15: hosts IDNA refuses ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("long_url", "host", "reason"),
    [
        ("http://☃.net/", "☃.net", "Codepoint U+2603"),
        ("http://xn--n3h.net/", "xn--n3h.net", "Codepoint U+2603"),  # ☃ in its ASCII form
        ("https://bü--cher.example/", "bü--cher.example", "hyphens in 3rd and 4th"),
        ("https://a\u200db.example/", "a\u200db.example", "Joiner U+200D not allowed"),
    ],
)
def test_a_host_idna_refuses_is_refused_with_the_reason(user, long_url, host, reason):
    message = refusal(long_url, user=user)
    assert message.startswith(f"The host name “{host}” is not a valid internationalised domain")
    assert reason in message


@pytest.mark.parametrize(
    ("long_url", "location"),
    [
        ("https://bücher.example/straße", "https://xn--bcher-kva.example/stra%C3%9Fe"),
        ("https://faß.de/", "https://xn--fa-hia.de/"),
        # Plain ASCII hosts go out as they are: IDNA's hyphen rule is for registering names.
        ("https://r3---sn-abc.googlevideo.com/v", "https://r3---sn-abc.googlevideo.com/v"),
    ],
)
def test_hosts_idna_accepts_redirect_with_their_ascii_form(client, user, long_url, location):
    link = link_create(user=user, long_url=long_url).link
    assert client.get(f"/{link.code}")["Location"] == location


def test_the_api_and_the_form_name_the_field_and_the_reason(client, user):
    response = client_for(user).post("/api/v1/links/", {"long_url": "http://☃.net/"}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["long_url"]
    assert "U+2603" in response.json()["long_url"][0]

    client.force_login(user)
    page = client.post(reverse("home"), {"long_url": "http://☃.net/", "redirect_type": "302"})
    assert "U+2603" in page.context["form"].errors["long_url"][0]
    assert not UrlLink.objects.exists()
