"""Writes for analytics: storing visits, recomputing hourly counts, purging old visits.

Flow with Redis (see docs/analytics.md): the redirect RPUSHes a visit message (analytics.messages)
onto the buffer (analytics.buffer); flush_pending takes batches, enriches them and bulk-inserts
VisitRecords, then marks the (link, hour) pairs it touched; aggregate_hourly recomputes those
HourlyClick rows from VisitRecord. Delivery is at-least-once (a crashed batch is taken again) and
the event id makes it exactly once in effect. Without Redis (embedded mode) the same two steps
read analytics.spool's files instead; store_visits does all of it at once, in-process, for a
visit that cannot wait (Redis down).

One module per job; callers import the names from here (`from analytics import services`):

- `ingest`: `store_visits`, `flush_pending` (the direct, buffered and spooled paths);
- `inserts`: the VisitRecord INSERT those paths share;
- `privacy`: the privacy mode a visit is stored under, the visitor-id secrets and their
  deletion (`visitor_keys_sweep`);
- `rollups`: `aggregate_hourly`, `rebuild_hourly` (HourlyClick, breakdowns, people);
- `replay`: `replay_dead_visits` (the dead list);
- `reclassify`: `reclassify_visits` (newer detectors over stored visits);
- `retention`: `apply_retention`, `purge_visits`, `visitor_visits_erase`, `link_raw_visits_erase`
  (raw visits deleted, their counts kept);
- `deletion`: `link_visits_delete`, `orphan_visits_delete` (visits deleted on request);
- `conversions`: `lead_track`, `sale_track` (leads and sales reported for a click).

A module may import a sibling, in that order of dependence (ingest → inserts → privacy,
rollups; replay → ingest; reclassify, retention and deletion → rollups; conversions → ingest),
never this package.
"""

from analytics.services.conversions import (
    ClickNotFound,
    ConversionResult,
    CustomerNotFound,
    lead_track,
    sale_track,
)
from analytics.services.deletion import link_visits_delete, orphan_visits_delete
from analytics.services.ingest import MAX_ATTEMPTS, FlushResult, flush_pending, store_visits
from analytics.services.privacy import visitor_keys_sweep
from analytics.services.reclassify import ReclassifyResult, reclassify_visits
from analytics.services.replay import NoVisitBuffer, ReplayResult, replay_dead_visits
from analytics.services.retention import (
    Deleted,
    RetentionResult,
    apply_retention,
    link_raw_visits_erase,
    purge_visits,
    visitor_visits_erase,
)
from analytics.services.rollups import aggregate_hourly, rebuild_hourly

__all__ = [
    "MAX_ATTEMPTS",
    "ClickNotFound",
    "ConversionResult",
    "CustomerNotFound",
    "Deleted",
    "FlushResult",
    "NoVisitBuffer",
    "ReclassifyResult",
    "ReplayResult",
    "RetentionResult",
    "aggregate_hourly",
    "apply_retention",
    "flush_pending",
    "lead_track",
    "link_raw_visits_erase",
    "link_visits_delete",
    "orphan_visits_delete",
    "purge_visits",
    "rebuild_hourly",
    "reclassify_visits",
    "replay_dead_visits",
    "sale_track",
    "store_visits",
    "visitor_keys_sweep",
    "visitor_visits_erase",
]
