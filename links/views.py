"""Pages for marketers: create a short link, list, change and revoke their links, get QR codes.

Views only translate between HTTP and links.services / links.selectors.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods

from core.forms import add_service_errors
from links import qr
from links.cache import CacheUnavailable
from links.codes.base import CodeGenerationError
from links.forms import (
    BulkLinkActionForm,
    LinkCreateForm,
    LinkEditForm,
    LinkFilterForm,
    LinkImportForm,
    QrDesignForm,
)
from links.imports import service as imports
from links.imports.exports import import_report_csv_chunks, links_csv_chunks, links_json_chunks
from links.imports.report import OUTCOMES, ImportReport, Outcome
from links.models import LinkImport, LinkStatus, Tag
from links.selectors import (
    LinkNotFound,
    TagNotFound,
    default_domain_host,
    domain_list_for,
    link_click_totals,
    link_export_rows,
    link_get_visible,
    link_import_get,
    link_import_list,
    link_list,
    link_statuses,
    link_tag_names,
    links_get_changeable_many,
    tag_get,
    tag_list,
)
from links.services import change, create, qr_design
from links.services.bulk_change import CHANGED, REFUSED, UNCHANGED, link_change_many
from links.services.gates import visits_used
from links.services.policy import LinkRevoked, ensure_changeable
from links.services.utm import UTM_FIELDS
from links.shortcuts import changeable_link_or_404, visible_link_or_404
from links.shortlinks import link_page_url, link_short_url
from workspaces.current import can_write_current, current_workspace, my_workspaces
from workspaces.models import WRITER_ROLES

LINKS_PER_PAGE = 20


def qr_svg_inline(short_url: str, style: qr.QrStyle = qr.PLAIN) -> str:
    # segno writes the SVG itself from the encoded modules; nothing from the URL is echoed, and
    # a design adds only checked colours and its logo as a base64 PNG.
    return mark_safe(qr.svg_inline(short_url, style))  # noqa: S308


def _qr_downloads(link, design=None) -> dict:
    """The download links every page offering a QR code shows (includes/qr_downloads.html).
    With a QR design they carry its version (`v`): the files are cached for a few minutes, and
    a download right after saving must not be the one from before."""
    version = {"v": int(design.updated_at.timestamp() * 1000)} if design is not None else {}
    return {
        "pngs": [
            {
                "size": size,
                "url": link_page_url("link_qr", link, "png", size=size.pixels, **version),
            }
            for size in qr.SIZES.values()
        ],
        "svg_url": link_page_url("link_qr", link, "svg", **version),
    }


def home(request: HttpRequest) -> HttpResponse:
    """Signed in: paste a long URL, get a short link at once. Signed out: what this is.
    Routed through shorturl_project.urls.home, which answers an extra short domain's root
    first."""
    if not request.user.is_authenticated:
        return render(request, "links/landing.html")
    workspace = current_workspace(request)
    may_create = can_write_current(request)
    if request.method == "POST" and not may_create:
        raise PermissionDenied(f"Viewers of {workspace.name} cannot create links in it.")
    form = LinkCreateForm(request.POST or None, **_domain_choices(request))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            result = create.link_create(
                user=request.user,
                workspace=workspace,
                long_url=data["long_url"],
                alias=data["alias"],
                title=data["title"],
                valid_since=data["valid_since"],
                expires_at=data["expires_at"],
                redirect_type=data["redirect_type"],
                pass_query=data["pass_query"],
                track_conversions=data["track_conversions"],
                tags=data["tags"],
                utm=form.utm(),
                password=data["password"] or None,
                max_visits=data["max_visits"],
                expired_url=data["expired_url"],
                fallback_url=data["fallback_url"],
                domain=data.get("domain") or None,
                request_host=request.get_host(),
                **form.targeting(),
                **form.preview(),
                **form.app_links(),
            )
        except ValidationError as error:
            if rest := form.add_targeting_errors(error):
                add_service_errors(form, rest)
        except CodeGenerationError as error:
            form.add_error(None, str(error))
        else:
            if result.created:
                messages.success(request, "Your short link is ready.")
                for warning in result.warnings.get("alias", []):
                    messages.warning(request, warning)
            else:
                messages.info(request, "You already had a short link for this URL; here it is.")
            # Redirect after POST, so reloading the page cannot create a second link.
            query = urlencode(
                {"created": result.link.code, "domain": result.link.domain_host}
                if result.link.domain_host
                else {"created": result.link.code}
            )
            return redirect(f"{reverse('home')}?{query}")

    created = None
    if code := request.GET.get("created"):
        try:
            link = link_get_visible(code=code, user=request.user, domain=request.GET.get("domain"))
        except LinkNotFound:
            link = None
        if link is not None:
            short_url = link_short_url(link, request=request)
            created = {
                "link": link,
                "short_url": short_url,
                "qr_svg": qr_svg_inline(short_url),
                "qr_downloads": _qr_downloads(link),
            }
    options_open = any(
        form[name].errors
        for name in (
            "domain",
            "alias",
            "title",
            "valid_since",
            "expires_at",
            "password",
            "max_visits",
            "expired_url",
            "fallback_url",
        )
        if name in form.fields
    )
    advanced_open = any(form[name].errors for name in ADVANCED_FIELDS if name in form.fields)
    return render(
        request,
        "links/home.html",
        {
            "form": form,
            "created": created,
            "options_open": options_open,
            "advanced_open": advanced_open,
            "tag_suggestions": _tag_suggestions(request),
            "may_create": may_create,
        },
    )


def _domain_choices(request: HttpRequest) -> dict:
    """What the create form and the list's filters offer: the extra short domains the current
    workspace may use (none: no choice shown; a domain kept for another workspace is left
    out) and the default one's name."""
    usable = domain_list_for(user=request.user, workspace_id=current_workspace(request).pk)
    return {
        "domains": [domain.host for domain in usable if not domain.is_default],
        "default_domain": default_domain_host(request.get_host()),
    }


