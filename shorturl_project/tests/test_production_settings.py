"""Issue #12 row 10: the documented production settings pass `check --deploy`; HTTPS is trusted
only from a proxy; Compose keeps secure cookies on; pages carry a Content-Security-Policy."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from shorturl_project.tests.clean_env import python

ROOT = Path(settings.BASE_DIR)


def documented_production_env() -> dict[str, str]:
    """The block under `<!-- production-env -->` in docs/operations.md, as variables."""
    text = (ROOT / "docs" / "operations.md").read_text()
    block = text.split("<!-- production-env -->", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    env = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
    assert env["SECRET_KEY"].startswith("<"), "the docs show a placeholder, not a key"
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    return env


def test_check_deploy_is_clean_with_the_documented_production_settings():
    result = python("", documented_production_env(), "manage.py", "check", "--deploy")
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr


def test_check_deploy_warns_without_them():
    """The test above can fail: without the HTTPS settings Django names what is missing."""
    env = {"DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "s.example.com"}
    result = python("", env, "manage.py", "check", "--deploy")
    assert "security.W004" in result.stderr + result.stdout
    assert "security.W008" in result.stderr + result.stdout


def _setting(env: dict[str, str], expression: str) -> str:
    code = (
        f"import django; django.setup(); from django.conf import settings as s; print({expression})"
    )
    result = python(code, env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize(("num_proxies", "trusted"), [("0", False), ("1", True), ("2", True)])
@pytest.mark.parametrize("debug", ["0", "1"])
def test_x_forwarded_proto_is_believed_only_behind_a_proxy(num_proxies, trusted, debug):
    env = {"DEBUG": debug, "SECRET_KEY": "x" * 50, "NUM_PROXIES": num_proxies}
    header = _setting(env, "s.SECURE_PROXY_SSL_HEADER")
    assert header == ("('HTTP_X_FORWARDED_PROTO', 'https')" if trusted else "None")


@pytest.mark.django_db
def test_healthz_is_not_redirected_to_https(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code in (200, 503)


def test_compose_keeps_secure_cookies_on_by_default():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    env = compose["services"]["web"]["environment"]
    for name in ("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"):
        value = str(env.get(name, "1"))
        default = value.rsplit(":-", 1)[-1].rstrip("}") if ":-" in value else value
        assert default.lower() in ("1", "true", "yes", "on"), f"{name} defaults to {value!r}"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/", "/api/v1/docs/", "/"])
def test_pages_carry_a_content_security_policy_without_inline_scripts(client, path):
    response = client.get(path)
    policy = response["Content-Security-Policy"]
    directives = dict(
        [*part.strip().split(" ", 1), ""][:2] for part in policy.split(";") if part.strip()
    )
    assert directives["script-src"] == "'self'"
    assert "'unsafe-inline'" not in directives["style-src"]
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    if response.status_code == 200 and "text/html" in response["Content-Type"]:
        html = response.content.decode()
        inline_scripts = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", html)
        assert not inline_scripts, f"{path} has inline scripts the policy blocks: {inline_scripts}"
        assert "<style" not in html, f"{path} has a <style> element the policy blocks"
