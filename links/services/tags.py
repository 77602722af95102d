"""Tags on links: what a tag may be, giving a link its tags (creating its workspace's new ones),
and renaming or deleting a workspace's tag."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction

from audit.services import audit_change, snapshot
from core.db import retry_on_conflict
from links.models import TAG_MAX_LENGTH, Tag, UrlLink, tag_key
from links.selectors import TagNotFound, may_change_every_link
from links.services.policy import is_storable_text
from workspaces.models import WRITER_ROLES, Role, Workspace
from workspaces.selectors import role_in, workspace_id_or_personal

MAX_TAGS_PER_LINK = 20


def clean_tags(tags) -> list[str]:
    """The tags to store: trimmed, each once whatever its case (the first spelling kept), in the
    order given. ValidationError({"tags": [reasons]}) for anything the rules refuse."""
    if tags is None:
        return []
    if isinstance(tags, str) or not isinstance(tags, list | tuple):
        raise ValidationError({"tags": ["Send the tags as a list of strings."]})
    problems: list[str] = []
    names: dict[str, str] = {}
    for raw in tags:
        if not isinstance(raw, str):
            problems.append("Each tag must be a string.")
            continue
        name = raw.strip()
        if not name:
            problems.append("A tag cannot be empty.")
        elif "," in name:
            # Commas separate tags in the forms and in CSV exports: one inside a tag would
            # come back as two.
            problems.append(f"“{name[:60]}”: a tag cannot contain a comma.")
        elif len(name) > TAG_MAX_LENGTH:
            problems.append(
                f"“{name[:20]}…”: tags can be at most {TAG_MAX_LENGTH} characters "
                f"(this one has {len(name)})."
            )
        elif not is_storable_text(name) or "\x00" in name:
            problems.append("A tag holds characters that are not text.")
        else:
            names.setdefault(tag_key(name), name)
    if len(names) > MAX_TAGS_PER_LINK:
        problems.append(
            f"A link can have at most {MAX_TAGS_PER_LINK} tags (this one has {len(names)})."
        )
    if problems:
        raise ValidationError({"tags": list(dict.fromkeys(problems))})
    return list(names.values())


def _workspace_tags(workspace_id: int, names: list[str]) -> dict[str, Tag]:
    """{key: Tag} for `names`, the workspace's missing tags created first. Safe when two requests
    add the same new tag at once: the insert skips a row another one just made."""
    wanted: dict[str, str] = {}
    for name in names:
        wanted.setdefault(tag_key(name), name)  # the first spelling names a new tag
    if not wanted:
        return {}
    found = {tag.key: tag for tag in Tag.objects.filter(workspace_id=workspace_id, key__in=wanted)}
    missing = [
        Tag(workspace_id=workspace_id, name=name, key=key)
        for key, name in wanted.items()
        if key not in found
    ]
    if missing:
        Tag.objects.bulk_create(missing, ignore_conflicts=True)
        found = {
            tag.key: tag for tag in Tag.objects.filter(workspace_id=workspace_id, key__in=wanted)
        }
    return found


def link_tags_set(*, link: UrlLink, tags: list[str]) -> None:
    """Give `link` exactly these tags (already cleaned by clean_tags): its workspace's tags of
    the same name are reused, new ones created. Tags belong to the link's workspace, whoever
    edits."""
    found = _workspace_tags(link.workspace_id, tags)
    link.tags.set([found[tag_key(name)] for name in tags])


def link_tags_set_many(*, tagged: list[tuple[UrlLink, list[str]]]) -> None:
    """link_tags_set for many new links (a bulk call), each getting its names (cleaned by
    clean_tags) as its workspace's tags: a few queries per workspace, not per link."""
    by_workspace: dict[int, list[tuple[UrlLink, list[str]]]] = {}
    for link, names in tagged:
        if names:
            by_workspace.setdefault(link.workspace_id, []).append((link, names))
    rows = set()
    for workspace_id, links in by_workspace.items():
        found = _workspace_tags(workspace_id, [name for _, names in links for name in names])
        rows |= {(link.pk, found[tag_key(name)].pk) for link, names in links for name in names}
    through = UrlLink.tags.through
    through.objects.bulk_create(
        [through(urllink_id=link_id, tag_id=tag_id) for link_id, tag_id in sorted(rows)],
        ignore_conflicts=True,
        batch_size=1000,
    )


