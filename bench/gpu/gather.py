#!/usr/bin/env python3
"""Gathers what gpurig reads of a machine into a tree that `--root DIR` replays.

usage: gather.py OUT.tar.gz
Reads (never writes) the PCI devices under /sys/devices, the links of /sys/bus/pci and
/sys/class (net, infiniband, nvme), NUMA nodes, CPU topology, IOMMU groups, DMI ids, the
NVIDIA module's parameters and version, and /proc's cpuinfo, meminfo, cmdline and
driver/nvidia. sysfs files report a size they do not have, so each file is read and
stored with the length read; a file that cannot be read is left out. Links stay links.
Binary and write-only attributes (resource*, rom, remove, reset, rescan, ...) are
skipped. Bounded: at most 40,000 entries and 64 KiB per file.
"""
import io
import os
import sys
import tarfile
import time

SKIP = {"remove", "rescan", "reset", "rom", "new_id", "remove_id", "bind", "unbind", "uevent",
        "driver_override", "reset_method", "sriov_numvfs", "sriov_drivers_autoprobe"}
ROOTS = ["/sys/devices/pci", "/sys/bus/pci/devices", "/sys/bus/pci/slots", "/sys/class/net",
         "/sys/class/infiniband", "/sys/class/nvme", "/sys/devices/system/node",
         "/sys/devices/system/cpu", "/sys/kernel/iommu_groups", "/sys/class/dmi/id",
         "/sys/devices/virtual/dmi", "/sys/module/nvidia", "/sys/module/nvidia_uvm",
         "/proc/driver/nvidia"]
FILES = ["/proc/cpuinfo", "/proc/meminfo", "/proc/cmdline", "/proc/version", "/proc/sys/kernel/numa_balancing",
         "/sys/kernel/mm/transparent_hugepage/enabled"]
MAX_ENTRIES, MAX_BYTES = 40000, 65536


def add_file(tar, path, seen):
    name = os.path.basename(path)
    if name in SKIP or name.startswith("resource") or path in seen:
        return
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES)
    except OSError:
        return
    seen.add(path)
    info = tarfile.TarInfo(path.lstrip("/"))
    info.size, info.mtime, info.mode = len(data), int(time.time()), 0o444
    tar.addfile(info, io.BytesIO(data))


def add_link(tar, path, seen):
    if path in seen:
        return
    seen.add(path)
    info = tarfile.TarInfo(path.lstrip("/"))
    info.type, info.linkname, info.mtime = tarfile.SYMTYPE, os.readlink(path), int(time.time())
    tar.addfile(info)


def walk(tar, top, seen):
    if top == "/sys/devices/pci":
        tops = [f"/sys/devices/{d}" for d in os.listdir("/sys/devices") if d.startswith("pci")]
    else:
        tops = [top]
    for t in tops:
        if os.path.islink(t):
            add_link(tar, t, seen)
            continue
        for dirpath, dirs, files in os.walk(t, followlinks=False):
            # cpu: topology, cache and cpufreq only; the rest is large and unread
            if dirpath.startswith("/sys/devices/system/cpu/cpu") and dirpath.count("/") == 5:
                dirs[:] = [d for d in dirs if d in ("topology", "cache", "cpufreq") or d.startswith("index")]
            dirs[:] = [d for d in dirs if d not in ("power", "msi_irqs", "holders", "subsystem")]
            for n in dirs + files:
                p = os.path.join(dirpath, n)
                if len(seen) >= MAX_ENTRIES:
                    return
                if os.path.islink(p):
                    add_link(tar, p, seen)
                elif n in files:
                    add_file(tar, p, seen)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    seen = set()
    with tarfile.open(argv[1], "w:gz") as tar:
        for top in ROOTS:
            if top == "/sys/devices/pci" or os.path.exists(top):
                walk(tar, top, seen)
        for f in FILES:
            add_file(tar, f, seen)
    print(f"gather.py: {len(seen)} entries in {argv[1]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
