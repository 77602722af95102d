"""Rules and variants (issue #15): what may be stored, whatever the entry point, and where the
redirect sends each visitor."""

from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from analytics.tests.visits import SAFARI_IPHONE
from links.models import UrlLink
from links.services.bulk import link_create_many
from links.services.change import link_update
from links.services.create import link_create
from links.services.policy import LongUrlRules
from links.services.targeting import accept_language, os_name, validate_rules, validate_variants
from links.tests.helpers import call_wsgi, client_for

CHINA, USA = "223.5.5.5", "8.8.8.8"  # AliDNS and Google's resolver: stable in every GeoIP file
WINDOWS_CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
IPAD = (
    "Mozilla/5.0 (iPad; CPU OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.1 Mobile/15E148 Safari/604.1"
)
RULES = [
    {
        "device": "mobile",
        "os": "iOS",
        "country": "CN",
        "language": "zh",
        "url": "https://cn.example/ios",
    },
    {"country": "CN", "url": "https://cn.example/"},
    {"device": "tablet", "url": "https://example.com/tablet"},
]


@pytest.fixture
def url_rules(db):
    """The rules of a request to testserver (their own hosts include the short domains, read
    from the database)."""
    return LongUrlRules(request_host="testserver")


def _problems(exc: pytest.ExceptionInfo, field: str) -> list[str]:
    return exc.value.message_dict[field]


# --- What may be stored -----------------------------------------------------------------------


def test_rules_are_stored_in_one_spelling(url_rules):
    stored = validate_rules(
        [
            {
                "device": "Mobile",
                "os": "ios",
                "country": "cn",
                "language": "ZH",
                "url": " https://a.example/ ",
            }
        ],
        url_rules=url_rules,
    )
    assert stored == [
        {
            "device": "mobile",
            "os": "iOS",
            "country": "CN",
            "language": "zh",
            "url": "https://a.example/",
        }
    ]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            {"country": "XX", "url": "https://a.example/"},
            "rules[1].country: “XX” is not an ISO 3166",
        ),
        (
            {"device": "phone", "url": "https://a.example/"},
            "rules[1].device: “phone” is not a device",
        ),
        ({"os": "BeOS", "url": "https://a.example/"}, "rules[1].os: “BeOS” is not a known OS"),
        (
            {"language": "zh-CN", "url": "https://a.example/"},
            "rules[1].language: rules match the language only",
        ),
        ({"country": "CN"}, "rules[1].url: give the URL"),
        ({"url": "https://a.example/"}, "rules[1]: give at least one of"),
        ({"browser": "chrome", "url": "https://a.example/"}, "rules[1].browser: not a condition"),
        ({"country": "CN", "url": "ftp://a.example/"}, "rules[1].url: Only http and https"),
        (
            {"country": "CN", "url": "http://[::1]:5000/admin"},
            "rules[1].url: This URL points at a local",
        ),
        ({"country": "CN", "url": "http://testserver/x"}, "rules[1].url: This URL points back"),
    ],
)
def test_a_bad_rule_is_refused_naming_its_item_and_field(url_rules, rule, message):
    good = {"country": "US", "url": "https://us.example/"}
    with pytest.raises(ValidationError) as exc:
        validate_rules([good, rule], url_rules=url_rules)
    assert any(problem.startswith(message) for problem in _problems(exc, "rules")), _problems(
        exc, "rules"
    )


@pytest.mark.parametrize(
    ("variants", "message"),
    [
        ([{"url": "https://a.example/", "weight": 100}], "Give 2 to 4 variants"),
        ([{"url": "https://a.example/", "weight": 20}] * 5, "Give 2 to 4 variants"),
        (
            [
                {"url": "https://a.example/", "weight": 70},
                {"url": "https://b.example/", "weight": 20},
            ],
            "variants: the weights must add up to 100 (these add up to 90)",
        ),
        (
            [
                {"url": "https://a.example/", "weight": 0},
                {"url": "https://b.example/", "weight": 100},
            ],
            "variants[0].weight: give a whole number from 1 to 100",
        ),
        (
            [
                {"url": "https://a.example/", "weight": "50"},
                {"url": "https://b.example/", "weight": 50},
            ],
            "variants[0].weight",
        ),
        (
            [
                {"url": "https://a.example/", "weight": 50},
                {"url": "javascript:alert(1)", "weight": 50},
            ],
            "variants[1].url:",
        ),
    ],
)
def test_bad_variants_are_refused(url_rules, variants, message):
    with pytest.raises(ValidationError) as exc:
        validate_variants(variants, url_rules=url_rules)
    assert any(problem.startswith(message) for problem in _problems(exc, "variants"))


