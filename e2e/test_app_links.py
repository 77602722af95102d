"""App deep links (issue #28) over HTTP against both deployments: a link made over the API with
an ios_url (an app's own scheme) and an android_url (an https App Link) sends an iPhone to the
first, an Android phone to the second and a desktop browser to the long URL, from every server
worker; `javascript:` is refused with 400 naming the field. A second short domain serves the
app-association files set on it (200, application/json, no redirect, the JSON set), and a domain
without them answers 404.

The association files are set as an operator sets them: `manage.py domains add HOST
--apple-app-site-association FILE --assetlinks FILE`.
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import harness
from harness import HTTP_TIMEOUT, get_fresh, visitor_headers

REPEATS = 16  # fresh connections per device, eight at a time: every worker process answers
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
)
ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.6367.82 Mobile Safari/537.36"
)
DESKTOP = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36"
)
AASA = {
    "applinks": {
        "details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": [{"/": "/*"}]}]
    }
}
ASSETLINKS = [
    {
        "relation": ["delegate_permission/common.handle_all_urls"],
        "target": {
            "namespace": "android_app",
            "package_name": "com.example.shop",
            "sha256_cert_fingerprints": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64"],
        },
    }
]
WELL_KNOWN = {
    "/.well-known/apple-app-site-association": AASA,
    "/.well-known/assetlinks.json": ASSETLINKS,
}


def _answers(
    dep: harness.Deployment, path: str, user_agent: str, host: str | None = None
) -> list[harness.Answer]:
    extra = {"User-Agent": user_agent, **({"Host": host} if host else {})}
    with ThreadPoolExecutor(8) as pool:
        return list(
            pool.map(
                lambda i: get_fresh(dep.port, path, {**visitor_headers(i), **extra}),
                range(REPEATS),
            )
        )


def _seen(answers: list[harness.Answer]) -> dict:
    return dict(Counter((a.status, a.location) for a in answers))


def test_each_os_goes_to_its_app_link_and_a_desktop_to_the_long_url(deployment):
    long_url = harness.unique_url("app-links")
    ios_url = f"exampleshop://product/{secrets.token_hex(4)}"
    android_url = f"https://shop.example.com/app/product/{secrets.token_hex(4)}"
    made = harness.create_link(deployment, long_url, ios_url=ios_url, android_url=android_url)
    assert (made["ios_url"], made["android_url"]) == (ios_url, android_url), made
    path = f"/{made['code']}"
    for user_agent, expected in (
        (IPHONE, ios_url),
        (ANDROID, android_url),
        (DESKTOP, long_url),
    ):
        seen = _seen(_answers(deployment, path, user_agent))
        assert seen == {(302, expected): REPEATS}, (user_agent, seen)


def test_a_javascript_app_link_is_refused_naming_the_field(deployment):
    for field in ("ios_url", "android_url"):
        with deployment.api() as api:
            refused = api.post(
                deployment.url("/api/v1/links/"),
                json={"long_url": harness.unique_url("app-js"), field: "javascript:alert(1)"},
                timeout=HTTP_TIMEOUT,
            )
        assert refused.status_code == 400, refused.text[:300]
        assert list(refused.json()) == [field], refused.json()


def test_a_domain_serves_the_association_files_set_on_it(deployment, tmp_path):
    host = f"apps-{deployment.mode}-{secrets.token_hex(3)}.e2e.test"
    bare = f"noapps-{deployment.mode}-{secrets.token_hex(3)}.e2e.test"
    aasa, assetlinks = tmp_path / "aasa.json", tmp_path / "assetlinks.json"
    aasa.write_text(json.dumps(AASA, indent=2))
    assetlinks.write_text(json.dumps(ASSETLINKS))
    added = deployment.manage(
        "domains",
        "add",
        host,
        "--apple-app-site-association",
        str(aasa),
        "--assetlinks",
        str(assetlinks),
    )
    assert f"Added {host}" in added
    assert f"Added {bare}" in deployment.manage("domains", "add", bare)
    for path, document in WELL_KNOWN.items():
        for answer in _answers(deployment, path, DESKTOP, host):
            assert (answer.status, answer.location) == (200, None), (path, answer)
            assert answer.content_type.startswith("application/json"), (path, answer)
            assert json.loads(answer.body) == document, (path, answer.body[:300])
        seen = _seen(_answers(deployment, path, DESKTOP, bare))
        assert seen == {(404, None): REPEATS}, (path, seen)