# The create form's "Advanced" section: opened when one of its fields has an error.
ADVANCED_FIELDS = ("tags", *UTM_FIELDS)


def _tag_suggestions(request: HttpRequest) -> list[str]:
    """The current workspace's tag names, for the tags input's <datalist>."""
    return [
        tag.name for tag in tag_list(user=request.user, workspace_id=current_workspace(request).pk)
    ]


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """ "My links": search, filter, sort, paginate; clicks are read for the whole page at once."""
    filters = LinkFilterForm(request.GET or None, **_domain_choices(request))
    criteria = filters.selector_kwargs() if request.GET else {}
    workspace = current_workspace(request)
    links = link_list(
        user=request.user,
        owned_only=True,
        request_host=request.get_host(),
        workspace_id=workspace.pk,
        **criteria,
    )
    page = Paginator(links, LINKS_PER_PAGE).get_page(request.GET.get("page"))
    totals = link_click_totals(link_ids=[link.pk for link in page.object_list])
    tags = link_tag_names(link_ids=[link.pk for link in page.object_list])
    statuses = link_statuses(page.object_list)
    rows = []
    for link in page.object_list:
        counts = totals.get(link.pk, {})
        rows.append(
            {
                "link": link,
                "short_url": link_short_url(link, request=request),
                "status": statuses[link.pk],
                "clicks": counts.get("clicks", 0),
                "unique_visitors": counts.get("unique_visitors", 0),
                "tags": tags.get(link.pk, []),
            }
        )
    has_any_link = (
        bool(rows)
        or link_list(user=request.user, archived=True, workspace_id=workspace.pk).exists()
    )
    selected_tags = criteria.get("tags") or []
    return render(
        request,
        "links/dashboard.html",
        {
            "filters": filters,
            "page": page,
            "rows": rows,
            "has_any_link": has_any_link,
            "filtered": bool(
                criteria.get("search")
                or criteria.get("statuses") is not None
                or criteria.get("tags")
                or criteria.get("domain")
            ),
            "selected_tags": selected_tags,
            # Filtered by exactly one tag of theirs: the way to its stats page.
            "stats_tag": _own_tag(request, selected_tags[0]) if len(selected_tags) == 1 else None,
            "statuses": LinkStatus,
            "may_create": can_write_current(request),
            "bulk_form": BulkLinkActionForm(workspaces=_move_targets(request)),
        },
    )


def _move_targets(request: HttpRequest) -> list:
    """The workspaces other than the current one that the person writes in."""
    here = current_workspace(request).pk
    return [w for w in my_workspaces(request) if w.pk != here and w.role in WRITER_ROLES]


def _back_to_list(request: HttpRequest) -> str:
    back = request.POST.get("next", "")
    if not back.startswith(reverse("dashboard")):  # only back to the list, never elsewhere
        back = reverse("dashboard")
    return back


