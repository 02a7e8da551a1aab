"""Recording Python programs into schedule text (no simulator needed)."""

from __future__ import annotations

import time

import pytest

import acesim
from acesim.program import Context, record

HERE = "tests/python/test_program.py"


def small(ctx: Context) -> None:
    right = (ctx.rank + 1) % ctx.size
    ctx.compute("1.5 us")
    h = ctx.put(right, "2 KiB", tag=3)
    ctx.poll(3)
    ctx.complete(h)
    with ctx.region("pack phase"):
        ctx.compute(250)


def test_small_program_records_expected_schedule(in_root: str) -> None:
    L = small.__code__.co_firstlineno
    blocks = []
    for r in range(2):
        blocks.append(
            f"rank {r}\n"
            f"compute 1500000ps @{HERE}:{L + 2}\n"
            f"put {(r + 1) % 2} 2048 tag=3 handle=h1 @{HERE}:{L + 3}\n"
            f"poll 3 @{HERE}:{L + 4}\n"
            f"complete h1 @{HERE}:{L + 5}\n"
            f'region_begin "pack phase" @{HERE}:{L + 6}\n'
            f"compute 250000ps @{HERE}:{L + 7}\n"
            f'region_end "pack phase" @{HERE}:{L + 6}\n'
        )
    expected = "# acesim schedule 1\nranks 2\n" + "".join(blocks)
    assert record(small, 2) == expected


def every_statement(ctx: Context) -> None:
    c = ctx.comm_split(acesim.UNDEFINED if ctx.rank == 1 else 0, ctx.size - ctx.rank)
    d = ctx.comm_dup(c)
    h = ctx.put(1, 8, nic=1)
    g = ctx.get(0, "1 KB")
    ctx.send(1, 16, tag=5, comm=d)
    ctx.recv(acesim.ANY, 16, tag=acesim.ANY)
    r1 = ctx.isend(0, 4)
    r2 = ctx.irecv(acesim.ANY, 4, tag=7, comm=c)
    ctx.wait(r1)
    ctx.waitall([r2, h])
    ctx.waitany([g])
    ctx.test(r2)
    ctx.sendrecv(1, 12, acesim.ANY, 12, sendtag=8, recvtag=acesim.ANY)
    ctx.barrier()
    ctx.barrier(comm=c, algo="ring", transport="rdma")
    ctx.bcast(1024, root=1, algo="pipelined", segment="4 KiB")
    ctx.reduce(64, comm=d)
    ctx.allreduce("2 KiB", algo="ring")
    ctx.alltoall(8)
    ctx.allgather(12, comm=c)
    ctx.gather(7, root=1)
    ctx.scatter(9)
    ctx.region_begin('say "hi"')
    ctx.region_end('say "hi"')


def test_every_statement(in_root: str) -> None:
    L = every_statement.__code__.co_firstlineno
    text = record(every_statement, 2)
    rank1 = text.split("rank 1\n")[1]
    got = [line.rsplit(" @", 1) for line in rank1.splitlines()]
    assert all(loc.startswith(HERE + ":") for _, loc in got)
    assert [int(loc.rsplit(":", 1)[1]) - L for _, loc in got] == list(range(1, 25))
    assert [op for op, _ in got] == [
        "comm_split undefined 1 as=c1",
        "comm_dup as=c2 comm=c1",
        "put 1 8 tag=0 handle=h1 nic=1",
        "get 0 1000 handle=h2",
        "send 1 16 tag=5 comm=c2",
        "recv any 16 tag=any",
        "isend 0 4 req=r1 tag=0",
        "irecv any 4 req=r2 tag=7 comm=c1",
        "wait r1",
        "waitall r2 h1",
        "waitany h2",
        "test r2",
        "sendrecv 1 12 any 12 sendtag=8 recvtag=any",
        "barrier",
        "barrier comm=c1 algo=ring transport=rdma",
        "bcast 1024 root=1 algo=pipelined segment=4096",
        "reduce 64 root=0 comm=c2",
        "allreduce 2048 algo=ring",
        "alltoall 8",
        "allgather 12 comm=c1",
        "gather 7 root=1",
        "scatter 9 root=0",
        'region_begin "say \\"hi\\""',
        'region_end "say \\"hi\\""',
    ]
    assert "comm_split 0 2 as=c1" in text.split("rank 1\n")[0]


