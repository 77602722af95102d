from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create a demo marketer (demo/demo) and a superuser (admin/admin) when no user exists."

    def handle(self, *args, **options):
        User = get_user_model()
        if User.objects.exists():
            self.stdout.write("Users exist already; no demo users created.")
            return
        User.objects.create_user("demo", email="demo@example.com", password="demo")
        User.objects.create_superuser("admin", email="admin@example.com", password="admin")
        self.stdout.write(
            self.style.WARNING(
                "Created demo users for local use only:\n"
                "  marketer:  demo / demo\n"
                "  superuser: admin / admin   (admin site: http://127.0.0.1:8000/admin/)"
            )
        )
