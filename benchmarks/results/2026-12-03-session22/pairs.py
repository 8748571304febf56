"""Per pair of a parity file: both times, the ratio, the models' share ratio, the models' CPU,
prefixq's extra CPU (outside the engines + schedulers, % of two cores), prefixq's worst GC pause.

    PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py FILE...
"""
import json, sys, statistics
from benchmarks.report import outside_engines, models_share, MODEL, SCHEDULER
for f in sys.argv[1:]:
    rows = [json.loads(l) for l in open(f)]
    pairs = {}
    for r in rows:
        if 'pair' in r and 'seconds' in r: pairs.setdefault((r['set'], r['burst'], r['pair']), {})[r['system']] = r
    ratios, shares = [], []
    for k, p in sorted(pairs.items()):
        if len(p) < 2: print(k, 'incomplete', {s: r['seconds'] for s, r in p.items()}); continue
        b = p['standalone']; o = next(r for s, r in p.items() if s != 'standalone')
        ratio = o['requests_per_s'] / b['requests_per_s']; ratios.append(ratio)
        span = 2 * o['seconds']
        eo = (outside_engines(o) - outside_engines(b)) / span
        es = (o['engine_cpu_by_process'].get(SCHEDULER, 0) - b['engine_cpu_by_process'].get(SCHEDULER, 0)) / span
        sr = models_share(o) / models_share(b); shares.append(sr)
        print(k[1], k[2], 'first', o.get('first'), 'sec', b['seconds'], o['seconds'], 'ratio %.4f' % ratio, 'share %.4f' % sr,
              'model', b['engine_cpu_by_process'].get(MODEL), o['engine_cpu_by_process'].get(MODEL),
              'extra%% %.2f+%.2f' % (100 * eo, 100 * es), 'gc', o.get('gc_max_pause_ms'))
    if ratios:
        print(f, 'median ratio %.4f min %.4f below0.99 %d/%d; median share %.4f' % (
            statistics.median(ratios), min(ratios), sum(r < 0.99 for r in ratios), len(ratios), statistics.median(shares)))
