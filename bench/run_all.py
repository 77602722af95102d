"""`make bench`: every benchmark of the performance targets, one table at the end.

Runs each script in bench/ that measures a target (each starts what it needs in the production
configuration on loopback and stops it again), collects the rows each writes with `--json`, and
prints them as one table: target, measured, goal, met. Exits non-zero when a script fails (a
target not met is reported, not a failure: the table says it plainly).

    .venv/bin/python bench/run_all.py [--quick] [--only serve,ingest,bulk,stats]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable

# name: (script, arguments, arguments with --quick)
BENCHES = {
    "serve": ("serve_bench.py", [], ["--seconds", "4", "--rounds", "2", "--cold-links", "20000"]),
    "ingest": ("ingest_bench.py", [], ["--visits", "30000"]),
    "bulk": ("bulk_bench.py", [], ["--rounds", "2", "--single", "100"]),
    "stats": ("stats_bench.py", [], ["--large", "200000", "--reps", "5"]),
}


def machine() -> str:
    cores = os.cpu_count()
    try:
        meminfo = Path("/proc/meminfo").read_text().split()
        memory = f"{int(meminfo[meminfo.index('MemTotal:') + 1]) / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        memory = "unknown memory"
    return f"{platform.machine()}, {cores} cores, {memory}, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs (a smoke check)")
    parser.add_argument("--only", default=",".join(BENCHES), help="comma-separated subset")
    parser.add_argument("--json", help="write every row here too")
    args = parser.parse_args()

    rows: list[dict] = []
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="shorturl-bench-") as scratch:
        for name in [n for n in args.only.split(",") if n]:
            script, normal, quick = BENCHES[name]
            out = Path(scratch) / f"{name}.json"
            argv = [PYTHON, str(HERE / script), *(quick if args.quick else normal)]
            argv += ["--json", str(out)]
            print(f"\n==== {name}: {' '.join(argv[1:])}", flush=True)
            started = time.monotonic()
            result = subprocess.run(argv, cwd=HERE.parent, check=False)
            took = time.monotonic() - started
            if out.exists():
                data = json.loads(out.read_text())
                found = data["rows"] if isinstance(data, dict) else data
                rows += [{"bench": name, **row} for row in found]
            if result.returncode != 0:
                failed.append(f"{name} (exit {result.returncode})")
            print(f"==== {name} done in {took:.0f} s", flush=True)

    print(f"\nshorturl benchmarks, {time.strftime('%Y-%m-%d %H:%M')}, {machine()}\n")
    widths = [max(len(str(row[key])) for row in rows) if rows else 6 for key in ("target",)]
    print(f"| {'target':<{widths[0]}} | measured | goal | met |")
    print(f"|{'-' * (widths[0] + 2)}|---|---|---|")
    for row in rows:
        met = {True: "yes", False: "**no**", None: "-"}[row.get("met")]
        print(f"| {row['target']:<{widths[0]}} | {row['measured']} | {row['goal']} | {met} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    if failed:
        sys.exit(f"benchmarks that failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
