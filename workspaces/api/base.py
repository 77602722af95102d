"""The API views of things that live in workspaces: which workspace a call acts in."""

from __future__ import annotations

from core.api.base import ApiView
from workspaces.models import Workspace
from workspaces.selectors import WorkspaceNotFound, pinned_workspace_id, workspace_get


class WorkspaceApiView(ApiView):
    """An ApiView that knows the caller's workspaces: `?workspace=` and the API key's own."""

    @property
    def pinned_workspace_id(self) -> int | None:
        """The one workspace the request's API key acts for; None for a DRF token or a
        session, which act in every workspace of their user."""
        return pinned_workspace_id(self.request.auth)

    def workspace_param(self, slug: str | None) -> Workspace | None:
        """The workspace `?workspace=<slug>` names (None when not given): one the caller belongs
        to (staff: any), and the API key's own when the key acts for one. Anything else is a
        404 (WorkspaceNotFound), told apart from a slug that does not exist to nobody."""
        slug = (slug or "").strip()
        if not slug:
            return None
        workspace = workspace_get(user=self.request.user, slug=slug)
        pinned = self.pinned_workspace_id
        if pinned is not None and workspace.pk != pinned:
            raise WorkspaceNotFound(slug)
        return workspace

    def workspace_named(self, slug: str) -> Workspace:
        """The workspace a URL path names: as workspace_param, but a blank slug (spaces, a
        no-break space) names none and is a 404 too, never None."""
        workspace = self.workspace_param(slug)
        if workspace is None:
            raise WorkspaceNotFound(slug)
        return workspace

    def workspace_id_to_read(self, slug: str | None) -> int | None:
        """The workspace a read is restricted to: the one `?workspace=` names, else the key's
        pinned one, else None (the selectors' default: all of the user's workspaces, or for
        tags their personal one)."""
        workspace = self.workspace_param(slug)
        if workspace is not None:
            return workspace.pk
        return self.pinned_workspace_id
