"""The pytest plugin: --pagecheck-cases / --pagecheck-seed reach the pagecheck fixture, and a
failing verification fails the test with the shrunk layout."""
import importlib.metadata
import os
import subprocess
import sys

import pagecheck


def plugin_options():
    """["-p", "pagecheck.pytest_plugin"], or nothing where pip installed pagecheck and its
    pytest11 entry point loads the plugin already."""
    installed = any(ep.value == "pagecheck.pytest_plugin"
                    for ep in importlib.metadata.entry_points(group="pytest11"))
    return [] if installed else ["-p", "pagecheck.pytest_plugin"]

TEST_FILE = '''
import numpy_kernels as nk

CAPS = {"dtypes": ["float16"], "head_sizes": [16], "block_sizes": [8]}


def kernel(query, key_cache, value_cache, block_table, context_lens, scale, dtype, **_):
    return nk.numpy_paged_attention(query, key_cache, value_cache, block_table, context_lens,
                                    scale, dtype, bug=BUG)


def test_kernel(pagecheck):
    print("cases", pagecheck.cases, "seed", pagecheck.seed)
    result = pagecheck.verify(kernel, "paged_attention", CAPS, cases=3)
    assert result.run == pagecheck.cases
    assert len(pagecheck.generate("paged_attention", CAPS)) == pagecheck.cases
'''


def run_pytest(tmp_path, bug, *options):
    (tmp_path / "test_kernel.py").write_text(TEST_FILE.replace("BUG", repr(bug)))
    here = os.path.dirname(os.path.abspath(__file__))
    package = os.path.dirname(os.path.dirname(pagecheck.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([package, here]))
    return subprocess.run([sys.executable, "-m", "pytest", "-s", "-p", "no:cacheprovider",
                           *plugin_options(), *options, str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True)


def test_options_reach_the_fixture(tmp_path):
    run = run_pytest(tmp_path, None, "--pagecheck-cases", "7", "--pagecheck-seed", "3")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "cases 7 seed 3" in run.stdout
    assert "pagecheck: 7 cases per verify, seed 3" in run.stdout


def test_defaults_and_a_failure(tmp_path):
    run = run_pytest(tmp_path, "wrong_kv_head")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "cases 100 seed 1" in run.stdout
    assert "VerificationFailure" in run.stdout and "shrunk layout" in run.stdout


def test_bad_option_is_a_usage_error(tmp_path):
    run = run_pytest(tmp_path, None, "--pagecheck-cases", "0")
    assert run.returncode != 0 and "--pagecheck-cases" in run.stdout + run.stderr