@login_required
@require_http_methods(["POST"])
def links_bulk(request: HttpRequest) -> HttpResponse:
    """My links' bulk action bar: one change for the ticked links of the current workspace,
    each by the rules of its own edit, archive and revoke; the outcome shown per link. A revoke
    is asked to be confirmed first."""
    back = _back_to_list(request)
    workspace = current_workspace(request)
    form = BulkLinkActionForm(request.POST, workspaces=_move_targets(request))
    ids = list(dict.fromkeys(int(raw) for raw in request.POST.getlist("ids") if raw.isdigit()))
    if not ids:
        messages.error(request, "Tick the links to change first.")
        return redirect(back)
    if not form.is_valid():
        for field, problems in form.errors.items():
            label = form.fields[field].label if field in form.fields else ""
            messages.error(
                request, f"{label}: {' '.join(problems)}" if label else " ".join(problems)
            )
        return redirect(back)
    if form.cleaned_data["action"] == "revoke" and request.POST.get("confirm") != "1":
        found = links_get_changeable_many(user=request.user, ids=ids, workspace_id=workspace.pk)
        return render(
            request,
            "links/bulk_revoke_confirm.html",
            {
                "ids": ids,
                "codes": [link.code for link in found.values() if not isinstance(link, Exception)],
                "next": back,
            },
        )
    try:
        results = link_change_many(
            user=request.user, ids=ids, changes=form.changes(), workspace_id=workspace.pk
        )
    except ValidationError as error:
        for problems in error.message_dict.values():
            messages.error(request, f"Nothing was changed: {' '.join(problems)}")
        return redirect(back)
    except (PermissionDenied, CacheUnavailable) as error:
        messages.error(request, f"Nothing was changed: {error}")
        return redirect(back)
    return render(
        request,
        "links/bulk_done.html",
        {
            "action": dict(BulkLinkActionForm.ACTIONS)[form.cleaned_data["action"]],
            "changed": sum(result.outcome == CHANGED for result in results),
            "unchanged": sum(result.outcome == UNCHANGED for result in results),
            "refused": [
                (result.code, [m for problems in result.errors.values() for m in problems])
                for result in results
                if result.outcome == REFUSED
            ],
            "next": back,
        },
    )


def _own_tag(request: HttpRequest, name: str) -> Tag | None:
    """The current workspace's tag of that name, or None (a typed `?tag=` may name none)."""
    try:
        return tag_get(user=request.user, name=name, workspace_id=current_workspace(request).pk)
    except TagNotFound:
        return None


@login_required
@require_http_methods(["POST"])
def link_archive(request: HttpRequest, code: str) -> HttpResponse:
    """Archive (`archived=1`) or bring back (`archived=0`) a link; back to where it was done."""
    link = changeable_link_or_404(request, code)
    archived = request.POST.get("archived") == "1"
    change.link_update(
        code=link.code, domain=link.domain_host, user=request.user, archived=archived
    )
    if archived:
        messages.success(
            request, f"Archived {link.code}: hidden from My links, and it still redirects."
        )
    else:
        messages.success(request, f"{link.code} is back in My links.")
    return redirect(_back_to_list(request))


