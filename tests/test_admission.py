"""The lookahead that decides how much work a worker hands its engine (worker/admission.py)."""

from __future__ import annotations

from worker.admission import Lookahead


def test_without_a_target_there_is_no_limit() -> None:
    lookahead = Lookahead(None)
    lookahead.admitted("a", 500)
    assert lookahead.wanted_tokens() is None


def test_before_the_engine_reports_every_admitted_job_counts_as_waiting() -> None:
    lookahead = Lookahead(1000)
    assert lookahead.wanted_tokens() == 1000
    lookahead.admitted("a", 300)
    lookahead.admitted("b", 400)
    assert lookahead.waiting_tokens() == 700 and lookahead.wanted_tokens() == 300


def test_the_newest_jobs_not_running_are_the_waiting_ones() -> None:
    lookahead = Lookahead(1000)
    for job_id, tokens in (("a", 100), ("b", 200), ("c", 300), ("d", 400)):
        lookahead.admitted(job_id, tokens)
    lookahead.stepped(2)  # the engine runs two (a and b: first come, first served); c and d wait
    assert lookahead.num_waiting() == 2 and lookahead.waiting_tokens() == 700
    lookahead.admitted("e", 50)  # after the report: waiting too, whether or not the engine has it yet
    assert lookahead.waiting_tokens() == 750 and lookahead.wanted_tokens() == 250
    lookahead.stepped(5)  # it began everything
    assert lookahead.waiting_tokens() == 0 and lookahead.wanted_tokens() == 1000


def test_jobs_that_left_the_engine_no_longer_count() -> None:
    lookahead = Lookahead(1000)
    lookahead.admitted("a", 600)
    lookahead.admitted("b", 600)
    lookahead.stepped(1)
    assert lookahead.waiting_tokens() == 600
    lookahead.left("a")  # a finished: b runs (the last report counted one running)
    lookahead.left("unknown")  # harmless
    assert lookahead.waiting_tokens() == 0 and lookahead.wanted_tokens() == 1000


def test_a_full_engine_wants_nothing() -> None:
    lookahead = Lookahead(1000)
    lookahead.admitted("a", 1500)
    assert lookahead.wanted_tokens() == -500


def test_jobs_for_tokens_follows_the_running_mean_of_tokens_per_job() -> None:
    lookahead = Lookahead(1000)
    assert lookahead.jobs_for(1000) == 4  # nothing seen yet: 256 tokens a job assumed
    lookahead.admitted("a", 100)
    assert lookahead.jobs_for(1000) == 10 and lookahead.jobs_for(1) == 1 and lookahead.jobs_for(0) == 1
    for i in range(50):
        lookahead.admitted(f"big{i}", 500)
    assert lookahead.jobs_for(1200) == 3  # about 500 a job now
