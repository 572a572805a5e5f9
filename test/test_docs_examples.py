"""Every ```python block of the README and docs/*.md runs as written, from the repository root.

A renamed function leaves an example behind without anyone noticing (``to_pulses`` stayed
in docs/configuration.md after its rename); running them keeps them true. Only ``python``
blocks run: shell and ROS command lines need a robot or a ROS install and are checked by hand
(ROBOT_ROUTE.md).
"""

from pathlib import Path
import re

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r'^```python\n(.*?)^```', re.MULTILINE | re.DOTALL)


def examples() -> list[tuple[str, str]]:
    """Return (file:line, code) of every python block, README first."""
    found = []
    for path in [ROOT / 'README.md', *sorted((ROOT / 'docs').glob('*.md'))]:
        text = path.read_text(encoding='utf-8')
        for match in BLOCK.finditer(text):
            line = text.count('\n', 0, match.start()) + 1
            found.append((f'{path.relative_to(ROOT)}:{line}', match.group(1)))
    return found


def test_the_docs_hold_python_examples():
    assert examples(), 'no ```python block found: the example this test runs has moved'


@pytest.mark.parametrize('where, code', examples(), ids=[where for where, _ in examples()])
def test_a_python_example_runs_as_written(where, code, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(code, where, 'exec'), {'__name__': '__docs_example__'})
