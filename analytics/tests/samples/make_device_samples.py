"""Rebuild matomo_devices.json.gz from the installed PyPI package device_detector (not run by
the tests; see SOURCES.md).

usage: python make_device_samples.py DEVICE_DETECTOR_DIR
  DEVICE_DETECTOR_DIR   the installed package (its tests/fixtures/upstream); needs PyYAML
"""

import gzip
import json
import random
import re
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).parent
MOBILE_WORD = re.compile(r"\bMobile\b")
# The tablets that ua-parser took for phones in issue #13, and the foldables.
NAMED = re.compile(
    r"Lenovo TB|Lenovo Tab|TB-[0-9X]|MatePad|BAH\d|DBY-|Mi ?Pad|Xiaomi Pad|Redmi Pad|"
    r"SM-T2[0-9]{2}|SM-X\d{3}|Pixel Tablet|SM-F9\d\d|Pixel Fold",
    re.IGNORECASE,
)
# How many of each kind (at most), drawn at random (seeded) from the fixtures.
DRAWS = {
    "android tablet saying Mobile": 500,
    "android tablet": 300,
    "android smartphone": 600,
    "android phablet": 150,
    "ios": 100,
    "desktop": 100,
}


def kind(row: dict) -> str:
    device, system = row["type"], row["os"]
    if system == "Android" and device == "tablet":
        saying = " saying Mobile" if MOBILE_WORD.search(row["ua"]) else ""
        return f"android tablet{saying}"
    if row["client"] != "browser" or not row["ua"].startswith("Mozilla/"):
        return ""  # apps', feed readers', UC Browser's data strings: among the tablets only
    if system == "Android" and device in ("smartphone", "phablet"):
        return f"android {device}"
    if system == "iOS" and device in ("smartphone", "phablet", "tablet"):
        return "ios"
    return "desktop" if device == "desktop" else ""


def main(device_detector: str) -> None:
    fixtures = Path(device_detector) / "tests" / "fixtures" / "upstream"
    rows, seen = [], set()
    for path in sorted(fixtures.glob("*.yml")):
        if path.name.startswith(("bots", "clienthints")):
            continue
        with path.open() as f:
            for x in yaml.load(f, Loader=yaml.CSafeLoader) or []:
                # UA-only cases: with client-hint headers Matomo knows more than the UA says
                if x.get("headers") or x["user_agent"] in seen:
                    continue
                seen.add(x["user_agent"])
                device = x.get("device") or {}
                system = x.get("os") if isinstance(x.get("os"), dict) else {}
                rows.append(
                    {
                        "ua": x["user_agent"],
                        "type": device.get("type") or "",
                        "os": system.get("name") or "",
                        "client": (x.get("client") or {}).get("type") or "",
                        "model": f"{device.get('brand') or ''} {device.get('model') or ''}".strip(),
                    }
                )
    rnd = random.Random(13)
    named = [r for r in rows if NAMED.search(r["ua"]) and r["type"] in ("tablet", "phablet")]
    chosen = {r["ua"]: r for r in named}
    for name, count in DRAWS.items():
        pool = [r for r in rows if kind(r) == name and r["ua"] not in chosen]
        chosen.update((r["ua"], r) for r in rnd.sample(pool, min(count, len(pool))))
    out = [{"ua": r["ua"], "type": r["type"], "model": r["model"]} for r in chosen.values()]
    data = gzip.compress(json.dumps(out, ensure_ascii=False, indent=0).encode(), mtime=0)
    (HERE / "matomo_devices.json.gz").write_bytes(data)
    print(f"matomo_devices.json.gz {len(out)} rows ({len(named)} named) {len(data)} bytes")


if __name__ == "__main__":
    main(sys.argv[1])