@login_required
@require_http_methods(["GET", "POST"])
def link_edit(request: HttpRequest, code: str) -> HttpResponse:
    link = changeable_link_or_404(request, code)  # a viewer: the 403 page
    try:
        ensure_changeable(link)
    except LinkRevoked as refusal:
        messages.warning(request, str(refusal))
        return redirect("dashboard")
    form = LinkEditForm(request.POST or None, link=link)
    if request.method == "POST" and form.is_valid():
        changes = form.changes()
        if not changes:
            messages.info(request, "Nothing was changed.")
            return redirect("dashboard")
        try:
            change.link_update(
                code=link.code,
                domain=link.domain_host,
                user=request.user,
                request_host=request.get_host(),
                **changes,
            )
        except ValidationError as error:
            if rest := form.add_targeting_errors(error):
                add_service_errors(form, rest)
        except CacheUnavailable as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Saved the changes to {link.code}.")
            return redirect("dashboard")
    return render(
        request,
        "links/edit.html",
        {
            "form": form,
            "link": link,
            "short_url": link_short_url(link, request=request),
            "tag_suggestions": _tag_suggestions(request),
            "visits_used": visits_used(link),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def link_revoke(request: HttpRequest, code: str) -> HttpResponse:
    """GET asks for confirmation; only the POST (with its CSRF token) revokes."""
    link = changeable_link_or_404(request, code)  # a viewer: the 403 page
    short_url = link_short_url(link, request=request)
    if request.method == "POST":
        try:
            change.link_revoke(code=link.code, domain=link.domain_host, user=request.user)
        except CacheUnavailable as error:
            messages.error(request, str(error))
            return redirect(link_page_url("link_revoke", link))
        messages.success(
            request, f"{short_url} is revoked: it now answers “this link is no longer available”."
        )
        return redirect("dashboard")
    return render(request, "links/revoke_confirm.html", {"link": link, "short_url": short_url})


def _qr_page(
    request: HttpRequest,
    link,
    *,
    error: str = "",
    status: int = 200,
    form: QrDesignForm | None = None,
) -> HttpResponse:
    short_url = link_short_url(link, request=request)
    design = qr_design.link_design(link)
    if form is None:
        form = QrDesignForm(
            initial={
                "foreground": design.foreground,
                "background": design.background,
                "error_level": design.error_level,
            }
            if design
            else None
        )
    return render(
        request,
        "links/qr.html",
        {
            "link": link,
            "short_url": short_url,
            "qr_svg": qr_svg_inline(short_url, qr_design.design_style(design)),
            "qr_downloads": _qr_downloads(link, design),
            "error": error,
            "form": form,
            "design": design,
            "can_design": _can_design(request, link),
            "preview_url": link_page_url("link_qr_preview", link),
            "min_contrast": qr_design.MIN_CONTRAST,
        },
        status=status,
    )


def _can_design(request: HttpRequest, link) -> bool:
    try:
        changeable_link_or_404(request, link.code)
    except PermissionDenied:
        return False
    return link.revoked_at is None


@login_required
@require_http_methods(["GET", "POST"])
def link_qr_page(request: HttpRequest, code: str) -> HttpResponse:
    """A link's QR code: its designer with a live preview, and its downloads, PNG at each size
    and SVG, drawn in the saved design. POST saves the design (or resets it)."""
    if request.method != "POST":
        return _qr_page(request, visible_link_or_404(request, code))
    link = changeable_link_or_404(request, code)  # a viewer: the 403 page
    if request.POST.get("action") == "reset":
        try:
            qr_design.qr_design_reset(link=link)
        except LinkRevoked as refused:
            return _qr_page(request, link, error=str(refused), status=409)
        messages.success(request, "The QR code is back to plain black on white.")
        return redirect(link_page_url("link_qr_page", link))
    form = QrDesignForm(request.POST, request.FILES)
    if form.is_valid():
        upload = form.cleaned_data["logo"]
        try:
            qr_design.qr_design_save(
                link=link,
                foreground=form.cleaned_data["foreground"],
                background=form.cleaned_data["background"],
                error_level=form.cleaned_data["error_level"],
                logo=_read_upload(upload),
                logo_name=upload.name if upload else "",
                remove_logo=form.cleaned_data["remove_logo"],
            )
        except ValidationError as refused:
            add_service_errors(form, refused)
        except LinkRevoked as refused:
            return _qr_page(request, link, error=str(refused), status=409)
        else:
            messages.success(request, "QR design saved: the downloads below use it.")
            return redirect(link_page_url("link_qr_page", link))
    return _qr_page(request, link, form=form, status=400)


def _read_upload(upload) -> bytes | None:
    """An uploaded file's bytes, read no further than one byte past the logo limit (the
    service refuses what is longer)."""
    if not upload:
        return None
    return upload.read(qr_design.LOGO_MAX_BYTES + 1)


@login_required
def link_qr_preview(request: HttpRequest, code: str) -> HttpResponse:
    """The designer's live preview: the code as SVG in the colours and level the form holds
    (`?foreground=&background=&error_level=`) with the saved logo, nothing saved; 400 with
    {field: [messages]} when they would not scan."""
    link = visible_link_or_404(request, code)
    design = qr_design.link_design(link)
    saved = qr_design.design_style(design)
    try:
        style = qr_design.style_from(
            foreground=request.GET.get("foreground", saved.foreground),
            background=request.GET.get("background", saved.background),
            error_level=request.GET.get("error_level", saved.error),
            logo_png=saved.logo_png,
        )
    except ValidationError as refused:
        return JsonResponse(refused.message_dict, status=400)
    response = qr.file_response(
        code=link.code,
        short_url=link_short_url(link, request=request),
        fmt="svg",
        size=None,
        style=style,
        attachment=False,
    )
    response["Cache-Control"] = "private, no-store"
    return response


@login_required
def link_qr(request: HttpRequest, code: str, fmt: str) -> HttpResponse:
    """The link's QR code as a PNG (`?size=` one of qr.SIZES) or SVG file to download, in the
    link's design."""
    link = visible_link_or_404(request, code)
    try:
        size = qr.parse_size(request.GET.get("size"))
    except qr.UnknownSize as error:
        # The QR page, with what went wrong and the sizes there are.
        return _qr_page(request, link, error=str(error), status=400)
    return qr.file_response(
        code=link.code,
        short_url=link_short_url(link, request=request),
        fmt=fmt,
        size=size,
        style=qr_design.design_style(qr_design.link_design(link)),
    )


# --- Import and export -------------------------------------------------------------------------

# Rows of each kind the status page lists; the report's CSV has them all.
IMPORT_ROWS_SHOWN = 200


@login_required
@require_http_methods(["GET", "POST"])
def link_import_page(request: HttpRequest) -> HttpResponse:
    """Upload another shortener's export; it is imported in the background (status page)."""
    workspace = current_workspace(request)
    if request.method == "POST" and not can_write_current(request):
        raise PermissionDenied(f"Viewers of {workspace.name} cannot import links into it.")
    form = LinkImportForm(request.POST or None, request.FILES or None, **_domain_choices(request))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        upload = data["file"]
        try:
            job = imports.link_import_queue(
                user=request.user,
                workspace=workspace,
                file_name=upload.name,
                # One byte past the limit is enough for the service to refuse a larger file.
                data=upload.read(settings.SHORTURL_IMPORT_MAX_BYTES + 1),
                file_format=data["file_format"],
                domain=data.get("domain") or "",
                on_taken_code=data["on_taken_code"],
                dry_run=data["dry_run"],
                request_host=request.get_host(),
            )
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            return redirect("link_import_status", import_id=job.pk)
    return render(
        request,
        "links/import.html",
        {
            "form": form,
            "imports": link_import_list(user=request.user),
            "max_mb": settings.SHORTURL_IMPORT_MAX_BYTES / 2**20,
            "may_create": can_write_current(request),
        },
        status=400 if form.errors else 200,
    )


def _visible_import(request: HttpRequest, import_id: int) -> LinkImport:
    try:
        return link_import_get(user=request.user, import_id=import_id)
    except LinkImport.DoesNotExist:
        raise Http404("No such import.") from None


@login_required
def link_import_status(request: HttpRequest, import_id: int) -> HttpResponse:
    """An upload's progress (the page reloads itself until it is done), then its report."""
    job = _visible_import(request, import_id)
    context = {"job": job, "rows_shown": IMPORT_ROWS_SHOWN}
    if job.report:
        report = ImportReport.from_dict(job.report)
        by_outcome = {outcome: [] for outcome in OUTCOMES}
        for entry in report.entries:
            by_outcome[entry.outcome].append(entry)
        context.update(
            report=report,
            new_code=by_outcome[Outcome.NEW_CODE][:IMPORT_ROWS_SHOWN],
            skipped=by_outcome[Outcome.SKIPPED][:IMPORT_ROWS_SHOWN],
            imported=by_outcome[Outcome.IMPORTED][:IMPORT_ROWS_SHOWN],
            counts={outcome.replace(" ", "_"): report.count(outcome) for outcome in by_outcome},
        )
    return render(request, "links/import_status.html", context)


@login_required
def link_import_progress(request: HttpRequest, import_id: int) -> JsonResponse:
    """How far an upload's import is, for the status page's script."""
    job = _visible_import(request, import_id)
    return JsonResponse(
        {
            "status": job.status,
            "rows_done": job.rows_done,
            "rows_total": job.rows_total,
            "finished": job.finished,
            "interrupted": job.interrupted,
        }
    )


@login_required
def link_import_report(request: HttpRequest, import_id: int) -> HttpResponse:
    """Every row's outcome as CSV."""
    job = _visible_import(request, import_id)
    if not job.report:
        raise Http404("This import has no report yet.")
    report = ImportReport.from_dict(job.report)
    response = HttpResponse(
        "".join(import_report_csv_chunks(report, request=request)),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="import-{job.pk}-report.csv"'
    return response


@login_required
def links_export(request: HttpRequest, fmt: str) -> StreamingHttpResponse:
    """The current workspace's links with their totals, as CSV or JSON, streamed; short URLs
    full, on this request's host when SHORT_URL_BASE is unset."""
    records = link_export_rows(
        user=request.user, workspace_id=current_workspace(request).pk, request=request
    )
    if fmt == "json":
        response = StreamingHttpResponse(
            links_json_chunks(records), content_type="application/json; charset=utf-8"
        )
    else:
        response = StreamingHttpResponse(
            links_csv_chunks(records), content_type="text/csv; charset=utf-8"
        )
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    response["Content-Disposition"] = f'attachment; filename="links-{stamp}.{fmt}"'
    return response
