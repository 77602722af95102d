"""How a short URL (and a long one) is printed on a page."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from links.cache import idn_ascii_url
from links.shortlinks import link_page_url

register = template.Library()


@register.filter
def code_kept_whole(short_url: str) -> SafeString:
    """The short URL with a line-break opportunity after its last slash and the code in a span
    that never breaks (site.css: .code-part). On a phone the URL may wrap before the code, never
    inside it: people retype codes from screens and print, and a code cut in two reads as two."""
    head, slash, code = short_url.rpartition("/")
    return format_html('{}{}<wbr><span class="code-part">{}</span>', head, slash, code)


@register.simple_tag
def link_url(view_name: str, link, *args, **query) -> str:
    """`{% link_url 'link_stats' link %}`: one of a link's pages, with `?domain=` for a link on
    an extra short domain (links.shortlinks.link_page_url)."""
    return link_page_url(view_name, link, *args, **query)


@register.filter
def ascii_form(long_url: str) -> str | None:
    """The long URL with its internationalised host in ASCII (IDNA) form, None for a plain ASCII
    host: shown beside the URL (links/includes/ascii_url.html) so that a look-alike name reads
    as what it is (links.cache.idn_ascii_url)."""
    return idn_ascii_url(long_url)
