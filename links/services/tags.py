"""Tags on links: what a tag may be, and giving a link its tags (creating its workspace's new
ones)."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from ..models import TAG_MAX_LENGTH, Tag, UrlLink
from .policy import is_storable_text

MAX_TAGS_PER_LINK = 20


def tag_key(name: str) -> str:
    """What makes two spellings one tag: `Spring Sale` and ` spring sale` are the same."""
    return name.strip().lower()


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


def link_tags_set_many(*, workspace_id: int, tagged: list[tuple[UrlLink, list[str]]]) -> None:
    """link_tags_set for many new links of one workspace (a bulk call): three queries in all."""
    tagged = [(link, names) for link, names in tagged if names]
    if not tagged:
        return
    found = _workspace_tags(workspace_id, [name for _, names in tagged for name in names])
    through = UrlLink.tags.through
    rows = {(link.pk, found[tag_key(name)].pk) for link, names in tagged for name in names}
    through.objects.bulk_create(
        [through(urllink_id=link_id, tag_id=tag_id) for link_id, tag_id in sorted(rows)],
        ignore_conflicts=True,
    )