def test_handles_requests_and_comms_count_per_rank() -> None:
    def prog(ctx: Context) -> None:
        a = ctx.put(0, 1)
        b = ctx.put(0, 1)
        q = ctx.isend(0, 1)
        assert (a.name, b.name, q.name) == ("h1", "h2", "r1")
        assert str(ctx.comm_dup()) == "c1"

    text = record(prog, 3)
    assert text.count("handle=h1 ") == 3 and text.count("handle=h2 ") == 3


def test_compute_units_and_nanoseconds() -> None:
    def prog(ctx: Context) -> None:
        ctx.compute(100000)  # ns, like MGEN_Comp
        ctx.compute(2.5)
        ctx.compute(0.0004)  # rounds to 0 ps
        ctx.compute(0.0005)  # half away from zero
        ctx.compute("250ps")
        ctx.compute("2 ms")
        ctx.compute("0.6us")

    ops = [line.split(" @")[0] for line in record(prog, 1).splitlines()[3:]]
    assert ops == [
        "compute 100000000ps",
        "compute 2500ps",
        "compute 0ps",
        "compute 1ps",
        "compute 250ps",
        "compute 2000000000ps",
        "compute 600000ps",
    ]


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda c: c.compute(-1), ValueError, ["compute()", "negative"]),
        (lambda c: c.compute("5"), ValueError, ["no unit"]),
        (lambda c: c.compute("1.5 parsecs"), ValueError, ["time unit"]),
        (lambda c: c.compute([1]), TypeError, ["compute()", "t must be"]),
        (lambda c: c.put("1", 4), TypeError, ["put()", "dst must be an int, not str"]),
        (lambda c: c.put(1, 4.5), TypeError, ["put()", "size"]),
        (lambda c: c.put(1, -4), ValueError, ["size must not be negative"]),
        (lambda c: c.put(1, "4 furlongs"), ValueError, ["size is not a size"]),
        (lambda c: c.put(1, 4, tag="x"), TypeError, ["tag must be an int"]),
        (lambda c: c.put(1, True), TypeError, ["size"]),
        (lambda c: c.complete(3), TypeError, ["complete()", "handle"]),
        (lambda c: c.recv("x", 4), TypeError, ["recv()", "src must be an int or acesim.ANY"]),
        (lambda c: c.send(1, 4, comm="world"), TypeError, ["send()", "comm"]),
        (lambda c: c.wait("r1"), TypeError, ["wait()", "req"]),
        (lambda c: c.waitall(c.isend(0, 1)), TypeError, ["waitall()", "reqs"]),
        (lambda c: c.barrier(algo="two words"), ValueError, ["barrier()", "algo"]),
        (lambda c: c.region(3), TypeError, ["region()", "name"]),
        (lambda c: c.comm_split(1.0, 0), TypeError, ["comm_split()", "color"]),
    ],
)
def test_argument_errors(call, exc, words, in_root: str) -> None:
    def prog(ctx: Context) -> None:
        if ctx.rank == 1:
            call(ctx)

    with pytest.raises(exc) as info:
        record(prog, 2)
    msg = str(info.value)
    assert msg.startswith("rank 1: "), msg
    assert HERE + ":" in msg  # the call site
    for w in words:
        assert w in msg, msg
    assert not isinstance(info.value, acesim.ProgramError)


def test_program_exception_becomes_program_error() -> None:
    def failing(ctx: Context) -> None:
        ctx.put(0, 4)
        if ctx.rank == 2:
            1 / 0

    with pytest.raises(acesim.ProgramError) as info:
        record(failing, 4)
    msg = str(info.value)
    assert msg.startswith("rank 2: ZeroDivisionError: division by zero"), msg
    assert "Traceback" in msg and "in failing" in msg and "1 / 0" in msg
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_record_arguments() -> None:
    with pytest.raises(TypeError, match="ranks must be an int"):
        record(small, "4")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ranks must be positive"):
        record(small, 0)
    with pytest.raises(TypeError, match="program must be callable"):
        record("prog.py", 2)  # type: ignore[arg-type]


