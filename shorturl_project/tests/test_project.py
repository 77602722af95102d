"""The project as an operator meets it: settings from the environment, /healthz, compose file."""

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from shorturl_project.jobs import PERIODIC_JOBS
from shorturl_project.tests.clean_env import python

ROOT = Path(settings.BASE_DIR)


def _settings_in_subprocess(env: dict[str, str], expression: str) -> subprocess.CompletedProcess:
    code = (
        f"import django; django.setup(); from django.conf import settings as s; print({expression})"
    )
    return python(code, env)


def test_production_mode_without_secret_key_refuses_to_start():
    result = _settings_in_subprocess({"DEBUG": "0"}, "s.DEBUG")
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_production_mode_with_secret_key_starts_without_debug():
    result = _settings_in_subprocess({"DEBUG": "0", "SECRET_KEY": "x" * 50}, "s.DEBUG")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_production_pages_render_even_before_static_files_are_collected(tmp_path):
    """DEBUG=0 and no collectstatic: pages (and the 404 page visitors see) still render."""
    code = (
        "import django; django.setup();"
        "from django.core.management import call_command; call_command('migrate', verbosity=0);"
        "from django.test import Client; c = Client();"
        "print(c.get('/accounts/login/').status_code, c.get('/no-such-link').status_code,"
        " 'css/site.css' in c.get('/accounts/login/').content.decode(),"
        " c.get('/static/css/site.css').status_code)"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"}
    }
    env.update(
        DEBUG="0",
        SECRET_KEY="x" * 50,
        SHOW_DEV_WARNING="0",
        DJANGO_SETTINGS_MODULE="shorturl_project.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        STATIC_ROOT=str(tmp_path / "never-collected"),
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["200", "404", "True", "200"], result.stderr[-2000:]


def test_no_environment_means_the_embedded_development_mode():
    expression = (
        "[s.DEBUG, s.DATABASES['default']['ENGINE'], s.CACHES['default']['BACKEND'], "
        "s.CELERY_TASK_ALWAYS_EAGER]"
    )
    result = _settings_in_subprocess({}, expression)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(
        [True, "django.db.backends.sqlite3", "django.core.cache.backends.locmem.LocMemCache", True]
    )


def _make_run_steps(port: int) -> list[tuple[list[str], dict[str, str]]]:
    """The commands of the Makefile's `run` recipe, with its variables filled in: each one's
    argv and the variables it sets before it (`HOST=… PORT=… manage.py …`)."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    first = lines.index("run: install") + 1
    steps = []
    for line in lines[first:]:
        if not line.startswith("\t"):
            break
        words = shlex.split(
            line.replace("$(MANAGE)", f"{sys.executable} manage.py")
            .replace("$(HOST)", "127.0.0.1")
            .replace("$(PORT)", str(port))
        )
        assignments = {}
        while "=" in words[0]:
            name, _, value = words.pop(0).partition("=")
            assignments[name] = value
        steps.append((words, assignments))
    return steps


def test_make_run_prints_the_development_banner_once(tmp_path):
    """`make run` migrates, makes the demo users and starts runserver, whose autoreloader runs
    the server in a second process: the banner was printed by all four. It is printed by the
    process that serves, once (issue #27)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "SHOW_DEV_WARNING", "REDIS_URL", "CELERY_BROKER_URL", "RUN_MAIN"}
    }
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    *setup, serve = _make_run_steps(port)
    assert len(setup) == 2 and "runserver" in serve[0], setup
    stderr = ""
    for argv, assignments in setup:
        done = subprocess.run(
            argv,
            env={**env, **assignments},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        stderr += done.stderr
    log = tmp_path / "runserver.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            serve[0],
            env={**env, **serve[1]},
            cwd=ROOT,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while "Quit the server with" not in log.read_text():
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as answer:
            assert answer.status == 200
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)
    stderr += log.read_text()
    assert stderr.count("DEVELOPMENT MODE") == 1, stderr


def test_services_mode_reads_mysql_and_redis_urls():
    expression = (
        "[s.DATABASES['default']['ENGINE'], s.DATABASES['default']['OPTIONS']['charset'], "
        "'STRICT_TRANS_TABLES' in s.DATABASES['default']['OPTIONS']['init_command'], "
        "s.CACHES['default']['BACKEND'], s.CELERY_BROKER_URL, s.CELERY_TASK_ALWAYS_EAGER, "
        # What `make beat` schedules: the Celery app's own schedule, as beat reads it.
        "sorted(__import__('shorturl_project.celery').celery.app.conf.beat_schedule)]"
    )
    result = _settings_in_subprocess(
        {
            "DATABASE_URL": "mysql://root@127.0.0.1:3306/shorturl",
            "REDIS_URL": "redis://127.0.0.1:6379/0",
        },
        expression,
    )
    assert result.returncode == 0, result.stderr
    engine, charset, strict, cache, broker, eager, beat = eval(result.stdout)  # noqa: S307 - our own output
    assert (engine, charset, strict) == ("django.db.backends.mysql", "utf8mb4", True)
    assert cache == "django_redis.cache.RedisCache"
    assert broker == "redis://127.0.0.1:6379/0"
    assert eager is False
    assert beat == sorted(job.name for job in PERIODIC_JOBS)
    assert {"flush-visits", "aggregate-hourly"} <= set(beat)


def test_redis_sentinels_set_the_cache_and_the_broker_from_one_rule():
    expression = (
        "[s.REDIS_URL, s.CACHES['default']['OPTIONS'], s.CELERY_BROKER_URL, "
        "s.CELERY_BROKER_TRANSPORT_OPTIONS, s.CELERY_TASK_ALWAYS_EAGER]"
    )
    result = _settings_in_subprocess(
        {
            "REDIS_SENTINELS": "10.0.0.1:26379, 10.0.0.2:26380",
            "REDIS_SENTINEL_MASTER": "shop",
            "REDIS_SENTINEL_PASSWORD": "s-pass",
            "REDIS_URL": "redis://:p%40ss@ignored-host:6379/3",
        },
        expression,
    )
    assert result.returncode == 0, result.stderr
    location, options, broker, transport, eager = eval(result.stdout)  # noqa: S307 - our own output
    assert location == "redis://:p%40ss@shop/3"  # the master's name, REDIS_URL's password and db
    assert options["CONNECTION_FACTORY"] == "django_redis.pool.SentinelConnectionFactory"
    assert options["SENTINELS"] == [("10.0.0.1", 26379), ("10.0.0.2", 26380)]
    assert options["SENTINEL_KWARGS"]["password"] == "s-pass"
    assert (options["IGNORE_EXCEPTIONS"], options["SOCKET_TIMEOUT"]) == (True, 1)
    assert broker == "sentinel://:p%40ss@10.0.0.1:26379/3;sentinel://:p%40ss@10.0.0.2:26380/3"
    assert transport["master_name"] == "shop"
    assert eager is False


@pytest.mark.parametrize(
    ("environment", "said"),
    [
        ({"REDIS_SENTINELS": "10.0.0.1:26379", "REDIS_CLUSTER": "1"}, "REDIS_CLUSTER are both"),
        ({"REDIS_SENTINELS": "10.0.0.1:26379,10.0.0.2:x"}, "not host:port: 10.0.0.2:x"),
    ],
)
def test_unusable_redis_sentinels_are_refused_at_start_up(environment, said):
    result = python("", environment, "manage.py", "check")
    assert result.returncode != 0
    assert "core.E001" in result.stderr and said in result.stderr, result.stderr


def test_redis_sentinels_naming_no_sentinel_stop_every_process():
    result = _settings_in_subprocess({"REDIS_SENTINELS": "redis-a:port"}, "s.CACHES")
    assert result.returncode != 0
    assert "not host:port: redis-a:port" in result.stderr


def test_celery_speaks_json_only_and_has_time_limits():
    from shorturl_project.celery import app

    assert app.conf.accept_content == ["json"]
    assert app.conf.task_serializer == "json"
    assert app.conf.task_time_limit and app.conf.task_soft_time_limit
    app.loader.import_default_modules()  # what a worker does at start
    assert "analytics.tasks.flush_visits_task" in app.tasks
    assert "links.tasks.refill_code_pool_task" in app.tasks


@pytest.mark.django_db
def test_healthz_reports_every_dependency(client):
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200, body
    assert (body["db"], body["cache"], body["broker"]) == ("ok", "ok", "ok")


@pytest.mark.django_db
def test_healthz_is_503_when_the_cache_is_down(client, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.5, "IGNORE_EXCEPTIONS": True},
        }
    }
    response = client.get("/healthz")  # overriding CACHES resets Django's cache handlers
    assert response.status_code == 503
    assert response.json()["cache"] == "down"
    assert response.json()["db"] == "ok"


