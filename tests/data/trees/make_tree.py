#!/usr/bin/env python3
"""Writes the hand-made sysfs fixture trees under tests/data/trees/ (committed;
rerun only to change them). Each tree is what hwloc-gather-topology would
gather without root: /sys/bus/pci/devices links into /sys/devices/pciDDDD:BB,
64-byte config files, link speed/width files, AER counters, /proc/cpuinfo."""
import os, shutil, struct, sys

HERE = os.path.dirname(os.path.abspath(__file__))

def config(vendor, device, cls, bridge=None, subv=0, subd=0):
    """64 bytes of config space; bridges (header type 1) carry their bus numbers."""
    b = bytearray(64)
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
           driver=None, aer_counts=None, iommu=None, subv=0, subd=0):
    """path: list of BDFs from the host bridge down to this device."""
    bdf = path[-1]
    d = os.path.join(root, 'sys/devices', 'pci' + hb, *path)
    write(os.path.join(d, 'vendor'), '0x%04x\n' % vendor)
    write(os.path.join(d, 'device'), '0x%04x\n' % device_id)
    write(os.path.join(d, 'class'), '0x%06x\n' % cls)
    write(os.path.join(d, 'subsystem_vendor'), '0x%04x\n' % subv)
    write(os.path.join(d, 'subsystem_device'), '0x%04x\n' % subd)
    write(os.path.join(d, 'config'), config(vendor, device_id, cls, bridge, subv, subd))
    write(os.path.join(d, 'numa_node'), '%d\n' % numa)
    write(os.path.join(d, 'local_cpus'), '00000000,0000ffff\n')
    write(os.path.join(d, 'local_cpulist'), '0-15\n')
    write(os.path.join(d, 'current_link_speed'), SPEED[cur[0]] + '\n')
    write(os.path.join(d, 'current_link_width'), '%d\n' % cur[1])
    write(os.path.join(d, 'max_link_speed'), SPEED[maxl[0]] + '\n')
    write(os.path.join(d, 'max_link_width'), '%d\n' % maxl[1])
    if bridge:
        write(os.path.join(d, 'secondary_bus_number'), '%d\n' % bridge[1])
        write(os.path.join(d, 'subordinate_bus_number'), '%d\n' % bridge[2])
    for kind, total in (aer_counts or {}).items():
        write(os.path.join(d, 'aer_dev_' + kind), aer(kind, total))
    if driver:
        os.makedirs(os.path.join(root, 'sys/bus/pci/drivers', driver), exist_ok=True)
        os.symlink(os.path.relpath(os.path.join(root, 'sys/bus/pci/drivers', driver), d), os.path.join(d, 'driver'))
    if iommu is not None:
        g = os.path.join(root, 'sys/kernel/iommu_groups', str(iommu))
        os.makedirs(os.path.join(g, 'devices'), exist_ok=True)
        os.symlink(os.path.relpath(g, d), os.path.join(d, 'iommu_group'))
    links = os.path.join(root, 'sys/bus/pci/devices')
    os.makedirs(links, exist_ok=True)
    os.symlink(os.path.relpath(d, links), os.path.join(links, bdf))

def cpu_files(root, model, vendor, family, modelnum, ncpus=16):
    lines = []
    for i in range(ncpus):
        lines += ['processor\t: %d' % i, 'vendor_id\t: %s' % vendor, 'cpu family\t: %d' % family,
                  'model\t\t: %d' % modelnum, 'model name\t: %s' % model, 'physical id\t: 0',
                  'core id\t\t: %d' % i, 'cpu cores\t: %d' % ncpus, '']
    write(os.path.join(root, 'proc/cpuinfo'), '\n'.join(lines) + '\n')
    write(os.path.join(root, 'proc/meminfo'), 'MemTotal:       263921928 kB\n')
    # what hwloc-gather-topology records about the gathered machine
    write(os.path.join(root, 'proc/hwloc-nofile-info'),
          'OSName: Linux\nOSRelease: 6.1.0-13-amd64\nHostName: fixture\nArchitecture: x86_64\n')
    for i in range(ncpus):
        c = os.path.join(root, 'sys/devices/system/cpu/cpu%d' % i)
        write(os.path.join(c, 'topology/physical_package_id'), '0\n')
        write(os.path.join(c, 'topology/core_id'), '%d\n' % i)
        write(os.path.join(c, 'topology/thread_siblings'), '%08x\n' % (1 << i))
        write(os.path.join(c, 'topology/core_siblings'), '0000ffff\n')
        write(os.path.join(c, 'online'), '1\n')
    write(os.path.join(root, 'sys/devices/system/cpu/online'), '0-%d\n' % (ncpus - 1))
    write(os.path.join(root, 'sys/devices/system/cpu/possible'), '0-%d\n' % (ncpus - 1))
    n = os.path.join(root, 'sys/devices/system/node/node0')
    write(os.path.join(n, 'cpumap'), '0000ffff\n')
    write(os.path.join(n, 'meminfo'), 'Node 0 MemTotal:       263921928 kB\n')
    write(os.path.join(root, 'sys/devices/system/node/online'), '0\n')

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

TREES = {'epyc-riser': epyc_riser}

if __name__ == '__main__':
    for name, fn in TREES.items():
        root = os.path.join(HERE, name)
        shutil.rmtree(root, ignore_errors=True)
        fn(root)
        print('wrote', root)
