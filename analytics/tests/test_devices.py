"""Device type from the model a User-Agent names (analytics/devices.py), and the names of in-app
and iOS browsers, measured on public samples: see samples/SOURCES.md."""

from __future__ import annotations

import functools
import gzip
import json
import re
from pathlib import Path

import pytest

from analytics import devices, enrich

SAMPLES = Path(__file__).parent / "samples"
# Matomo's device types as ours: foldables are phablets to Matomo, phones to us.
OURS = {"tablet": "Tablet", "smartphone": "Mobile", "phablet": "Mobile", "desktop": "PC"}
MOBILE_WORD = re.compile(r"\bMobile\b")


@functools.cache
def sample(name: str) -> tuple[dict, ...]:
    return tuple(json.loads(gzip.decompress((SAMPLES / name).read_bytes())))


def device_of(ua: str) -> str:
    return enrich.parse_user_agent(ua).device_type


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.2f}% ({part}/{whole})"


def wrong_ones(rows) -> list[tuple[str, str, str]]:
    return [
        (row["type"], got, row["ua"])
        for row in rows
        if (got := device_of(row["ua"])) != OURS[row["type"]]
    ]


# --- device type on the samples ------------------------------------------------------------


def test_device_type_is_right_for_at_least_98_percent_of_a_mixed_sample():
    rows = sample("matomo_devices.json.gz")
    assert len(rows) > 1900
    wrong = wrong_ones(rows)
    assert 1 - len(wrong) / len(rows) >= 0.98, f"{share(len(rows) - len(wrong), len(rows))}"


def test_android_tablets_whose_user_agent_says_mobile_are_tablets():
    """ua-parser took 98 % of these for phones (issue #13)."""
    rows = [
        row
        for row in sample("matomo_devices.json.gz")
        if row["type"] == "tablet" and MOBILE_WORD.search(row["ua"]) and "ndroid" in row["ua"]
    ]
    assert len(rows) >= 500
    wrong = wrong_ones(rows)
    assert 1 - len(wrong) / len(rows) >= 0.98, f"{share(len(rows) - len(wrong), len(rows))}"


def test_phones_are_not_called_tablets():
    rows = [row for row in sample("matomo_devices.json.gz") if OURS[row["type"]] == "Mobile"]
    assert len(rows) > 750
    assert [row["ua"] for row in rows if device_of(row["ua"]) == "Tablet"] == []


# The tablets that issue #13 found called phones, by the model their User-Agent names.
NAMED_TABLETS = {
    "Lenovo Tab": r"Lenovo TB|\bTB-[0-9X]",
    "Huawei MatePad / MediaPad": r"MatePad|\bBAH\d|\bDBY-",
    "Xiaomi Mi Pad / Pad / Redmi Pad": r"Mi ?Pad|Xiaomi Pad|Redmi Pad|\b23043RP34G",
    "Galaxy Tab A7 Lite": r"\bSM-T22[05]",
    "Galaxy Tab S8 / S9 / A9": r"\bSM-X\d{3}",
}


@pytest.mark.parametrize("pattern", NAMED_TABLETS.values(), ids=NAMED_TABLETS.keys())
def test_named_tablets_that_say_mobile_are_tablets(pattern):
    rows = [
        row
        for row in sample("matomo_devices.json.gz")
        if row["type"] == "tablet"
        and re.search(pattern, row["ua"])
        and MOBILE_WORD.search(row["ua"])
    ]
    assert rows
    assert wrong_ones(rows) == []


def test_all_named_tablets_that_say_mobile_are_tablets():
    """0 of 19 before (issue #13)."""
    named = re.compile("|".join(NAMED_TABLETS.values()))
    rows = [
        row
        for row in sample("matomo_devices.json.gz")
        if row["type"] == "tablet" and named.search(row["ua"]) and MOBILE_WORD.search(row["ua"])
    ]
    assert len(rows) >= 19
    assert wrong_ones(rows) == []


def test_foldables_are_phones():
    """Matomo's phablets: phones that unfold, and the User-Agent does not say if they were."""
    rows = [
        row
        for row in sample("matomo_devices.json.gz")
        if re.search(r"\bSM-F9\d\d|Pixel Fold", row["ua"])
    ]
    assert len(rows) >= 20
    assert {device_of(row["ua"]) for row in rows} == {"Mobile"}


