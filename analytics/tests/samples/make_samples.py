"""Rebuild the sample files here from the packages named in SOURCES.md (not run by the tests).

usage: python make_samples.py DEVICE_DETECTOR_DIR USER_AGENTS_JSON TOP_USER_AGENTS_JSON
  DEVICE_DETECTOR_DIR   the installed PyPI device_detector package (its tests/fixtures/upstream)
  USER_AGENTS_JSON      dist/user-agents.json of the npm package user-agents
  TOP_USER_AGENTS_JSON  src/index.json of the npm package top-user-agents
Needs PyYAML.
"""

import gzip
import json
import random
import re
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).parent
# Browsers inside chat and social apps, and the iOS browsers built on Safari's engine.
IN_APP = re.compile(r"FxiOS|EdgiOS|CriOS|MicroMessenger|Instagram|FBAN|FBAV|FB_IAB|\bLine/|\bLINE/")
PEOPLE_DEVICES = {"smartphone", "tablet", "desktop", "phablet", "feature phone"}


def load_yaml(path: Path) -> list[dict]:
    with path.open() as f:
        return yaml.load(f, Loader=yaml.CSafeLoader) or []


def write(name: str, rows: list) -> None:
    data = json.dumps(rows, ensure_ascii=False, indent=0).encode()
    if name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    (HERE / name).write_bytes(data)
    print(f"{name:32} {len(rows):6} rows {len(data):8} bytes")


def main(device_detector: str, user_agents: str, top_user_agents: str) -> None:
    fixtures = Path(device_detector) / "tests" / "fixtures" / "upstream"
    bots = [
        {"ua": x["user_agent"], "name": x["bot"].get("name"), "category": x["bot"].get("category")}
        for x in load_yaml(fixtures / "bots.yml")
    ]
    write("matomo_bots.json.gz", bots)

    browsers, in_app = [], []
    for path in sorted(fixtures.glob("*.yml")):
        if path.name.startswith(("bots", "clienthints")):
            continue
        for x in load_yaml(path):
            if x.get("headers"):  # needs client hints to be understood: not a UA-only case
                continue
            client = x.get("client") or {}
            device = x.get("device") or {}
            if IN_APP.search(x["user_agent"]):
                in_app.append({"ua": x["user_agent"], "client": client.get("name")})
            elif client.get("type") == "browser" and device.get("type") in PEOPLE_DEVICES:
                browsers.append({"ua": x["user_agent"], "client": client.get("name")})
    write("matomo_browsers.json.gz", random.Random(13).sample(browsers, 5000))
    write("matomo_in_app.json.gz", in_app)

    with open(user_agents) as f:
        distinct = {x["userAgent"]: x["deviceCategory"] for x in json.load(f)}
    write("npm_user_agents.json.gz", [{"ua": k, "category": v} for k, v in distinct.items()])
    with open(top_user_agents) as f:
        write("top_user_agents.json", [{"ua": ua} for ua in json.load(f)])


if __name__ == "__main__":
    main(*sys.argv[1:4])