def link_tags_replace_many(*, tagged: list[tuple[UrlLink, list[str]]]) -> None:
    """link_tags_set for many existing links, in any workspaces (a bulk change): their tags
    dropped, then each given exactly its names."""
    if not tagged:
        return
    UrlLink.tags.through.objects.filter(urllink_id__in=[link.pk for link, _ in tagged]).delete()
    link_tags_set_many(tagged=tagged)


# --- Renaming and deleting a workspace's tag ---------------------------------------------------
#
# Tags are not in the redirect's cached entry (links.cache.LinkEntry), so no entry is dropped.
# No link.updated event is announced either: the webhooks' link data carries no tags (it would
# tell listeners nothing new), and one rename of a tag on thousands of links would make
# thousands of deliveries per webhook.


class TagNameTaken(Exception):
    """A rename that may not merge (tag_rename's `merge=False`) met a name another tag of the
    workspace already has: `existing_name` (its spelling) and how many of the renamed tag's
    `links` a merge would move onto it, for a page that asks before merging."""

    def __init__(self, old_name: str, new_name: str, *, existing_name: str = "", links: int = 0):
        super().__init__(f"The tag “{new_name}” already exists.")
        self.old_name, self.new_name = old_name, new_name
        self.existing_name, self.links = existing_name or new_name, links


def _writable_workspace(
    *, user: AbstractBaseUser, workspace_id: int | None, tag: str = ""
) -> tuple[int, str]:
    """(workspace id, `user`'s role there): the given workspace, else the user's personal one.
    Staff who may change every link (may_change_every_link) act as its editors, member or
    viewer or neither, as they may change each of its links and their tags (link_update).
    Anyone else who is not a member: TagNotFound (the workspace's tags are not theirs to see)."""
    workspace_id = workspace_id_or_personal(user=user, workspace_id=workspace_id)
    role = role_in(user=user, workspace_id=workspace_id)
    if role not in WRITER_ROLES and may_change_every_link(user):
        role = Role.EDITOR
    if role is None:
        raise TagNotFound(tag)
    return workspace_id, role


def _refuse_viewers(role: str, workspace) -> None:
    if role not in WRITER_ROLES:
        raise PermissionDenied(
            f"Viewers of the workspace {workspace.slug!r} cannot change its tags."
        )


def _tag_to_change(*, user: AbstractBaseUser, workspace_id: int | None, tag: str) -> Tag:
    """The workspace's tag named `tag` (any case; default workspace: the user's personal one),
    locked, if `user` may change it: an owner or editor. Not a member, or no such tag:
    TagNotFound (told apart to nobody); a viewer: PermissionDenied."""
    workspace_id, role = _writable_workspace(user=user, workspace_id=workspace_id, tag=tag)
    if not isinstance(tag, str):
        raise TagNotFound(tag)
    found = (
        Tag.objects.select_related("workspace")
        .select_for_update()
        .filter(workspace_id=workspace_id, key=tag_key(tag))
        .first()
    )
    if found is None:
        raise TagNotFound(tag)
    _refuse_viewers(role, found.workspace)
    return found


def clean_tag_name(name) -> str:
    """One tag's new name by clean_tags' rules: ValidationError({"name": [reasons]})."""
    try:
        return clean_tags([name])[0]
    except ValidationError as exc:
        raise ValidationError({"name": exc.message_dict["tags"]}) from None


def _merge(*, source: Tag, target: Tag) -> None:
    """Give `source`'s links `target` (those that have both keep one) and remove `source`."""
    through = UrlLink.tags.through
    link_ids = through.objects.filter(tag_id=source.pk).values_list("urllink_id", flat=True)
    through.objects.bulk_create(
        [through(urllink_id=link_id, tag_id=target.pk) for link_id in link_ids],
        ignore_conflicts=True,
        batch_size=500,
    )
    source.delete()  # its link rows go with it


