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


def shell_json(script: str, env: dict, python: str = sys.executable):
    """Run `script` in `manage.py shell` against the settings in `env`; its last printed line,
    parsed as JSON."""
    out = subprocess.run(
        [python, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def create_links(count: int, env: dict, python: str = sys.executable) -> list[str]:
    """Shorten `count` URLs in the database `env` points at; returns their codes."""
    return shell_json(_CREATE.format(count=count), env, python)


def wrk_script(codes: list[str], path: Path) -> Path:
    """A wrk Lua script that requests /<code> for each code in turn."""
    path.write_text(
        "local codes = {" + ",".join(f'"{c}"' for c in codes) + "}\n"
        "local i = 0\n"
        "request = function()\n"
        "  i = i + 1\n"
        "  return wrk.format('GET', '/' .. codes[(i % #codes) + 1])\n"
        "end\n"
    )
    return path
