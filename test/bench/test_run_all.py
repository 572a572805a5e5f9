"""Smoke test: the whole benchmark suite runs with a tiny budget and writes what it promises."""

import json
from pathlib import Path
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted(p.stem for p in (ROOT / 'config').glob('*.yaml'))


@pytest.fixture(scope='module')
def quick_run(tmp_path_factory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp('bench')
    subprocess.run([sys.executable, str(ROOT / 'bench' / 'run_all.py'), '--quick',
                    '--out', str(out / 'results.json'), '--plots', str(out / 'plots')],
                   check=True, cwd=ROOT, timeout=90, capture_output=True)
    return json.loads((out / 'results.json').read_text(encoding='utf-8')), out


@pytest.mark.ros
@pytest.mark.timeout(120)
def test_results_hold_the_solver_figures_of_every_shipped_config(quick_run):
    results, _ = quick_run
    assert sorted(results['solver']) == CONFIGS
    for figures in results['solver'].values():
        assert 0.0 <= figures['success_rate'] <= 1.0
        assert figures['median_us'] > 0.0
        assert figures['baseline_median_us'] > 0.0
        assert figures['batch_solves_per_s'] > 0.0


@pytest.mark.ros
@pytest.mark.timeout(120)
def test_results_hold_end_to_end_figures_per_rate(quick_run):
    results, _ = quick_run
    for layout in ('e2e', 'e2e_composed', 'e2e_ssc32', 'e2e_maestro'):
        assert set(results[layout]) == {'20', '50', '200', '500'}
        assert results['soak'][layout]['rss_growth_kib']
        for rate in ('20', '50', '200', '500'):
            figures = results[layout][rate]
            assert figures['sent'] > 0
            assert figures['coalesced'] >= 0
            assert 0.0 < figures['p50_ms'] <= figures['p99_ms'] <= figures['max_ms']


@pytest.mark.ros
@pytest.mark.timeout(120)
def test_results_hold_serial_figures_per_protocol_and_the_scaling_cells(quick_run):
    results, _ = quick_run
    assert set(results['serial']) == {'native', 'ssc32', 'maestro'}
    for figures in results['serial'].values():
        assert figures['bytes_per_command'] > 0
        assert 0.0 < figures['max_rate_hz'] <= 1.05 * figures['line_limit_hz']
    links = {row['links'] for row in results['solver_scaling']}
    assert links == {3, 5, 10, 20, 50}


@pytest.mark.ros
@pytest.mark.timeout(120)
def test_plots_are_png_files(quick_run):
    results, out = quick_run
    assert len(results['plots']) == 4
    for name in ('e2e_latency.png', 'e2e_rates.png', 'solver_scaling.png',
                 'solver_configs.png'):
        assert (out / 'plots' / name).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


@pytest.mark.ros
@pytest.mark.timeout(120)
def test_readme_tables_render_from_the_results(quick_run):
    _, out = quick_run
    done = subprocess.run([sys.executable, str(ROOT / 'bench' / 'readme_tables.py'),
                           str(out / 'results.json')], check=True, capture_output=True,
                          text=True, timeout=30)
    for config in CONFIGS:
        assert f'| {config} |' in done.stdout
    for run in ('two_process, native', 'composed, native', 'two_process, ssc32',
                'two_process, maestro'):
        assert f'| {run} | 500 |' in done.stdout


@pytest.mark.ros
@pytest.mark.timeout(120)
def test_publish_copies_a_full_run_over_the_tracked_results_and_refuses_a_quick_one(
        quick_run, tmp_path, monkeypatch):
    results, out = quick_run
    sys.path.insert(0, str(ROOT / 'bench'))
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
