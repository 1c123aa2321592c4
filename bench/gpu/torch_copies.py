#!/usr/bin/env python3
"""The independent measurement gpurig bench is held to on a real GPU.

PyTorch copies timed with CUDA events, with the same method and sizes as
`gpurig bench` (docs/measure.md): pinned host memory (torch's
pin_memory, i.e. cudaHostAlloc), a warm-up of `warmup` copies queued before
the start event, `loops` copies between the events, the median of `samples`
runs; GB/s = 1e9 bytes per second; a device-local copy counts the bytes once
(as nvbandwidth and gpurig do). A single-GPU all-reduce through
torch.distributed with NCCL gives the all-reduce's time per size.

usage: torch_copies.py [--bytes N] [--loops N] [--samples N] [--warmup N]
                       [--allreduce-max N] [--matmul N] [--cupy]   > torch.json
Prints JSON: {"device": ..., "copies": [{"test", "gpu", "median_gbps", ...}],
"allreduce": [{"size_bytes", "time_us"}]}. Needs torch with CUDA.
"""
import argparse
import json
import os
import statistics
import sys


def timed(torch, fn, loops, warmup, samples, stream):
    """Median seconds per run of `loops` calls of fn on stream, events around them."""
    out = []
    with torch.cuda.stream(stream):
        for _ in range(samples):
            for _ in range(warmup):
                fn()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record(stream)
            for _ in range(loops):
                fn()
            end.record(stream)
            end.synchronize()
            out.append(start.elapsed_time(end) / 1000.0)
    return out


def copy_rates(torch, nbytes, loops, warmup, samples, dev):
    torch.cuda.set_device(dev)
    words = nbytes // 4
    stream = torch.cuda.Stream(device=dev)
    host_src = torch.arange(words, dtype=torch.int32).pin_memory()
    host_dst = torch.empty(words, dtype=torch.int32).pin_memory()
    dev_a = torch.empty(words, dtype=torch.int32, device=dev)
    dev_b = torch.empty(words, dtype=torch.int32, device=dev)
    dev_a.copy_(host_src)
    torch.cuda.synchronize(dev)
    tests = {
        "h2d": lambda: dev_b.copy_(host_src, non_blocking=True),
        "d2h": lambda: host_dst.copy_(dev_a, non_blocking=True),
        "local": lambda: dev_b.copy_(dev_a, non_blocking=True),
    }
    rows = []
    for name, fn in tests.items():
        secs = timed(torch, fn, loops, warmup, samples, stream)
        rates = [nbytes * loops / s / 1e9 for s in secs]
        rows.append({"test": name, "gpu": dev, "samples_gbps": rates,
                     "median_gbps": statistics.median(rates)})
    # the data check: what came back is what went out
    torch.cuda.synchronize(dev)
    if not torch.equal(host_dst, host_src) or not torch.equal(dev_b.cpu(), host_src):
        raise SystemExit("torch_copies.py: a copy came back wrong")
    return rows


def allreduce_times(torch, max_bytes, iters):
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1)
    rows = []
    size = 4096
    while size <= max_bytes:
        t = torch.ones(size // 4, dtype=torch.float32, device=0)
        for _ in range(5):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            dist.all_reduce(t)
        end.record()
        end.synchronize()
        rows.append({"size_bytes": size, "time_us": start.elapsed_time(end) * 1000.0 / iters})
        size *= 4
    dist.destroy_process_group()
    return rows


def matmul_rates(torch, n, iters):
    """torch.matmul TFLOPS at n x n x n in fp16 and bf16 (fp32 accumulate, cuBLAS's default),
    random inputs, three input sets rotated, median of 5 event-timed runs of iters products."""
    rows = []
    for dt in (torch.float16, torch.bfloat16):
        sets = [(torch.randn(n, n, device=0, dtype=dt), torch.randn(n, n, device=0, dtype=dt)) for _ in range(3)]
        c = torch.empty(n, n, device=0, dtype=dt)
        for a, b in sets:
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        times = []
        for _ in range(5):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for i in range(iters):
                a, b = sets[i % 3]
                torch.matmul(a, b, out=c)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1000.0 / iters)
        t = statistics.median(times)
        rows.append({"dtype": str(dt).replace("torch.", ""), "n": n, "tflops": 2.0 * n ** 3 / t / 1e12})
    return rows


def cupy_copies(nbytes, loops, samples):
    """The same three copies through CuPy (pinned host memory, CUDA events), when CuPy is there."""
    try:
        import cupy as cp
        import numpy as np
    except ImportError as e:
        return {"error": str(e)}
    rows = []
    words = nbytes // 4
    mem = cp.cuda.alloc_pinned_memory(nbytes)
    host = np.frombuffer(mem, dtype=np.int32, count=words)
    host[:] = np.arange(words, dtype=np.int32)
    a = cp.empty(words, dtype=cp.int32)
    b = cp.empty(words, dtype=cp.int32)
    stream = cp.cuda.Stream(non_blocking=True)
    tests = {
        "h2d": lambda: a.set(host, stream=stream),
        "d2h": lambda: a.get(stream=stream, out=host),
        "local": lambda: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, nbytes, 3, stream.ptr),
    }
    for name, fn in tests.items():
        rates = []
        for _ in range(samples):
            for _ in range(2):
                fn()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            for _ in range(loops):
                fn()
            end.record(stream)
            end.synchronize()
            rates.append(nbytes * loops / (cp.cuda.get_elapsed_time(start, end) / 1000.0) / 1e9)
        rows.append({"test": name, "gpu": 0, "median_gbps": statistics.median(rates)})
    return rows


def loaded_libraries(names):
    """Which files this process mapped for each library name (the NCCL that torch uses)."""
    found = {}
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            for n in names:
                if n in path:
                    found.setdefault(n, set()).add(path)
    return {k: sorted(v) for k, v in found.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=256 << 20)
    ap.add_argument("--loops", type=int, default=8)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--allreduce-max", type=int, default=1 << 30)
    ap.add_argument("--allreduce-iters", type=int, default=20)
    ap.add_argument("--matmul", type=int, default=0, help="also time torch.matmul at N x N x N")
    ap.add_argument("--matmul-iters", type=int, default=50)
    ap.add_argument("--cupy", action="store_true", help="also time the copies through CuPy")
    ap.add_argument("--skip-copies", action="store_true", help="no copies and no all-reduce (--matmul alone)")
    a = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("torch_copies.py: torch sees no CUDA GPU", file=sys.stderr)
        return 3
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "bytes": a.bytes, "loops": a.loops, "samples": a.samples, "warmup": a.warmup,
           "copies": []}
    for dev in range(0 if a.skip_copies else torch.cuda.device_count()):
        out["copies"] += copy_rates(torch, a.bytes, a.loops, a.warmup, a.samples, dev)
    if not a.skip_copies:
        out["allreduce"] = allreduce_times(torch, a.allreduce_max, a.allreduce_iters)
    out["nccl_version"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    if a.matmul:
        out["matmul"] = matmul_rates(torch, a.matmul, a.matmul_iters)
    if a.cupy:
        out["cupy"] = cupy_copies(a.bytes, a.loops, a.samples)
    out["libraries"] = loaded_libraries(["libnccl", "libcublas", "libcuda.so", "libcudart"])
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
