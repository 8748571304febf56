"""The wire codec: round trips, refusal of foreign bytes, bounded inflation."""

from __future__ import annotations

import pickle
import zlib

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from common.codec import MAGIC, WireCodec, inflate_bounded, serializer
from common.errors import DecodeError

wire_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False)
    | st.text() | st.binary(),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)


@given(wire_values)
def test_round_trip(value: object) -> None:
    assert serializer.loads(serializer.dumps(value)) == value


def test_format_is_header_then_zlib_level1_msgpack() -> None:
    obj = {"p": "hello " * 100, "i": 3}
    data = serializer.dumps(obj)
    assert data.startswith(MAGIC)
    body = data[len(MAGIC):]
    assert body[:2] == b"\x78\x01"  # zlib header of level 1 ("fastest")
    assert msgpack.unpackb(zlib.decompress(body)) == obj


def test_tuples_come_back_as_lists_like_rq_expects() -> None:
    func, instance, args, kwargs = serializer.loads(serializer.dumps(("f", None, ({"a": 1},), {})))
    assert (func, instance, args, kwargs) == ("f", None, [{"a": 1}], {})


def test_refuses_pickle() -> None:
    with pytest.raises(DecodeError, match="not prefixq wire data"):
        serializer.loads(pickle.dumps(("f", None, (), {})))


def test_refuses_plain_zlib_and_empty_input() -> None:
    with pytest.raises(DecodeError):
        serializer.loads(zlib.compress(msgpack.packb([1, 2])))
    with pytest.raises(DecodeError):
        serializer.loads(b"")


def test_refuses_corrupt_compressed_data() -> None:
    good = serializer.dumps({"x": "y" * 1000})
    with pytest.raises(DecodeError, match="corrupt compressed"):
        serializer.loads(good[:5] + bytes(b ^ 0xFF for b in good[5:20]) + good[20:])


def test_refuses_truncated_data() -> None:
    good = serializer.dumps({"x": list(range(1000))})
    with pytest.raises(DecodeError, match="truncated"):
        serializer.loads(good[: len(good) // 2])


def test_refuses_corrupt_msgpack() -> None:
    data = MAGIC + zlib.compress(b"\xc1\xc1\xc1", 1)  # 0xc1 is never used by msgpack
    with pytest.raises(DecodeError, match="corrupt msgpack"):
        serializer.loads(data)


def test_bounds_decompressed_size() -> None:
    bomb = MAGIC + zlib.compress(msgpack.packb("a" * (8 * 1024 * 1024)), 9)
    assert len(bomb) < 20_000
    with pytest.raises(DecodeError, match="beyond the limit"):
        WireCodec(max_decoded_bytes=1024 * 1024).loads(bomb)
    assert len(WireCodec(max_decoded_bytes=16 * 1024 * 1024).loads(bomb)) == 8 * 1024 * 1024


def test_inflate_bounded_exact_limit() -> None:
    payload = b"z" * 4096
    assert inflate_bounded(zlib.compress(payload), 4096) == payload
    with pytest.raises(DecodeError):
        inflate_bounded(zlib.compress(payload), 4095)


def test_unencodable_object_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="cannot encode"):
        serializer.dumps(object())


def test_job_data_is_stored_as_the_codec_made_it_and_compressed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """RQ compresses job data again when it saves a job; prefixq's job stores the codec's bytes
    and does not have RQ compress them only to throw the result away."""
    import rq.job
    from redis import Redis

    from common import keys
    from common.rqjob import PrefixqJob

    compressed: list[int] = []

    class CountingZlib:
        def __getattr__(self, name: str) -> object:
            return getattr(zlib, name)

        def compress(self, data: bytes, *args: int) -> bytes:
            compressed.append(len(data))
            return zlib.compress(data, *args)

    monkeypatch.setattr(rq.job, "zlib", CountingZlib())
    codec = WireCodec()
    job = PrefixqJob.create(keys.JOB_FUNC, args=({"prompt": "x" * 2000},), connection=Redis(),
                            serializer=codec)
    stored = job.to_dict()
    assert stored["data"] == job.data == codec.dumps((keys.JOB_FUNC, None, [{"prompt": "x" * 2000}], {}))
    assert sum(compressed) == 0, compressed  # RQ compressed nothing worth compressing
    assert job.func_name == keys.JOB_FUNC and list(job.args) == [{"prompt": "x" * 2000}]  # unchanged


@given(st.lists(st.integers(min_value=0, max_value=2**32 - 1)))
def test_token_ids_round_trip(ids: list[int]) -> None:
    from common.tokens import pack_ids, unpack_ids

    packed = pack_ids(ids)
    assert unpack_ids(packed).tolist() == ids
    assert packed[0] == (2 if all(i < 1 << 16 for i in ids) else 4)  # two bytes an id when they fit
    assert len(packed) == 1 + packed[0] * len(ids)


def test_malformed_token_ids_are_a_decode_error() -> None:
    from common.tokens import pack_ids, unpack_ids

    for bad in (b"", b"\x03\x00\x00\x00", b"\x02\x00", pack_ids([1, 2]) + b"\x00"):
        with pytest.raises(DecodeError, match="malformed token ids"):
            unpack_ids(bad)
    with pytest.raises(DecodeError, match="out of range"):
        pack_ids([2**32])


def test_requests_and_shared_prefixes_carry_token_ids_only_with_their_tokenizer() -> None:
    from common.schema import Request, SharedPrefix

    plain = Request(prompt="p", sampling={}, submission_id="s", index=0)
    assert "k" not in plain.to_wire() and "tk" not in plain.to_wire()
    with_ids = Request(prompt="p", sampling={}, submission_id="s", index=0, token_ids=b"\x02\x01\x00",
                       tokenizer="json:ab")
    assert Request.from_wire(serializer.loads(serializer.dumps(with_ids.to_wire()))) == with_ids
    prefix = SharedPrefix("head", b"\x02\x01\x00", "json:ab")
    assert SharedPrefix.from_wire(serializer.loads(serializer.dumps(prefix.to_wire()))) == prefix
    with pytest.raises(DecodeError, match="wrong type"):
        Request.from_wire({**with_ids.to_wire(), "k": [1, 0]})
    with pytest.raises(DecodeError, match="wrong type"):
        SharedPrefix.from_wire({"text": "head", "k": "ids", "tk": "json:ab"})
    with pytest.raises(DecodeError, match="malformed shared prefix"):
        SharedPrefix.from_wire({"k": b""})
