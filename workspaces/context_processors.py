"""Every page's header shows the current workspace and a switcher between the person's
workspaces, and My links how many invitations wait for their answer (each read lazily: a page
that never shows it costs no query)."""

from django.utils.functional import SimpleLazyObject

from workspaces.current import current_workspace, my_workspaces
from workspaces.selectors import invitations_count_waiting_for


def workspaces(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "current_workspace": SimpleLazyObject(lambda: current_workspace(request)),
        "my_workspaces": SimpleLazyObject(lambda: my_workspaces(request)),
        "invitations_waiting": SimpleLazyObject(lambda: invitations_count_waiting_for(user)),
    }