def test_device_type_on_real_traffic_independent_of_the_device_list():
    """npm user-agents: real browsers' User-Agents, classified by their own source."""
    rows = sample("npm_user_agents.json.gz")
    want = {"mobile": "Mobile", "tablet": "Tablet", "desktop": "PC"}
    wrong = [(row["category"], got, row["ua"]) for row in rows
             if (got := device_of(row["ua"])) != want[row["category"]]]  # fmt: skip
    assert 1 - len(wrong) / len(rows) >= 0.99, wrong
    assert [ua for category, got, ua in wrong if got == "Tablet"] == []


@pytest.mark.parametrize(
    ("ua", "device"),
    [
        # Chrome's reduced User-Agent names no model: the word "Mobile" tells phones
        ("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
         "Chrome/131.0.0.0 Mobile Safari/537.36", "Mobile"),
        ("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
         "Chrome/131.0.0.0 Safari/537.36", "Tablet"),
        ("Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 "
         "Chrome/131.0.0.0 Mobile DuckDuckGo/5 Safari/537.36", "Mobile"),
        # Firefox says which in its own words
        ("Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0", "Mobile"),
        ("Mozilla/5.0 (Android 14; Tablet; rv:132.0) Gecko/132.0 Firefox/132.0", "Tablet"),
        # a TV and a Chromebook that the list knows, which ua-parser took for tablets
        ("Mozilla/5.0 (Linux; Android 9; BRAVIA 4K GB ATV3 Build/PTT1.190515.001.S52) "
         "AppleWebKit/537.36 (KHTML, like Gecko) Chrome/95.0.4638.74 Safari/537.36", "Other"),
        ("Mozilla/5.0 (Linux; Android 9; HP Chromebook 13 G1) AppleWebKit/537.36 (KHTML, like "
         "Gecko) Chrome/80.0.3987.162 Safari/537.36", "PC"),
        # iPad and iPhone say what they are; the list is not asked
        ("Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
         "Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "Tablet"),
    ],
)  # fmt: skip
def test_user_agents_without_a_known_model_keep_their_own_words(ua, device):
    assert device_of(ua) == device


def test_the_index_finds_what_trying_every_regex_in_order_finds():
    """Matomo's rule, read plainly: the first brand whose regex matches, then its first model."""
    import regex
    import yaml_rs

    brands = list(yaml_rs.loads(devices.data_path().read_text(encoding="utf-8")).values())
    bounded = r"(?:^|[^A-Z0-9_-]|[^A-Z0-9-]_|sprd-|MZ-)(?:{})"  # device_detector's BOUNDED_REGEX

    @functools.cache
    def compiled(pattern: str) -> regex.Pattern:
        return regex.compile(bounded.format(pattern), regex.IGNORECASE)

    def plainly(ua: str) -> str:
        for brand in brands:
            if compiled(str(brand["regex"])).search(ua):
                for model in brand.get("models") or []:
                    if compiled(str(model["regex"])).search(ua):
                        return model.get("device") or brand.get("device") or ""
                return brand.get("device") or ""
        return ""

    rows = sample("matomo_devices.json.gz")[::20] + sample("npm_user_agents.json.gz")[::16]
    differ = [
        (plain, ours, row["ua"])
        for row in rows
        if devices.TYPES.get(plain := plainly(row["ua"]))
        != devices.TYPES.get(ours := devices.matomo_device(row["ua"]))
    ]
    assert len(rows) > 150
    assert differ == []


# --- the index -----------------------------------------------------------------------------


def test_pieces_of_a_pattern_are_found_by_the_texts_they_require():
    pieces = devices._alternatives(r"Lenovo|RM-(?:107[23]|109)(?:[);/ ]|$)|(?:SM-T|GT-P)\d+|A[68]0")
    assert pieces == [
        ("Lenovo", {"lenovo"}),
        ("RM-107[23](?:[);/ ]|$)", {"rm-107"}),
        ("RM-109(?:[);/ ]|$)", {"rm-109"}),
        (r"SM-T\d+", {"sm-t"}),
        (r"GT-P\d+", {"gt-p"}),
        ("A[68]0", {"a60", "a80"}),  # "a" alone would be in every User-Agent
    ]


@pytest.mark.parametrize(
    "pattern",
    [r"(a)|\1b", r"(?(1)x|y)z", "(?i)Nexus|Pixel", "(unbalanced", "opt(?:ional)?|"],
)
def test_patterns_not_read_are_searched_in_every_user_agent(pattern):
    pieces = devices._alternatives(pattern)
    assert any(texts is None for _, texts in pieces) or len(pieces) == 1


def test_the_index_is_saved_in_node_state_dir_and_read_back(settings, tmp_path, monkeypatch):
    settings.NODE_STATE_DIR = str(tmp_path)
    builds = []
    real_build = devices.build_index

    def few_brands(data: dict) -> dict:
        builds.append(len(data))
        return real_build({name: data[name] for name in ("Samsung", "Lenovo")})

    monkeypatch.setattr(devices, "build_index", few_brands)
    tab = "Mozilla/5.0 (Linux; Android 11; SM-T225) AppleWebKit/537.36 Mobile Safari/537.36"
    assert devices.open_database().device(tab) == "tablet"
    (saved,) = tmp_path.glob("device-models-*.json")
    assert devices.open_database().device(tab) == "tablet"
    assert len(builds) == 1  # the second one read the saved index
    saved.write_text("{")  # damaged: read the list again
    assert devices.open_database().device(tab) == "tablet"
    assert len(builds) == 2


def test_without_the_list_user_agents_decide(monkeypatch, tmp_path, caplog):
    monkeypatch.setattr(devices, "data_path", lambda: tmp_path / "missing.yml")
    assert devices.open_database() is None
    assert "unreadable" in caplog.text


# --- browser names of in-app and iOS browsers ----------------------------------------------

IN_APP = [
    ("Firefox iOS", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) FxiOS/127.0 Mobile/15E148 Safari/605.1.15"),
    ("Edge Mobile", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Version/17.0 EdgiOS/126.2592.56 Mobile/15E148 Safari/605.1.15"),
    ("Edge Mobile", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like "
     "Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 EdgA/126.0.2592.61"),
    ("Chrome Mobile iOS", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) "
     "AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.153 Mobile/15E148 Safari/604.1"),
    ("WeChat", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.49(0x18003137) NetType/WIFI "
     "Language/zh_CN"),
    ("WeChat", "Mozilla/5.0 (Linux; Android 13; V2203A Build/TP1A.220624.014; wv) "
     "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/116.0.0.0 Mobile Safari/537.36 "
     "XWEB/1160065 MMWEBSDK/20231202 MMWEBID/2247 MicroMessenger/8.0.47.2560(0x28002F35) "
     "WeChat/arm64 Weixin NetType/WIFI Language/zh_CN ABI/arm64"),
    ("Instagram", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Mobile/15E148 Instagram 337.0.3.23.54 (iPhone14,5; iOS 17_5; en_US; "
     "en; scale=3.00; 1170x2532; 614183446)"),
    ("Instagram", "Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) "
     "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.6478.71 Mobile "
     "Safari/537.36 Instagram 337.0.0.35.102 Android (34/14; 480dpi; 1080x2340; samsung; "
     "SM-S918B; dm3q; qcom; en_US; 614183446)"),
    ("Facebook", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/471.0.0.37.99;FBBV/619419458;"
     "FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]"),
    ("Facebook", "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240605.024; wv) "
     "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.6478.71 Mobile "
     "Safari/537.36 [FB_IAB/FB4A;FBAV/469.0.0.48.74;]"),
    ("LINE", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Mobile/15E148 Safari Line/14.9.0"),
    ("LINE", "Mozilla/5.0 (Linux; Android 13; SM-A536E Build/TP1A.220624.014; wv) "
     "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/125.0.6422.165 Mobile "
     "Safari/537.36 Line/14.8.1/IAB"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("family", "ua"), IN_APP, ids=[f"{f} {i}" for i, (f, _) in enumerate(IN_APP)]
)
def test_in_app_and_ios_browsers_are_named_and_are_people(family, ua):
    info = enrich.parse_user_agent(ua)
    assert (info.browser_type, info.is_bot, info.device_type) == (family, False, "Mobile")


# Matomo's client names as the families stored here. Meta's apps may keep their company's name.
FAMILY = {
    "Facebook": {"Facebook"},
    "Facebook Lite": {"Facebook"},
    "Facebook Groups": {"Facebook"},
    "Facebook Messenger": {"Facebook Messenger", "Facebook"},
    "Facebook Messenger Lite": {"Facebook Messenger", "Facebook"},
    "Instagram": {"Instagram"},
    "WeChat": {"WeChat"},
    "Line": {"LINE"},
    "Chrome Mobile iOS": {"Chrome Mobile iOS"},
    "Firefox Mobile iOS": {"Firefox iOS"},
    "Microsoft Edge": {"Edge Mobile"},
}


def test_browser_family_of_in_app_and_ios_browsers_is_right_for_99_percent():
    rows = sample("matomo_in_app.json.gz")
    assert len(rows) > 500
    wrong = [
        (row["client"], got, row["ua"])
        for row in rows
        if (got := enrich.parse_user_agent(row["ua"]).browser_type)
        not in FAMILY.get(row["client"], {row["client"]})
    ]
    assert 1 - len(wrong) / len(rows) >= 0.99, wrong
