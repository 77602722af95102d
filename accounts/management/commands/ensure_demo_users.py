import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from workspaces.services import member_add, workspace_create


class Command(BaseCommand):
    help = (
        "Create a demo marketer (demo/demo) and a superuser (admin/admin) sharing a workspace "
        "(demo-team) when no user exists, "
        "and say where the site answers (HOST and PORT, as `make run` passes them)."
    )

    def handle(self, *args, **options):
        site = f"http://{os.environ.get('HOST') or '127.0.0.1'}:{os.environ.get('PORT') or 8000}"
        User = get_user_model()
        if User.objects.exists():
            self.stdout.write("Users exist already; no demo users created.")
        else:
            demo = User.objects.create_user("demo", email="demo@example.com", password="demo")
            admin = User.objects.create_superuser(
                "admin", email="admin@example.com", password="admin"
            )
            # A team workspace beside each personal one, so the switcher has something to show.
            team = workspace_create(user=demo, name="Demo team", slug="demo-team")
            member_add(by=demo, workspace=team, username=admin.get_username(), role="editor")
            self.stdout.write(
                self.style.WARNING(
                    "Created demo users for local use only:\n"
                    "  marketer:  demo / demo\n"
                    "  superuser: admin / admin\n"
                    "  both in the workspace demo-team (demo its owner, admin an editor)"
                )
            )
        self.stdout.write(
            f"  your links: {site}/dashboard/\n"
            f"  admin site: {site}/admin/\n"
            f"  API docs:   {site}/api/v1/docs/"
        )
