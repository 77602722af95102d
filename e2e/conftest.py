"""Fixtures of the e2e layer: the production install and the two deployments.

`deployment` is session-scoped and parametrised over the two modes. Run serially, pytest runs
every case against the embedded deployment, stops it, then runs them against the services
deployment. Under pytest-xdist (`make e2e` runs `-n 2 --dist loadgroup`) each mode's cases form
one group, so one worker runs the embedded deployment's cases while the other runs the services
deployment's: the cases mostly wait on the product, and the two modes share nothing but the
production venv (built once, under a lock) and MariaDB's server (a database each). The groups
are kept by this conftest's scheduler (OneWorkerPerMode), not by xdist's own: see its docstring.
"""

from __future__ import annotations

import contextlib
import re
import signal
from collections.abc import Iterator

import harness
import pytest
from xdist.scheduler import LoadScopeScheduling

from tests.oidc_provider.fixture import CLIENT_ID, CLIENT_SECRET, Provider, issuer_at

MODES = ("embedded", "services")


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    # A CI time limit or `kill` sends SIGTERM: turn it into an interrupt, so that pytest still
    # tears the deployments down instead of leaving servers, workers and redis-server behind.
    signal.signal(signal.SIGTERM, _interrupt)


# The mode a case's id names: test_x.py::test_y[services], also among other parameters.
MODE_IN_ID = re.compile(r"\[(?:[^\]]*-)?(" + "|".join(MODES) + r")(?:-[^\]]*)?\]$")


class OneWorkerPerMode(LoadScopeScheduling):
    """`--dist loadgroup` as this layer means it: every case of one mode on one worker, so each
    worker starts one deployment; any other case goes to whichever worker is free.

    xdist's own loadgroup no longer groups anything with pytest 9.2: its worker adds the group to
    `item._nodeid`, which pytest 9.2 no longer reads (`Node.nodeid` comes from `_id`), so every
    case went to either worker and each worker started both modes, four deployments where two
    were meant; two deployments of one mode also shared, and deleted, one log directory. The
    scheduler sees node ids only, so the mode is read from the id's parameters."""

    def _split_scope(self, nodeid: str) -> str:
        match = MODE_IN_ID.search(nodeid)
        return match.group(1) if match else nodeid


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") == "loadgroup":
        return OneWorkerPerMode(config, log)
    return None


@pytest.fixture(scope="session")
def production_venv():
    """`make install-prod VENV=.e2e/venv`, once; make's stamp reuses an up-to-date install."""
    try:
        return harness.build_production_venv()
    except harness.HarnessError as error:
        pytest.fail(f"the production install failed: {error}", pytrace=False)


@pytest.fixture(scope="session")
def own_deployment(production_venv):
    """Starts a deployment for as long as a `with` block lasts: `with own_deployment(mode,
    name=..., env=..., own_database=...) as dep` (harness.start_deployment's arguments), for a
    case that needs one of its own beside the session's; a failed start fails the case with the
    logs, and the deployment is stopped however the block ends."""

    @contextlib.contextmanager
    def started(mode: str, **kwargs) -> Iterator[harness.Deployment]:
        try:
            dep = harness.start_deployment(mode, **kwargs)
        except harness.HarnessError as error:
            pytest.fail(str(error), pytrace=False)
        try:
            yield dep
        finally:
            dep.stop()

    return started


@pytest.fixture(scope="session", params=MODES)
def deployment(request, own_deployment):
    """The product started with `make serve` (and, in services mode, `make worker`/`make beat`),
    healthy, with the demo users and an API token for `demo`; single sign-on through a provider
    on loopback (`SSO_ISSUER` in its env) that nothing starts until test_sso.py does."""
    issuer = issuer_at(harness.free_port(), "localhost")
    env = Provider(issuer, CLIENT_ID, CLIENT_SECRET).environment(
        SSO_NAME="Example ID",
        SSO_DEFAULT_WORKSPACE=harness.SSO_WORKSPACE[0],
        SSO_DEFAULT_ROLE="editor",
    )
    with own_deployment(request.param, env=env) as dep:
        yield dep


@pytest.fixture(autouse=True)
def _log_window(request):
    """Remember where each log ended when the test began, to show only this test's lines."""
    if "deployment" in request.fixturenames:
        dep = request.getfixturevalue("deployment")
        request.node.e2e_log_offsets = dep.log_offsets()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.failed or report.when != "call":
        return
    dep = getattr(item, "funcargs", {}).get("deployment")
    if isinstance(dep, harness.Deployment):
        offsets = getattr(item, "e2e_log_offsets", None)
        report.sections.append(
            (
                f"{dep.mode} deployment: logs written during this test "
                f"(whole logs in test-artifacts/e2e/{dep.mode}/)",
                dep.logs_since(offsets, max_lines=60),
            )
        )


def pytest_sessionfinish(session):
    # An xdist worker hands its figures to the controller, which prints them all.
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["e2e_figures"] = list(harness.FIGURES)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    harness.FIGURES.extend(getattr(node, "workeroutput", {}).get("e2e_figures", ()))


def pytest_terminal_summary(terminalreporter):
    if not harness.FIGURES:
        return
    terminalreporter.section("e2e figures")
    for line in harness.FIGURES:
        terminalreporter.write_line(line)
    harness.ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (harness.ARTIFACTS / "figures.txt").write_text("\n".join(harness.FIGURES) + "\n")
