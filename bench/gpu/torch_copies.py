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
                       [--allreduce-max N]   > torch.json
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=256 << 20)
    ap.add_argument("--loops", type=int, default=8)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--allreduce-max", type=int, default=1 << 30)
    ap.add_argument("--allreduce-iters", type=int, default=20)
    a = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("torch_copies.py: torch sees no CUDA GPU", file=sys.stderr)
        return 3
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "bytes": a.bytes, "loops": a.loops, "samples": a.samples, "warmup": a.warmup,
           "copies": []}
    for dev in range(torch.cuda.device_count()):
        out["copies"] += copy_rates(torch, a.bytes, a.loops, a.warmup, a.samples, dev)
    out["allreduce"] = allreduce_times(torch, a.allreduce_max, a.allreduce_iters)
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
