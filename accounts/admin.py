"""DRF's token admin, with one change for accessibility."""

from django.contrib import admin
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class AccessibleTokenAdmin(TokenAdmin):
    # Django labels its search box with an icon; with a help text tied to the box as well,
    # axe-core reads the box as labelled by that text alone (label-title-only, serious). The
    # search still looks in user names, like every other list's search box, which has no help.
    search_help_text = None
