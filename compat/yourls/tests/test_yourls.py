"""YOURLS's API (/yourls-api.php): every action in json, xml and simple, its credentials, who sees
what, and the replies YOURLS clients read ("already exists", a taken keyword)."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import timedelta
from xml.etree import ElementTree

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import resolve
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts.services import api_key_create, api_key_revoke
from analytics.models import HourlyClick
from compat.yourls.views import YOURLS_VERSION, YourlsApiView
from links.models import UrlLink
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.factories import UrlLinkFactory
from links.tests.helpers import call_wsgi
from serving.hotpath import short_code_of
from workspaces.models import Role
from workspaces.selectors import personal_workspace_of
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db

API = "/yourls-api.php"
DATE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")


@pytest.fixture
def key(user) -> str:
    """An API key of `user` (su_…), as YOURLS's `signature`."""
    return api_key_create(user=user, name="yourls")[1]


@pytest.fixture
def staff_key(staff_user) -> str:
    """A staff member's DRF token: staff see every link with it (an API key acts for its one
    workspace only)."""
    from rest_framework.authtoken.models import Token

    return Token.objects.create(user=staff_user).key


@pytest.fixture
def call(key):
    """GET /yourls-api.php as `user` (format=json unless given), the answer's JSON when it is
    JSON."""

    def call(signature: str | None = key, method: str = "get", **params):
        params = {"format": "json", **params}
        if signature is not None:
            params["signature"] = signature
        headers = {name: params.pop(name) for name in list(params) if name.startswith("HTTP_")}
        params = {name: value for name, value in params.items() if value is not None}
        client = Client()
        return getattr(client, method)(API, params, **headers)

    return call


def _xml(response) -> ElementTree.Element:
    return ElementTree.fromstring(response.content)  # noqa: S314 - this service's own answer


def _clicks(link: UrlLink, clicks: int) -> None:
    HourlyClick.objects.create(
        link=link,
        hour=timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(hours=2),
        clicks=clicks,
        unique_visitors=clicks,
    )


# --- shorturl ----------------------------------------------------------------------------------


def test_shorturl_creates_a_link_through_the_service_and_answers_yourlss_fields(call, user):
    response = call(action="shorturl", url="https://www.example.com/spring")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json; charset=utf-8"
    body = response.json()
    link = UrlLink.objects.get(owner=user)
    assert body["status"] == "success"
    assert body["code"] == ""
    assert body["statusCode"] == 200
    assert body["message"] == "https://www.example.com/spring added to database"
    assert body["shorturl"] == f"http://testserver/{link.code}"
    assert body["title"] == ""
    assert body["url"]["keyword"] == link.code
    assert body["url"]["url"] == "https://www.example.com/spring"
    assert DATE.match(body["url"]["date"])
    assert body["url"]["ip"] == ""
    assert "simple" not in body


def test_shorturl_with_a_keyword_and_a_title_and_by_post(call, user):
    response = call(
        method="post",
        action="shorturl",
        url="https://www.example.com/spring",
        keyword="spring-sale",
        title="Spring sale",
    )

    body = response.json()
    assert body["status"] == "success"
    assert body["shorturl"] == "http://testserver/spring-sale"
    assert body["url"]["keyword"] == "spring-sale"
    assert body["title"] == body["url"]["title"] == "Spring sale"
    assert UrlLink.objects.get(code="spring-sale").owner == user


def test_shorturl_of_a_url_you_already_have_answers_already_exists_with_that_link(call, user):
    existing = link_create(user=user, long_url="https://www.example.com/spring").link
    _clicks(existing, 4)

    response = call(action="shorturl", url="https://www.example.com/spring")

    # 200, as YOURLS answers it: its clients read the reply and raise their "exists" error.
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "fail"
    assert body["code"] == "error:url"
    assert body["shorturl"] == f"http://testserver/{existing.code}"
    assert body["message"] == (
        "https://www.example.com/spring already exists in database "
        f"(short URL: testserver/{existing.code})"
    )
    assert body["url"]["keyword"] == existing.code
    assert body["url"]["clicks"] == "4"
    assert UrlLink.objects.count() == 1


