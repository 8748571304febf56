"""Each worker's Prometheus metrics, scraped over HTTP while real jobs run."""

from __future__ import annotations

import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from common.config import Settings
from producer.client import Client
from producer.items import Item
from worker.metrics import StageClock



def test_stage_clock_counts_calls_and_jobs_per_stage() -> None:
    seen: list[tuple[str, float]] = []
    clock = StageClock(on_call=lambda stage, wall_s: seen.append((stage, wall_s)))
    assert clock.time("start", len, lambda ids: ids[:2], [1, 2, 3]) == [1, 2]
    clock.time("start", len, lambda ids: ids, [4])
    clock.time("finish", lambda _: 5, lambda: None)
    summary = clock.summary()
    assert (summary["start"]["calls"], summary["start"]["jobs"]) == (2, 3)
    assert (summary["finish"]["calls"], summary["finish"]["jobs"]) == (1, 5)
    assert summary["pull"] == {"calls": 0, "jobs": 0, "wall_ms": 0.0, "cpu_ms": 0.0,
                               "wall_ms_per_job": 0.0, "cpu_ms_per_job": 0.0}
    assert [stage for stage, _ in seen] == ["start", "start", "finish"]
    # The totals are the sum of what each call reported.
    assert summary["start"]["wall_ms"] == round(sum(w for s, w in seen if s == "start") * 1e3, 3)


def scrape(port: int) -> dict[str, float]:
    """Every sample of a worker's /metrics, keyed by name and labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()) if k != "shard")
            samples[f"{sample.name}{{{labels}}}"] = sample.value
    return samples


@pytest.mark.vllm
def test_metrics_move_when_jobs_run(workers: object, worker_url: str, metrics_ports: dict[str, int]) -> None:
    before = {shard: scrape(port) for shard, port in metrics_ports.items()}
    client = Client(Settings.from_env(redis_url=worker_url, max_tokens=4))
    items = [Item.prompt(f"Say {i}.", tag=str(i)) for i in range(4)] + \
        [Item.prompt("Hi", tag="bad", temperature=-1.0)]
    results = client.submit_many(items, policy="round-robin").wait(timeout=600)
    after = {shard: scrape(port) for shard, port in metrics_ports.items()}

    ok = sum(after[s]["prefixq_jobs_total{outcome=ok}"] - before[s].get("prefixq_jobs_total{outcome=ok}", 0)
             for s in metrics_ports)
    failed = sum(after[s]["prefixq_jobs_total{outcome=failed}"]
                 - before[s].get("prefixq_jobs_total{outcome=failed}", 0) for s in metrics_ports)
    assert ok == sum(r.is_ok for r in results) == 4 and failed == 1
    # Every prompt went to the engine as the producer's token ids: none was tokenized again.
    by_form = {form: sum(after[s].get(f"prefixq_prompts_total{{form={form}}}", 0)
                         - before[s].get(f"prefixq_prompts_total{{form={form}}}", 0) for s in metrics_ports)
               for form in ("token_ids", "text")}
    assert by_form == {"token_ids": 5, "text": 0}
    for shard in metrics_ports:
        grew = after[shard]["prefixq_prompt_tokens_total{}"] - before[shard].get("prefixq_prompt_tokens_total{}", 0)
        assert grew > 0  # round-robin gave both shards work
        assert after[shard]["prefixq_batch_size_count{}"] > before[shard].get("prefixq_batch_size_count{}", 0)
        assert after[shard]["prefixq_engine_seconds_count{}"] > before[shard].get("prefixq_engine_seconds_count{}", 0)
        assert after[shard]["prefixq_in_flight_requests{}"] == 0
        # vLLM reported what it runs after its steps (the lookahead admits by it); nothing waits now.
        steps = after[shard]["prefixq_engine_steps_total{}"] - before[shard].get("prefixq_engine_steps_total{}", 0)
        assert steps > 0 and after[shard]["prefixq_engine_waiting_requests{}"] == 0
        assert "prefixq_gc_pause_seconds_count{}" in after[shard]
        assert "prefixq_queue_wait_seconds_bucket{le=+Inf}" in after[shard]
        for stage in ("pull", "start", "finish"):  # one observation per batch of bookkeeping
            key = f"prefixq_stage_seconds_count{{stage={stage}}}"
            assert after[shard][key] > before[shard].get(key, 0), (shard, stage)
