"""Every page's header shows the current workspace and a switcher between the person's
workspaces (read lazily: a page that never shows them costs no query)."""

from django.utils.functional import SimpleLazyObject

from .current import current_workspace, my_workspaces


def workspaces(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "current_workspace": SimpleLazyObject(lambda: current_workspace(request)),
        "my_workspaces": SimpleLazyObject(lambda: my_workspaces(request)),
    }