def _already_exists(response, link: UrlLink) -> None:
    """YOURLS's "already exists" reply, naming `link`."""
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "fail"
    assert body["code"] == "error:url"
    assert body["shorturl"] == f"http://testserver/{link.code}"
    assert body["url"]["keyword"] == link.code
    assert body["url"]["url"] == link.long_url
    assert body["title"] == body["url"]["title"] == link.title
    assert body["message"].startswith(f"{link.long_url} already exists in database (short URL: ")


def test_a_url_with_a_keyworded_link_already_exists_whatever_this_call_asks(call, user):
    """YOURLS's unique URLs: the URL is looked up first, whatever keyword the link has and
    whatever keyword or title the new call brings."""
    named = link_create(
        user=user, long_url="https://www.example.com/spring", alias="spring-sale", title="Spring"
    ).link

    for params in (
        {},
        {"keyword": "another-name"},
        {"title": "Another title"},
        {"keyword": "spring-sale"},
    ):
        response = call(action="shorturl", url="https://www.example.com/spring", **params)
        _already_exists(response, named)
        assert response.json()["shorturl"] == "http://testserver/spring-sale", params
    # Read as a create stores it: no scheme means https://, as on every channel.
    _already_exists(call(action="shorturl", url="www.example.com/spring"), named)
    simple = call(action="shorturl", url="https://www.example.com/spring", format="simple")
    assert simple.content.decode() == "http://testserver/spring-sale"
    assert UrlLink.objects.count() == 1


def test_a_teammates_link_in_a_shared_workspace_already_exists(call, user, other_user):
    team = workspace_create(user=other_user, name="Growth team")
    member_add(by=other_user, workspace=team, username=user.username, role=Role.EDITOR)
    theirs = link_create(
        user=other_user, long_url="https://www.example.com/spring", workspace=team
    ).link

    # A DRF token acts in every workspace of its user; the user's own key in their personal one.
    token = Token.objects.create(user=user).key
    _already_exists(call(token, action="shorturl", url="https://www.example.com/spring"), theirs)
    team_key = api_key_create(user=user, name="team", workspace=team)[1]
    _already_exists(call(team_key, action="shorturl", url="https://www.example.com/spring"), theirs)
    assert UrlLink.objects.count() == 1

    # An API key of the personal workspace sees none of the team's links: a new link.
    created = call(action="shorturl", url="https://www.example.com/spring").json()
    assert created["status"] == "success"
    assert UrlLink.objects.get(code=created["url"]["keyword"]).workspace == (
        personal_workspace_of(user)
    )


def test_someone_elses_link_to_the_same_url_is_not_theirs_to_hand_back(
    call, key, staff_key, other_user
):
    theirs = link_create(user=other_user, long_url="https://www.example.com/spring").link

    for signature in (key, staff_key):  # staff see every link, but have only their own
        response = call(signature, action="shorturl", url="https://www.example.com/spring")
        assert response.json()["status"] == "success"
        assert theirs.code not in response.content.decode()
    assert UrlLink.objects.filter(long_url="https://www.example.com/spring").count() == 3


def test_a_link_that_no_longer_takes_people_there_is_not_handed_back(call, user):
    """Revoked, expired, password-protected or rerouted links do not send everyone to the URL:
    a new link is made."""
    url = "https://www.example.com/spring"
    revoked = link_create(user=user, long_url=url, alias="was-spring").link
    UrlLink.objects.filter(pk=revoked.pk).update(revoked_at=timezone.now())
    link_create(user=user, long_url=url, alias="locked-spring", password="s3cret-pass-9")
    expired = link_create(user=user, long_url=url, alias="old-spring").link
    UrlLink.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(days=1))

    created = call(action="shorturl", url=url).json()

    assert created["status"] == "success"
    assert created["url"]["keyword"] not in {"was-spring", "locked-spring", "old-spring"}


def test_a_taken_keyword_is_error_keyword_with_the_services_message(call, other_user):
    UrlLinkFactory(owner=other_user, alias="spring-sale")

    response = call(action="shorturl", url="https://www.example.com/x", keyword="spring-sale")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "fail"
    assert body["code"] == "error:keyword"
    assert body["message"] == "The alias “spring-sale” is already taken; “spring-sale-2” is free."


