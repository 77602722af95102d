"""Conversions (issue #29): a lead or a sale a site reports for a click of a link that tracks
conversions, counted for that link.

The click id is the visit's own event id, which the redirect appended to the destination
(links.models.CLICK_ID_PARAM); nothing new is written on the redirect. A report finds the
stored visit, and with it the link, its workspace (whose writers alone may report) and the
visit's country, device and referrer host, copied onto the row so the conversions' breakdowns
read one table.

A visit reaches the database a second or two after its redirect (the runner or the worker
flushes the buffer), and a landing page can report a lead sooner than that: a click id not
found yet makes this process flush what is pending (forwarding the node's spool first, with
Redis) and look again before it answers "no such click" — bounded, since any key holder can send
made-up ids (see _flush_pending_visits).

Repeats count once, decided by the database (Conversion.once_key, unique), never by a read
before the write: a lead per (click, event name), a sale per (workspace, invoice id) when it has
one. A repeat answers the row stored first, marked a duplicate.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from analytics.forward import forward_spooled_visits
from analytics.models import Conversion, ConversionKind, VisitRecord
from analytics.selectors.breakdowns import referrer_host
from analytics.services.ingest import flush_pending
from core.db import retry_on_conflict
from core.errors import NotFound
from core.node_state import local_redirects
from core.redis_conn import uses_redis
from workspaces.models import WRITER_ROLES
from workspaces.selectors import role_in, workspace_ids_of

logger = logging.getLogger(__name__)

CLICK_ID_RE = re.compile(r"[0-9a-f]{32}")
CURRENCY_RE = re.compile(r"[A-Z]{3}")
_SURROGATE = re.compile("[\ud800-\udfff]")
EVENT_NAME_MAX = Conversion._meta.get_field("event_name").max_length
CUSTOMER_ID_MAX = Conversion._meta.get_field("customer_id").max_length
INVOICE_ID_MAX = Conversion._meta.get_field("invoice_id").max_length
# A sale's amount in minor units: up to ten trillion of a currency's units in cents, far past
# any one order, well inside a signed 64-bit column when summed.
AMOUNT_MAX = 10**15
METADATA_MAX_BYTES = 4096  # the metadata as compact JSON, UTF-8
# How long a report's flush of pending visits may take before it says the click is unknown.
FLUSH_SECONDS = 2.0
# A process flushes for reports at most once per this many seconds (the runner and the worker
# flush every second or so anyway), and answers an id still unknown after one at once for
# UNKNOWN_SECONDS: a flood of made-up ids costs a flush a quarter second, not one each.
FLUSH_INTERVAL = 0.25
UNKNOWN_SECONDS = 10
_flush_lock = threading.Lock()
_last_flush = {"started": float("-inf")}


class ClickNotFound(NotFound):
    """No stored click has this id, or it is a click of a link the caller may not report for
    (told apart to nobody)."""

    def __init__(self, click_id: str):
        super().__init__(click_id)
        self.public_message = (
            f"No click has the id {click_id!r} (the {CLICK_ID_RE.pattern} value the redirect "
            "added to your page's address) among the links you can report conversions for."
        )


class CustomerNotFound(NotFound):
    """A sale reported by customer id alone, for a customer with no lead to attribute it to."""

    def __init__(self, customer_id: str):
        super().__init__(customer_id)
        self.public_message = (
            f"No lead of the customer {customer_id!r} in your workspaces: report a lead with "
            "their click id first, or send the sale's click_id."
        )


@dataclass(frozen=True)
class ConversionResult:
    conversion: Conversion
    created: bool  # False: a repeat, answered with the row stored first


def _once_key(*parts: object) -> str:
    return hashlib.sha1("\x1f".join(map(str, parts)).encode(), usedforsecurity=False).hexdigest()


def _text(value, *, field: str, max_length: int, required: bool) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise ValidationError({field: ["Send text."]})
    if "\x00" in value or _SURROGATE.search(value):
        raise ValidationError({field: ["Send text without NUL or unpaired surrogate characters."]})
    value = value.strip()
    if required and not value:
        raise ValidationError({field: ["This field is required."]})
    if len(value) > max_length:
        raise ValidationError({field: [f"Keep it to {max_length} characters or fewer."]})
    return value


def _metadata(value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError({"metadata": ["Send a JSON object."]})
    try:
        size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    except UnicodeEncodeError:
        raise ValidationError(
            {"metadata": ["Send text without unpaired surrogate characters."]}
        ) from None
    if "\\u0000" in json.dumps(value):
        raise ValidationError({"metadata": ["Send text without NUL characters."]})
    if size > METADATA_MAX_BYTES:
        raise ValidationError(
            {"metadata": [f"Keep it to {METADATA_MAX_BYTES} bytes of JSON (this is {size})."]}
        )
    return value


def _click_id(value) -> str:
    click_id = _text(value, field="click_id", max_length=64, required=True).lower()
    if not CLICK_ID_RE.fullmatch(click_id):
        raise ValidationError({"click_id": ["A click id is 32 hexadecimal digits."]})
    return click_id


def _writable_workspaces(user: AbstractBaseUser, pinned_workspace_id: int | None) -> QuerySet:
    """The ids of the workspaces `user` writes in (the API key's own alone, when it acts for
    one), as a subquery."""
    ids = workspace_ids_of(user, writers_only=True)
    return ids if pinned_workspace_id is None else ids.filter(workspace_id=pinned_workspace_id)


def _stored_click(click_id: str) -> VisitRecord | None:
    return (
        VisitRecord.objects.filter(event_id=click_id)
        .select_related("link")
        .only("event_id", "country_code", "device_type", "referrer", "link__workspace_id")
        .first()
    )


def _flush_pending_visits(asked_at: float) -> bool:
    """Store the visits still on their way (the node's spool, the Redis buffer), briefly, for a
    report that came in at `asked_at` (time.monotonic()); False if that could not be done.

    Any key holder can send click ids nobody has, so this is bounded: one flush at a time in the
    process (a report that finds one under way waits for it, then looks again without flushing
    when it began after the report came in), at most one per FLUSH_INTERVAL (the next waits out
    the rest of it: visits spooled since the last one are still stored, a little later), each
    FLUSH_SECONDS at most in both modes."""
    if not _flush_lock.acquire(timeout=FLUSH_SECONDS + FLUSH_INTERVAL):
        return False
    try:
        if _last_flush["started"] >= asked_at:
            return True  # a flush that began after this report came in has stored its click
        rest = _last_flush["started"] + FLUSH_INTERVAL - time.monotonic()
        if rest > 0:
            time.sleep(rest)
        _last_flush["started"] = started = time.monotonic()
        if uses_redis() and local_redirects():
            forward_spooled_visits(deadline=started + FLUSH_SECONDS)
        flush_pending(max_seconds=FLUSH_SECONDS)
        return True
    except Exception:
        # The report still gets its answer (404 if the click is not there after all); the flush
        # is the runner's or the worker's job, which will retry.
        logger.exception("Pending visits could not be flushed for a conversion report")
        return False
    finally:
        _flush_lock.release()


def _unknown_key(click_id: str) -> str:
    return f"conversions:unknown:{click_id}"


def click_for(
    *, click_id: str, user: AbstractBaseUser, pinned_workspace_id: int | None = None
) -> VisitRecord:
    """The stored click `click_id` names, of a link in a workspace `user` writes in (and the
    API key's own, when it acts for one). ClickNotFound otherwise; PermissionDenied for a viewer
    of the link's workspace."""
    asked_at = time.monotonic()
    visit = _stored_click(click_id)
    # An id still unknown after a flush a moment ago is not looked for again: its visit, if it
    # had one, was spooled before the site could know its id, so that flush stored it.
    if visit is None and not cache.get(_unknown_key(click_id)):
        flushed = _flush_pending_visits(asked_at)
        visit = _stored_click(click_id)
        if visit is None and flushed:
            cache.set(_unknown_key(click_id), True, UNKNOWN_SECONDS)
    if visit is None:
        raise ClickNotFound(click_id)
    workspace_id = visit.link.workspace_id
    if pinned_workspace_id is not None and workspace_id != pinned_workspace_id:
        raise ClickNotFound(click_id)
    role = role_in(user=user, workspace_id=workspace_id)
    if role is None:
        raise ClickNotFound(click_id)
    if role not in WRITER_ROLES:
        raise PermissionDenied("Viewers of this link's workspace cannot report its conversions.")
    return visit


@retry_on_conflict
def _store(values: dict, once_key: str | None) -> ConversionResult:
    """Insert the row, or hand back the one its once_key already names. One unit of work
    (core.db): on Galera two nodes may both insert a once_key; the later commit fails its
    certification (1213), and the retry finds the row the other stored (IntegrityError)."""
    try:
        with transaction.atomic():
            conversion = Conversion.objects.create(**values, once_key=once_key)
        return ConversionResult(conversion, created=True)
    except IntegrityError:
        if once_key is None:
            raise
    existing = Conversion.objects.select_related("link").get(once_key=once_key)
    return ConversionResult(existing, created=False)


def _values_from_click(visit: VisitRecord) -> dict:
    return {
        "link_id": visit.link_id,
        "workspace_id": visit.link.workspace_id,
        "click_id": visit.event_id,
        "country_code": visit.country_code,
        "device_type": visit.device_type,
        "referrer_host": referrer_host(visit.referrer),
        "created_at": timezone.now(),
    }


def lead_track(
    *,
    user: AbstractBaseUser,
    click_id,
    event_name,
    customer_id,
    metadata=None,
    pinned_workspace_id: int | None = None,
) -> ConversionResult:
    """Count a lead (a sign-up, a form sent) for the click `click_id`, once per click and event
    name: a repeat answers the lead stored first. `customer_id`: the site's own id of the
    person, which a later sale may name instead of the click."""
    click_id = _click_id(click_id)
    event_name = _text(event_name, field="event_name", max_length=EVENT_NAME_MAX, required=True)
    customer_id = _text(customer_id, field="customer_id", max_length=CUSTOMER_ID_MAX, required=True)
    metadata = _metadata(metadata)
    visit = click_for(click_id=click_id, user=user, pinned_workspace_id=pinned_workspace_id)
    values = {
        **_values_from_click(visit),
        "kind": ConversionKind.LEAD,
        "event_name": event_name,
        "customer_id": customer_id,
        "metadata": metadata,
    }
    return _store(values, _once_key(ConversionKind.LEAD, click_id, event_name))


def _amount(value) -> int:
    # bool is an int to Python; JSON's 12.5 or "12" are refused rather than guessed at.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(
            {"amount": ["Send a whole number of the currency's minor units (1999 for 19.99)."]}
        )
    if value < 0 or value > AMOUNT_MAX:
        raise ValidationError({"amount": [f"Send an amount from 0 to {AMOUNT_MAX}."]})
    return value


def _currency(value) -> str:
    currency = _text(value, field="currency", max_length=3, required=True).upper()
    if not CURRENCY_RE.fullmatch(currency):
        raise ValidationError({"currency": ["Send an ISO 4217 code of three letters, e.g. EUR."]})
    return currency


def sale_track(
    *,
    user: AbstractBaseUser,
    amount,
    currency,
    event_name,
    click_id=None,
    customer_id=None,
    invoice_id=None,
    metadata=None,
    pinned_workspace_id: int | None = None,
) -> ConversionResult:
    """Count a sale of `amount` minor units of `currency` for a click: `click_id`'s, else the
    click of `customer_id`'s latest lead in the key's workspace (with no workspace pinned, in
    the caller's workspaces, if that customer's leads are in one of them alone: a 400 naming
    customer_id otherwise). `invoice_id`: the order's id, counted once per workspace (a repeat
    answers the sale stored first)."""
    errors: dict[str, list[str]] = {}  # every field's problem at once

    def check(validate, *args, **kwargs):
        try:
            return validate(*args, **kwargs)
        except ValidationError as exc:
            errors.update(exc.message_dict)
            return None

    amount = check(_amount, amount)
    currency = check(_currency, currency)
    event_name = check(
        _text, event_name, field="event_name", max_length=EVENT_NAME_MAX, required=True
    )
    customer_id = check(
        _text, customer_id, field="customer_id", max_length=CUSTOMER_ID_MAX, required=False
    )
    invoice_id = check(
        _text, invoice_id, field="invoice_id", max_length=INVOICE_ID_MAX, required=False
    )
    metadata = check(_metadata, metadata)
    click_id = check(_click_id, click_id) if click_id not in (None, "") else ""
    if not errors and not click_id and not customer_id:
        errors["click_id"] = ["Send the sale's click_id, or the customer_id of a lead."]
    if errors:
        raise ValidationError(errors)
    if click_id:
        origin = _sale_origin(click_id, user, pinned_workspace_id)
    else:
        origin = _values_from_lead(_latest_lead(customer_id, user, pinned_workspace_id))
    values = {
        **origin,
        "kind": ConversionKind.SALE,
        "event_name": event_name,
        "customer_id": customer_id,
        "amount": amount,
        "currency": currency,
        "invoice_id": invoice_id,
        "metadata": metadata,
    }
    once_key = None
    if invoice_id:
        once_key = _once_key(ConversionKind.SALE, values["workspace_id"], invoice_id)
    return _store(values, once_key)


def _values_from_lead(lead: Conversion) -> dict:
    """A sale's link, click and dimensions from its lead's, which were the click's: raw visits
    may be gone by the time the sale comes (retention, erasure); the lead keeps what counts."""
    return {
        "link_id": lead.link_id,
        "workspace_id": lead.workspace_id,
        "click_id": lead.click_id,
        "country_code": lead.country_code,
        "device_type": lead.device_type,
        "referrer_host": lead.referrer_host,
        "created_at": timezone.now(),
    }


def _leads(user: AbstractBaseUser, pinned_workspace_id: int | None) -> QuerySet:
    """The leads of the workspaces `user` writes in (the key's own, when pinned): those a sale
    may be told by."""
    return Conversion.objects.filter(
        kind=ConversionKind.LEAD,
        workspace_id__in=_writable_workspaces(user, pinned_workspace_id),
    )


def _sale_origin(click_id: str, user: AbstractBaseUser, pinned_workspace_id: int | None) -> dict:
    """The sale's link, click and dimensions: the stored click's, else (its raw visit deleted
    since a lead was counted for it) that lead's. ClickNotFound when neither is there."""
    try:
        visit = click_for(click_id=click_id, user=user, pinned_workspace_id=pinned_workspace_id)
    except ClickNotFound:
        lead = _leads(user, pinned_workspace_id).filter(click_id=click_id).order_by("id").first()
        if lead is None:
            raise
        return _values_from_lead(lead)
    return _values_from_click(visit)


def _latest_lead(
    customer_id: str, user: AbstractBaseUser, pinned_workspace_id: int | None
) -> Conversion:
    """`customer_id`'s latest lead in the workspaces `user` writes in (the key's own, when
    pinned). CustomerNotFound without one; a 400 naming customer_id when, with no workspace
    pinned, that customer has leads in several."""
    leads = _leads(user, pinned_workspace_id).filter(customer_id=customer_id)
    # A customer id is the site's own, so two workspaces (two shops) may both have a
    # cus_1: unless the key names its workspace, which one the sale is for is not guessed.
    if pinned_workspace_id is None:
        several = leads.values("workspace_id").distinct().order_by()[:2]
        if len(several) > 1:
            raise ValidationError(
                {
                    "customer_id": [
                        f"The customer {customer_id!r} has leads in several of your "
                        "workspaces: send the sale's click_id, or use an API key of the one "
                        "workspace."
                    ]
                }
            )
    lead = leads.order_by("-created_at", "-id").first()
    if lead is None:
        raise CustomerNotFound(customer_id)
    return lead
