"""Starts the test provider: `python -m tests.oidc_provider.run CONFIG.json` from the project's
root. CONFIG names the port, the SQLite file, the users and the one client (shorturl); a fresh
RSA key signs its ID tokens. Serves until stopped (SIGTERM)."""

from __future__ import annotations

import json
import os
import sys


def main(config_path: str) -> None:
    with open(config_path) as config_file:
        config = json.load(config_file)
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    os.environ["OIDC_PROVIDER_RSA_KEY"] = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    os.environ["OIDC_PROVIDER_DB"] = config["database"]
    os.environ["OIDC_PROVIDER_ISSUER"] = config["issuer"]
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.oidc_provider.settings"

    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.core.servers.basehttp import run
    from django.core.wsgi import get_wsgi_application
    from oauth2_provider.models import Application

    from tests.oidc_provider.validator import UNVERIFIED_GROUP

    call_command("migrate", verbosity=0, interactive=False)
    unverified = Group.objects.get_or_create(name=UNVERIFIED_GROUP)[0]
    for person in config["users"]:
        user = User.objects.create_user(
            person["username"],
            email=person["email"],
            password=person["password"],
            first_name=person.get("first_name", ""),
            last_name=person.get("last_name", ""),
        )
        if not person.get("verified", True):
            user.groups.add(unverified)
    client = config["client"]
    Application.objects.create(
        name="shorturl",
        client_id=client["id"],
        client_secret=client["secret"],
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=" ".join(client["redirect_uris"]),
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )
    run("127.0.0.1", config["port"], get_wsgi_application(), threading=True)


if __name__ == "__main__":
    main(sys.argv[1])
