#!/usr/bin/env python3
"""gpurig's monitors beside nvidia-smi's, on a real GPU (issue 36, checks 4-6).

usage:
  side.py watch GPURIG DIR      gpurig watch --count 10 --json and nvidia-smi dmon -c 10 at once,
                                each one's CPU seconds (user + system, from wait4) per sample;
                                writes DIR/watch.jsonl, DIR/dmon.txt, prints a Markdown table
  side.py export GPURIG DIR     gpurig export on 127.0.0.1:PORT, one scrape beside one
                                nvidia-smi --query-gpu read; writes DIR/metrics.txt,
                                DIR/smi-query.csv, prints a table of the series both give
  side.py burn BURN.json DMON   burn's peak power, peak temperature and lowest SM clock against
                                nvidia-smi dmon's over the same run (dmon -s pucv output)
Exit 0 when the run worked and every compared value agrees within its tolerance, 1 when a
value differs, 2 when a command failed or its output is unreadable.
"""
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request


def run_both(cmds, outs):
    """Start every command at once; return {name: (rc, cpu_seconds)} from wait4."""
    procs = {}
    for name, cmd in cmds.items():
        f = open(outs[name], "w")
        procs[name] = (subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT), f)
    res = {}
    for name, (p, f) in procs.items():
        _, status, ru = os.wait4(p.pid, 0)
        f.close()
        p.returncode = os.waitstatus_to_exitcode(status)
        res[name] = (p.returncode, ru.ru_utime + ru.ru_stime)
    return res


def dmon_rows(path):
    """nvidia-smi dmon's rows as dicts keyed by its header's names."""
    cols, rows = None, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                if cols is None:
                    cols = line[1:].split()
                continue
            parts = line.split()
            if cols and len(parts) == len(cols):
                rows.append(dict(zip(cols, parts)))
    return rows


def fnum(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def watch(gpurig, d):
    n = 10
    res = run_both({"gpurig": [gpurig, "watch", "--count", str(n), "--json"],
                    "dmon": ["nvidia-smi", "dmon", "-c", str(n), "-s", "pucvmet"]},
                   {"gpurig": f"{d}/watch.jsonl", "dmon": f"{d}/dmon.txt"})
    samples = []
    with open(f"{d}/watch.jsonl") as f:
        for line in f:
            try:
                samples.append(json.loads(line))
            except ValueError:
                pass
    dm = dmon_rows(f"{d}/dmon.txt")
    print("| tool | exit | samples | CPU s in all | CPU ms per sample |")
    print("|------|-----:|--------:|------------:|-----------------:|")
    for name, count in (("gpurig watch --json", len(samples)), ("nvidia-smi dmon", len(dm))):
        rc, cpu = res["gpurig" if name.startswith("gpurig") else "dmon"]
        per = cpu / count * 1000 if count else float("nan")
        print(f"| {name} | {rc} | {count} | {cpu:.3f} | {per:.2f} |")
    # the means over the run of what both read, GPU 0
    pairs = [("power_w", "pwr"), ("temp_c", "gtemp"), ("sm_clock_mhz", "pclk"),
             ("mem_clock_mhz", "mclk"), ("util_pct", "sm"), ("mem_temp_c", "mtemp")]
    ok = res["gpurig"][0] in (0, 1) and res["dmon"][0] == 0 and len(samples) == n
    print("\n| GPU 0, mean of the run | gpurig watch | nvidia-smi dmon |")
    print("|------------------------|-------------:|----------------:|")
    for gk, dk in pairs:
        gv = [fnum(s["gpus"][0].get(gk)) for s in samples if s.get("gpus")]
        dv = [fnum(r.get(dk)) for r in dm if r.get("gpu") == "0"]
        gv = [v for v in gv if v is not None]
        dv = [v for v in dv if v is not None]
        gm = f"{sum(gv) / len(gv):.1f}" if gv else "none"
        dmean = f"{sum(dv) / len(dv):.1f}" if dv else "none"
        print(f"| {gk} / {dk} | {gm} | {dmean} |")
    return 0 if ok else 1


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape(url, deadline):
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                body = r.read().decode()
                if "DCGM_FI_DEV_GPU_TEMP" in body:
                    return body
        except OSError:
            pass
        time.sleep(0.2)
    return None


def series(body):
    out = {}
    for line in body.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r'([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)', line)
        if m:
            gpu = re.search(r'gpu="(\d+)"', m.group(2) or "")
            out.setdefault(m.group(1), {})[gpu.group(1) if gpu else "-"] = float(m.group(3))
    return out


QUERY = ["index", "temperature.gpu", "power.draw", "memory.used", "memory.free", "clocks.sm",
         "clocks.mem", "utilization.gpu", "utilization.memory", "power.limit",
         "pcie.link.gen.current", "pcie.link.width.current", "temperature.memory"]
