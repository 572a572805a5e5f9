"""Smoke test: every benchmark runs once, prints its figures and writes what run_all promises.

``run_all.py --smoke`` runs each part in its smallest form, in seconds; nothing here times
anything (figures are checked for their shape, not their size). The run is started in a
session of its own and ended with the test however the test ends; its node processes end
with it even when it is killed (issue 34.3: they once ran on for an hour after a timeout).
"""

import json
import os
from pathlib import Path
import signal
import subprocess
import sys

import pytest

from test.bench.processes import run_tagged, tagged, wait_until_gone
from test.polling import poll

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / 'bench'
CONFIGS = sorted(p.stem for p in (ROOT / 'config').glob('*.yaml'))
sys.path.insert(0, str(BENCH))
import parent_watch  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]
# Long enough for a node's cleanup on a busy machine; only a leftover waits this long.
GONE_S = 20.0


def _run_all(out: Path, *args: str):
    return run_tagged([sys.executable, str(BENCH / 'run_all.py'), '--smoke',
                       '--out', str(out / 'results.json'), '--plots', str(out / 'plots'),
                       *args], cwd=ROOT, env=parent_watch.child_environment(),
                      stdout=(out / 'stdout.txt').open('w'), stderr=subprocess.STDOUT)


@pytest.fixture(scope='module')
def smoke_run(tmp_path_factory) -> tuple[dict, Path, str]:
    out = tmp_path_factory.mktemp('bench')
    with _run_all(out) as run:
        code = run.popen.wait()
        left = wait_until_gone(run.tag, GONE_S)
    printed = (out / 'stdout.txt').read_text(encoding='utf-8')
    assert code == 0, printed[-3000:]
    assert not left, f'run_all left these running: {left}'
    return json.loads((out / 'results.json').read_text(encoding='utf-8')), out, printed


def test_every_part_prints_its_figures(smoke_run):
    _, _, printed = smoke_run
    for heading in ('serial at 115200 baud', 'end to end, two_process, native',
                    'current/uncapped/50hz', 'target_point answered after a target_path',
                    'wrote '):
        assert heading in printed, heading


def test_results_hold_the_solver_figures_of_every_shipped_config(smoke_run):
    results, _, _ = smoke_run
    assert results['quick'] and results['smoke']
    assert sorted(results['solver']) == CONFIGS
    for figures in results['solver'].values():
        assert 0.0 <= figures['success_rate'] <= 1.0
        assert figures['median_us'] > 0.0
        assert figures['baseline_median_us'] > 0.0
        assert figures['batch_solves_per_s'] > 0.0


def test_results_hold_end_to_end_and_pin_figures(smoke_run):
    results, _, _ = smoke_run
    assert set(results['e2e']) == {'50'}
    assert results['soak']['e2e']['rss_growth_kib']
    figures = results['e2e']['50']
    assert figures['sent'] > 0 and figures['coalesced'] >= 0
    assert 0.0 < figures['p50_ms'] <= figures['p99_ms'] <= figures['max_ms']
    assert set(results['pin_latency']['runs']) == {'current/capped_50hz/50hz',
                                                  'current/uncapped/50hz'}


def test_results_hold_serial_figures_per_protocol_and_the_scaling_cells(smoke_run):
    results, _, _ = smoke_run
    assert set(results['serial']) == {'native', 'ssc32', 'maestro'}
    for figures in results['serial'].values():
        assert figures['bytes_per_command'] > 0
        assert 0.0 < figures['max_rate_hz'] <= 1.05 * figures['line_limit_hz']
    links = {row['links'] for row in results['solver_scaling']}
    assert links == {3, 5, 10, 20, 50}


def test_plots_are_png_files(smoke_run):
    results, out, _ = smoke_run
    assert len(results['plots']) == 4
    for name in ('e2e_latency.png', 'e2e_rates.png', 'solver_scaling.png',
                 'solver_configs.png'):
        assert (out / 'plots' / name).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_readme_tables_render_from_the_results(smoke_run):
    _, out, _ = smoke_run
    done = subprocess.run([sys.executable, str(BENCH / 'readme_tables.py'),
                           str(out / 'results.json')], check=True, capture_output=True,
                          text=True)
    for config in CONFIGS:
        assert f'| {config} |' in done.stdout
    assert '| two_process, native | 50 |' in done.stdout


def test_publish_copies_a_full_run_over_the_tracked_results_and_refuses_a_quick_one(
        smoke_run, tmp_path, monkeypatch):
    results, out, _ = smoke_run
    import run_all

    tracked = tmp_path / 'bench'
    monkeypatch.setattr(run_all, 'RESULTS', tracked / 'results.json')
    monkeypatch.setattr(run_all, 'PLOTS', tracked / 'plots')
    monkeypatch.setattr(run_all, 'ROOT', tmp_path)
    tracked.mkdir()
    with pytest.raises(SystemExit) as refused:
        run_all.publish(out / 'results.json')
    assert 'quick = True, only a full run is published' in str(refused.value)
    assert not (tracked / 'results.json').exists()
    full = tmp_path / 'full.json'
    full.write_text(json.dumps({**results, 'quick': False,
                                'plots': [str(out / 'plots' / Path(p).name)
                                          for p in results['plots']]}), encoding='utf-8')
    run_all.publish(full)
    published = json.loads((tracked / 'results.json').read_text(encoding='utf-8'))
    assert published['plots'] == [f'bench/plots/{Path(p).name}' for p in results['plots']]
    assert published['solver'] == results['solver']
    for plot in published['plots']:
        assert (tmp_path / plot).read_bytes() == (out / 'plots' / Path(plot).name).read_bytes()


def _nodes_up(tag: str) -> list:
    return [p for p in tagged(tag) if 'node_main.py' in p.command]


@pytest.mark.parametrize('how', ['SIGKILL', 'SIGTERM'])
def test_the_node_processes_end_when_the_benchmark_is_killed_or_stopped(tmp_path, how):
    """Killed outright, run_all cannot stop its nodes: they see it go and end themselves."""
    with _run_all(tmp_path) as run:
        assert poll(lambda: len(_nodes_up(run.tag)) == 2 or run.popen.poll() is not None,
                    timeout_s=120.0), 'the two node processes of the end-to-end run'
        assert run.popen.poll() is None, (tmp_path / 'stdout.txt').read_text()
        nodes = _nodes_up(run.tag)
        os.kill(run.popen.pid, getattr(signal, how))     # run_all only, not its group
        run.popen.wait()
        left = wait_until_gone(run.tag, GONE_S)
    assert len(nodes) == 2 and not left, f'left running: {left}'