def test_no_variants_is_none(url_rules):
    assert validate_variants([], url_rules=url_rules) == []
    assert validate_variants(None, url_rules=url_rules) == []


@pytest.mark.parametrize(
    ("header", "language"),
    [("zh-CN,zh;q=0.9,en;q=0.8", "zh"), ("EN_us", "en"), ("", ""), ("*", ""), ("pt;q=1", "pt")],
)
def test_the_language_is_the_first_tag_s_primary_subtag(header, language):
    assert accept_language(header) == language


@pytest.mark.parametrize(
    ("family", "name"),
    [("Mac OS X", "macOS"), ("Windows 10", "Windows"), ("Ubuntu", "Linux"), ("iOS", "iOS")],
)
def test_user_agent_os_families_read_as_rules_name_them(family, name):
    assert os_name(family) == name


# --- Every entry point agrees -----------------------------------------------------------------


@pytest.mark.django_db
def test_the_api_stores_shows_and_refuses_rules_and_variants(user):
    api = client_for(user)
    variants = [
        {"url": "https://a.example/", "weight": 70},
        {"url": "https://b.example/", "weight": 30},
    ]
    answer = api.post(
        "/api/v1/links/",
        {"long_url": "https://example.com/", "rules": RULES, "variants": variants},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert body["rules"] == RULES and body["variants"] == variants

    answer = api.post(
        "/api/v1/links/",
        {
            "long_url": "https://example.com/",
            "rules": [{"country": "XX", "url": "https://a.example/"}],
        },
        format="json",
    )
    assert answer.status_code == 400
    assert answer.json()["rules"][0].startswith("rules[0].country:")

    code = body["code"]
    answer = api.patch(f"/api/v1/links/{code}/", {"variants": [], "rules": None}, format="json")
    assert answer.status_code == 200
    assert answer.json()["rules"] == [] and answer.json()["variants"] == []
    answer = api.patch(f"/api/v1/links/{code}/", {"variants": variants[:1]}, format="json")
    assert answer.status_code == 400 and "variants" in answer.json()


@pytest.mark.django_db
def test_a_plain_create_never_hands_back_a_link_with_rules(user):
    targeted = link_create(user=user, long_url="https://example.com/p", rules=RULES).link
    plain = link_create(user=user, long_url="https://example.com/p")
    assert plain.created and plain.link.pk != targeted.pk
    again = link_create(user=user, long_url="https://example.com/p")
    assert not again.created and again.link.pk == plain.link.pk


@pytest.mark.django_db
def test_bulk_and_update_use_the_same_rules(user):
    outcomes = link_create_many(
        user=user,
        items=[
            {"long_url": "https://example.com/1", "rules": RULES},
            {
                "long_url": "https://example.com/2",
                "rules": [{"os": "Plan9", "url": "https://a.example/"}],
            },
        ],
    )
    assert outcomes[0].created and outcomes[0].link.rules == RULES
    assert outcomes[1].errors["rules"][0].startswith("rules[0].os:")
    with pytest.raises(ValidationError):
        link_update(
            code=outcomes[0].link.code,
            user=user,
            rules=[{"country": "ZZ", "url": "https://a.example/"}],
        )
    assert UrlLink.objects.get(pk=outcomes[0].link.pk).rules == RULES


# --- Where the redirect sends each visitor ----------------------------------------------------


@pytest.fixture
def targeted(user):
    return link_create(user=user, long_url="https://example.com/default", rules=RULES).link


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("ip", "agent", "language", "location"),
    [
        (CHINA, SAFARI_IPHONE, "zh-CN,zh;q=0.9", "https://cn.example/ios"),
        (CHINA, SAFARI_IPHONE, "en-US", "https://cn.example/"),  # the first rule wants zh
        (CHINA, WINDOWS_CHROME, "zh-CN", "https://cn.example/"),
        (USA, IPAD, "zh-CN", "https://example.com/tablet"),
        (USA, SAFARI_IPHONE, "zh-CN", "https://example.com/default"),
    ],
)
def test_the_first_rule_whose_every_condition_matches_wins(targeted, ip, agent, language, location):
    client = Client()
    for _ in range(2):  # a cache miss, then a hit
        answer = client.get(
            f"/{targeted.code}",
            HTTP_X_FORWARDED_FOR=ip,
            REMOTE_ADDR=ip,
            HTTP_USER_AGENT=agent,
            HTTP_ACCEPT_LANGUAGE=language,
        )
        assert answer.status_code == 302
        assert answer["Location"] == location


