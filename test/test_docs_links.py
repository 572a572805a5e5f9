"""The README and docs/ hold together: every relative link lands on a file and a heading.

The README is a landing page and the reference lives in docs/*.md, so a moved section or a
renamed heading breaks a link silently unless something reads them all. Links inside code
(fenced blocks, `inline code`) are text, not links, and are skipped; web addresses are not
fetched. Anchors follow GitHub's heading slugs (lower case, punctuation dropped, spaces to
hyphens, ``-1``, ``-2`` ... for repeats).
"""

from pathlib import Path
import re
import shlex
import unicodedata

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / 'README.md'
PAGES = sorted((ROOT / 'docs').glob('*.md'))
LANDING_MAX_LINES = 250

# [text](target) and ![alt](target); a target may carry a "title" after a space.
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
FENCE = re.compile(r'^\s*(```|~~~)')
INLINE_CODE = re.compile(r'(`+)(?:(?!\1).)+?\1')


def prose_lines(text: str) -> list[tuple[int, str]]:
    """Return (line number, line) outside fenced code blocks, inline code blanked out."""
    lines, fenced = [], False
    for number, line in enumerate(text.split('\n'), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, INLINE_CODE.sub(lambda m: ' ' * len(m.group(0)), line)))
    return lines


def slug(heading: str) -> str:
    """Return GitHub's anchor for a heading's text (markdown links reduced to their text).

    >>> slug('On a robot (ROS 2 Humble or Jazzy installed)')
    'on-a-robot-ros-2-humble-or-jazzy-installed'
    >>> slug('End to end: target in, serial frame out')
    'end-to-end-target-in-serial-frame-out'
    >>> slug('`fabrik_ik` and `servo_driver`')
    'fabrik_ik-and-servo_driver'
    """
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading).strip().lower()
    kept = ''.join(c for c in text if c in ' -_' or unicodedata.category(c)[0] in 'LNM')
    return kept.replace(' ', '-')


def anchors(path: Path) -> set[str]:
    """Return every heading anchor of a markdown file, repeats numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(path.read_text(encoding='utf-8')):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f'{base}-{count}')
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """Return (line number, target) of every link and image in the file's prose."""
    return [(number, match.group(1))
            for number, line in prose_lines(path.read_text(encoding='utf-8'))
            for match in LINK.finditer(line)]


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """Return one line per relative link of ``path`` that misses its file or its heading."""
    def shown(p: Path) -> str:
        return str(p.relative_to(root)) if p.is_relative_to(root) else str(p)

    broken = []
    for number, target in links(path):
        if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.IGNORECASE):
            continue  # http:, https:, mailto: ...: not ours to check
        file_part, _, anchor = target.partition('#')
        dest = (path.parent / file_part).resolve() if file_part else path
        where = f'{shown(path)}:{number}: ({target})'
        if not dest.exists():
            broken.append(f'{where} no such file {shown(dest)}')
        elif anchor and dest.suffix == '.md' and anchor not in anchors(dest):
            broken.append(f'{where} no heading #{anchor} in {shown(dest)}')
        elif anchor and dest.suffix != '.md':
            broken.append(f'{where} an anchor into a file that is not markdown')
    return broken


@pytest.mark.parametrize('path', [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_lands_on_a_file_and_heading(path: Path):
    assert not broken_links(path), '\n'.join(broken_links(path))


def test_a_broken_link_and_a_missing_heading_are_found(tmp_path: Path):
    (tmp_path / 'docs').mkdir()
    (tmp_path / 'docs' / 'b.md').write_text('# Title\n\n## Two words\n', encoding='utf-8')
    page = tmp_path / 'a.md'
    page.write_text('[ok](docs/b.md#two-words) [gone](docs/c.md) [bad](docs/b.md#three)\n'
                    '`[code](nowhere.md)` [self](#a-heading)\n\n```\n[fenced](x.md)\n```\n'
                    '## A heading\n', encoding='utf-8')
    found = broken_links(page, root=tmp_path)
    assert len(found) == 2, found
    assert 'no such file docs/c.md' in found[0]
    assert 'no heading #three in docs/b.md' in found[1]


def test_the_readme_is_a_landing_page_linking_every_docs_page():
    text = README.read_text(encoding='utf-8')
    assert len(text.split('\n')) <= LANDING_MAX_LINES, (
        f'README.md has {len(text.splitlines())} lines, more than {LANDING_MAX_LINES}: '
        'move the reference into a docs/ page and link it')
    linked = {(ROOT / target.partition('#')[0]).resolve() for _, target in links(README)}
    orphans = [p.name for p in PAGES if p.resolve() not in linked]
    assert not orphans, f'docs pages the README does not link: {orphans}'


def test_the_readme_gives_the_test_command_ci_runs():
    """.ci/run runs "the test command the README gives": both must name the same command."""
    commands = [line.strip() for line in (ROOT / '.ci' / 'run').read_text().splitlines()
                if line.strip().startswith('make ')]
    assert commands, '.ci/run calls no make target'
    ci_command = shlex.split(commands[-1])[:2]
    readme_commands = [shlex.split(line.split('#')[0])[:2]
                       for line in README.read_text(encoding='utf-8').splitlines()
                       if line.startswith('make ')]
    assert ci_command in readme_commands, (
        f'.ci/run runs {" ".join(ci_command)!r}, which no command line of README.md gives')
