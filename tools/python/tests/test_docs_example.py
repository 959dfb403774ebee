"""The complete examples of docs/python.md run and pass as written (the torch one where torch is
installed; everywhere it must at least be valid Python)."""
import os
import re
import subprocess
import sys

import pytest

import pagecheck
from test_pytest_plugin import plugin_options

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "python.md")


def example(heading):
    """The first python block after `heading`."""
    with open(DOC) as f:
        text = f.read()
    section = text[text.index(heading):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def run_pytest(tmp_path, name, code, *options):
    (tmp_path / name).write_text(code)
    # The child imports the same build of pagecheck as this test.
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(pagecheck.__file__)))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *options, str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True)


def test_docs_example_passes(tmp_path):
    code = example("## A complete example")
    assert "pagecheck.compare_attention" in code
    run = run_pytest(tmp_path, "test_my_paged_attention.py", code)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"\b7 passed\b", run.stdout), run.stdout


def test_torch_example_passes_where_torch_is_installed(tmp_path):
    code = example("## A complete pytest file for a torch op")
    compile(code, "test_torch_paged_attention.py", "exec")
    assert "pagecheck.verify(torch_paged_attention" in code
    pytest.importorskip("torch")
    run = run_pytest(tmp_path, "test_torch_paged_attention.py", code, *plugin_options(),
                     "--pagecheck-cases", "30")
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"\b1 passed\b", run.stdout), run.stdout