@pytest.mark.parametrize(
    ("url", "code", "message"),
    [
        ("ftp://files.example.com/a.pdf", "error:nourl", "Only http and https URLs can be"),
        ("", "error:nourl", "Enter the long URL to shorten."),
        ("http://testserver/abc", "error:noloop", "This URL points back at this short-link"),
    ],
)
def test_a_url_the_service_refuses_is_a_400_with_its_message(call, url, code, message):
    response = call(action="shorturl", url=url)

    assert response.status_code == 400
    body = response.json()
    assert body["status"] == "fail"
    assert body["code"] == code
    assert body["errorCode"] == "400"
    assert body["message"].startswith(message)
    assert not UrlLink.objects.exists()


def test_other_refusals_name_their_field(call):
    response = call(action="shorturl", url="https://www.example.com/", title="t" * 201)

    assert response.status_code == 200
    assert response.json()["code"] == "error:title"
    assert "at most 200 characters" in response.json()["message"]


# --- expand and url-stats ----------------------------------------------------------------------


def test_expand_by_keyword_and_by_full_short_url(call, user):
    link = UrlLinkFactory(owner=user, title="Spring")

    for shorturl in (
        link.code,
        f"http://testserver/{link.code}",
        f"https://TESTSERVER/{link.code}/",
    ):
        body = call(action="expand", shorturl=shorturl).json()
        assert body == {
            "keyword": link.code,
            "shorturl": f"http://testserver/{link.code}",
            "longurl": link.long_url,
            "title": "Spring",
            "message": "success",
            "statusCode": 200,
        }, shorturl


def test_expand_of_a_full_short_url_takes_the_link_on_that_domain(call, user, settings):
    settings.SHORT_URL_BASE = "https://s.example.test/"
    domain_save(host="go.example.test")
    default = link_create(user=user, long_url="https://www.example.com/a", alias="spring").link
    extra = link_create(
        user=user, long_url="https://www.example.com/b", alias="spring", domain="go.example.test"
    ).link

    def expand(shorturl):
        return call(action="expand", shorturl=shorturl)

    assert expand("https://go.example.test/spring").json()["longurl"] == extra.long_url
    assert expand("https://go.example.test/spring").json()["shorturl"] == (
        "https://go.example.test/spring"
    )
    assert expand("https://s.example.test/spring").json()["longurl"] == default.long_url
    assert expand("spring").json()["longurl"] == default.long_url  # the default domain's
    # A host that is none of ours names no link.
    assert expand("https://elsewhere.example/spring").status_code == 404


def test_expand_of_an_unknown_or_someone_elses_code_is_not_found(call, other_user):
    theirs = UrlLinkFactory(owner=other_user)

    for shorturl in (theirs.code, "nope-nope", "a b", "", "http://[oops/abc", "http:///abc"):
        response = call(action="expand", shorturl=shorturl)
        assert response.status_code == 404
        assert response.json()["message"] == "Error: short URL not found"
        assert response.json()["errorCode"] == 404


def test_staff_expand_anyones_link(call, staff_key, other_user):
    theirs = UrlLinkFactory(owner=other_user)

    assert call(staff_key, action="expand", shorturl=theirs.code).json()["longurl"] == (
        theirs.long_url
    )


def test_url_stats_gives_the_link_and_its_clicks(call, user):
    link = UrlLinkFactory(owner=user, title="Spring")
    _clicks(link, 7)

    body = call(action="url-stats", shorturl=f"http://testserver/{link.code}").json()

    assert body["statusCode"] == 200
    assert body["message"] == "success"
    assert body["link"] == {
        "shorturl": f"http://testserver/{link.code}",
        "url": link.long_url,
        "title": "Spring",
        "timestamp": link.created_at.strftime("%Y-%m-%d %H:%M:%S"),
        "ip": "",
        "clicks": "7",
    }