@pytest.mark.django_db(transaction=True)
def test_the_wsgi_fast_path_applies_the_rules_too(targeted):
    meta = {"REMOTE_ADDR": CHINA, "HTTP_USER_AGENT": SAFARI_IPHONE, "HTTP_ACCEPT_LANGUAGE": "zh-CN"}
    for _ in range(2):
        status, headers, _ = call_wsgi(f"/{targeted.code}", extra=meta)
        assert status.startswith("302") and headers["Location"] == "https://cn.example/ios"


@pytest.mark.django_db
def test_variants_split_people_by_weight_and_each_keeps_theirs(user):
    link = link_create(
        user=user,
        long_url="https://example.com/ab",
        variants=[
            {"url": "https://a.example/", "weight": 70},
            {"url": "https://b.example/", "weight": 30},
        ],
    ).link
    client = Client()
    seen: dict[str, str] = {}
    for n in range(1000):
        ip = f"203.0.{n // 250}.{n % 250 + 1}"
        seen[ip] = client.get(f"/{link.code}", REMOTE_ADDR=ip, HTTP_USER_AGENT=WINDOWS_CHROME)[
            "Location"
        ]
    shares = Counter(seen.values())
    assert set(shares) == {"https://a.example/", "https://b.example/"}
    assert 650 <= shares["https://a.example/"] <= 750
    for ip in list(seen)[:50]:  # a repeat click keeps its variant
        again = client.get(f"/{link.code}", REMOTE_ADDR=ip, HTTP_USER_AGENT=WINDOWS_CHROME)
        assert again["Location"] == seen[ip]


@pytest.mark.django_db
def test_a_rule_comes_before_the_variants(user):
    link = link_create(
        user=user,
        long_url="https://example.com/ab",
        rules=[{"country": "CN", "url": "https://cn.example/"}],
        variants=[
            {"url": "https://a.example/", "weight": 50},
            {"url": "https://b.example/", "weight": 50},
        ],
    ).link
    answer = Client().get(f"/{link.code}", REMOTE_ADDR=CHINA, HTTP_USER_AGENT=SAFARI_IPHONE)
    assert answer["Location"] == "https://cn.example/"
    answer = Client().get(f"/{link.code}", REMOTE_ADDR=USA, HTTP_USER_AGENT=SAFARI_IPHONE)
    assert answer["Location"] in ("https://a.example/", "https://b.example/")


@pytest.mark.django_db
def test_the_visitor_s_query_string_goes_on_to_the_rule_s_url(targeted):
    answer = Client().get(
        f"/{targeted.code}?utm_source=mail", REMOTE_ADDR=USA, HTTP_USER_AGENT=IPAD
    )
    assert answer["Location"] == "https://example.com/tablet?utm_source=mail"


@pytest.mark.django_db
def test_the_admin_shows_rules_and_variants_readably(admin_client, user):
    link = link_create(
        user=user,
        long_url="https://example.com/ab",
        rules=[{"device": "mobile", "country": "CN", "url": "https://cn.example/"}],
        variants=[
            {"url": "https://a.example/", "weight": 70},
            {"url": "https://b.example/", "weight": 30},
        ],
    ).link
    html = admin_client.get(f"/admin/links/urllink/{link.pk}/change/").content.decode()
    assert "device mobile, country CN → https://cn.example/" in html
    assert "70% → https://a.example/" in html and "30% → https://b.example/" in html


@pytest.mark.django_db
def test_an_item_that_is_not_an_object_is_one_flat_message_naming_it(user):
    answer = client_for(user).post(
        "/api/v1/links/",
        {"long_url": "https://example.com/", "variants": [None, None]},
        format="json",
    )
    assert answer.status_code == 400
    assert answer.json() == {
        "variants": [
            "variants[0]: give each variant as an object with a url and a weight.",
            "variants[1]: give each variant as an object with a url and a weight.",
        ]
    }