@retry_on_conflict
def tag_rename(
    *,
    user: AbstractBaseUser,
    workspace_id: int | None,
    tag: str,
    new_name,
    merge: bool = True,
) -> Tag:
    """Rename the workspace's tag `tag` (any case; workspace_id None: the user's personal
    workspace) to `new_name`, for its owners and editors.

    A new spelling of the same name (`spring` → `Spring`) just changes the spelling. A name
    another tag of the workspace already has (any case) merges the two: this tag's links get
    that tag, which keeps its own spelling, and this tag goes. Returns the tag its links now
    carry, with `merged` (whether it was such a merge) and `link_count` set. `merge=False`
    refuses such a rename with TagNameTaken instead (Shlink's API calls it a conflict; the tag
    page asks to confirm the merge).

    TagNotFound: no such tag, or not a member; PermissionDenied: a viewer; ValidationError
    ({"name": [...]}) for a name clean_tags refuses.
    """
    with transaction.atomic():
        # Not found and forbidden before invalid: others' tags cannot be probed by name.
        found = _tag_to_change(user=user, workspace_id=workspace_id, tag=tag)
        before = snapshot(found, fields=["name"])
        name = clean_tag_name(new_name)
        key = tag_key(name)
        merged = False
        if key == found.key:
            if name != found.name:
                found.name = name
                found.save(update_fields=["name"])
            result = found
        else:
            other = Tag.objects.filter(workspace_id=found.workspace_id, key=key).first()
            if other is None:
                found.name, found.key = name, key
                try:
                    with transaction.atomic():  # a savepoint: the race below is recoverable
                        found.save(update_fields=["name", "key"])
                except IntegrityError:
                    # Someone gave a link a new tag of that name meanwhile: merged into it.
                    other = Tag.objects.get(workspace_id=found.workspace_id, key=key)
            if other is not None:
                found.refresh_from_db(fields=["name", "key"])
                if not merge:
                    raise TagNameTaken(
                        found.name, name, existing_name=other.name, links=found.links.count()
                    )
                _merge(source=found, target=other)
                result, merged = other, True
            else:
                result = found
        after = {"name": result.name, **({"merged_into": result.name} if merged else {})}
        audit_change("tag.update", found, actor=user, before=before, after=after)
    result.merged = merged
    result.link_count = result.links.count()
    return result


@retry_on_conflict
def tag_delete(*, user: AbstractBaseUser, workspace_id: int | None, tag: str) -> int:
    """Delete the workspace's tag `tag` (any case; workspace_id None: the user's personal
    workspace), for its owners and editors: it leaves every link that carried it (the links
    stay). Returns how many links it was taken from. TagNotFound: no such tag, or not a member;
    PermissionDenied: a viewer."""
    with transaction.atomic():
        found = _tag_to_change(user=user, workspace_id=workspace_id, tag=tag)
        untagged = found.links.count()
        audit_change("tag.delete", found, actor=user, before={"name": found.name}, after={})
        found.delete()
    return untagged


@retry_on_conflict
def tag_delete_many(*, user: AbstractBaseUser, workspace_id: int | None, tags: list[str]) -> int:
    """tag_delete for each of `tags` the workspace has, together; names it does not have are
    skipped (Shlink's delete). Returns how many tags went. TagNotFound: not a member;
    PermissionDenied: a viewer, whatever the names."""
    with transaction.atomic():
        workspace_id, role = _writable_workspace(user=user, workspace_id=workspace_id)
        if role not in WRITER_ROLES:
            _refuse_viewers(role, Workspace.objects.get(pk=workspace_id))
        keys = {tag_key(name) for name in tags if isinstance(name, str)}
        going = list(
            Tag.objects.select_for_update().filter(workspace_id=workspace_id, key__in=keys)
        )
        for found in going:
            audit_change("tag.delete", found, actor=user, before={"name": found.name}, after={})
        ids = [found.pk for found in going]
        Tag.objects.filter(pk__in=ids).delete()  # their link rows go with them
    return len(ids)