def test_url_stats_of_someone_elses_link_is_not_found(call, other_user):
    theirs = UrlLinkFactory(owner=other_user)

    response = call(action="url-stats", shorturl=theirs.code)

    assert response.status_code == 404
    assert response.json() == {"statusCode": 404, "message": "Error: short URL not found"}


# --- stats, db-stats, version ------------------------------------------------------------------


@pytest.fixture
def three_links(user, other_user):
    now = timezone.now()
    links = {}
    for name, clicks, age in (("few", 1, 3), ("many", 9, 2), ("none", 0, 1)):
        links[name] = UrlLinkFactory(owner=user, long_url=f"https://www.example.com/{name}")
        UrlLink.objects.filter(pk=links[name].pk).update(created_at=now - timedelta(days=age))
        if clicks:
            _clicks(links[name], clicks)
    _clicks(UrlLinkFactory(owner=other_user), 100)  # not theirs: never counted for them
    return links


def _listed(body) -> list[str]:
    return [item["url"].rsplit("/", 1)[-1] for item in body.get("links", {}).values()]


def test_stats_rank_the_callers_links(call, three_links):
    def stats(**params):
        return call(action="stats", **params).json()

    top = stats(filter="top", limit="3")
    assert _listed(top) == ["many", "few", "none"]
    assert list(top["links"]) == ["link_1", "link_2", "link_3"]
    assert top["links"]["link_1"]["clicks"] == "9"
    assert DATE.match(top["links"]["link_1"]["timestamp"])
    assert top["stats"] == {"total_links": "3", "total_clicks": "10"}
    assert top["statusCode"] == 200
    assert top["message"] == "success"

    assert _listed(stats(filter="bottom", limit="2")) == ["none", "few"]
    assert _listed(stats(filter="last", limit="3")) == ["none", "many", "few"]
    assert _listed(stats(filter="top", limit="2", start="1")) == ["few", "none"]
    assert sorted(_listed(stats(filter="rand", limit="10"))) == ["few", "many", "none"]
    assert _listed(stats()) == ["many", "few", "none"]  # top, 10
    # No link listed: the key is left out, as YOURLS does; the totals stay.
    assert "links" not in stats(limit="0")
    assert stats(limit="0")["stats"]["total_links"] == "3"


def test_db_stats_count_the_callers_links_and_staff_count_all(call, staff_key, three_links):
    assert call(action="db-stats").json() == {
        "db-stats": {"total_links": "3", "total_clicks": "10"},
        "statusCode": 200,
        "message": "success",
    }
    staff = call(staff_key, action="db-stats").json()["db-stats"]
    assert staff == {"total_links": "4", "total_clicks": "110"}


def test_version(call):
    assert call(action="version").json() == {"version": YOURLS_VERSION, "statusCode": 200}
    assert call(action="version", format="simple").content.decode() == YOURLS_VERSION


def test_an_unknown_or_missing_action_is_a_400(call):
    for params in ({"action": "delete"}, {}):
        response = call(**params)
        assert response.status_code == 400
        assert response.json()["message"] == 'Unknown or missing "action" parameter'


# --- Formats -----------------------------------------------------------------------------------


def test_xml_is_the_default_format_with_the_same_keys_escaped(call, user):
    response = call(
        format=None,  # left out: YOURLS answers XML
        action="shorturl",
        url="https://www.example.com/?a=1&b=<2>",
        title='Fish & "chips" <b>now</b>',
    )
    assert "format" not in response.request["QUERY_STRING"]

    assert response.status_code == 200
    assert response["Content-Type"] == "application/xml; charset=utf-8"
    text = response.content.decode()
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert "<b>now" not in text  # escaped, not markup
    root = _xml(response)
    assert root.tag == "result"
    assert root.findtext("status") == "success"
    assert root.findtext("title") == 'Fish & "chips" <b>now</b>'
    assert root.findtext("url/url") == "https://www.example.com/?a=1&b=<2>"
    assert root.findtext("url/keyword") == UrlLink.objects.get().code
    assert root.findtext("statusCode") == "200"