def test_name_args_and_empty_ranks() -> None:
    seen = []

    def prog(ctx: Context) -> None:
        seen.append(ctx.args)
        if ctx.rank == 0:
            ctx.barrier()

    text = record(prog, 2, name="demo", args=["a", "b"])
    assert text.splitlines()[:4] == ["# acesim schedule 1", "# program: demo", "ranks 2", "rank 0"]
    assert text.endswith("rank 1\n")
    assert seen == [("a", "b"), ("a", "b")]


def test_paths_with_spaces_are_quoted(tmp_path) -> None:
    code = compile("def prog(ctx):\n    ctx.poll(1)\n", str(tmp_path / "my dir" / "p.py"), "exec")
    ns: dict = {}
    exec(code, ns)
    line = record(ns["prog"], 1).splitlines()[-1]
    assert line.startswith('poll 1 "@') and line.endswith('my dir/p.py:2"'), line


def test_sentinels() -> None:
    assert str(acesim.ANY) == "any" and repr(acesim.UNDEFINED) == "acesim.UNDEFINED"
    import pickle

    assert pickle.loads(pickle.dumps(acesim.ANY)) is acesim.ANY


def test_recording_a_million_operations_is_fast() -> None:
    def prog(ctx: Context) -> None:
        put = ctx.put
        n, me = ctx.size, ctx.rank
        for i in range(1000):
            put((me + i + 1) % n, 64, tag=1)

    start = time.perf_counter()
    text = record(prog, 1000)
    elapsed = time.perf_counter() - start
    assert text.count("\n") == 1_000_000 + 1000 + 2
    print(f"\nrecorded 1,000,000 puts in {elapsed:.2f} s ({1e6 / elapsed / 1e6:.2f} M ops/s)")
    assert elapsed < 30


def test_absurd_rank_counts_are_refused_at_once() -> None:
    from acesim.program import MAX_RANKS

    start = time.monotonic()
    with pytest.raises(ValueError, match=f"ranks must be at most {MAX_RANKS}, not 1000000000000"):
        record(lambda ctx: None, ranks=10**12)
    assert time.monotonic() - start < 1


def test_sys_exit_in_a_rank() -> None:
    import sys

    def prog(ctx):
        ctx.compute("1ns")
        if ctx.rank == 1:
            sys.exit(ctx.args[0] if ctx.args[0] == "bye" else int(ctx.args[0]))
        ctx.compute("2ns")

    # sys.exit(0): that rank's program ends normally; what it recorded counts.
    text = record(prog, ranks=2, args=["0"])
    rank1 = text.split("rank 1\n")[1].splitlines()
    assert len(rank1) == 1 and rank1[0].startswith("compute 1000ps @"), text
    assert text.count("compute 2000ps") == 1
    with pytest.raises(acesim.ProgramError, match="rank 1: the program exited with code 3 before finishing"):
        record(prog, ranks=2, args=["3"])
    with pytest.raises(acesim.ProgramError, match=r"rank 1: the program exited with code 1 \(bye\)"):
        record(prog, ranks=2, args=["bye"])


def test_repeat_records_a_loop_that_runs_as_the_loop_written_out() -> None:
    def looped(ctx: Context) -> None:
        peer = 1 - ctx.rank
        with ctx.repeat(50):
            r = ctx.irecv(peer, "4 KiB")
            s = ctx.isend(peer, "4 KiB")
            ctx.waitall([r, s])
            ctx.allreduce(8)

    def flat(ctx: Context) -> None:
        peer = 1 - ctx.rank
        for _ in range(50):
            r = ctx.irecv(peer, "4 KiB")
            s = ctx.isend(peer, "4 KiB")
            ctx.waitall([r, s])
            ctx.allreduce(8)

    text = record(looped, 2)
    assert text.count("repeat 50 {") == 2 and text.count("\n}") == 2
    assert text.count("isend") == 2  # the body once per rank
    a = acesim.simulate("table1", looped, ranks=2)
    b = acesim.simulate("table1", flat, ranks=2)
    assert a.predicted_time_ps == b.predicted_time_ps
    assert len(a.collectives) == len(b.collectives) == 50
    with pytest.raises(ValueError, match=r"repeat\(\): count -1 is negative"):
        record(lambda ctx: ctx.repeat(-1), 1)
    with pytest.raises(TypeError, match=r"repeat\(\): count must be an int"):
        record(lambda ctx: ctx.repeat("many"), 1)  # type: ignore[arg-type]
