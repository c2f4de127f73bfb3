"""kforge's PyTorch worker: runs a KernelBench reference `Model` or a candidate `ModelNew` on
the trials the engine asks for, in a sandboxed process, and writes what came out. It decides
nothing: the engine compares the outputs, and reads everything written here as untrusted.

    python3 kforge_torch_worker.py JOB.json

(In the worker's scratch it is eval/run_and_check.py, and JOB.json is deleted once read: the
candidate's process is named as a plain KernelBench evaluation's; src/verify/kernelbench/verifier.cc.)

The job (JSON, written by the engine):
    role            "reference" or "candidate"
    reference       path of the KernelBench reference file (get_inputs, get_init_inputs, Model;
                    the candidate's worker gets it without Model)
    candidate       path of the candidate file (ModelNew); role "candidate" only
    device          "cpu" or "cuda"
    constants       module-level integer constants of the reference to override (other sizes)
    extensions      {key: {"path", "binding" ("pybind11" or "thunks"), "functions"}}: the
                    prebuilt extension modules for load_inline; null with extensions_file
    extensions_file where the engine writes {"extensions": {...}} or {"abort": true} once the
                    extensions are built (the worker starts meanwhile and waits before
                    importing the candidate)
    trials          [{"name", "seed", "distribution"}]; distribution "kernelbench" draws
                    get_inputs() as KernelBench does, the others replace floating inputs
    poison_nbytes   sizes of blocks to fill with 0xff bytes and free before each forward
                    (absent: the reference's output sizes from the file extensions_file names,
                    read just before the first forward, else on the meta device, else the
                    inputs')
    kernelbench_trials  how many KernelBench trial seeds to derive (their seeds are computed
                    here as KernelBench does: torch.manual_seed(42), then torch.randint)
    pace_bytes      the engine judges each trial as soon as both workers have reported it and
                    then deletes its output files; a trial writes its outputs only once the files
                    of earlier trials not yet judged, with its own, hold at most this many bytes
                    (or none are left), so the outputs on disk stay bounded (KernelBench's
                    level-1 tensors reach 6.4 GB); it draws and runs meanwhile
    output_socket   (GPU) a descriptor number: float32 outputs of at least device_output_bytes
                    (and the reference's float64 forms of them) are handed over on it in GPU
                    memory (DeviceExports), described {"device": true, "dtype", "shape"}
    launches        (GPU, candidate) warm the profiler up while the extensions build
    out             directory for result.json and the output files ("out" for a warm worker)
A warm worker (kforge serve starts it before its job is known; it is given a pipe as
descriptor 6) imports torch, then waits (stage "wait_job") for the engine's byte on the pipe,
which comes once JOB.json is written, and goes on as any worker (the protocol:
src/verify/kernelbench/warm_workers.h).
The result (out/result.json), rewritten as the worker goes (stages in order: the engine ends
a worker whose report goes back, src/verify/kernelbench/worker_progress.h). Once it says "done" the
worker waits for the engine to end it: that report is sealed, and nothing run at exit
reaches the engine. {"ok", "stage", "error", "torch", "waiting", "ops" and on the GPU
"launches" (the candidate's: ForwardAccount), "parameters": [[name,
shape, sha256]...], "trials": [{"name", "seed", "ok", "done", "error", "inputs_sha256",
"input_digests", "input_digests_after" (the candidate's, after its forward), "outputs":
[{"file", "dtype", "shape"}], "forward_ms", "reference64": [file or null], "steps": [[step,
seconds]]}]}; the reference's first trial also reports
"output_shapes" ([{"dtype", "shape"}]) right after its forward, before its outputs are written
(the candidate's worker waits on those sizes). "input_digests" are sha256 over each input's
dtype, shape and bytes, or on the GPU its device_fingerprint. A trial is over when "done" is
true. Role "reference" also runs a float64 copy of the model for the certified comparison; a
float64 output equal to the float32 one (an exact
operator: ReLU, a copy) is not written twice: its entry is null.
"""
from __future__ import annotations

import copy
import hashlib
import importlib.machinery
import importlib.util
import json
import math
import os
import select
import stat
import sys
import time
import traceback
import types
from typing import Any, BinaryIO, Callable, Iterable

SEED = 42  # KernelBench's seed for weights and for the trial seeds

result = {"ok": False, "stage": "start", "error": "", "trials": [], "stages": []}
started = time.monotonic()
out_dir = "."


def enter(stage: str) -> None:
    """Starts a stage: the engine's deadlines follow them, and the verdict reports their times."""
    result["stage"] = stage
    result["stages"].append([stage, round(time.monotonic() - started, 4)])
    write_result()


