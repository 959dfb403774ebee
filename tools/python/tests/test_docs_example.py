"""The complete example of docs/python.md runs and passes as written."""
import os
import re
import subprocess
import sys

import pagecheck

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "python.md")


def example():
    with open(DOC) as f:
        text = f.read()
    section = text[text.index("## A complete example"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_docs_example_passes(tmp_path):
    code = example()
    assert "pagecheck.compare_attention" in code
    (tmp_path / "test_my_paged_attention.py").write_text(code)
    # The child imports the same build of pagecheck as this test.
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(pagecheck.__file__)))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"\b7 passed\b", run.stdout), run.stdout
