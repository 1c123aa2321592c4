#!/usr/bin/env python3
"""Writes the hand-made sysfs fixture trees under tests/data/trees/ (committed;
rerun only to change them). Each tree is what hwloc-gather-topology would
gather without root: /sys/bus/pci/devices links into /sys/devices/pciDDDD:BB,
64-byte config files, link speed/width files, AER counters, /proc/cpuinfo."""
import os, shutil, struct, sys

HERE = os.path.dirname(os.path.abspath(__file__))

def config(vendor, device, cls, bridge=None, subv=0, subd=0, acs=None):
    """64 bytes of config space, what non-root users read; bridges (header type 1) carry their bus
    numbers. With acs (a control word) the full 4096 bytes a root gather reads: an AER extended
    capability at 0x100 that chains to an ACS capability (0x000d) at 0x148."""
    b = bytearray(64 if acs is None else 4096)
    if acs is not None:
        struct.pack_into('<I', b, 0x100, 0x0001 | (1 << 16) | (0x148 << 20))
        struct.pack_into('<IHH', b, 0x148, 0x000d | (1 << 16), 0x005f, acs)
    struct.pack_into('<HH', b, 0, vendor, device)
    b[8] = 0xa1                      # revision
    b[9], b[10], b[11] = cls & 0xff, (cls >> 8) & 0xff, (cls >> 16) & 0xff
    if bridge:
        b[0x0e] = 1
        b[0x18], b[0x19], b[0x1a] = bridge
    else:
        struct.pack_into('<HH', b, 0x2c, subv, subd)
    return bytes(b)

def write(path, data, mode='w'):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb' if isinstance(data, bytes) else 'w') as f:
        f.write(data)

SPEED = {1: '2.5 GT/s PCIe', 2: '5.0 GT/s PCIe', 3: '8.0 GT/s PCIe', 4: '16.0 GT/s PCIe', 5: '32.0 GT/s PCIe'}

def aer(kind, total):
    names = {'correctable': ['RxErr', 'BadTLP', 'BadDLLP', 'Rollover', 'Timeout', 'NonFatalErr',
                             'CorrIntErr', 'HeaderOF'],
             'nonfatal': ['Undefined', 'DLP', 'SDES', 'TLP', 'FCP', 'CmpltTO', 'CmpltAbrt', 'UnxCmplt',
                          'RxOF', 'MalfTLP', 'ECRC', 'UnsupReq', 'ACSViol']}
    lines = []
    for i, n in enumerate(names.get(kind, names['nonfatal'])):
        lines.append('%s %d' % (n, total if i == 0 else 0))
    tag = {'correctable': 'COR', 'nonfatal': 'NONFATAL', 'fatal': 'FATAL'}[kind]
    lines.append('TOTAL_ERR_%s %d' % (tag, total))
    return '\n'.join(lines) + '\n'

