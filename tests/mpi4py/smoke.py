"""mpi4py smoke test for Proust MPI: run with `mpiexec -n 2 python smoke.py`.

Exercises what mpi4py users do first: pickled objects (send/recv through
Mprobe/Mrecv, bcast, allreduce, gather), buffer-based calls with array
buffers (no numpy needed), nonblocking requests, communicator splitting,
error handling, and checks every result.
"""
from array import array
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()
assert size >= 2, "run with at least 2 processes"
assert MPI.Get_version() == (4, 1), MPI.Get_version()
assert "Proust" in MPI.Get_library_version(), MPI.Get_library_version()
assert MPI.Query_thread() == MPI.THREAD_MULTIPLE

# Pickled objects.
obj = comm.bcast({"hello": [1, 2, 3]} if rank == 0 else None, root=0)
assert obj == {"hello": [1, 2, 3]}
assert comm.allreduce(rank + 1) == size * (size + 1) // 2
assert comm.allreduce(rank, op=MPI.MAX) == size - 1
assert comm.gather(rank * 10, root=0) == ([r * 10 for r in range(size)] if rank == 0 else None)
assert comm.allgather(("r", rank)) == [("r", r) for r in range(size)]
if rank == 0:
    comm.send({"payload": "x" * 100000}, dest=1, tag=7)
elif rank == 1:
    msg = comm.recv(source=0, tag=7)
    assert msg == {"payload": "x" * 100000}

# Nonblocking pickled.
right, left = (rank + 1) % size, (rank - 1) % size
req = comm.isend(rank, dest=right, tag=3)
got = comm.recv(source=left, tag=3)
req.wait()
assert got == left

# Buffers.
buf = array("d", [float(rank)] * 1000)
out = array("d", [0.0] * 1000)
comm.Allreduce(buf, out, op=MPI.SUM)
assert all(x == sum(range(size)) for x in out)
data = array("i", range(100)) if rank == 0 else array("i", [0] * 100)
comm.Bcast(data, root=0)
assert list(data) == list(range(100))
sendbuf = array("i", [rank] * size)
recvbuf = array("i", [0] * size)
comm.Alltoall(sendbuf, recvbuf)
assert list(recvbuf) == list(range(size))
status = MPI.Status()
sb = array("b", b"abcdefgh" * (rank + 1))
rb = array("b", b"\0" * 64)
comm.Sendrecv(sb, dest=right, sendtag=5, recvbuf=rb, source=left, recvtag=5, status=status)
assert status.Get_source() == left and status.Get_tag() == 5
assert status.Get_count(MPI.BYTE) == 8 * (left + 1)

# Nonblocking buffer requests and a nonblocking collective.
ibuf = array("l", [0] * 10)
rreq = comm.Irecv(ibuf, source=left, tag=11)
sreq = comm.Isend(array("l", [rank] * 10), dest=right, tag=11)
MPI.Request.Waitall([rreq, sreq])
assert list(ibuf) == [left] * 10
comm.Ibarrier().Wait()

# Communicators.
sub = comm.Split(rank % 2, -rank)
assert sub.Get_size() == len([r for r in range(size) if r % 2 == rank % 2])
assert sub.allreduce(1) == sub.Get_size()
sub.Free()
dup = comm.Dup()
assert dup.bcast(rank, root=size - 1) == size - 1
dup.Free()

# Errors come back as exceptions (mpi4py sets MPI_ERRORS_RETURN).
try:
    comm.Send(array("i", [1]), dest=size, tag=0)
except MPI.Exception as e:
    assert e.Get_error_class() == MPI.ERR_RANK, e.Get_error_class()
else:
    raise AssertionError("send to an invalid rank did not fail")

# One-sided communication: a put to the right under fence, an atomic
# counter at rank 0 under a shared lock.
win = MPI.Win.Allocate(8 * 4, 8, comm=comm)
mem = array("l", [0] * 4)
win.Fence()
win.Put(array("l", [rank + 1] * 4), right)
win.Fence()
win.Lock(rank, MPI.LOCK_SHARED)
win.Get(mem, rank)
win.Unlock(rank)
assert list(mem) == [left + 1] * 4, list(mem)
win.Fence()
win.Lock(0, MPI.LOCK_SHARED)
win.Accumulate(array("l", [1]), 0, target=(0, 1, MPI.LONG), op=MPI.SUM)
win.Unlock(0)
comm.Barrier()
total = array("l", [0])
win.Lock(0, MPI.LOCK_SHARED)
win.Get(total, 0)
win.Unlock(0)
# rank 0's first slot: size (the put of rank size-1), then +1 per rank
assert total[0] == 2 * size, total[0]
win.Free()

comm.Barrier()
if rank == 0:
    print("mpi4py smoke test passed on %d processes (%s)" % (size, MPI.Get_library_version()))
sys.stdout.flush()