def test_compose_file_has_every_service_it_needs():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"mysql", "redis", "web", "worker", "webhook-worker", "beat"} <= set(services)
    assert services["mysql"]["image"].startswith("mysql:8")
    assert services["redis"]["image"].startswith("redis:7")
    assert "8000" in services["web"]["ports"][0]
    for name in ("web", "worker", "webhook-worker", "beat"):
        service = services[name]
        assert service["image"] == "shorturl:latest" and service["build"] == "."
        env = service["environment"]
        assert env["DATABASE_URL"].startswith("mysql://")
        assert env["REDIS_URL"].startswith("redis://")
        assert env["DEBUG"] == "0" and "SECRET_KEY" in env
        assert "healthcheck" in service
        assert service["depends_on"]["mysql"]["condition"] == "service_healthy"
    assert "scripts/serve" in services["web"]["command"], "the same start as make serve"
    assert "worker" in services["worker"]["command"]
    # Webhook deliveries have a worker of their own: a slow receiver never holds visits.
    assert "--queues=celery" in services["worker"]["command"]
    assert "--queues=webhooks" in services["webhook-worker"]["command"]
    assert "beat" in services["beat"]["command"]
    for name in ("mysql", "redis"):
        assert "healthcheck" in services[name] and services[name]["volumes"]
    assert (ROOT / "Dockerfile").read_text().count("FROM python:3.11") == 1


