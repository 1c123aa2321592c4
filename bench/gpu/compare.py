#!/usr/bin/env python3
"""Side by side: gpurig bench's copies against the independent PyTorch ones.

usage: compare.py GPURIG_BENCH.json TORCH.json
Prints one row per GPU and test (host -> GPU, GPU -> host, within GPU):
gpurig's median, torch's median, gpurig / torch, the tolerance the issue sets
(host <-> GPU within 3 %, device-local within 5 %) and whether it holds; then
the all-reduce times at the sizes both have. Exit 0 when every row holds,
1 when one does not, 2 on unreadable input. A Markdown table, for
docs/measure.md.
"""
import json
import sys

TOLERANCE = {"h2d": 0.03, "d2h": 0.03, "local": 0.05}
TITLE = {"h2d": "host -> GPU", "d2h": "GPU -> host", "local": "within GPU"}


def gpurig_copies(j):
    """{(test, gpu): median GB/s} of gpurig's copy-engine rows that measured."""
    rows = {}
    for r in j.get("results", []):
        if r.get("engine") != "ce" or r.get("status") != "ok" or r.get("test") not in TOLERANCE:
            continue
        gpu = r["dst_gpu"] if r["test"] == "h2d" else r["src_gpu"]
        rows[(r["test"], gpu)] = r["median_gbps"]
    return rows


def torch_copies(j):
    return {(r["test"], r["gpu"]): r["median_gbps"] for r in j.get("copies", [])}


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            g = json.load(f)
        with open(argv[2]) as f:
            t = json.load(f)
    except (OSError, ValueError) as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    gr, tc = gpurig_copies(g), torch_copies(t)
    ok = True
    print("| GPU | test | gpurig GB/s | PyTorch GB/s | gpurig / PyTorch | tolerance | holds |")
    print("|-----|------|------------:|-------------:|-----------------:|----------:|-------|")
    for key in sorted(set(gr) & set(tc), key=lambda k: (k[1], list(TOLERANCE).index(k[0]))):
        test, gpu = key
        ratio = gr[key] / tc[key] if tc[key] > 0 else 0.0
        holds = abs(ratio - 1.0) <= TOLERANCE[test]
        ok = ok and holds
        print(f"| {gpu} | {TITLE[test]} | {gr[key]:.1f} | {tc[key]:.1f} | {ratio:.3f} | "
              f"{TOLERANCE[test] * 100:.0f} % | {'yes' if holds else 'NO'} |")
    missing = sorted(set(tc) - set(gr))
    if missing:
        ok = False
        print(f"\ngpurig has no figure for: {', '.join(f'{TITLE[k[0]]} GPU{k[1]}' for k in missing)}")
    # torch.distributed reduces in place: gpurig's in-place column is the one to compare
    ar_g = {r["size_bytes"]: (r.get("in_place") or r)["time_us"] for r in (g.get("allreduce") or {}).get("sizes", [])}
    ar_t = {r["size_bytes"]: r["time_us"] for r in t.get("allreduce", [])}
    both = sorted(set(ar_g) & set(ar_t))
    if both:
        print("\n| all-reduce bytes | gpurig µs (in place) | torch.distributed µs | gpurig / torch |")
        print("|-----------------:|----------:|---------------------:|---------------:|")
        for s in both:
            r = ar_g[s] / ar_t[s] if ar_t[s] > 0 else 0.0
            print(f"| {s} | {ar_g[s]:.1f} | {ar_t[s]:.1f} | {r:.3f} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