def test_every_action_answers_xml(call, user, three_links):
    link = three_links["many"]
    for params, path, expected in (
        ({"action": "expand", "shorturl": link.code}, "longurl", link.long_url),
        ({"action": "url-stats", "shorturl": link.code}, "link/clicks", "9"),
        ({"action": "stats", "filter": "top", "limit": "1"}, "links/link_1/clicks", "9"),
        ({"action": "stats", "filter": "top", "limit": "1"}, "stats/total_links", "3"),
        ({"action": "db-stats"}, "db-stats/total_clicks", "10"),
        ({"action": "version"}, "version", YOURLS_VERSION),
        ({"action": "shorturl", "url": "https://www.example.com/x"}, "status", "success"),
    ):
        response = call(format="xml", **params)
        assert _xml(response).findtext(path) == expected, params


def test_simple_answers_the_bare_url(call, user, three_links):
    def simple(**params):
        response = call(format="simple", **params)
        assert response["Content-Type"] == "text/plain; charset=utf-8"
        return response.content.decode()

    created = simple(action="shorturl", url="https://www.example.com/new")
    assert created == f"http://testserver/{UrlLink.objects.get(long_url__endswith='/new').code}"
    # An existing URL: the existing short URL, as YOURLS answers it.
    assert simple(action="shorturl", url="https://www.example.com/new") == created
    link = three_links["few"]
    assert simple(action="expand", shorturl=link.code) == link.long_url
    assert simple(action="expand", shorturl="nope-nope") == "not found"
    assert simple(action="stats") == "Need either XML or JSON format for stats"
    assert simple(action="db-stats") == "Need either XML or JSON format for stats"
    # An unknown format answers as simple, as YOURLS's does.
    assert call(format="csv", action="expand", shorturl=link.code).content.decode() == (
        link.long_url
    )


def _jsonp(response, callback: str) -> dict:
    """The JSON a JSONP answer hands its callback."""
    assert response["Content-Type"] == "application/javascript; charset=utf-8"
    text = response.content.decode()
    assert text.startswith(f"{callback}(") and text.endswith(")"), text
    return json.loads(text[len(callback) + 1 : -1])


@pytest.mark.parametrize(
    "callback", ["cb", "jQuery123_456", "a.b", "$", "__yourls1700000000000_jsonp[1700000000001]"]
)
def test_jsonp_wraps_the_json_in_the_callback(call, user, callback):
    response = call(
        format="jsonp", action="shorturl", url="https://www.example.com/spring", callback=callback
    )

    assert response.status_code == 200
    body = _jsonp(response, callback)
    assert body["status"] == "success"
    assert body["shorturl"] == f"http://testserver/{UrlLink.objects.get().code}"
    assert body["callback"] == callback  # YOURLS puts it in the answer too


def test_jsonp_reads_yourlss_jsonp_parameter_too_and_wraps_refusals(call, other_user):
    theirs = UrlLinkFactory(owner=other_user)

    not_found = call(format="jsonp", action="expand", shorturl=theirs.code, jsonp="cb")
    assert not_found.status_code == 404
    assert _jsonp(not_found, "cb")["message"] == "Error: short URL not found"
    refused = call(signature=None, format="JSONP", action="version", callback="cb")
    assert refused.status_code == 403
    assert _jsonp(refused, "cb") == {"message": "Please log in", "errorCode": 403, "callback": "cb"}


@pytest.mark.parametrize(
    "callback",
    [
        None,
        "",
        "alert(1)",
        "cb;alert(1)",
        "</script><script>alert(1)",
        "a-b",
        "1cb",
        "a..b",
        ".a",
        "a[b]",
        "a['b']",
        "a[1](2)",
        "cb\\u2028",  # the text of an escape
        "cb\u2028",  # the character itself
        "c\u00e9",
        "cb//",
        "a" * 201,
    ],
)
def test_a_callback_that_is_not_a_javascript_name_is_a_400_and_changes_nothing(call, callback):
    response = call(
        format="jsonp", action="shorturl", url="https://www.example.com/spring", callback=callback
    )

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json; charset=utf-8"  # no script to run
    body = response.json()
    assert body["errorCode"] == "400"
    assert body["error"] == "Invalid callback parameter"
    assert body["message"].startswith("callback: ")
    if callback:
        assert callback not in response.content.decode()
    assert not UrlLink.objects.exists()  # refused before the action ran