def test_readme_gives_the_commands():
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme and "make serve" in readme


def test_every_production_start_uses_the_serve_script():
    """make serve, the Dockerfile and compose start the product one way."""
    makefile = (ROOT / "Makefile").read_text()
    assert "scripts/serve" in makefile.split("\nserve:")[1].split("\n\n")[0]
    assert "scripts/serve" in (ROOT / "Dockerfile").read_text().split("CMD")[-1]


def test_ensure_demo_users_only_when_nobody_exists(db, django_user_model):
    from django.core.management import call_command

    call_command("ensure_demo_users")
    assert set(django_user_model.objects.values_list("username", flat=True)) == {"demo", "admin"}
    from workspaces.selectors import workspace_get

    demo = django_user_model.objects.get(username="demo")
    assert workspace_get(user=demo, slug="demo-team").role == "owner"
    admin = django_user_model.objects.get(username="admin")
    assert workspace_get(user=admin, slug="demo-team").role == "editor"
    demo.delete()
    call_command("ensure_demo_users")
    assert not django_user_model.objects.filter(username="demo").exists()


def test_healthz_json_is_plain_json(db, client):
    assert json.loads(client.get("/healthz").content)


@pytest.mark.django_db
def test_unknown_api_paths_answer_json(client):
    response = client.get("/api/v2/links/")
    assert response.status_code == 404
    assert response.json()["detail"]


def test_every_folder_with_tests_is_in_the_suite():
    """`make test` runs pytest's testpaths: a folder of tests left out of them never runs (the
    workspaces tests were, for an afternoon). e2e/ runs on its own (`make e2e`)."""
    testpaths = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"][
            "testpaths"
        ]
    )
    folders = {
        path.relative_to(ROOT).parts[0]
        for path in ROOT.glob("*/**/test_*.py")
        if not path.relative_to(ROOT).parts[0].startswith(".")
        and "node_modules" not in path.parts
        and "site-packages" not in path.parts
    } - {"e2e"}
    assert folders <= testpaths, f"not in pyproject's testpaths: {sorted(folders - testpaths)}"