# dcgm-exporter's series -> (nvidia-smi query field, tolerance)
MAP = {"DCGM_FI_DEV_GPU_TEMP": ("temperature.gpu", 2), "DCGM_FI_DEV_POWER_USAGE": ("power.draw", 20),
       "DCGM_FI_DEV_FB_USED": ("memory.used", 64), "DCGM_FI_DEV_FB_FREE": ("memory.free", 64),
       "DCGM_FI_DEV_SM_CLOCK": ("clocks.sm", 60), "DCGM_FI_DEV_MEM_CLOCK": ("clocks.mem", 60),
       "DCGM_FI_DEV_GPU_UTIL": ("utilization.gpu", 10), "DCGM_FI_DEV_MEM_COPY_UTIL": ("utilization.memory", 10),
       "DCGM_FI_DEV_POWER_MGMT_LIMIT": ("power.limit", 0.5), "DCGM_FI_DEV_MEMORY_TEMP": ("temperature.memory", 2),
       "DCGM_FI_DEV_PCIE_LINK_GEN": ("pcie.link.gen.current", 0), "DCGM_FI_DEV_PCIE_LINK_WIDTH": ("pcie.link.width.current", 0)}


def export(gpurig, d):
    port = free_port()
    p = subprocess.Popen([gpurig, "export", "--listen", f"127.0.0.1:{port}", "--interval", "1"],
                         stdout=subprocess.DEVNULL, stderr=open(f"{d}/export.err", "w"))
    try:
        body = scrape(f"http://127.0.0.1:{port}/metrics", time.time() + 20)
        q = subprocess.run(["nvidia-smi", f"--query-gpu={','.join(QUERY)}", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, timeout=20)
    finally:
        p.terminate()
        rc = p.wait(timeout=10)
    if body is None:
        print("no scrape answered within 20 s")
        return 2
    with open(f"{d}/metrics.txt", "w") as f:
        f.write(body)
    with open(f"{d}/smi-query.csv", "w") as f:
        f.write(q.stdout)
    smi = {}
    for line in q.stdout.splitlines():
        vals = [v.strip() for v in line.split(",")]
        if len(vals) == len(QUERY):
            smi[vals[0]] = dict(zip(QUERY, vals))
    s = series(body)
    ok = rc == 0
    print(f"export exit status after SIGTERM: {rc}\n")
    print("| series | GPU | gpurig | nvidia-smi | agrees |")
    print("|--------|----:|-------:|-----------:|--------|")
    for name, (field, tol) in MAP.items():
        for gpu, row in sorted(smi.items()):
            sv = fnum(row.get(field))
            gv = s.get(name, {}).get(gpu)
            if gv is None:
                print(f"| {name} | {gpu} | none | {row.get(field)} | {'gap' if sv is not None else 'both none'} |")
                continue
            same = sv is not None and abs(gv - sv) <= tol
            ok = ok and same
            print(f"| {name} | {gpu} | {gv:g} | {row.get(field)} | {'yes' if same else 'NO'} |")
    return 0 if ok else 1


def burn(burn_json, dmon):
    with open(burn_json) as f:
        b = json.load(f)
    dm = dmon_rows(dmon)
    ok = True
    print(f"burn exit {b.get('exit')}, ran {b.get('ran_s')} s, GEMM n = {b.get('gemm_n')}\n")
    print("| GPU | burn peak W | dmon peak W | burn peak °C | dmon peak °C | burn lowest SM MHz | dmon lowest SM MHz (busy rows) | burn GEMM TFLOPS |")
    print("|----:|-----:|-----:|-----:|-----:|-----:|-----:|-----:|")
    for g in b.get("gpus", []):
        rows = [r for r in dm if r.get("gpu") == str(g["index"])]
        pw = [fnum(r.get("pwr")) for r in rows if fnum(r.get("pwr")) is not None]
        tc = [fnum(r.get("gtemp")) for r in rows if fnum(r.get("gtemp")) is not None]
        busy = [fnum(r.get("pclk")) for r in rows if (fnum(r.get("sm")) or 0) >= 50]
        print(f"| {g['index']} | {g.get('power_max_w')} | {max(pw) if pw else 'none'} | {g.get('temp_max_c')} | "
              f"{max(tc) if tc else 'none'} | {g.get('sm_clock_min_mhz')} | {min(busy) if busy else 'none'} | "
              f"{g.get('gemm_tflops')} |")
        if pw and g.get("power_max_w") is not None and abs(max(pw) - g["power_max_w"]) > 0.1 * max(pw):
            ok = False
    return 0 if ok else 1


def main(argv):
    if len(argv) != 4 or argv[1] not in ("watch", "export", "burn"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        return {"watch": watch, "export": export, "burn": burn}[argv[1]](argv[2], argv[3])
    except (OSError, ValueError, KeyError, subprocess.SubprocessError) as e:
        print(f"side.py {argv[1]}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