def device(root, hb, path, vendor, device_id, cls, cur=(4, 16), maxl=(4, 16), numa=0, bridge=None,
           driver=None, aer_counts=None, iommu=None, subv=0, subd=0, bar1=None, iommu_type=None, raw=None, acs=None,
           rdma=None, cpus=None):
    """path: list of BDFs from the host bridge down to this device. rdma: the names of its RDMA
    devices, listed under its infiniband/ directory as the kernel does. cpus: (first, last) of the
    CPUs local to it (default 0-15)."""
    bdf = path[-1]
    d = os.path.join(root, 'sys/devices', 'pci' + hb, *path)
    write(os.path.join(d, 'vendor'), '0x%04x\n' % vendor)
    write(os.path.join(d, 'device'), '0x%04x\n' % device_id)
    write(os.path.join(d, 'class'), '0x%06x\n' % cls)
    write(os.path.join(d, 'subsystem_vendor'), '0x%04x\n' % subv)
    write(os.path.join(d, 'subsystem_device'), '0x%04x\n' % subd)
    write(os.path.join(d, 'config'), config(vendor, device_id, cls, bridge, subv, subd, acs))
    write(os.path.join(d, 'numa_node'), '%d\n' % numa)
    lo, hi = cpus or (0, 15)
    write(os.path.join(d, 'local_cpus'), '00000000,%08x\n' % (((1 << (hi - lo + 1)) - 1) << lo))
    write(os.path.join(d, 'local_cpulist'), '%d-%d\n' % (lo, hi))
    write(os.path.join(d, 'current_link_speed'), SPEED[cur[0]] + '\n')
    write(os.path.join(d, 'current_link_width'), '%d\n' % cur[1])
    write(os.path.join(d, 'max_link_speed'), SPEED[maxl[0]] + '\n')
    write(os.path.join(d, 'max_link_width'), '%d\n' % maxl[1])
    if bridge:
        write(os.path.join(d, 'secondary_bus_number'), '%d\n' % bridge[1])
        write(os.path.join(d, 'subordinate_bus_number'), '%d\n' % bridge[2])
    for kind, total in (aer_counts or {}).items():
        write(os.path.join(d, 'aer_dev_' + kind), aer(kind, total))
    if bar1:
        # sysfs `resource`: one "start end flags" line per BAR; BAR1 is the second line
        base = 0x38000000000 + (len(path) << 36) + (int(bdf[5:7], 16) << 40)
        lines = ['0x00000000fb000000 0x00000000fbffffff 0x0000000000040200',
                 '0x%016x 0x%016x 0x000000000014220c' % (base, base + bar1 - 1)]
        lines += ['0x0000000000000000 0x0000000000000000 0x0000000000000000'] * 11
        write(os.path.join(d, 'resource'), '\n'.join(lines) + '\n')
    for name in rdma or []:
        ib = os.path.join(d, 'infiniband', name)
        write(os.path.join(ib, 'node_type'), '1: CA\n')
        write(os.path.join(ib, 'ports/1/link_layer'), 'InfiniBand\n' if cls >> 8 == 0x0207 else 'Ethernet\n')
    for name, value in (raw or {}).items():   # malformed attributes for the error paths
        write(os.path.join(d, name), value)
    if driver:
        # git keeps no empty directories: give each one a file, as sysfs has
        write(os.path.join(root, 'sys/bus/pci/drivers', driver, 'uevent'), 'DRIVER=%s\n' % driver)
        os.symlink(os.path.relpath(os.path.join(root, 'sys/bus/pci/drivers', driver), d), os.path.join(d, 'driver'))
    if iommu is not None:
        g = os.path.join(root, 'sys/kernel/iommu_groups', str(iommu))
        os.makedirs(os.path.join(g, 'devices'), exist_ok=True)
        if iommu_type:
            write(os.path.join(g, 'type'), iommu_type + '\n')
        os.symlink(os.path.relpath(d, os.path.join(g, 'devices')), os.path.join(g, 'devices', bdf))
        os.symlink(os.path.relpath(g, d), os.path.join(d, 'iommu_group'))
    links = os.path.join(root, 'sys/bus/pci/devices')
    os.makedirs(links, exist_ok=True)
    os.symlink(os.path.relpath(d, links), os.path.join(links, bdf))

