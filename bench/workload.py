"""What every redirect benchmark needs first: links to hit, and a wrk script that cycles them."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CREATE = (
    "from django.contrib.auth.models import User\n"
    "from links.services.create import link_create\n"
    "u = User.objects.create_user('bench')\n"
    "codes = [link_create(user=u, long_url=f'https://example.com/p/{{i}}').link.code\n"
    "         for i in range({count})]\n"
    "import json; print(json.dumps(codes))\n"
)


# Gated links (issue #15), each kind decided by serving/gates.py instead of the plain fused
# read-and-count:
# - "rules": a phone-from-China rule and a language rule that a desktop Chrome from the loopback
#   address does not meet, so every request parses its User-Agent (cached per process), looks
#   the address up and falls through to the long URL: the whole rule path;
# - "capped": a visit cap never reached, so every person's click takes one of its visits (the
#   conditional UPDATE of the link row) and goes through.
GATED_OPTIONS = {
    "rules": {
        "rules": [
            {"device": "mobile", "country": "CN", "url": "https://example.com/cn"},
            {"language": "zh", "url": "https://example.com/zh"},
        ]
    },
    "capped": {"max_visits": 2_000_000_000},
}
_CREATE_GATED = (
    "from django.contrib.auth.models import User\n"
    "from links.services.create import link_create\n"
    "u, _ = User.objects.get_or_create(username='bench-{kind}')\n"
    "options = {options}\n"
    "codes = [link_create(user=u, long_url=f'https://example.com/{kind}/{{i}}', **options)\n"
    "         .link.code for i in range({count})]\n"
    "import json; print(json.dumps(codes))\n"
)
DESKTOP_CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)


def shell_json(script: str, env: dict, python: str = sys.executable):
    """Run `script` in `manage.py shell` against the settings in `env`; its last printed line,
    parsed as JSON."""
    done = subprocess.run(
        [python, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:  # say why: a bare CalledProcessError hides the traceback
        raise RuntimeError(f"manage.py shell failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def create_links(count: int, env: dict, python: str = sys.executable) -> list[str]:
    """Shorten `count` URLs in the database `env` points at; returns their codes."""
    return shell_json(_CREATE.format(count=count), env, python)


def create_gated_links(kind: str, count: int, env: dict, python: str = sys.executable) -> list[str]:
    """Shorten `count` URLs with GATED_OPTIONS[kind] (rules, or a cap); returns their codes."""
    script = _CREATE_GATED.format(kind=kind, options=repr(GATED_OPTIONS[kind]), count=count)
    return shell_json(script, env, python)


def wrk_script(codes: list[str], path: Path, user_agent: str = "") -> Path:
    """A wrk Lua script that requests /<code> for each code in turn (with `user_agent`, if
    given; wrk sends none of its own)."""
    headers = f'wrk.headers["User-Agent"] = "{user_agent}"\n' if user_agent else ""
    path.write_text(
        headers + "local codes = {" + ",".join(f'"{c}"' for c in codes) + "}\n"
        "local i = 0\n"
        "request = function()\n"
        "  i = i + 1\n"
        "  return wrk.format('GET', '/' .. codes[(i % #codes) + 1])\n"
        "end\n"
    )
    return path


def wrk_fresh_codes_script(body_length: int, path: Path) -> Path:
    """A wrk Lua script that requests a new made-up code of the generated shape every time,
    with a valid check character (what an attacker can compute), so that no request repeats a
    code: a code asked before may be answered from a negative entry kept by the first ask.

    The check character is links.codes.shape.check_character (Luhn mod 62) in Lua; each wrk
    thread gets its own random seed through setup/init."""
    path.write_text(
        "local alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'\n"
        f"local body_length = {body_length}\n"
        "local threads = 0\n"
        "function setup(thread)\n"
        "  threads = threads + 1\n"
        "  thread:set('thread_no', threads)\n"
        "end\n"
        "function init(args)\n"
        "  math.randomseed(os.time() * 1000 + (thread_no or 0) * 7919)\n"
        "end\n"
        "local digits = {}\n"
        "request = function()\n"
        "  local total, factor = 0, 2\n"
        "  for p = body_length, 1, -1 do\n"
        "    local index = math.random(0, 61)\n"
        "    digits[p] = alphabet:sub(index + 1, index + 1)\n"
        "    local addend = factor * index\n"
        "    total = total + math.floor(addend / 62) + addend % 62\n"
        "    factor = 3 - factor\n"
        "  end\n"
        "  local check = (62 - total % 62) % 62\n"
        "  local code = table.concat(digits, '', 1, body_length)\n"
        "    .. alphabet:sub(check + 1, check + 1)\n"
        "  return wrk.format('GET', '/' .. code)\n"
        "end\n"
    )
    return path
