from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "analytics"
    verbose_name = "Analytics"

    def ready(self) -> None:
        # Every list of links counts clicks from the roll-ups, as the stats do (links sits below
        # analytics and cannot import it).
        from analytics.selectors import links_totals
        from links.selectors import click_totals_reader_set

        click_totals_reader_set(links_totals)
