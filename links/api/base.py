"""The link API views' base: the workspace a call acts in, its tags' workspace, the link lookup.

The JSON errors, throttles and scopes every API shares are core.api.base's.
"""

from __future__ import annotations

from core.api.base import validated
from links.api.serializers.tags import WorkspaceQuerySerializer
from links.codes.aliases import ALIAS_RE
from links.models import UrlLink
from links.selectors import LinkNotFound, link_get_visible
from workspaces.api.base import WorkspaceApiView


class LinkApiView(WorkspaceApiView):
    """Base for the views that read or change links, their tags and stats."""

    def tag_workspace_id(self) -> int | None:
        """The workspace whose tags a call reads or changes: `?workspace=`, else the key's
        pinned one, else None (the tag selectors and services: the personal one)."""
        query = validated(WorkspaceQuerySerializer, self.request.query_params.dict())
        return self.workspace_id_to_read(query.get("workspace"))

    def get_link(self, code: str) -> UrlLink:
        """A link of a workspace the caller belongs to (any link for staff; only the key's
        workspace's for an API key that acts for one); 404 for unknown codes and others' links.
        `?domain=` names its short domain when the caller has the code on several."""
        if not ALIAS_RE.match(code):
            # Not the shape of any code: refused without a query.
            raise LinkNotFound(code)
        return link_get_visible(
            code=code,
            user=self.request.user,
            domain=self.request.query_params.get("domain"),
            request_host=self.request.get_host(),
            workspace_id=self.pinned_workspace_id,
        )
