"""The workspaces migrations on data made before them: every user gets a personal workspace they
own, and each of their links, tags, import uploads, API keys and webhooks moves into it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

# As the schema was just before workspaces: nothing of theirs exists yet.
BEFORE = [
    ("workspaces", None),
    ("links", "0009_link_imports"),
    ("accounts", "0002_api_key_scopes_and_expiry"),
    ("webhooks", "0001_initial"),
]


def _migrate(targets):
    """Migrate to `targets` ((app, migration), None: none of the app's); their models."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([t for t in targets if t[1] is not None]).apps


def _leaves():
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_rows_made_before_workspaces_move_to_their_owners_personal_workspace():
    apps = _migrate(BEFORE)
    User = apps.get_model("auth", "User")
    UrlLink = apps.get_model("links", "UrlLink")
    Tag = apps.get_model("links", "Tag")
    LinkImport = apps.get_model("links", "LinkImport")
    ApiKey = apps.get_model("accounts", "ApiKey")
    Webhook = apps.get_model("webhooks", "Webhook")

    # Usernames that slugify alike, and a user with nothing.
    ann = User.objects.create(username="ann")
    ann_too = User.objects.create(username="Ann!")
    idle = User.objects.create(username="idle")
    links = {}
    for user in (ann, ann_too):
        for n in range(2):
            code = f"{user.pk}x{n}"
            links[code] = UrlLink.objects.create(
                owner_id=user.pk,
                code=code,
                long_url=f"https://example.com/{code}",
                long_url_hash="h" * 40,
                code_type="custom",
            )
        # The same tag name for both users: one tag each, as before.
        tag = Tag.objects.create(owner_id=user.pk, name="Launch", key="launch")
        links[f"{user.pk}x0"].tags.add(tag)
        LinkImport.objects.create(owner_id=user.pk, file_name=f"{user.pk}.csv")
        Webhook.objects.create(
            owner_id=user.pk, url="https://93.184.215.14/hook", events=["link.created"]
        )
    ApiKey.objects.create(
        user_id=ann.pk, name="script", prefix="abcd1234", key_hash="k" * 64, scopes=["links:read"]
    )

    try:
        apps = _migrate(_leaves())
        Workspace = apps.get_model("workspaces", "Workspace")
        Membership = apps.get_model("workspaces", "Membership")
        UrlLink = apps.get_model("links", "UrlLink")
        Tag = apps.get_model("links", "Tag")
        LinkImport = apps.get_model("links", "LinkImport")
        ApiKey = apps.get_model("accounts", "ApiKey")
        Webhook = apps.get_model("webhooks", "Webhook")

        personal = {w.personal_for_id: w for w in Workspace.objects.all()}
        assert set(personal) == {ann.pk, ann_too.pk, idle.pk}
        assert sorted(w.slug for w in personal.values()) == ["ann", "ann-2", "idle"]
        assert {w.name for w in personal.values()} == {"ann", "Ann!", "idle"}
        # Each is owned by its user, and by nobody else.
        assert set(
            Membership.objects.values_list("workspace__personal_for_id", "user_id", "role")
        ) == {
            (ann.pk, ann.pk, "owner"),
            (ann_too.pk, ann_too.pk, "owner"),
            (idle.pk, idle.pk, "owner"),
        }

        for link in UrlLink.objects.all():
            assert link.workspace_id == personal[link.owner_id].pk, link.code
        assert UrlLink.objects.count() == 4
        for upload in LinkImport.objects.all():
            assert upload.workspace_id == personal[upload.owner_id].pk
        for hook in Webhook.objects.all():
            assert hook.workspace_id == personal[hook.owner_id].pk
        assert Webhook.objects.count() == 2
        key = ApiKey.objects.get()
        assert key.workspace_id == personal[ann.pk].pk

        # Tags: one per workspace and name, each still on its link.
        tags = list(Tag.objects.values_list("workspace_id", "key"))
        assert sorted(tags) == sorted(
            [(personal[ann.pk].pk, "launch"), (personal[ann_too.pk].pk, "launch")]
        )
        for user in (ann, ann_too):
            link = UrlLink.objects.get(code=f"{user.pk}x0")
            assert list(link.tags.values_list("workspace_id", flat=True)) == [personal[user.pk].pk]
    finally:
        _migrate(_leaves())


@pytest.mark.django_db(transaction=True)
def test_users_added_after_workspaces_0002_get_theirs_when_their_rows_move():
    """A user made between workspaces 0002 and links 0010 (a deploy stopped half-way) has no
    personal workspace from 0002: the link migration makes it where it moves their links."""
    apps = _migrate([("workspaces", "0002_personal_workspaces"), *BEFORE[1:]])
    User = apps.get_model("auth", "User")
    late = User.objects.create(username="late")
    apps.get_model("links", "UrlLink").objects.create(
        owner_id=late.pk,
        code="late1",
        long_url="https://example.com/late",
        long_url_hash="h" * 40,
        code_type="custom",
    )
    try:
        apps = _migrate(_leaves())
        Workspace = apps.get_model("workspaces", "Workspace")
        workspace = Workspace.objects.get(personal_for_id=late.pk)
        link = apps.get_model("links", "UrlLink").objects.get(code="late1")
        assert link.workspace_id == workspace.pk
        assert (
            apps.get_model("workspaces", "Membership")
            .objects.filter(workspace_id=workspace.pk, user_id=late.pk, role="owner")
            .exists()
        )
    finally:
        _migrate(_leaves())
