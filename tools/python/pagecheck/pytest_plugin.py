"""The pagecheck pytest plugin: ``--pagecheck-cases N`` and ``--pagecheck-seed S`` and the
``pagecheck`` fixture. Loaded automatically when pagecheck is pip-installed (entry point
``pytest11``), else with ``pytest -p pagecheck.pytest_plugin`` or
``pytest_plugins = ["pagecheck.pytest_plugin"]`` in the top-level conftest.py."""
import pytest

from .cases import cases as _cases
from .verification import verify as _verify

#: Cases per verify() call and run seed without the options.
DEFAULT_CASES = 100
DEFAULT_SEED = 1


def pytest_addoption(parser):
    group = parser.getgroup("pagecheck", "pagecheck verification of kernels")
    group.addoption("--pagecheck-cases", type=int, default=None, metavar="N",
                    help=f"cases per pagecheck verification (default {DEFAULT_CASES})")
    group.addoption("--pagecheck-seed", type=int, default=None, metavar="S",
                    help=f"run seed of pagecheck verifications (default {DEFAULT_SEED})")


class Pagecheck:
    """What the ``pagecheck`` fixture gives a test: ``cases`` and ``seed`` (from the
    options), ``verify(fn, family, caps, **keywords)`` and ``generate(family, caps)`` (the
    cases of that run) with them filled in. The options win over a test's own ``cases`` /
    ``seed`` keywords, so one command line scales every test."""

    def __init__(self, config):
        self._cases_option = config.getoption("--pagecheck-cases")
        self._seed_option = config.getoption("--pagecheck-seed")
        for name, value in (("--pagecheck-cases", self._cases_option),
                            ("--pagecheck-seed", self._seed_option)):
            if value is not None and value < (1 if name.endswith("cases") else 0):
                raise pytest.UsageError(f"{name}: {value} is out of range")
        self.cases = self._cases_option or DEFAULT_CASES
        self.seed = DEFAULT_SEED if self._seed_option is None else self._seed_option

    def _pick(self, keywords):
        if self._cases_option is not None or "cases" not in keywords:
            keywords["cases"] = self.cases
        if self._seed_option is not None or "seed" not in keywords:
            keywords["seed"] = self.seed
        return keywords

    def verify(self, fn, family, caps, **keywords):
        """:func:`pagecheck.verify` with this run's cases and seed."""
        __tracebackhide__ = True
        return _verify(fn, family, caps, **self._pick(keywords))

    def generate(self, family, caps, **keywords):
        """:func:`pagecheck.cases` of this run (``n`` = its cases)."""
        k = self._pick(keywords)
        return _cases(family, caps, seed=k["seed"], n=k["cases"])


@pytest.fixture
def pagecheck(request):
    """A :class:`Pagecheck` for this run's ``--pagecheck-cases`` / ``--pagecheck-seed``."""
    return Pagecheck(request.config)


def pytest_report_header(config):
    cases = config.getoption("--pagecheck-cases") or DEFAULT_CASES
    seed = config.getoption("--pagecheck-seed")
    return f"pagecheck: {cases} cases per verify, seed {DEFAULT_SEED if seed is None else seed}"