class Steps:
    """Where a trial's time went, for the verdict's breakdown: [step, seconds] in order, each
    from the end of the one before (on CUDA a step that reads data back waits for the GPU
    work queued before it)."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry, self.last = entry, time.perf_counter()
        entry["steps"] = []

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.entry["steps"].append([name, round(now - self.last, 4)])
        self.last = now


def write_result() -> None:
    tmp = os.path.join(out_dir, "result.json.tmp")
    with open(tmp, "w") as f:
        json.dump(result, f, ensure_ascii=True, allow_nan=False, default=str)
    os.replace(tmp, os.path.join(out_dir, "result.json"))


def error_text(e: BaseException) -> str:
    tail = traceback.format_exception(type(e), e, e.__traceback__)
    return "".join(tail)[-4000:]


def load_module(name: str, path: str, prepare: Callable[[types.ModuleType], None] | None = None) -> types.ModuleType:
    with open(path, encoding="utf-8", errors="replace") as f:
        source = f.read()
    module = types.ModuleType(name)
    module.__file__ = path
    if prepare:
        prepare(module)
    sys.modules[name] = module  # @triton.jit reads the source of the functions it compiles
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def set_seed(torch: types.ModuleType, seed: int) -> None:
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def replace_floats(torch: types.ModuleType, inputs: list[Any], distribution: str, seed: int, device: str) -> list[Any]:
    """The certified trials' inputs: get_inputs()'s shapes and integer tensors, with every
    floating tensor drawn again from `distribution` (seeded, on the device)."""
    if distribution == "kernelbench":
        return inputs
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    out = []
    for x in inputs:
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            out.append(x)
            continue
        # Drawn in float32 (float64 for a float64 input), only what the distribution needs:
        # torch's CPU draws in float64 are 6x slower than in float32 (no vector path).
        dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
        if distribution == "uniform":
            out.append((torch.rand(x.shape, generator=g, device=device, dtype=dtype) * 2 - 1).to(x.dtype))
            continue
        v = torch.randn(x.shape, generator=g, device=device, dtype=dtype)
        if distribution == "normal":
            pass
        elif distribution == "all_negative":
            v = v.abs_().neg_().sub_(0.01)
        elif distribution == "negative_offset":
            v = v.sub_(100)
        elif distribution == "large_magnitude":
            v = v.mul_(1000)
        elif distribution == "large_offset":
            v = v.add_(100)
        elif distribution == "small_magnitude":
            v = v.mul_(1e-3)
        elif distribution == "signed_rows":
            v = v.abs_()
            if x.dim():
                rows = x.shape[:-1] + (1,)
                sign = (torch.arange(math.prod(rows), device=device) % 2 * -2 + 1).to(dtype).reshape(rows)
                v = v.mul_(sign)
        else:
            raise ValueError("unknown distribution " + distribution)
        out.append(v.to(x.dtype))
    return out


def _draw_size(torch: types.ModuleType, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, ...]:
    """The size a torch.rand/randn/randint call asks for: rand(2, 3), rand((2, 3)),
    rand(size=(2, 3)), randint(10, (2, 3)), randint(0, 10, (2, 3))."""
    if "size" in kwargs:
        return tuple(kwargs["size"])
    if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)):
        return tuple(args[0])
    return tuple(args)


def on_meta(torch: types.ModuleType) -> Any:
    """A context in which tensors are made on the meta device: shapes and dtypes, no data,
    nothing drawn. torch.device("meta") does the same on torch >= 2.0, but on torch 2.11 an
    operator whose meta kernel is written in Python (normal_ behind torch.randn, arithmetic,
    relu) imports torch._dynamo on its first use: 3.8-5.5 s of a worker's start-up, measured
    on the H200 (scripts/device_meta_probe.py). This mode places torch's factory functions on
    the meta device and makes its random draws empty tensors (their values are never read),
    which import nothing; a get_inputs() that computes on its draws still pays that once.
    None where torch has no function modes."""
    overrides = getattr(torch, "overrides", None)
    mode = getattr(overrides, "TorchFunctionMode", None)
    if mode is None:
        return None
    placed = {
        torch.empty,
        torch.zeros,
        torch.ones,
        torch.full,
        torch.arange,
        torch.linspace,
        torch.eye,
        torch.tensor,
        torch.empty_strided,
    }
    draws = {torch.rand, torch.randn}
    draws_like = {torch.rand_like, torch.randn_like, torch.randint_like}

    class OnMeta(mode):
        def __torch_function__(
            self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
        ) -> Any:
            kwargs = dict(kwargs or {})
            if func in draws:
                return torch.empty(_draw_size(torch, args, kwargs), dtype=kwargs.get("dtype"), device="meta")
            if func is torch.randint:
                size = kwargs["size"] if "size" in kwargs else args[-1]
                return torch.empty(tuple(size), dtype=kwargs.get("dtype") or torch.int64, device="meta")
            if func in draws_like:
                return torch.empty_like(args[0], dtype=kwargs.get("dtype"), device="meta")
            if func in placed and kwargs.get("device") is None:
                kwargs["device"] = "meta"
            return func(*args, **kwargs)

    return OnMeta()


def trial_inputs(
    torch: types.ModuleType, get_inputs: Callable[[], list[Any]], distribution: str, seed: int, device: str
) -> list[Any]:
    """A trial's inputs. KernelBench's own trials draw get_inputs() on the host and move them,
    as the benchmark does. A certified trial only needs get_inputs()'s shapes when every
    tensor it returns is floating (they are all drawn again on the device): it asks for them
    on the meta device (on_meta), which allocates and draws nothing; a get_inputs() with
    integer tensors, one that fails there, or a torch without function modes draws on the
    host."""
    meta = on_meta(torch) if distribution != "kernelbench" else None
    if meta is not None:
        try:
            with meta:
                shapes = get_inputs()
            if all(x.is_floating_point() for x in shapes if isinstance(x, torch.Tensor)):
                return replace_floats(torch, shapes, distribution, seed, device)
        except Exception:  # get_inputs() needs real tensors: draw them
            pass
        set_seed(torch, seed)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in get_inputs()]
    return replace_floats(torch, inputs, distribution, seed, device)


def output_nbytes_on_meta(
    torch: types.ModuleType,
    reference: types.ModuleType,
    get_inputs: Callable[[], list[Any]],
    get_init_inputs: Callable[[], list[Any]],
) -> list[int]:
    """The sizes of the reference's outputs, from Model run on the meta device (shapes, no
    data, nothing drawn), so that the candidate's worker can poison blocks of those sizes
    without waiting for the reference's. [] when that cannot be done: each trial then
    poisons blocks of its inputs' sizes (an elementwise output's)."""
    meta = on_meta(torch)
    if meta is None:
        return []
    try:
        with torch.no_grad(), meta:
            out = as_list(reference.Model(*get_init_inputs())(*get_inputs()))
        return [o.numel() * o.element_size() for o in out if isinstance(o, torch.Tensor)]
    except Exception:  # an operator without a meta kernel, a get_inputs() that needs data
        return []


def tensor_bytes(torch: types.ModuleType, t: Any) -> bytes:
    """A tensor's bytes, in place on the host: no copy beyond the one off the device (outputs
    reach 1 GiB)."""
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return memoryview(t.numpy()).cast("B")


DTYPES = {
    "float32": "float32",
    "float64": "float64",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "int32": "int32",
    "int64": "int64",
}


WRITE_SLICE = 1 << 26  # bytes a device tensor is copied to the host in, to be written


def write_bytes(torch: types.ModuleType, t: Any, f: BinaryIO) -> None:
    """Writes a tensor's bytes to `f`. One on the device goes through two pinned host buffers
    a slice at a time, each slice's copy running while the one before is written: no host
    copy of the whole tensor (6.4 GB at KernelBench's sizes) and no pageable transfer."""
    t = t.detach().contiguous()
    if t.device.type != "cuda" or t.numel() * t.element_size() <= WRITE_SLICE:
        f.write(tensor_bytes(torch, t))
        return
    flat = t.reshape(-1).view(torch.uint8)
    slices = [torch.empty(WRITE_SLICE, dtype=torch.uint8, pin_memory=True) for _ in range(2)]
    copied = [torch.cuda.Event(), torch.cuda.Event()]
    pending = None  # (buffer index, byte count) copied, not yet written
    for k, at in enumerate(range(0, flat.numel(), WRITE_SLICE)):
        n = min(WRITE_SLICE, flat.numel() - at)
        b = k % 2
        slices[b][:n].copy_(flat[at : at + n], non_blocking=True)
        copied[b].record()
        if pending is not None:
            copied[pending[0]].synchronize()
            f.write(memoryview(slices[pending[0]].numpy())[: pending[1]])
        pending = (b, n)
    copied[pending[0]].synchronize()
    f.write(memoryview(slices[pending[0]].numpy())[: pending[1]])


def write_tensor(
    torch: types.ModuleType, t: Any, i: int, name: str, trial: int = 0, form: str = "out", exportable: bool = True
) -> dict[str, Any]:
    """Writes output `i` to out_dir/name, or hands it over in GPU memory (DeviceExports)
    where `exportable`; its description for the engine."""
    if type(t) is not torch.Tensor:
        raise TypeError(f"output {i} is a {type(t).__module__}.{type(t).__name__}, not a plain torch.Tensor")
    if t.layout != torch.strided or t.is_meta:
        raise TypeError(f"output {i} is not a materialised strided tensor")
    dtype = str(t.dtype).replace("torch.", "")
    if dtype not in DTYPES:
        raise TypeError(f"output {i} has dtype {dtype}, which kforge does not compare")
    if exportable and exports is not None and exports.takes(torch, t, form):
        exports.hand_over(torch, t, trial, i, form)
        return {"device": True, "dtype": dtype, "shape": list(t.shape)}
    with open(os.path.join(out_dir, name), "wb") as f:
        write_bytes(torch, t, f)
    return {"file": name, "dtype": dtype, "shape": list(t.shape)}


def as_list(out: Any) -> list[Any]:
    """A forward's outputs: one tensor, or a tuple or list of them."""
    return list(out) if isinstance(out, (tuple, list)) else [out]


def write_outputs(torch: types.ModuleType, out: Any, prefix: str, trial: int) -> list[dict[str, Any]]:
    return [write_tensor(torch, t, i, f"{prefix}{trial}_{i}.bin", trial) for i, t in enumerate(as_list(out))]


def write_reference64(torch: types.ModuleType, out: Any, out64: Any, trial: int) -> list[dict[str, Any] | None]:
    """The float64 reference's outputs, each null where it equals the float32 output (then
    the engine reads that one: it is exact)."""
    items, items64 = as_list(out), as_list(out64)
    files = []
    for i, t64 in enumerate(items64):
        t = items[i] if i < len(items) else None
        # An integer or boolean output (indices, masks) has no float64 form: the float32 run's
        # is the reference (an argmax of the float64 run may break a tie the other way).
        exact = isinstance(t, torch.Tensor) and (
            not t.is_floating_point()
            or (
                isinstance(t64, torch.Tensor)
                and t.shape == t64.shape
                and t64.dtype == torch.float64
                and same_values(torch, t, t64)
            )
        )
        # The float64 form lies where its output does: handed over only beside a float32
        # output that was (a float16 output is judged from files, so is its float64 form).
        beside = exports is not None and isinstance(t, torch.Tensor) and exports.takes(torch, t, "out")
        files.append(None if exact else write_tensor(torch, t64, i, f"r{trial}_{i}.bin", trial, "ref64", beside))
    return files


def same_values(torch: types.ModuleType, t: Any, t64: Any, chunk: int = 1 << 24) -> bool:
    """Whether float64 `t64` holds exactly `t`'s values, compared a slice at a time (a whole
    float64 copy of a 6.4 GB output would be 12.8 GB more)."""
    a, b = t.detach().reshape(-1), t64.detach().reshape(-1)
    return all(bool(torch.equal(a[i : i + chunk].double(), b[i : i + chunk])) for i in range(0, a.numel(), chunk))


def wait_until_judged(entries: list[dict[str, Any]], budget: int, upcoming: int) -> None:
    """Paced runs: before a trial writes its `upcoming` bytes of outputs, waits while the
    files of earlier trials that the engine has not yet judged (it deletes them then) would
    with them exceed `budget`; never while none are left, so one trial always goes ahead."""
    names = [
        o["file"]
        for e in entries
        for o in e.get("outputs", []) + [x for x in e.get("reference64") or [] if x]
        if "file" in o
    ]  # not those handed over in GPU memory (DeviceExports)

    def pending() -> int:
        total = 0
        for n in names:
            try:
                total += os.path.getsize(os.path.join(out_dir, n))
            except OSError:  # judged and deleted
                pass
        return total

    def must_wait() -> bool:
        held = pending()
        return held > 0 and held + upcoming > budget

    if not must_wait():
        return
    result["waiting"] = True
    write_result()
    while must_wait():
        time.sleep(0.005)
    result["waiting"] = False
    write_result()  # the engine's deadline for the trial runs again from here


class DeviceExports:
    """Outputs handed to the engine in GPU memory (job "output_socket"; the engine's side and
    the protocol: src/verify/gpu_judge.h): each float32 output of at least "device_output_bytes"
    (and the reference's float64 form of it) is copied into memory made exportable
    (cuMemCreate, a POSIX file descriptor handle), and its descriptor sent on the socket in a
    frame {"trial", "output", "form"}; the memory is held until the engine answers
    {"judged": trial}. Nothing is written to disk: a 6.4 GB output is judged where it lies."""

    def __init__(self, fd: int, min_bytes: int) -> None:
        import ctypes
        import socket

        class Location(ctypes.Structure):
            _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]

        class Flags(ctypes.Structure):
            _fields_ = [
                ("compression", ctypes.c_ubyte),
                ("rdma", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort),
                ("reserved", ctypes.c_ubyte * 4),
            ]

        class Prop(ctypes.Structure):  # CUmemAllocationProp
            _fields_ = [
                ("type", ctypes.c_int),
                ("handle_types", ctypes.c_int),
                ("location", Location),
                ("win32", ctypes.c_void_p),
                ("flags", Flags),
            ]

        class Access(ctypes.Structure):  # CUmemAccessDesc
            _fields_ = [("location", Location), ("flags", ctypes.c_int)]

        self.c, self.socket = ctypes, socket
        self.Prop, self.Access = Prop, Access
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=fd)
        self.min_bytes = min_bytes
        self.held = {}  # trial -> [(address, size, handle)]
        self.pending = b""

    def takes(self, torch: types.ModuleType, t: Any, form: str) -> bool:
        want = torch.float64 if form == "ref64" else torch.float32
        return t.is_cuda and t.dtype == want and t.numel() * 4 >= self.min_bytes

    def call(self, name: str, *args: Any) -> None:
        rc = getattr(self.cuda, name)(*args)
        if rc != 0:
            raise RuntimeError(f"{name} failed (CUDA error {rc}) handing an output to the engine")

    def hand_over(self, torch: types.ModuleType, t: Any, trial: int, index: int, form: str) -> int:
        """Copies `t` into exportable memory, sends its descriptor and returns the memory's
        device address (held until the engine has judged `trial`)."""
        c = self.c
        src = t.detach().contiguous()
        nbytes = src.numel() * src.element_size()
        device = src.device.index if src.device.index is not None else torch.cuda.current_device()
        prop = self.Prop()
        prop.type, prop.handle_types = 1, 1  # pinned device memory, exportable as a file descriptor
        prop.location.type, prop.location.id = 1, device
        granularity = c.c_size_t()
        self.call("cuMemGetAllocationGranularity", c.byref(granularity), c.byref(prop), c.c_int(0))
        size = max(1, -(-nbytes // granularity.value)) * granularity.value
        handle, address = c.c_ulonglong(), c.c_ulonglong()
        self.call("cuMemCreate", c.byref(handle), c.c_size_t(size), c.byref(prop), c.c_ulonglong(0))
        self.held.setdefault(trial, []).append([0, size, handle.value])
        self.call(
            "cuMemAddressReserve", c.byref(address), c.c_size_t(size), c.c_size_t(0), c.c_ulonglong(0), c.c_ulonglong(0)
        )
        self.held[trial][-1][0] = address.value
        self.call("cuMemMap", address, c.c_size_t(size), c.c_size_t(0), handle, c.c_ulonglong(0))
        access = self.Access()
        access.location.type, access.location.id, access.flags = 1, device, 3  # read-write
        self.call("cuMemSetAccess", address, c.c_size_t(size), c.byref(access), c.c_size_t(1))
        torch.cuda.synchronize()
        self.call("cuMemcpyDtoD_v2", address, c.c_ulonglong(src.data_ptr()), c.c_size_t(nbytes))
        self.call("cuCtxSynchronize")
        fd = c.c_int(-1)
        self.call("cuMemExportToShareableHandle", c.byref(fd), handle, c.c_int(1), c.c_ulonglong(0))
        try:
            import array

            header = json.dumps({"trial": trial, "output": index, "form": form}).encode()
            self.sock.sendmsg(
                [len(header).to_bytes(4, "little") + header],
                [(self.socket.SOL_SOCKET, self.socket.SCM_RIGHTS, array.array("i", [fd.value]))],
            )
        finally:
            os.close(fd.value)
        return address.value

    @staticmethod
    def takes_input(torch: types.ModuleType, x: Any) -> bool:
        """Inputs handed over before the forward: contiguous, non-empty tensors in GPU memory.
        Both workers decide alike; the engine goes by the reference's list."""
        return isinstance(x, torch.Tensor) and x.is_cuda and x.is_contiguous() and x.numel() > 0

    def hand_over_inputs(
        self, torch: types.ModuleType, inputs: list[Any], trial: int, entry: dict[str, Any], in_place: bool
    ) -> None:
        """Hands each input `takes_input` takes to the engine (form "in") and lists it in the
        trial's entry as [index, bytes]. The reference's worker sends copies taken before its
        forward; the candidate's (`in_place`) gets back the handed-over memory itself as its
        inputs, so what its forward writes there is seen by kforge-gpu-judge."""
        entry["device_inputs"] = []
        for i, x in enumerate(inputs):
            if not self.takes_input(torch, x):
                continue
            nbytes = x.numel() * x.element_size()
            address = self.hand_over(torch, x, trial, i, "in")
            entry["device_inputs"].append([i, nbytes])
            if in_place:

                class Memory:  # the handed-over bytes, seen by torch through the CUDA array interface
                    __cuda_array_interface__ = {
                        "shape": (nbytes,),
                        "typestr": "|u1",
                        "data": (address, False),
                        "version": 3,
                    }

                inputs[i] = torch.as_tensor(Memory(), device=x.device).view(x.dtype).view(x.shape)

    def release_through(self, trial: int) -> None:
        c = self.c
        for t in [k for k in self.held if k <= trial]:
            for address, size, handle in self.held.pop(t):
                if address:
                    self.cuda.cuMemUnmap(c.c_ulonglong(address), c.c_size_t(size))
                    self.cuda.cuMemAddressFree(c.c_ulonglong(address), c.c_size_t(size))
                self.cuda.cuMemRelease(c.c_ulonglong(handle))

    def wait_judged(self, before: int) -> None:
        """Waits until every trial before `before` that holds memory is judged, and frees it."""
        if not any(t < before for t in self.held):
            return
        result["waiting"] = True
        write_result()
        while any(t < before for t in self.held):
            data = self.sock.recv(4096)
            if not data:
                raise RuntimeError("the engine closed the export socket")
            self.pending += data
            while len(self.pending) >= 4:
                n = int.from_bytes(self.pending[:4], "little")
                if len(self.pending) < 4 + n:
                    break
                word, self.pending = json.loads(self.pending[4 : 4 + n]), self.pending[4 + n :]
                if isinstance(word.get("judged"), int):
                    self.release_through(word["judged"])
        result["waiting"] = False
        write_result()


exports = None  # DeviceExports, when the engine takes outputs in GPU memory


DIGEST_SLICE = 1 << 26  # 32-bit words a device tensor is fingerprinted in


def device_fingerprint(torch: types.ModuleType, t: Any) -> bytes:
    """Two 64-bit sums over a device tensor's bytes as 32-bit words w_i (bytes, when their
    count is not a multiple of 4), position-weighted: sum w_i * (2i + 1) and
    sum (w_i ^ (i * 0x9E3779B97F4A7C15)) * w_i, wrapping. Computed where the tensor is: no
    copy to the host (6.4 GB at KernelBench's sizes took seconds to copy and hash). It tells
    two draws apart; it is not a cryptographic hash and need not be: the candidate's
    process reports it, so it is a consistency check on its inputs, never a proof."""
    flat = t.detach().contiguous().reshape(-1).view(torch.uint8)
    words = flat.view(torch.int32) if flat.numel() % 4 == 0 else flat
    sums = torch.zeros(2, dtype=torch.int64, device=t.device)
    for at in range(0, words.numel(), DIGEST_SLICE):
        w = words[at : at + DIGEST_SLICE].to(torch.int64)
        i = torch.arange(at, at + w.numel(), dtype=torch.int64, device=t.device)
        sums[0] += (w * (2 * i + 1)).sum()
        sums[1] += ((w ^ (i * -7046029254386353131)) * w).sum()  # 0x9E3779B97F4A7C15 as int64
    return sums.cpu().numpy().tobytes()


def input_digests(torch: types.ModuleType, inputs: list[Any], skip: Iterable[int] = ()) -> list[str]:
    """What each input is: sha256 over its dtype, shape and bytes (on the host), or over its
    device_fingerprint (on the GPU). Both workers compute them the same way: the engine
    compares the candidate's, taken after its forward, with the reference's, taken before
    (input mutation is the engine's finding, not a comparison made here)."""
    # Hashed through a view (tensor_bytes), not a copy: a freed copy of an input is memory an
    # unwritten output could be handed, which must hold kforge's poison instead.
    out = []
    for i, x in enumerate(inputs):
        if i in skip:
            out.append("")
            continue
        h = hashlib.sha256()
        if isinstance(x, torch.Tensor):
            h.update(f"{x.dtype}{tuple(x.shape)}{x.device.type}".encode())
            h.update(device_fingerprint(torch, x) if x.device.type == "cuda" else tensor_bytes(torch, x))
        else:
            h.update(repr(x).encode())
        out.append(h.hexdigest())
    return out


def inputs_digest(digests: list[str]) -> str:
    """One digest of all the inputs: sha256 over each one's (input_digests)."""
    return hashlib.sha256("".join(digests).encode()).hexdigest()


def time_forward(
    torch: types.ModuleType, model: Any, inputs: list[Any], device: str, spec: dict[str, Any]
) -> dict[str, Any]:
    """KernelBench's timing (time_execution_with_cuda_event in KernelBench main): warm-up
    calls, each synchronised; then per trial CUDA events around one forward with the L2
    thrashed before it (a 256 MB tensor filled) and a synchronise on each side; the first
    trial is discarded. On the CPU the same loop with time.perf_counter (KernelBench times
    only CUDA). Each trial's inputs are fresh copies of the same values (made before the
    thrash, outside the timed region): a forward that caches its result by its inputs'
    identity or address recomputes it, as it would on a new batch."""
    times = []
    with torch.no_grad():
        for _ in range(spec["warmup"]):
            model(*inputs)
            if device == "cuda":
                torch.cuda.synchronize()
        for i in range(spec["trials"] + spec["discard_first"]):
            args = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            if device == "cuda":
                torch.empty((32, 1024, 1024), dtype=torch.int64, device=device).fill_(42)
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                model(*args)
                end.record()
                torch.cuda.synchronize()
                ms = start.elapsed_time(end)
            else:
                begin = time.perf_counter()
                model(*args)
                ms = (time.perf_counter() - begin) * 1e3
            if i >= spec["discard_first"]:
                times.append(ms)
    mean = sum(times) / len(times)
    std = (sum((t - mean) ** 2 for t in times) / len(times)) ** 0.5
    ordered = sorted(times)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return {
        "mean_ms": mean,
        "std_ms": std,
        "median_ms": median,
        "min_ms": min(times),
        "max_ms": max(times),
        "trials": len(times),
        "clock": "cuda_event" if device == "cuda" else "perf_counter",
    }


def time_compiled(
    torch: types.ModuleType, model: Any, inputs: list[Any], device: str, spec: dict[str, Any]
) -> dict[str, Any]:
    """The reference under torch.compile (inductor, its default mode), timed as time_forward
    times it eagerly: the second baseline KernelBench users quote. Compilation happens in the
    warm-up calls. Inductor's and Triton's caches go to this worker's scratch folder, and its
    compilation stays in this process (no pool of compile workers)."""
    if not hasattr(torch, "compile"):
        return {"unavailable": f"torch {torch.__version__} has no torch.compile (it came with torch 2.0)"}
    for variable, folder in (("TORCHINDUCTOR_CACHE_DIR", "inductor-cache"), ("TRITON_CACHE_DIR", "triton-cache")):
        os.environ.setdefault(variable, os.path.abspath(folder))
    try:
        import torch._inductor.config as inductor_config

        inductor_config.compile_threads = 1
        return time_forward(torch, torch.compile(model), inputs, device, spec)
    except Exception as e:  # noqa: B902 - a baseline that does not compile is reported, not fatal
        return {"error": error_text(e)}


def forward_profiler(gpu: bool) -> Any:
    """A profiler of the operators a forward dispatches (on the host) and, on the GPU, of the
    kernels it runs (Kineto over CUPTI). torch.autograd.profiler's records them, with their
    streams, as torch.profiler's does, without importing torch._dynamo: 4 s of start-up on
    the H200 (scripts/device_profiler_paths.py). torch.profiler's where the older one does
    not take these arguments."""
    from torch.autograd.profiler import profile

    if not gpu:
        return profile()
    try:
        return profile(use_kineto=True, use_device="cuda", use_cpu=True)
    except TypeError:
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile as kineto_profile

        return kineto_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])