def test_a_callback_in_another_format_is_only_echoed(call):
    response = call(format="json", action="version", callback="<b>cb</b>")

    assert response.json()["callback"] == "<b>cb</b>"  # JSON-encoded, as YOURLS echoes it
    assert _xml(call(format="xml", action="version", callback="<b>")).findtext("callback") == "<b>"


# --- Pages on another origin (CORS) ------------------------------------------------------------


def test_cors_preflight_needs_no_credentials_and_every_answer_allows_any_origin(call, key):
    preflight = Client().options(
        API,
        HTTP_ORIGIN="https://tools.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="x-requested-with, content-type",
    )
    assert preflight.status_code == 204
    assert preflight["Access-Control-Allow-Origin"] == "*"
    assert "POST" in preflight["Access-Control-Allow-Methods"]
    allowed = {
        name.strip().lower() for name in preflight["Access-Control-Allow-Headers"].split(",")
    }
    assert {"x-requested-with", "content-type"} <= allowed
    assert "Access-Control-Allow-Credentials" not in preflight  # never cookies
    assert not preflight.content

    for response in (
        call(method="post", action="version", HTTP_ORIGIN="https://tools.example"),
        call(signature=None, action="version"),
        call(signature="su_wrong", action="version"),
        call(format="jsonp", action="version", callback="a(b)"),
        call(format="jsonp", action="version", callback="cb"),
        call(format="xml", action="nope"),
    ):
        assert response["Access-Control-Allow-Origin"] == "*", response.content
        assert "Retry-After" in response["Access-Control-Expose-Headers"]


def test_preflights_are_counted_per_ip(rates):
    rates(anon="2/min")

    codes = [Client().options(API).status_code for _ in range(3)]
    assert codes == [204, 204, 429]


# --- Credentials -------------------------------------------------------------------------------


def test_without_credentials_please_log_in(call):
    for fmt in ("json", "xml"):
        response = call(signature=None, format=fmt, action="version")
        assert response.status_code == 403
        if fmt == "json":
            assert response.json() == {"message": "Please log in", "errorCode": 403, "callback": ""}
        else:
            assert _xml(response).findtext("message") == "Please log in"


def test_wrong_or_revoked_keys_are_refused(call, user):
    api_key, raw = api_key_create(user=user, name="old")
    assert call(raw, action="version").status_code == 200
    api_key_revoke(key_id=api_key.pk, user=user)

    for signature in (raw, "su_not-a-key", "0123456789abcdef", "a" * 40, "su_\x00"):
        response = call(signature, action="version")
        assert response.status_code == 403, signature
        assert response.json()["message"] == "Please log in"


def test_a_drf_token_is_a_signature_too(call, user):
    token = Token.objects.create(user=user)

    assert call(token.key, action="db-stats").status_code == 200


def test_timestamp_is_accepted_with_the_plain_key_only(call, key):
    """YOURLS's md5(timestamp + key) cannot be checked against a key stored hashed."""
    assert call(key, action="version", timestamp="1700000000").status_code == 200
    hashed = hashlib.md5(f"1700000000{key}".encode()).hexdigest()  # noqa: S324 - YOURLS's
    assert call(hashed, action="version", timestamp="1700000000").status_code == 403


def test_an_inactive_users_key_is_refused(call, user, key):
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)

    assert call(key, action="version").status_code == 403


def test_username_and_password(call, user):
    ok = call(signature=None, action="db-stats", username="marketer", password="s3cret-pass-1")
    assert ok.status_code == 200

    for password in ("wrong", "", "s3cret-pass-1\x00"):
        response = call(signature=None, action="version", username="marketer", password=password)
        assert response.status_code == 403
        assert response.json()["message"] == "Invalid username or password"