def cpu_files(root, model, vendor, family, modelnum, ncpus=16, sockets=1, mem_kib=263921928):
    per = ncpus // sockets
    lines = []
    for i in range(ncpus):
        lines += ['processor\t: %d' % i, 'vendor_id\t: %s' % vendor, 'cpu family\t: %d' % family,
                  'model\t\t: %d' % modelnum, 'model name\t: %s' % model, 'physical id\t: %d' % (i // per),
                  'core id\t\t: %d' % (i % per), 'cpu cores\t: %d' % per, '']
    write(os.path.join(root, 'proc/cpuinfo'), '\n'.join(lines) + '\n')
    write(os.path.join(root, 'proc/meminfo'), 'MemTotal:       %d kB\n' % mem_kib)
    # what hwloc-gather-topology records about the gathered machine
    write(os.path.join(root, 'proc/hwloc-nofile-info'),
          'OSName: Linux\nOSRelease: 6.1.0-13-amd64\nHostName: fixture\nArchitecture: x86_64\n')
    for i in range(ncpus):
        c = os.path.join(root, 'sys/devices/system/cpu/cpu%d' % i)
        pkg = i // per
        write(os.path.join(c, 'topology/physical_package_id'), '%d\n' % pkg)
        write(os.path.join(c, 'topology/core_id'), '%d\n' % (i % per))
        write(os.path.join(c, 'topology/thread_siblings'), '%08x\n' % (1 << i))
        write(os.path.join(c, 'topology/core_siblings'), '%08x\n' % (((1 << per) - 1) << (pkg * per)))
        write(os.path.join(c, 'online'), '1\n')
    write(os.path.join(root, 'sys/devices/system/cpu/online'), '0-%d\n' % (ncpus - 1))
    write(os.path.join(root, 'sys/devices/system/cpu/possible'), '0-%d\n' % (ncpus - 1))
    for n in range(sockets):
        d = os.path.join(root, 'sys/devices/system/node/node%d' % n)
        write(os.path.join(d, 'cpumap'), '%08x\n' % (((1 << per) - 1) << (n * per)))
        write(os.path.join(d, 'meminfo'), 'Node %d MemTotal:       %d kB\n' % (n, mem_kib // sockets))
    write(os.path.join(root, 'sys/devices/system/node/online'), '0\n' if sockets == 1 else '0-%d\n' % (sockets - 1))

def epyc_riser(root):
    """TYAN S8030-like tower: EPYC 7282, four RTX 3090s (10de:2204) on root ports of two
    host bridges; GPU1 sits behind a riser that trained x8 of x16; GPU2 is idle at Gen1;
    GPU3, a ConnectX-6 and an NVMe drive share a Gen4 switch. AER: 7 correctable errors
    counted at GPU1's root port (the link partner)."""
    cpu_files(root, 'AMD EPYC 7282 16-Core Processor', 'AuthenticAMD', 23, 49)
    gpu = dict(vendor=0x10de, device_id=0x2204, cls=0x030000, driver='nvidia', subv=0x1458, subd=0x403b)
    device(root, '0000:00', ['0000:00:01.1'], 0x1022, 0x1483, 0x060400, bridge=(0, 1, 1), driver='pcieport')
    device(root, '0000:00', ['0000:00:01.1', '0000:01:00.0'], iommu=10, aer_counts={'correctable': 0}, **gpu)
    device(root, '0000:00', ['0000:00:03.1'], 0x1022, 0x1483, 0x060400, cur=(4, 8), bridge=(0, 2, 2),
           driver='pcieport', aer_counts={'correctable': 7, 'nonfatal': 0, 'fatal': 0})
    device(root, '0000:00', ['0000:00:03.1', '0000:02:00.0'], cur=(4, 8), iommu=11, **gpu)
    device(root, '0000:40', ['0000:40:01.1'], 0x1022, 0x1483, 0x060400, cur=(1, 16), bridge=(0x40, 0x41, 0x41),
           driver='pcieport')
    device(root, '0000:40', ['0000:40:01.1', '0000:41:00.0'], cur=(1, 16), iommu=20, **gpu)
    device(root, '0000:40', ['0000:40:03.1'], 0x1022, 0x1483, 0x060400, bridge=(0x40, 0x42, 0x46), driver='pcieport')
    device(root, '0000:40', ['0000:40:03.1', '0000:42:00.0'], 0x1000, 0xc010, 0x060400, bridge=(0x42, 0x43, 0x46),
           driver='pcieport')
    for port, bus in (('0000:43:00.0', 0x44), ('0000:43:01.0', 0x45), ('0000:43:02.0', 0x46)):
        device(root, '0000:40', ['0000:40:03.1', '0000:42:00.0', port], 0x1000, 0xc010, 0x060400,
               bridge=(0x43, bus, bus), driver='pcieport')
    base = ['0000:40:03.1', '0000:42:00.0']
    device(root, '0000:40', base + ['0000:43:00.0', '0000:44:00.0'], iommu=21, **gpu)
    device(root, '0000:40', base + ['0000:43:01.0', '0000:45:00.0'], 0x15b3, 0x101b, 0x020700, driver='mlx5_core',
           iommu=22)
    device(root, '0000:40', base + ['0000:43:02.0', '0000:46:00.0'], 0x144d, 0xa80a, 0x010802, cur=(4, 4),
           maxl=(4, 4), driver='nvme', iommu=23)

def nic_rdma(root):
    """Two RTX 3090s and three Mellanox NICs on an EPYC 7282, gathered without /sys/class/infiniband
    (hwloc then finds no RDMA devices): GPU0 shares a switch with a ConnectX-6 HCA whose function
    lists infiniband/mlx5_0; GPU1 has its own root port beside a ConnectX-6 Dx (RoCE, mlx5_1) and a
    ConnectX-5 that lists no RDMA device (its legend name falls back to the bus id)."""
    cpu_files(root, 'AMD EPYC 7282 16-Core Processor', 'AuthenticAMD', 23, 49)
    gpu = dict(vendor=0x10de, device_id=0x2204, cls=0x030000, driver='nvidia', subv=0x1458, subd=0x403b)
    device(root, '0000:00', ['0000:00:01.1'], 0x1022, 0x1483, 0x060400, bridge=(0, 1, 4), driver='pcieport')
    sw = ['0000:00:01.1', '0000:01:00.0']
    device(root, '0000:00', sw, 0x1000, 0xc010, 0x060400, bridge=(1, 2, 4), driver='pcieport')
    for port, bus in (('0000:02:00.0', 3), ('0000:02:01.0', 4)):
        device(root, '0000:00', sw + [port], 0x1000, 0xc010, 0x060400, bridge=(2, bus, bus), driver='pcieport')
    device(root, '0000:00', sw + ['0000:02:00.0', '0000:03:00.0'], iommu=10, **gpu)
    device(root, '0000:00', sw + ['0000:02:01.0', '0000:04:00.0'], 0x15b3, 0x101b, 0x020700, driver='mlx5_core',
           iommu=11, rdma=['mlx5_0'])
    device(root, '0000:40', ['0000:40:01.1'], 0x1022, 0x1483, 0x060400, bridge=(0x40, 0x41, 0x41), driver='pcieport')
    device(root, '0000:40', ['0000:40:01.1', '0000:41:00.0'], iommu=20, **gpu)
    device(root, '0000:40', ['0000:40:03.1'], 0x1022, 0x1483, 0x060400, bridge=(0x40, 0x42, 0x42), driver='pcieport')
    device(root, '0000:40', ['0000:40:03.1', '0000:42:00.0'], 0x15b3, 0x101d, 0x020000, driver='mlx5_core',
           iommu=21, rdma=['mlx5_1'])
    device(root, '0000:40', ['0000:40:05.1'], 0x1022, 0x1483, 0x060400, bridge=(0x40, 0x43, 0x43), driver='pcieport')
    device(root, '0000:40', ['0000:40:05.1', '0000:43:00.0'], 0x15b3, 0x1017, 0x020000, driver='mlx5_core',
           iommu=22)


# NVLink machines: the GPUs' NVLink comes from the driver (tests/stub scenarios v100-hcm, 3090-bridge,
# a100-nvswitch), so these trees hold PCIe only, at the bus ids the stand-in driver reports.

def gpu_slot(root, hb, port, bdf, bus, gpu, gen=3, socket=0, per_socket=8, port_ids=(0x8086, 0x2030)):
    """A GPU alone on a root port (port) of host bridge hb, on secondary bus `bus`."""
    cpus = (socket * per_socket, socket * per_socket + per_socket - 1)
    device(root, hb, [port], port_ids[0], port_ids[1], 0x060400, cur=(gen, 16), maxl=(gen, 16),
           bridge=(int(hb[5:], 16), bus, bus), driver='pcieport', numa=socket, cpus=cpus)
    device(root, hb, [port, bdf], cur=(gen, 16), maxl=(gen, 16), numa=socket, cpus=cpus, **gpu)

def t181_v100(root):
    """Gigabyte T181-G20 (data/rigs/gigabyte-t181-g20.rig): 2x Xeon Gold 6132, four Tesla V100-SXM2-16GB
    (10de:1db1) on Gen3 root ports, two per socket. The SXM2 board joins every pair with 2 NVLinks
    (stand-in scenario v100-hcm)."""
    cpu_files(root, 'Intel(R) Xeon(R) Gold 6132 CPU @ 2.60GHz', 'GenuineIntel', 6, 85, sockets=2)
    gpu = dict(vendor=0x10de, device_id=0x1db1, cls=0x030200, driver='nvidia', subv=0x10de, subd=0x1212)
    gpu_slot(root, '0000:17', '0000:17:00.0', '0000:18:00.0', 0x18, gpu)
    gpu_slot(root, '0000:17', '0000:17:02.0', '0000:19:00.0', 0x19, gpu)
    gpu_slot(root, '0000:85', '0000:85:00.0', '0000:86:00.0', 0x86, gpu, socket=1)
    gpu_slot(root, '0000:85', '0000:85:02.0', '0000:87:00.0', 0x87, gpu, socket=1)

def pair_3090_bridge(root):
    """A Threadripper 3960X workstation with two RTX 3090s (10de:2204) on Gen4 root ports of two host bridges,
    joined by a 4-link NVLink bridge (stand-in scenario 3090-bridge)."""
    cpu_files(root, 'AMD Ryzen Threadripper 3960X 24-Core Processor', 'AuthenticAMD', 23, 49)
    gpu = dict(vendor=0x10de, device_id=0x2204, cls=0x030000, driver='nvidia', subv=0x1458, subd=0x403b)
    gpu_slot(root, '0000:20', '0000:20:03.1', '0000:21:00.0', 0x21, gpu, gen=4, per_socket=16,
             port_ids=(0x1022, 0x1483))
    gpu_slot(root, '0000:40', '0000:40:01.1', '0000:4b:00.0', 0x4b, gpu, gen=4, per_socket=16,
             port_ids=(0x1022, 0x1483))

def hgx_a100(root):
    """A DGX A100 (HGX A100 8-GPU board): 2x EPYC 7742, eight A100-SXM4-40GB (10de:20b0) in pairs behind
    four Gen4 switches (1000:c010), and the six NVSwitches (10de:1af1, class 0680) behind the last one, at a
    DGX A100's bus ids. Every GPU has 12 NVLinks, 2 to each NVSwitch (stand-in scenario a100-nvswitch)."""
    cpu_files(root, 'AMD EPYC 7742 64-Core Processor', 'AuthenticAMD', 23, 49, sockets=2)
    gpu = dict(vendor=0x10de, device_id=0x20b0, cls=0x030200, driver='nvidia', subv=0x10de, subd=0x134f)
    sw = dict(vendor=0x10de, device_id=0x1af1, cls=0x068000, driver='nvidia-nvswitch', subv=0x10de, subd=0x1569)
    plx = (0x1000, 0xc010, 0x060400)
    for hb, socket, gpus, switches in (('0000:00', 0, (0x07, 0x0f), ()), ('0000:40', 0, (0x47, 0x4e), ()),
                                       ('0000:80', 1, (0x87, 0x90), ()),
                                       ('0000:b0', 1, (0xb7, 0xbd), (0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9))):
        h = int(hb[5:], 16)
        cpus = (socket * 8, socket * 8 + 7)
        rp, up = '0000:%02x:01.1' % h, '0000:%02x:00.0' % (h + 1)
        last = max(gpus + switches)
        common = dict(numa=socket, cpus=cpus, driver='pcieport')
        device(root, hb, [rp], 0x1022, 0x1483, 0x060400, bridge=(h, h + 1, last), **common)
        device(root, hb, [rp, up], *plx, bridge=(h + 1, h + 2, last), **common)
        for i, bus in enumerate(gpus + switches):
            down = '0000:%02x:%02x.0' % (h + 2, i)
            ids = gpu if bus in gpus else sw
            device(root, hb, [rp, up, down], *plx, bridge=(h + 2, bus, bus), **common)
            device(root, hb, [rp, up, down, '0000:%02x:00.0' % bus], numa=socket, cpus=cpus, **ids)

# AMD machines: the GPUs' facts and xGMI come from the stand-in ROCm SMI (tests/stub/stub_rsmi.c,
# scenarios tinybox-red and mi50-bridge), at these trees' bus ids.

def tinybox_red(root):
    """A tinybox red (data/rigs: 6x Radeon RX 7900 XTX): an ASRock Rack ROMED8-2T-like board with one
    EPYC 7532 (32 cores, NPS1: one NUMA node) and four host bridges (00, 40, 80, c0), each GPU alone on a
    Gen4 x16 root port. A Navi 31 card carries its own PCIe switch (upstream port 1002:1478, downstream
    port 1002:1479) in front of the GPU function (1002:744c, class 0300), as lspci shows it."""
    cpu_files(root, 'AMD EPYC 7532 32-Core Processor', 'AuthenticAMD', 23, 49, ncpus=32)
    gpu = dict(vendor=0x1002, device_id=0x744c, cls=0x030000, driver='amdgpu', subv=0x1002, subd=0x0e3b,
               cpus=(0, 31))
    port = dict(cls=0x060400, driver='pcieport', cpus=(0, 31))
    for hb, rp, bus in (('0000:00', '0000:00:01.1', 0x01), ('0000:00', '0000:00:03.1', 0x04),
                        ('0000:40', '0000:40:01.1', 0x41), ('0000:80', '0000:80:01.1', 0x81),
                        ('0000:c0', '0000:c0:01.1', 0xc1), ('0000:c0', '0000:c0:03.1', 0xc4)):
        h = int(hb[5:], 16)
        up, down, dev = '0000:%02x:00.0' % bus, '0000:%02x:00.0' % (bus + 1), '0000:%02x:00.0' % (bus + 2)
        device(root, hb, [rp], 0x1022, 0x1483, bridge=(h, bus, bus + 2), **port)
        device(root, hb, [rp, up], 0x1002, 0x1478, bridge=(bus, bus + 1, bus + 2), **port)
        device(root, hb, [rp, up, down], 0x1002, 0x1479, bridge=(bus + 1, bus + 2, bus + 2), **port)
        device(root, hb, [rp, up, down, dev], **gpu)

def mi50_bridge(root):
    """Four Radeon Instinct MI50 32GB (1002:66a1, class 0380) on an EPYC 7302 board, one per host bridge on
    Gen4 x16 root ports, joined by a 4-card Infinity Fabric Link bridge (a ring: each card has two
    links, to its two neighbours)."""
    cpu_files(root, 'AMD EPYC 7302 16-Core Processor', 'AuthenticAMD', 23, 49)
    gpu = dict(vendor=0x1002, device_id=0x66a1, cls=0x038000, driver='amdgpu', subv=0x1002, subd=0x0834)
    for hb in ('0000:00', '0000:40', '0000:80', '0000:c0'):
        h = int(hb[5:], 16)
        gpu_slot(root, hb, '0000:%02x:01.1' % h, '0000:%02x:00.0' % (h + 3), h + 3, gpu, gen=4, per_socket=16,
                 port_ids=(0x1022, 0x1483))

def mixed(root):
    """Both vendors in one workstation: the Threadripper 3960X of pair-3090-bridge with its two RTX 3090s
    (10de:2204, no bridge) and two Radeon RX 7900 XTX (1002:744c) on root ports of two more host bridges
    (stand-in scenario mixed: NVML sees the 3090s, ROCm SMI the Radeons)."""
    pair_3090_bridge(root)
    gpu = dict(vendor=0x1002, device_id=0x744c, cls=0x030000, driver='amdgpu', subv=0x1002, subd=0x0e3b)
    gpu_slot(root, '0000:00', '0000:00:03.1', '0000:0a:00.0', 0x0a, gpu, gen=4, per_socket=16,
             port_ids=(0x1022, 0x1483))
    gpu_slot(root, '0000:60', '0000:60:01.1', '0000:61:00.0', 0x61, gpu, gen=4, per_socket=16,
             port_ids=(0x1022, 0x1483))

def smbios_memory(slots=16, populated=8, size_mib=32768, speed=3200, truncate=None, arrays=1, base=0x1000):
    """A raw SMBIOS table (/sys/firmware/dmi/tables/DMI): per socket one type-16 memory array with
    `slots` type-17 memory devices, the first `populated` holding a DDR4 DIMM; then end-of-table."""
    if arrays > 1:
        parts = [smbios_memory(slots, populated, size_mib, speed, base=0x1000 + 0x200 * a)[:-6] for a in range(arrays)]
        return b''.join(parts) + bytes([127, 4, 0xff, 0xfe, 0, 0])
    def strings(*ss):
        return b''.join(x.encode() + b'\0' for x in ss) + b'\0' if ss else b'\0\0'
    out = bytearray()
    t16 = bytearray(0x17)
    t16[0], t16[1] = 16, 0x17
    struct.pack_into('<H', t16, 2, base)
    t16[4], t16[5], t16[6] = 3, 3, 6                     # system board, system memory, multi-bit ECC
    struct.pack_into('<IHH', t16, 7, 0x80000000, 0xfffe, slots)
    out += t16 + strings()
    for i in range(slots):
        t17 = bytearray(0x28)
        t17[0], t17[1] = 17, 0x28
        struct.pack_into('<HHHHH', t17, 2, base + 0x100 + i, base, 0xfffe, 72, 64)
        struct.pack_into('<H', t17, 0x0c, size_mib if i < populated else 0)
        t17[0x0e], t17[0x10], t17[0x11], t17[0x12] = 0x09, 1, 2, 0x1a   # DIMM, locator, bank, DDR4
        struct.pack_into('<H', t17, 0x15, speed if i < populated else 0)
        struct.pack_into('<H', t17, 0x20, speed if i < populated else 0)
        chan = 'ABCDEFGH'[(i // 2) % 8]
        out += t17 + strings('DIMM_%s%d' % (chan, i % 2 + 1), 'P0_CHANNEL_%s' % chan)
    out += bytes([127, 4, 0xff, 0xfe]) + strings()
    return bytes(out[:truncate] if truncate else out)

KMSG_CLEAN = ('6,1001,5123456,-;nvidia: module license \'NVIDIA\' taints kernel.\n'
              '6,1002,5301234,-;nvidia-nvlink: Nvlink Core is being initialized, major device number 237\n'
              '6,1003,6012345,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n'
              '6,1004,86012345678,-;perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate to 79750\n')

NV_VERSION = ('NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Thu Oct 19 18:56:32 UTC 2023\n'
              'GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n')

def doctor_rig(root, sockets=1, gpu_cur=None, rp_aer=None, iommu_type='identity', cmdline='iommu=pt',
               driver_version='535.129.03', numa=None, uptime=86400.0, raw=None, dmi_truncate=None, kmsg=KMSG_CLEAN,
               acs=None, switch=False):
    """A tower of four RTX 3090s (10de:2204, Resizable BAR on) on an EPYC 7302 board, each GPU on its
    own Gen4 root port: GPU0/GPU1 under host bridge 0000:00, GPU2/GPU3 under 0000:40. Everything a
    healthy rig has: IOMMU passthrough, driver 535, 8 of 16 DIMM slots filled (one per channel),
    256 GiB of RAM, performance governor. Arguments change one thing at a time. switch: GPU2 and GPU3
    behind a Broadcom PEX88096 on root port 0000:40:01.1 instead (0000:43:00.0 and 0000:44:00.0), its
    ports with the same ACS control as the root ports."""
    cpu_files(root, 'AMD EPYC 7302 16-Core Processor', 'AuthenticAMD', 23, 49, sockets=sockets)
    gpu = dict(vendor=0x10de, device_id=0x2204, cls=0x030000, driver='nvidia', subv=0x1458, subd=0x403b,
               bar1=32 << 30, iommu_type=iommu_type)
    slots = [('0000:00', '0000:00:01.1', '0000:01:00.0', 0x01), ('0000:00', '0000:00:03.1', '0000:02:00.0', 0x02),
             ('0000:40', '0000:40:01.1', '0000:41:00.0', 0x41), ('0000:40', '0000:40:03.1', '0000:42:00.0', 0x42)]
    if switch:
        slots = slots[:2]
        zero = {'correctable': 0, 'nonfatal': 0, 'fatal': 0}
        device(root, '0000:40', ['0000:40:01.1'], 0x1022, 0x1483, 0x060400, bridge=(0x40, 0x41, 0x44),
               driver='pcieport', acs=acs, aer_counts=zero)
        up = ['0000:40:01.1', '0000:41:00.0']
        device(root, '0000:40', up, 0x1000, 0xc010, 0x060400, bridge=(0x41, 0x42, 0x44), driver='pcieport', acs=acs,
               aer_counts=zero)
        for i, (down, bus) in enumerate((('0000:42:08.0', 0x43), ('0000:42:10.0', 0x44))):
            device(root, '0000:40', up + [down], 0x1000, 0xc010, 0x060400, bridge=(0x42, bus, bus), driver='pcieport',
                   acs=acs, aer_counts=zero)
            device(root, '0000:40', up + [down, '0000:%02x:00.0' % bus], cur=(1, 16), iommu=12 + i, aer_counts=zero,
                   **gpu)
    for i, (hb, port, bdf, bus) in enumerate(slots):
        cur = (gpu_cur or {}).get(i, (1, 16))            # idle GPUs park their link at 2.5 GT/s
        node = (numa or {}).get(i, 0 if bus < 0x40 or sockets == 1 else 1)
        device(root, hb, [port], 0x1022, 0x1483, 0x060400, cur=cur, bridge=(bus & 0xc0, bus, bus), driver='pcieport',
               numa=node, acs=acs, aer_counts=(rp_aer or {}).get(i, {'correctable': 0, 'nonfatal': 0, 'fatal': 0}))
        device(root, hb, [port, bdf], cur=cur, numa=node, iommu=10 + i,
               aer_counts={'correctable': 0, 'nonfatal': 0, 'fatal': 0}, raw=(raw or {}).get(i), **gpu)
    write(os.path.join(root, 'proc/uptime'), '%.2f %.2f\n' % (uptime, uptime * 15))
    write(os.path.join(root, 'proc/cmdline'), 'BOOT_IMAGE=/boot/vmlinuz-6.1.0-13-amd64 root=UUID=1b2c ro quiet %s\n' % cmdline)
    write(os.path.join(root, 'proc/meminfo'), 'MemTotal:       263921928 kB\nMemFree:        250000000 kB\n'
          'SwapTotal:       8388604 kB\nSwapFree:        8388604 kB\n')
    write(os.path.join(root, 'proc/driver/nvidia/version'), NV_VERSION % driver_version)
    write(os.path.join(root, 'sys/module/nvidia/version'), driver_version + '\n')
    write(os.path.join(root, 'sys/module/nvidia/taint'), 'PO\n')
    if iommu_type:
        write(os.path.join(root, 'sys/class/iommu/ivhd0/uevent'), '')
    for i in range(16):
        c = os.path.join(root, 'sys/devices/system/cpu/cpu%d/cpufreq' % i)
        write(os.path.join(c, 'scaling_governor'), 'performance\n')
        write(os.path.join(c, 'scaling_driver'), 'acpi-cpufreq\n')
    v = os.path.join(root, 'sys/devices/system/cpu/vulnerabilities')
    write(os.path.join(v, 'spectre_v2'), 'Mitigation: Retpolines; IBPB: conditional; STIBP: disabled; RSB filling\n')
    write(os.path.join(v, 'meltdown'), 'Not affected\n')
    write(os.path.join(root, 'sys/kernel/mm/transparent_hugepage/enabled'), 'always [madvise] never\n')
    write(os.path.join(root, 'sys/firmware/dmi/tables/DMI'), smbios_memory(truncate=dmi_truncate, arrays=sockets))
    if kmsg is not None:
        write(os.path.join(root, 'dev/kmsg'), kmsg if isinstance(kmsg, bytes) else kmsg.encode())

AER_5000 = {'correctable': 5000, 'nonfatal': 0, 'fatal': 0}
BINARY_KMSG = KMSG_CLEAN.encode() + b'\x00\x01\x02garbage\xff\xfe\n' + b'6,1005,86012399999,-;ok again\n'

TREES = {
    'epyc-riser': epyc_riser,
    'nic-rdma': nic_rdma,
    # NVLink read from the stand-in driver (tests/stub scenarios): PCIe only in the tree
    't181-v100': t181_v100,
    'pair-3090-bridge': pair_3090_bridge,
    'hgx-a100': hgx_a100,
    # AMD: facts and xGMI from the stand-in ROCm SMI
    'tinybox-red': tinybox_red,
    'mi50-bridge': mi50_bridge,
    'mixed': mixed,
    # gpurig doctor fixtures: one fault each (tests/cli/cases.txt holds the expected findings)
    'doctor-healthy': lambda r: doctor_rig(r),
    'doctor-riser-x8': lambda r: doctor_rig(r, gpu_cur={1: (4, 8)}),
    'doctor-gen3-load': lambda r: doctor_rig(r, gpu_cur={0: (4, 16), 1: (4, 16), 2: (3, 16), 3: (4, 16)}),
    'doctor-aer-rootport': lambda r: doctor_rig(r, rp_aer={3: AER_5000}, uptime=3600.0),
    'doctor-iommu-translated': lambda r: doctor_rig(r, iommu_type='DMA-FQ', cmdline='amd_iommu=on'),
    'doctor-driver-545': lambda r: doctor_rig(r, driver_version='545.29.06'),
    # gathered as root: full config space, ACS redirecting P2P (SrcValid ReqRedir CmpltRedir UpstreamFwd) on
    # every port; it matters on the switch's downstream ports only, where peer traffic could stay below them
    'doctor-acs-redirect': lambda r: doctor_rig(r, acs=0x001d, switch=True),
    # the same on root ports of one GPU each: traffic between them crosses the root complex anyway
    'doctor-acs-rootports': lambda r: doctor_rig(r, acs=0x001d),
    'doctor-numa-unknown': lambda r: doctor_rig(r, sockets=2, numa={0: -1, 1: -1, 2: -1, 3: -1}),
    'doctor-malformed': lambda r: doctor_rig(r, raw={0: {'aer_dev_correctable': 'RxErr banana\nTOTAL_ERR_COR lots\n'},
                                                       1: {'current_link_speed': '40.0 GT/s PCIe\n'}},
                                             dmi_truncate=300, kmsg=BINARY_KMSG),
}

if __name__ == '__main__':
    # names on the command line: write only those trees (the others stay as committed)
    for name in sys.argv[1:] or TREES:
        fn = TREES[name]
        root = os.path.join(HERE, name)
        shutil.rmtree(root, ignore_errors=True)
        fn(root)
        print('wrote', root)