FORWARD_RANGE, MARKER_RANGE = "forward", "marker"
# Around CUDAGraph.capture_begin: PyTorch itself runs a few kernels there, on the graph's
# capture stream (its generators' state filled before the capture), which are not the
# candidate's work on a stream of its own (ForwardAccount.count_kernels).
CAPTURE_RANGE = "capture_begin"


def torch_module() -> types.ModuleType:
    import torch

    return torch


MAX_NAMES = 256  # distinct operator and kernel names reported


class KernelCalls:
    """Calls into the candidate's own kernels: the functions of the extensions kforge built
    for it (prebuilt_load_inline wraps them) and its Triton kernels (JITFunction.run). Each
    judged forward must make at least one (a forward that makes none computed that trial's
    result with the framework: a fallback).

    After the trials, one forward runs twice. While `watch` is set (the first run), each
    call records which of its tensor arguments it changed and whether its every result was
    one of its arguments unchanged (a copy). While `neutralise` is set (the second run, same
    inputs, so the same calls in the same order), the same call's results are replaced: the
    tensors it returned and the arguments it changed the first time (by position, not by
    bytes: an output allocated into a block that still holds the first run's answer looks
    unchanged) become a value drawn once per process, finite (a forward cannot tell it from
    data by NaN checks), integers moved one place along, booleans negated. The engine compares
    the forward's outputs both ways: outputs that do not change were not made by the
    candidate's kernels (a kernel launched and discarded).

    CUDA graphs: a call made while a graph is being captured only records work, so it is
    counted but not watched or neutralised; the graph keeps the tensors its captured calls
    touched, and its every replay is a call of the candidate's kernels on those tensors
    (watched and neutralised as one call). A forward that replays a graph of its kernels
    calls them, though no Python call of an extension function happens.
    """

    def __init__(self) -> None:
        self.count = 0
        self.neutralise = False
        self.neutralised = 0  # tensors replaced
        self.watch = False
        self.watched = 0  # calls seen while watching
        self.copies = 0  # of those, calls whose every result was one of their arguments unchanged
        self.changed = []  # per watched call, the positions of the tensor arguments it changed
        self.replayed = 0  # calls seen while neutralising
        self.fill = 1000.0 + int.from_bytes(os.urandom(2), "little") / 7.0
        self.graph = None  # the CUDA graph being captured (wrap_graphs), if any
        self.replays = 0  # replays of graphs holding calls of the candidate's kernels

    def around(self, call: Callable[[], Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.count += 1
        if self.graph is None and not self.neutralise and not self.watch:
            return call()
        torch = torch_module()
        tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
        if self.graph is not None or (tensors and tensors[0].is_cuda and torch.cuda.is_current_stream_capturing()):
            out = call()  # recorded into a graph, not run: its replays are the calls
            if self.graph is not None:
                self.graph._kforge_tensors += tensors + [r for r in as_list(out) if isinstance(r, torch.Tensor)]
            return out
        if self.neutralise:
            out = call()
            index, self.replayed = self.replayed, self.replayed + 1
            changed = self.changed[index] if index < len(self.changed) else range(len(tensors))
            for i in changed:
                if i < len(tensors):
                    neutralise(tensors[i], self.fill)
                    self.neutralised += 1
            for r in as_list(out):
                if isinstance(r, torch.Tensor):
                    neutralise(r, self.fill)
                    self.neutralised += 1
            return out
        before = [fingerprint(torch, t) for t in tensors]
        out = call()
        results, changed = [], []
        for i, (t, b) in enumerate(zip(tensors, before)):
            after = fingerprint(torch, t)
            if after != b:
                results.append(after)
                changed.append(i)
        results += [fingerprint(torch, r) for r in as_list(out) if isinstance(r, torch.Tensor)]
        self.changed.append(changed)
        self.watched += 1
        if results and all(r in set(before) for r in results):
            self.copies += 1
        return out

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        calls = self

        def call(*args: Any, **kwargs: Any) -> Any:
            return calls.around(lambda: fn(*args, **kwargs), args, kwargs)

        call.__name__ = call.__qualname__ = getattr(fn, "__name__", "kernel")
        call.__doc__ = getattr(fn, "__doc__", None)
        return call

    def wrap_module(self, module: Any) -> Any:
        for name in dir(module):
            f = getattr(module, name, None)
            if not name.startswith("_") and callable(f) and not isinstance(f, type):
                setattr(module, name, self.wrap(f))
        return module

    def wrap_graphs(self) -> None:
        """torch.cuda.CUDAGraph's capture and replay (torch.cuda.graph and
        make_graphed_callables capture through it)."""
        graphs = sys.modules.get("torch.cuda.graphs")
        cls = getattr(graphs, "CUDAGraph", None) if graphs is not None else None
        if cls is None or getattr(cls.replay, "_kforge_counted", False):
            return
        begin, end, replay, calls = cls.capture_begin, cls.capture_end, cls.replay, self

        def capture_begin(graph: Any, *args: Any, **kwargs: Any) -> Any:
            from torch.autograd.profiler import record_function

            graph._kforge_tensors = []
            calls.graph = graph
            with record_function(CAPTURE_RANGE):
                return begin(graph, *args, **kwargs)

        def capture_end(graph: Any, *args: Any, **kwargs: Any) -> Any:
            calls.graph = None
            return end(graph, *args, **kwargs)

        def replayed(graph: Any, *args: Any, **kwargs: Any) -> Any:
            tensors = getattr(graph, "_kforge_tensors", None)
            if not tensors:  # a graph of the framework's work only
                return replay(graph, *args, **kwargs)
            calls.replays += 1
            return calls.around(lambda: replay(graph, *args, **kwargs), tuple(tensors), {})

        replayed._kforge_counted = True
        try:
            cls.capture_begin, cls.capture_end, cls.replay = capture_begin, capture_end, replayed
        except (AttributeError, TypeError):  # a torch whose CUDAGraph is not a Python class
            pass

    def wrap_triton(self) -> None:
        """Triton's launches, once the candidate imported it (its @triton.jit and
        @triton.autotune kernels all launch through JITFunction.run)."""
        jit = sys.modules.get("triton.runtime.jit")
        cls = getattr(jit, "JITFunction", None) if jit is not None else None
        if cls is None or getattr(cls.run, "_kforge_counted", False):
            return
        run, calls = cls.run, self

        def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            return calls.around(lambda: run(self, *args, **kwargs), args, kwargs)

        counted._kforge_counted = True
        cls.run = counted


def neutralise(t: Any, fill: float) -> None:
    """What a kernel made, made into something no correct output is: `fill` (finite) for
    floating types; integers (an argmax's indices) moved one place along, so they stay valid
    indices but not where they belong; booleans negated."""
    t = t.detach()
    if t.is_floating_point() or t.is_complex():
        t.fill_(fill)
    elif t.dtype == torch_module().bool:
        t.logical_not_()
    elif t.numel() > 0:
        t.copy_(t.reshape(-1).roll(1).reshape(t.shape))


def fingerprint(torch: types.ModuleType, t: Any) -> bytes:
    if t.device.type == "cuda":
        torch.cuda.synchronize()
        return device_fingerprint(torch, t)
    return hashlib.sha256(tensor_bytes(torch, t)).digest()


kernel_calls = KernelCalls()


def root_of(event: Any) -> Any:
    while getattr(event, "cpu_parent", None) is not None:
        event = event.cpu_parent
    return event


class ForwardAccount:
    """What every judged forward ran, from PyTorch's profiler: each forward runs under it.
    On every device, the framework's operators it dispatched (ATen's, whether called from
    Python or from the candidate's extension), by name and count: the engine decides which are
    framework compute (src/verify/kernelbench/attribution.cc). On the GPU also its kernels,
    with the streams they ran on: a one-element fill issued by this worker first marks the
    stream PyTorch considers current; ModelNew's kernels must run there (a bare
    <<<grid, block>>> and getCurrentCUDAStream() both do), and every forward must run at least
    one. Accounting every judged forward (not one extra) means a candidate that behaves one
    way under the profiler and another without it is judged on what it did under it; a
    forward that raises, or a record without the forward's range (the profiler was stopped
    inside it), fails its trial."""

    def __init__(self, gpu: bool, trace_path: str) -> None:
        self.gpu, self.trace_path = gpu, trace_path
        # Made once, before any trial: allocated between the poisoning and the forward, it
        # would be carved out of a poisoned block and move the output elsewhere.
        self.marker = torch_module().empty(1, device="cuda") if gpu else None
        self.forwards, self.kernels, self.fewest = 0, 0, None
        self.other_streams, self.other_names = set(), []
        self.ops, self.kernel_names = {}, {}
        self.fewest_calls = None  # calls into the candidate's kernels, the fewest any forward made

    def forward(self, torch: types.ModuleType, model: Any, inputs: list[Any]) -> Any:
        from torch.autograd.profiler import record_function

        marker = self.marker
        if self.gpu:
            torch.cuda.synchronize()
        with forward_profiler(self.gpu) as prof:
            if self.gpu:
                with record_function(MARKER_RANGE):
                    marker.fill_(0)
                torch.cuda.synchronize()
            calls, replays = kernel_calls.count, kernel_calls.replays
            with record_function(FORWARD_RANGE):
                out = model(*inputs)
            calls, replays = kernel_calls.count - calls, kernel_calls.replays - replays
            if self.gpu:
                torch.cuda.synchronize()
        self.count_ops(prof)
        if self.gpu:
            self.count_kernels(prof, replays)
        self.forwards += 1
        self.fewest_calls = calls if self.fewest_calls is None else min(self.fewest_calls, calls)
        return out

    def count_ops(self, prof: Any) -> None:
        # Host events only: Kineto mirrors each range on the GPU's timeline too.
        events = [e for e in prof.function_events if not str(getattr(e, "device_type", "CPU")).endswith("CUDA")]
        ranges = [e for e in events if e.name == FORWARD_RANGE]
        if len(ranges) > 1:  # a mirror the device type did not tell apart: the host's has the operators
            ranges = [r for r in ranges if any(getattr(x, "cpu_parent", None) is r for x in events)] or ranges[:1]
        if len(ranges) != 1:
            raise RuntimeError("the profiler's record of the forward is incomplete (it was stopped inside it)")
        begin, end = ranges[0].time_range.start, ranges[0].time_range.end
        for e in events:
            if e.name in (FORWARD_RANGE, MARKER_RANGE, CAPTURE_RANGE):
                continue
            root = root_of(e)
            # The forward's own operators, and any another thread ran meanwhile; not the
            # profiler's own (entering the range) nor the worker's marker.
            if root is not ranges[0] and not (
                root.name != MARKER_RANGE and begin <= e.time_range.start and e.time_range.end <= end
            ):
                continue
            if e.name in self.ops or len(self.ops) < MAX_NAMES:
                self.ops[e.name] = self.ops.get(e.name, 0) + 1

    def count_kernels(self, prof: Any, replays: int) -> None:
        """`replays`: graphs of the candidate's kernels this forward replayed. The profiler
        may not record a graph's kernels one by one; such a replay counts as a launch (the
        neutralised forward still shows whether what it wrote reaches the output)."""
        prof.export_chrome_trace(self.trace_path)
        with open(self.trace_path) as f:
            trace = json.load(f)
        os.remove(self.trace_path)
        kernels = sorted(
            (e for e in trace.get("traceEvents", []) if isinstance(e, dict) and e.get("cat") == "kernel"),
            key=lambda e: e.get("ts", 0),
        )
        if not kernels:
            raise RuntimeError("the profiler recorded no kernel, not even the worker's marker")
        current = kernels[0].get("args", {}).get("stream")
        ran = kernels[1:]
        # Kernels PyTorch launched inside CUDAGraph.capture_begin (on the host, within that
        # range): the graph's own setup on its capture stream.
        events = [e for e in trace.get("traceEvents", []) if isinstance(e, dict)]
        captures = [
            (e.get("ts", 0), e.get("ts", 0) + e.get("dur", 0))
            for e in events
            if e.get("cat") == "user_annotation" and e.get("name") == CAPTURE_RANGE
        ]
        setup = {
            e.get("args", {}).get("correlation")
            for e in events
            if e.get("cat") in ("cuda_runtime", "cuda_driver")
            and e.get("args", {}).get("correlation") is not None
            and any(b <= e.get("ts", 0) <= end for b, end in captures)
        }
        launched = len(ran) if ran else replays
        self.kernels += launched
        self.fewest = launched if self.fewest is None else min(self.fewest, launched)
        for k in ran:
            name = str(k.get("name", ""))[:300]
            if name in self.kernel_names or len(self.kernel_names) < MAX_NAMES:
                n, us = self.kernel_names.get(name, [0, 0.0])
                self.kernel_names[name] = [n + 1, us + float(k.get("dur", 0) or 0)]
            stream = k.get("args", {}).get("stream")
            if stream != current and k.get("args", {}).get("correlation") not in setup:
                self.other_streams.add(str(stream))
                if len(self.other_names) < 5:
                    self.other_names.append(name[:200])

    def ops_report(self) -> dict[str, Any]:
        if self.forwards == 0:
            return {"ok": False, "error": "no judged forward ran under the profiler"}
        return {"ok": True, "forwards": self.forwards, "ops": self.ops, "fewest_kernel_calls": self.fewest_calls}

    def launches_report(self) -> dict[str, Any]:
        if self.forwards == 0:
            return {"ok": False, "error": "no judged forward ran under the profiler"}
        return {
            "ok": True,
            "forwards": self.forwards,
            "kernels": self.kernels,
            "fewest_kernels": self.fewest,
            "other_streams": sorted(self.other_streams),
            "other_stream_kernels": self.other_names,
            "kernel_names": self.kernel_names,
        }


def neutralised_forward(
    torch: types.ModuleType,
    model: Any,
    get_inputs: Callable[[], list[Any]],
    trial: dict[str, Any],
    device: str,
    kb_seeds: list[int],
) -> dict[str, Any]:
    """The first trial's forward again, as it was and with the candidate's kernels
    neutralised (KernelCalls): digests of both outputs for the engine to compare, and how many
    of the kernels' calls in the first only returned one of their arguments (moved data)."""
    seed = kb_seeds[trial["kernelbench_index"]] if "kernelbench_index" in trial else trial["seed"]
    digests = {}
    try:
        with torch.no_grad():
            for form, neutral in (("as_run", False), ("neutralised", True)):
                set_seed(torch, seed)
                inputs = trial_inputs(torch, get_inputs, trial["distribution"], seed, device)
                set_seed(torch, seed)
                kernel_calls.neutralise, kernel_calls.watch = neutral, not neutral
                try:
                    out = model(*inputs)
                finally:
                    kernel_calls.neutralise = kernel_calls.watch = False
                digests[form] = [
                    fingerprint(torch, t).hex() if isinstance(t, torch.Tensor) else repr(t)[:64] for t in as_list(out)
                ]
                del out, inputs
    except Exception as e:  # the engine fails closed on it: a forward may raise to hide its kernels' role
        return {"ok": True, "raised": error_text(e)[-300:], "neutralised_tensors": kernel_calls.neutralised}
    return {
        "ok": True,
        "as_run": digests["as_run"],
        "neutralised": digests["neutralised"],
        "neutralised_tensors": kernel_calls.neutralised,
        "kernel_calls": kernel_calls.watched,
        "copy_calls": kernel_calls.copies,
    }


def warm_up(torch: types.ModuleType, device: str, launches: bool) -> None:
    """Starts what the candidate's trials need (the CUDA context, the profiler) before its code
    loads, while its extensions build: the first use of each costs a second or more."""
    if device != "cuda":
        return
    torch.zeros(1, device=device)
    if launches:
        try:
            with forward_profiler(True):
                torch.zeros(1, device=device).fill_(1)
                torch.cuda.synchronize()
        except Exception:  # the trials fail closed on an unavailable profiler themselves
            pass


def wait_for_word(path: str) -> Any:
    """A word the engine writes whole (and ends this process if it never does): once its builds
    are over, {"extensions": {key: built}, "poison_file": where the sizes of the reference's
    outputs follow} or {"abort": true}; in that file, {"poison_nbytes": [...]}."""
    while not os.path.exists(path):
        time.sleep(0.005)
    with open(path) as f:
        return json.load(f)


def thunk_module(name: str, path: str, functions: list[str]) -> types.ModuleType:
    """A module of the functions of an extension built with kforge's thunk bindings: each
    calls kforge_fn_NAME(args) (include/kforge/torch_thunks.h) with the GIL held."""
    import ctypes

    library = ctypes.PyDLL(os.path.abspath(path))
    module = types.ModuleType(name)
    module.__file__ = path

    def bind(function_name: str) -> Callable[..., Any]:
        entry = library["kforge_fn_" + function_name]
        entry.restype = ctypes.py_object
        entry.argtypes = [ctypes.py_object]

        def call(*args: Any) -> Any:
            return entry(args)

        call.__name__ = call.__qualname__ = function_name
        return call

    for f in functions:
        setattr(module, f, bind(f))
    return module


def prebuilt_load_inline(extensions: list[dict[str, Any]]) -> Callable[..., Any]:
    import eval_utils as kb

    def load_inline(
        name: str,
        cpp_sources: str | list[str],
        cuda_sources: str | list[str] | None = None,
        functions: str | list[str] | dict[str, str] | None = None,
        extra_cflags: list[str] | None = None,
        extra_cuda_cflags: list[str] | None = None,
        extra_ldflags: list[str] | None = None,
        extra_include_paths: list[str] | None = None,
        build_directory: str | None = None,
        verbose: bool = False,
        with_cuda: bool | None = None,
        is_python_module: bool = True,
        with_pytorch_error_handling: bool = True,
        keep_intermediates: bool = True,
        **ignored: Any,
    ) -> Any:
        key = kb.extension_key(
            kb.normalise(
                dict(
                    name=name,
                    cpp_sources=cpp_sources,
                    cuda_sources=cuda_sources,
                    functions=functions,
                    extra_cflags=extra_cflags,
                    extra_cuda_cflags=extra_cuda_cflags,
                    extra_ldflags=extra_ldflags,
                    extra_include_paths=extra_include_paths,
                    with_cuda=with_cuda,
                    with_pytorch_error_handling=with_pytorch_error_handling,
                )
            )
        )
        built = extensions.get(key)
        if built is None:
            raise RuntimeError(
                f"kforge: load_inline('{name}') was called with arguments kforge did not build "
                "ahead of time; pass its sources as string literals or module-level strings"
            )
        if built["binding"] == "thunks":
            return kernel_calls.wrap_module(thunk_module(name, built["path"], built["functions"]))
        loader = importlib.machinery.ExtensionFileLoader(name, built["path"])
        spec = importlib.util.spec_from_file_location(name, built["path"], loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        return kernel_calls.wrap_module(module)

    return load_inline


def install_cpp_extension(torch: types.ModuleType, extensions: list[dict[str, Any]]) -> None:
    """Puts a stand-in for torch.utils.cpp_extension in place before the candidate imports
    it: its load_inline returns the extensions kforge built (prebuilt_load_inline), and any
    other name read from it comes from the real module, loaded then and only then (importing
    it costs a worker 0.45 s on the H200: scripts/device_meta_probe.py)."""
    name = "torch.utils.cpp_extension"
    spec = importlib.util.find_spec(name)  # before the stand-in is in sys.modules
    stand_in = types.ModuleType(name)
    stand_in.load_inline = prebuilt_load_inline(extensions)
    real = []

    def real_attribute(attribute: str) -> Any:
        if attribute.startswith("__"):  # import machinery asking (__path__: is it a package?)
            raise AttributeError(attribute)
        if not real:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            real.append(module)
        return getattr(real[0], attribute)

    stand_in.__getattr__ = real_attribute
    sys.modules[name] = stand_in
    torch.utils.cpp_extension = stand_in


WARM_FD = 6  # a warm worker's pipe from the engine (src/verify/kernelbench/warm_workers.h)
WARM_IDLE_SECONDS = 7200  # the engine hands out none that waited an hour


def wait_for_job() -> None:
    """A warm worker's wait: one byte on WARM_FD once the engine has written the job; end of
    file (the engine gone, or this worker no longer wanted) or two hours without ends it."""
    ready, _, _ = select.select([WARM_FD], [], [], WARM_IDLE_SECONDS)
    word = os.read(WARM_FD, 1) if ready else b""
    os.close(WARM_FD)
    if not word:
        os._exit(0)


def started_warm() -> bool:
    """Whether the engine started this worker before its job: it gave it its pipe."""
    try:
        return stat.S_ISFIFO(os.fstat(WARM_FD).st_mode)
    except OSError:
        return False


def read_job(path: str) -> dict[str, Any]:
    with open(path) as f:
        job: dict[str, Any] = json.load(f)
    os.remove(path)  # the candidate's code has no business with the job
    return job


def main() -> None:
    global out_dir
    if started_warm():  # the job comes once torch is imported (the engine writes it whole)
        out_dir = "out"
        enter("import_torch")
        import torch

        enter("wait_job")
        wait_for_job()
        job = read_job(sys.argv[1])
        if job["out"] != out_dir:
            raise RuntimeError("a warm worker's job must write to out/")
        if job["device"] == "cuda" and job.get("output_socket") is None:
            os.close(5)  # the export socket a warm GPU worker is started with, unused here
    else:
        job = read_job(sys.argv[1])
        out_dir = job["out"]
        enter("import_torch")
        import torch
    role, device = job["role"], job["device"]

    result["torch"] = torch.__version__
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("PyTorch in this worker sees no CUDA device")
    global exports
    if device == "cuda" and job.get("output_socket") is not None:
        exports = DeviceExports(job["output_socket"], job["device_output_bytes"])

    enter("load_reference")
    reference = load_module("ref_arch", job["reference"])
    for k, v in job.get("constants", {}).items():
        setattr(reference, k, v)
    get_inputs, get_init_inputs = reference.get_inputs, reference.get_init_inputs
    poison_nbytes = job.get("poison_nbytes") or []
    poison_file = None
    if role == "candidate":
        enter("warm_up")
        warm_up(torch, device, job.get("launches"))
        extensions = job.get("extensions")
        if extensions is None:  # they build while this process starts: wait for the engine's word
            enter("wait_build")
            word = wait_for_word(job["extensions_file"])
            if word.get("abort"):
                enter("not_built")  # the engine judges the build, not this
                return
            extensions = word["extensions"]
            poison_file = None if poison_nbytes else word.get("poison_file")  # read before the first forward
        if not poison_nbytes and poison_file is None:
            poison_nbytes = output_nbytes_on_meta(torch, reference, get_inputs, get_init_inputs)
        install_cpp_extension(torch, extensions)
        enter("load_candidate")
        reference.__dict__.pop("Model", None)  # it has none (the engine gave it the reference without Model)
        candidate = load_module("custom_model", job["candidate"])
        kernel_calls.wrap_triton()
        kernel_calls.wrap_graphs()
        model_class = candidate.ModelNew
    else:
        model_class = reference.Model

    enter("init")
    set_seed(torch, SEED)
    init_inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in get_init_inputs()]
    with torch.no_grad():
        set_seed(torch, SEED)
        model = model_class(*init_inputs).to(device)
    result["parameters"] = [
        [n, list(p.shape), hashlib.sha256(tensor_bytes(torch, p)).hexdigest()]
        for n, p in list(model.named_parameters()) + list(model.named_buffers())
    ]
    model64 = copy.deepcopy(model).double() if role == "reference" else None

    enter("trials")
    # Every judged forward of the candidate's runs under the profiler (the timing worker's
    # forwards, timed, do not).
    account = (
        ForwardAccount(device == "cuda", os.path.join(out_dir, "trace.json"))
        if role == "candidate" and not job.get("timing")
        else None
    )
    torch.manual_seed(SEED)
    kb_seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(job.get("kernelbench_trials", 0))]
    for index, trial in enumerate(job["trials"]):
        entry = {"name": trial["name"], "ok": False, "done": False, "error": "", "outputs": []}
        result["trials"].append(entry)
        write_result()  # the engine's deadline for this trial starts now
        seed = kb_seeds[trial["kernelbench_index"]] if "kernelbench_index" in trial else trial["seed"]
        entry["seed"] = seed
        step = Steps(entry)
        try:
            with torch.no_grad():
                set_seed(torch, seed)
                inputs = trial_inputs(torch, get_inputs, trial["distribution"], seed, device)
                step("inputs")
                entry["input_digests"] = input_digests(torch, inputs)
                entry["inputs_sha256"] = inputs_digest(entry["input_digests"])
                step("digest")
                if exports is not None:
                    exports.hand_over_inputs(torch, inputs, index, entry, in_place=role == "candidate")
                    step("hand_over_inputs")
                # The float64 model runs on the inputs as they were before the forward.
                clones = (
                    [x.clone() if isinstance(x, torch.Tensor) else None for x in inputs]
                    if model64 is not None
                    else None
                )
                # Freed blocks of the outputs' sizes, filled with 0xff bytes: memory an output
                # is allocated in and never written shows that pattern, whatever the allocator.
                if poison_file is not None:  # the reference's first forward gives them
                    poison_nbytes = wait_for_word(poison_file).get("poison_nbytes") or []
                    poison_file = None
                    step("waited_for_sizes")
                sizes = poison_nbytes or [x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor)]
                poison = [torch.full((n,), 255, dtype=torch.uint8, device=device) for n in sizes]
                del poison
                step("clone_poison")
                set_seed(torch, seed)
                start = time.perf_counter()
                out = account.forward(torch, model, inputs) if account is not None else model(*inputs)
                if device == "cuda":
                    torch.cuda.synchronize()
                entry["forward_ms"] = (time.perf_counter() - start) * 1e3
                step("forward")
                if role == "reference" and index == 0:  # the candidate's worker waits on these sizes
                    entry["output_shapes"] = [
                        {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape)}
                        for t in as_list(out)
                        if isinstance(t, torch.Tensor)
                    ]
                    write_result()
                if role == "candidate":  # inputs handed over are judged by the engine where they lie
                    handed = {i for i, _ in entry.get("device_inputs", [])}
                    entry["input_digests_after"] = input_digests(torch, inputs, skip=handed)
                    step("mutation_check")
                if job.get("pace_bytes"):  # the reference may write a float64 copy too
                    nbytes = sum(t.numel() * t.element_size() for t in as_list(out) if isinstance(t, torch.Tensor))
                    wait_until_judged(
                        result["trials"][:-1], job["pace_bytes"], nbytes * (3 if role == "reference" else 1)
                    )
                    step("waited_for_judge")
                if exports is not None:  # an earlier trial's memory, until the engine has judged it
                    exports.wait_judged(index)
                    step("waited_for_judge")
                entry["outputs"] = write_outputs(torch, out, "o", index)
                step("write_outputs")
                if model64 is not None:
                    inputs64 = [
                        c.double() if c is not None and c.is_floating_point() else (c if c is not None else x)
                        for x, c in zip(inputs, clones)
                    ]
                    set_seed(torch, seed)
                    out64 = model64(*inputs64)
                    step("forward64")
                    entry["reference64"] = write_reference64(torch, out, out64, index)
                    step("write_reference64")
            entry["ok"] = True
        except Exception as e:  # the trial failed; the engine judges it
            entry["error"] = error_text(e)
        entry["done"] = True
        write_result()
    if exports is not None:  # the last trial's memory must outlive its judging
        enter("handed_over")
        exports.wait_judged(len(job["trials"]))
    if account is not None and job.get("neutralise") and job["trials"]:
        enter("neutralise")
        result["neutralised"] = neutralised_forward(torch, model, get_inputs, job["trials"][0], device, kb_seeds)
    if account is not None:
        result["ops"] = account.ops_report()
        if device == "cuda":
            result["launches"] = account.launches_report()
    if job.get("timing"):
        enter("timing")
        with torch.no_grad():
            set_seed(torch, SEED)  # KernelBench times on get_inputs() drawn after manual_seed(42)
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in get_inputs()]
        result["timing"] = time_forward(torch, model, inputs, device, job["timing"])
        if role == "reference" and job["timing"].get("compiled"):
            enter("timing_compiled")  # written: the eager timing stands if compiling overruns
            result["timing_compiled"] = time_compiled(torch, model, inputs, device, job["timing"])
    result["ok"] = True
    enter("done")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write("usage: kforge_torch_worker.py JOB.json (kforge runs this; it is not meant for hand use)\n")
        sys.exit(2)
    sys.path.insert(0, os.path.dirname(__file__))  # relative: the engine runs this from scratch
    try:
        main()
    except BaseException as e:  # noqa: B902 - the engine reads the stage and the error
        result["error"] = error_text(e)
    try:
        write_result()
    except Exception:
        sys.exit(3)
    if result["ok"]:
        # The engine seals the report that says "done" and then ends this process, so that
        # nothing run at exit (a finalizer, an atexit hook) can edit it. Waits for that.
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            time.sleep(0.05)
    os._exit(0)