def test_password_guessing_is_locked_out_as_on_the_sign_in_form(call, user, settings):
    settings.AXES_FAILURE_LIMIT = 3

    def sign_in(password: str):
        return call(signature=None, action="version", username="marketer", password=password)

    assert [sign_in("wrong").status_code for _ in range(2)] == [403, 403]
    locked = sign_in("wrong")
    # In the caller's format, not the sign-in form's HTML page.
    assert locked.status_code == 429
    assert locked["Content-Type"].startswith("application/json")
    assert locked.json()["message"].startswith("Too many failed sign-ins")
    assert 0 < int(locked["Retry-After"]) <= 15 * 60
    assert sign_in("s3cret-pass-1").status_code == 429  # even the right password
    # One count for every door: the sign-in form is shut too.
    form = Client().post("/accounts/login/", {"username": "marketer", "password": "s3cret-pass-1"})
    assert form.status_code == 429
    # A key still works: the lock is on passwords.
    assert call(action="version").status_code == 200


def test_a_right_password_here_does_not_forget_earlier_failures(call, user, settings):
    """Only a sign-in (a session) resets the count; an API call signs nobody in."""
    settings.AXES_FAILURE_LIMIT = 3

    def sign_in(password: str):
        return call(signature=None, action="version", username="marketer", password=password)

    assert [sign_in(p).status_code for p in ("wrong", "wrong", "s3cret-pass-1")] == [403, 403, 200]
    assert sign_in("wrong").status_code == 429


def test_failed_passwords_on_the_form_lock_this_door_too(call, user, settings):
    settings.AXES_FAILURE_LIMIT = 3
    for _ in range(3):
        Client().post("/accounts/login/", {"username": "marketer", "password": "wrong"})

    locked = call(signature=None, action="version", username="marketer", password="s3cret-pass-1")
    assert locked.status_code == 429


# --- Rate limits -------------------------------------------------------------------------------


def test_shorturl_is_a_write_whatever_its_method_and_shares_the_native_budget(call, user, rates):
    rates(api_write="2/min")
    native = Client()
    token = Token.objects.create(user=user)
    created = native.post(
        "/api/v1/links/",
        {"long_url": "https://www.example.com/0"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {token.key}",
    )
    assert created.status_code == 201

    assert call(action="shorturl", url="https://www.example.com/1").status_code == 200
    throttled = call(action="shorturl", url="https://www.example.com/2")
    assert throttled.status_code == 429
    assert 0 < int(throttled["Retry-After"]) <= 60
    assert throttled.json()["errorCode"] == 429
    assert throttled.json()["message"].startswith("Request was throttled.")
    # Reads have their own budget, POST or GET.
    assert call(method="post", action="db-stats").status_code == 200


def test_reads_are_limited_per_user(call, rates):
    rates(api_read="2/min")

    assert [call(action="version").status_code for _ in range(3)] == [200, 200, 429]


def test_guessing_signatures_is_limited_per_ip(call, rates):
    rates(anon="2/min")

    codes = [call("su_guess", action="version").status_code for _ in range(3)]
    assert codes == [403, 403, 429]


# --- The route ---------------------------------------------------------------------------------


# Transactional: a request through the WSGI entry point ends with Django's connection clean-up,
# which on MariaDB would end a test's wrapping transaction.
@pytest.mark.django_db(transaction=True)
def test_the_path_is_the_yourls_api_never_a_short_code(key, monkeypatch):
    def no_redirect(*args, **kwargs):
        raise AssertionError("the redirect was reached")

    monkeypatch.setattr("serving.hotpath.resolve", no_redirect)
    monkeypatch.setattr("serving.redirect.resolve", no_redirect)
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/yourls-api.php"}
    assert short_code_of(environ) is None
    assert resolve(API).func.view_class is YourlsApiView

    # Through the production WSGI entry point, as a server calls it.
    status, headers, body = call_wsgi(
        API, query_string=f"action=version&format=json&signature={key}"
    )
    assert status.startswith("200")
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    assert YOURLS_VERSION in body.decode()
    status, _, body = call_wsgi(API, query_string="action=version&format=json")
    assert status.startswith("403")
    assert b"Please log in" in body


def test_it_stays_out_of_the_native_apis_openapi_document():
    paths = Client().get("/api/v1/schema/?format=json").json()["paths"]

    assert not [path for path in paths if "yourls" in path]
