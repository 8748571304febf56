"""ScriptedPipeline: queued writes run in Redis as one Lua call, with the same effect as a pipeline."""

from __future__ import annotations

import pytest
from redis import Redis
from redis.exceptions import DataError, ResponseError

from common import scripted
from common.scripted import ScriptedPipeline


def _write(pipe: object) -> None:
    pipe.hset("h", mapping={"a": 1, "b": 2.5, "c": "x y", "d": b"\x00\xff"})  # type: ignore[attr-defined]
    pipe.expire("h", 100)  # type: ignore[attr-defined]
    pipe.zadd("z", {"m1": 1.5, "m2": 3}, xx=False)  # type: ignore[attr-defined]
    pipe.rpush("l", "1", "2", "3")  # type: ignore[attr-defined]
    pipe.lrem("l", 1, "2")  # type: ignore[attr-defined]
    pipe.xadd("s", {"k": "v"}, maxlen=10)  # type: ignore[attr-defined]
    pipe.sadd("set", "a", "b")  # type: ignore[attr-defined]
    pipe.srem("set", "a")  # type: ignore[attr-defined]
    pipe.hincrby("h", "n", 3)  # type: ignore[attr-defined]


def _state(redis: Redis) -> dict[str, object]:
    return {"h": redis.hgetall("h"), "ttl": redis.ttl("h") > 0, "z": redis.zrange("z", 0, -1, withscores=True),
            "l": redis.lrange("l", 0, -1), "s": [fields for _, fields in redis.xrange("s")],
            "set": redis.smembers("set")}


def _pipeline_effect(redis: Redis) -> dict[str, object]:
    """What ``_write`` leaves through a plain redis-py pipeline; the database is emptied after."""
    with redis.pipeline() as pipe:
        _write(pipe)
        pipe.execute()
    expected = _state(redis)
    redis.flushdb()
    return expected


def test_same_effect_as_a_redis_pipeline(redis: Redis) -> None:
    expected = _pipeline_effect(redis)
    with ScriptedPipeline(redis) as pipe:
        _write(pipe)
        assert pipe.execute() == 9  # commands run
    assert _state(redis) == expected
    assert expected["h"] == {b"a": b"1", b"b": b"2.5", b"c": b"x y", b"d": b"\x00\xff", b"n": b"3"}


def test_large_batches_run_as_several_calls_in_one_transaction(redis: Redis,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scripted, "CHUNK_COMMANDS", 7)
    with ScriptedPipeline(redis) as pipe:
        for i in range(50):
            pipe.rpush("order", i)
        assert pipe.execute() == 50
    assert [int(x) for x in redis.lrange("order", 0, -1)] == list(range(50))


def test_nothing_queued_sends_nothing(redis: Redis) -> None:
    with ScriptedPipeline(redis) as pipe:
        assert pipe.execute() == 0


def test_a_rejected_command_raises(redis: Redis) -> None:
    redis.set("str", "x")
    with ScriptedPipeline(redis) as pipe:
        pipe.set("before", 1)
        pipe.hset("str", "f", "v")  # a string is not a hash
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            pipe.execute()
    assert redis.get("before") == b"1"  # as with MULTI/EXEC, what ran before stays


def test_a_command_too_long_for_lua_goes_as_itself_in_order(redis: Redis,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scripted, "MAX_SCRIPTED_ARGS", 10)
    with ScriptedPipeline(redis) as pipe:
        pipe.rpush("l", "first")
        pipe.rpush("l", *[str(i) for i in range(20)])  # 22 arguments: not scripted
        pipe.rpush("l", "last")
        assert pipe.execute() == 3
    assert redis.lrange("l", 0, -1) == [b"first", *[str(i).encode() for i in range(20)], b"last"]


def test_the_real_limit_of_lua_is_respected(redis: Redis) -> None:
    ids = [f"job-{i}" for i in range(20000)]  # one RPUSH with 20,002 arguments
    with ScriptedPipeline(redis) as pipe:
        pipe.rpush("ids", *ids)
        pipe.expire("ids", 60)
        pipe.execute()
    assert redis.llen("ids") == 20000 and redis.ttl("ids") > 0


def test_arguments_reach_redis_as_redis_py_sends_them(redis: Redis) -> None:
    from rq.job import JobStatus

    values = {"stamp": 1764563000.1234567, "tiny": 1e-300, "big": 2**63 - 1, "huge": 10**30,
              "negative": -7, "status": JobStatus.STARTED, "text": "é ünïcode", "raw": bytes(range(256)),
              "view": memoryview(b"mv"), "array": bytearray(b"ba")}
    with redis.pipeline() as pipe:
        pipe.hset("expected", mapping=values)
        pipe.zadd("zexpected", {"m": 1764563000.1234567})
        pipe.execute()
    with ScriptedPipeline(redis) as pipe:
        pipe.hset("got", mapping=values)
        pipe.zadd("zgot", {"m": 1764563000.1234567})
        pipe.execute()
    assert redis.hgetall("got") == redis.hgetall("expected")
    assert redis.hget("got", "status") == b"started" and redis.hget("got", "huge") == b"1" + b"0" * 30
    assert redis.zscore("zgot", "m") == redis.zscore("zexpected", "m") == 1764563000.1234567


def test_arguments_redis_py_refuses_are_refused(redis: Redis) -> None:
    with ScriptedPipeline(redis) as pipe:
        pipe.set("flag", True)  # type: ignore[arg-type]
        with pytest.raises(DataError):
            pipe.execute()
    assert redis.get("flag") is None


def test_execute_after_runs_a_script_first_then_the_queued_commands(redis: Redis) -> None:
    script = redis.register_script("redis.call('RPUSH', 'order', ARGV[1]) return 1")
    with ScriptedPipeline(redis) as pipe:
        assert pipe.execute_after(script, b"script") == 0  # nothing queued: the script alone
        pipe.rpush("order", "queued")
        pipe.expire("order", 60)
        assert pipe.execute_after(script, b"again") == 2
    assert redis.lrange("order", 0, -1) == [b"script", b"again", b"queued"] and redis.ttl("order") > 0


def test_execute_after_raises_what_redis_rejects_keeping_what_ran_before(redis: Redis) -> None:
    redis.set("str", "x")
    script = redis.register_script("redis.call('SET', 'by-script', ARGV[1]) return 1")
    with ScriptedPipeline(redis) as pipe:
        pipe.hset("str", "f", "v")  # rejected inside the transaction
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            pipe.execute_after(script, b"1")
    assert redis.get("by-script") == b"1"  # as with MULTI/EXEC: what ran before the error stays


def test_take_packed_hands_the_queued_commands_to_a_script_of_the_callers(redis: Redis) -> None:
    expected = _pipeline_effect(redis)
    with ScriptedPipeline(redis) as pipe:
        _write(pipe)
        payload = pipe.take_packed()
        assert not pipe.command_stack and redis.dbsize() == 0  # taken, not sent
        assert pipe.execute() == 0
    # The payload is what RUN_COMMANDS_LUA runs: a script that runs it has the pipeline's effect.
    assert redis.register_script(scripted.RUN_COMMANDS_LUA)(args=[payload]) == 9
    assert _state(redis) == expected


def test_take_packed_refuses_what_does_not_fit_in_one_payload(redis: Redis) -> None:
    with ScriptedPipeline(redis) as pipe:
        with pytest.raises(DataError, match="0 command"):
            pipe.take_packed()
        pipe.rpush("long", *range(scripted.MAX_SCRIPTED_ARGS))
        with pytest.raises(DataError, match="1 command"):
            pipe.take_packed()
