#!/usr/bin/env python3
"""`gpurig gpus --json` against `nvidia-smi -q -x`, field by field (issue 36, check 1).

usage: smi_compare.py GPUS.json NVIDIA-SMI-Q.xml   > table.md
One Markdown row per GPU and field: what nvidia-smi says, what gpurig says,
and whether they agree (exactly for names and ids, within a stated tolerance
for readings that move between the two reads: power, temperature, memory
used). A field nvidia-smi gives and gpurig leaves out is a row too ("gpurig
has none"), so the gaps are listed, not hidden. Exit 0 when every field both
give agrees, 1 otherwise, 2 on unreadable input.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET


def num(text):
    """The first number in an nvidia-smi value ("81559 MiB", "700.00 W"), None for N/A."""
    if text is None:
        return None
    m = re.search(r"-?\d+(\.\d+)?", text)
    return float(m.group(0)) if m else None


def txt(node, path):
    e = node.find(path)
    return e.text.strip() if e is not None and e.text is not None else None


def tlimit(g, threshold_path):
    """Drivers from R535 on print thresholds relative to T.Limit: the margin now
    (gpu_temp_tlimit, "54 C" below the limit) and each threshold's offset from
    the limit ("-2 C" for slowdown); the absolute threshold NVML gives is
    current + margin - offset (33 + 54 + 2 = 89 C on the H200 measured)."""
    cur, margin, off = (num(txt(g, "temperature/gpu_temp")), num(txt(g, "temperature/gpu_temp_tlimit")),
                        num(txt(g, threshold_path)))
    return None if None in (cur, margin, off) else cur + margin - off


def smi_gpus(root):
    out = {}
    for g in root.findall("gpu"):
        bus = g.get("id", "").lower()
        # nvidia-smi prints an 8-digit domain: 00000000:18:00.0
        m = re.match(r"([0-9a-f]+):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])", bus)
        if m:
            bus = f"{int(m.group(1), 16):04x}:{m.group(2)}:{m.group(3)}.{m.group(4)}"
        ecc = txt(g, "ecc_mode/current_ecc")
        out[bus] = {
            "name": txt(g, "product_name"),
            "uuid": txt(g, "uuid"),
            "pci_bus_id": bus,
            "mem_gib": (num(txt(g, "fb_memory_usage/total")) or 0) / 1024.0,
            "mem_used_gib": (num(txt(g, "fb_memory_usage/used")) or 0) / 1024.0,
            "mem_reserved_gib": (num(txt(g, "fb_memory_usage/reserved")) or 0) / 1024.0,
            "bar1_gib": (num(txt(g, "bar1_memory_usage/total")) or 0) / 1024.0,
            "link.gen": num(txt(g, "pci/pci_gpu_link_info/pcie_gen/current_link_gen")),
            "link.max_gen": num(txt(g, "pci/pci_gpu_link_info/pcie_gen/max_link_gen")),
            "link.width": num(txt(g, "pci/pci_gpu_link_info/link_widths/current_link_width")),
            "link.max_width": num(txt(g, "pci/pci_gpu_link_info/link_widths/max_link_width")),
            "power_w": num(txt(g, "gpu_power_readings/instant_power_draw")) or
                       num(txt(g, "gpu_power_readings/power_draw")) or num(txt(g, "power_readings/power_draw")),
            "power_limit_w": num(txt(g, "gpu_power_readings/current_power_limit")) or
                             num(txt(g, "power_readings/power_limit")),
            "power_default_limit_w": num(txt(g, "gpu_power_readings/default_power_limit")) or
                                     num(txt(g, "power_readings/default_power_limit")),
            "temp_c": num(txt(g, "temperature/gpu_temp")),
            "temp_slowdown_c": num(txt(g, "temperature/gpu_temp_slow_threshold")) or
                               tlimit(g, "temperature/gpu_temp_slow_tlimit_threshold"),
            "temp_shutdown_c": num(txt(g, "temperature/gpu_temp_max_threshold")) or
                               tlimit(g, "temperature/gpu_temp_max_tlimit_threshold"),
            "ecc_enabled": None if ecc in (None, "N/A") else ecc == "Enabled",
            "persistence_mode": txt(g, "persistence_mode") == "Enabled",
            "util_gpu_pct": num(txt(g, "utilization/gpu_util")),
            "util_mem_pct": num(txt(g, "utilization/memory_util")),
            "sm_clock_mhz": num(txt(g, "clocks/sm_clock")),
            "mem_clock_mhz": num(txt(g, "clocks/mem_clock")),
            "max_sm_clock_mhz": num(txt(g, "max_clocks/sm_clock")),
            "max_mem_clock_mhz": num(txt(g, "max_clocks/mem_clock")),
            "compute_mode": txt(g, "compute_mode"),
            "numa_node": num(txt(g, "numa_node_id")) if txt(g, "numa_node_id") not in (None, "N/A") else None,
            "vbios": txt(g, "vbios_version"),
        }
    return out


def gr_flat(g):
    f = dict(g)
    for k, v in (g.get("link") or {}).items():
        f["link." + k] = v
    return f


# field: tolerance (None = exact); readings move between the two reads
TOL = {"mem_gib": 0.01, "mem_reserved_gib": 0.002, "bar1_gib": 0.01, "mem_used_gib": 0.25, "power_w": 30.0, "temp_c": 2.0,
       "util_gpu_pct": 10.0, "util_mem_pct": 10.0, "power_limit_w": 0.5, "power_default_limit_w": 0.5,
       "sm_clock_mhz": 60.0, "mem_clock_mhz": 60.0}


def agree(field, a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= TOL.get(field, 1e-6)
    return str(a) == str(b)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            gr = json.load(f)
        smi = ET.parse(argv[2]).getroot()
    except (OSError, ValueError, ET.ParseError) as e:
        print(f"smi_compare.py: {e}", file=sys.stderr)
        return 2
    sg = smi_gpus(smi)
    ok = True
    print(f"nvidia-smi: driver {txt(smi, 'driver_version')}, CUDA {txt(smi, 'cuda_version')}; "
          f"gpurig: driver {gr.get('driver_version')}, CUDA {gr.get('cuda_version')}\n")
    if gr.get("driver_version") != txt(smi, "driver_version"):
        ok = False
    print("| GPU | field | nvidia-smi | gpurig | agrees |")
    print("|-----|-------|------------|--------|--------|")
    for g in gr.get("gpus", []):
        f = gr_flat(g)
        s = sg.get(g.get("pci_bus_id"))
        if s is None:
            print(f"| {g.get('pci_bus_id')} | (all) | not listed | listed | NO |")
            ok = False
            continue
        for field, sv in s.items():
            if field not in f:
                print(f"| {g['index']} | {field} | {sv} | gpurig has none | gap |")
                continue
            gv = f[field]
            same = agree(field, sv, gv)
            ok = ok and same
            print(f"| {g['index']} | {field} | {sv} | {gv} | {'yes' if same else 'NO'} |")
    missing = set(sg) - {g.get("pci_bus_id") for g in gr.get("gpus", [])}
    for bus in sorted(missing):
        print(f"| {bus} | (all) | listed | not listed | NO |")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
