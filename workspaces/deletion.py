"""What happens to the rows a user made when the user is deleted."""

from collections import defaultdict

from django.db import models


def hand_over_to_the_team(collector, field, sub_objs, using) -> None:
    """`on_delete` of the `owner` (who made it) of rows that belong to a workspace: links,
    webhooks, import uploads. Deleting a user used to delete every link they made, a team's
    links among them. Now a row in a team workspace passes to another member
    (workspaces.services.team_heir: another owner, else the longest-standing member, made
    owner), and only rows nobody else can see (the user's personal workspace, a team of one)
    go with the user, as before."""
    from workspaces.services import team_heir

    heirs: dict[int, int | None] = {}
    handed: dict[int, list] = defaultdict(list)
    gone = []
    for row in sub_objs:
        if row.workspace_id not in heirs:
            heirs[row.workspace_id] = team_heir(
                workspace_id=row.workspace_id, leaving_user_id=row.owner_id
            )
        heir = heirs[row.workspace_id]
        if heir is None:
            gone.append(row)
        else:
            handed[heir].append(row)
    for heir, rows in handed.items():
        collector.add_field_update(field, heir, rows)
    if gone:
        models.CASCADE(collector, field, gone, using)
