"""The privacy modes' rules that reads and writes share (docs/privacy.md): which mode a
workspace's visits are stored under, which visits are stored without their details, and what the
stats may promise of unique visitors. The rotating secrets are analytics.services.privacy's.
"""

from __future__ import annotations

from django.conf import settings

from analytics.enrich import PRIVATE
from analytics.messages import DNT, GPC
from workspaces.models import Privacy
from workspaces.selectors import privacy_mode

# The one rule of a workspace's mode is workspaces.selectors'; named here for analytics' callers.
__all__ = ["link_privacy", "privacy_mode", "uniques_exact_within", "uses_windows", "visit_mode"]


def link_privacy(link) -> str:
    """The mode a link's visits are stored under (its workspace's)."""
    workspace = link.workspace if link.workspace_id else None
    return privacy_mode(workspace.analytics_privacy if workspace else "")


def visit_mode(visit: dict, link_mode: str) -> str:
    """The mode one decoded visit is stored under: PRIVATE when its browser asked not to be
    tracked (Sec-GPC always, DNT when ANALYTICS_HONOUR_DNT), else its link's."""
    signal = visit.get("do_not_track")
    if signal == GPC or (signal == DNT and settings.ANALYTICS_HONOUR_DNT):
        return PRIVATE
    return link_mode


def uses_windows(mode: str) -> bool:
    """Whether visitor ids of `mode` are keyed per window (unique visitors exact within one)."""
    return mode in (Privacy.TRUNCATED, Privacy.NONE)


def uniques_exact_within(mode: str) -> str:
    """What the stats say of unique visitors under `mode`: "all time" when visitor ids never
    change, else the window they are exact within ("day" by default, "N hours" otherwise): a
    person who comes back in a later window is counted again."""
    if not uses_windows(mode):
        return "all time"
    hours = settings.ANALYTICS_VISITOR_KEY_HOURS
    if hours == 24:
        return "day"
    return f"{hours:g} hours"
