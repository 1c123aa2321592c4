/* Display names of devices; see names.h. */
#include "model/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "facts/pciids.h"

/* device 0x10000 stands for the vendor's own name */
static const char *cached(struct gr_names *n, unsigned vendor, unsigned device)
{
  for (size_t i = 0; i < n->n; i++)
    if (n->v[i].vendor == vendor && n->v[i].device == device)
      return n->v[i].name;
  grow_array((void **)&n->v, sizeof(*n->v), &n->cap, n->n);
  n->v[n->n].vendor = vendor;
  n->v[n->n].device = device;
  n->v[n->n].name = device == 0x10000 ? gr_pciids_vendor_name(&n->db, vendor)
                                      : gr_pciids_device_name(&n->db, vendor, device);
  return n->v[n->n++].name;
}

void gr_names_free(struct gr_names *n)
{
  for (size_t i = 0; i < n->n; i++)
    free(n->v[i].name);
  free(n->v);
  gr_pciids_session_free(&n->db);
  memset(n, 0, sizeof(*n));
}

const char *gr_pci_vendor_name(const struct gr_pci *p, struct gr_names *n)
{
  return p->vendor_name ? p->vendor_name : cached(n, p->vendor, 0x10000);
}

static const char *class_name(unsigned class_id)
{
  switch (class_id >> 8) {
  case 0x0300: return "VGA controller";
  case 0x0302: return "3D controller";
  case 0x0380: return "display controller";
  case 0x0b40: return "co-processor";
  case 0x1200: return "processing accelerator";
  case 0x0200: return "Ethernet controller";
  case 0x0207: return "InfiniBand controller";
  case 0x0280: return "network controller";
  case 0x0108: return "NVMe controller";
  case 0x0106: return "SATA controller";
  case 0x0104: return "RAID controller";
  case 0x0107: return "SAS controller";
  case 0x0c03: return "USB controller";
  case 0x0604: return "PCI bridge";
  case 0x0680: return "bridge";
  case 0x0600: return "host bridge";
  case 0x0601: return "ISA bridge";
  case 0x0403: return "audio device";
  }
  return "device";
}

const char *gr_pci_display_name(const struct gr_topo *t, int idx, struct gr_names *n)
{
  const struct gr_pci *p = &t->pci[idx];
  if (p->model)
    return p->model;
  if (p->device_name)
    return p->device_name;
  if (p->kind == GR_KIND_NVSWITCH)
    return "NVSwitch";
  if (p->role == GR_ROLE_ROOTPORT)
    return "root port"; /* the CPU's own ports: the host bridge and socket say enough */
  const char *db = p->role != GR_ROLE_HOSTBRIDGE ? cached(n, p->vendor, p->device & 0xffff) : NULL;
  if (db)
    return db;
  if (p->role == GR_ROLE_SWITCH_UP)
    return "PCIe switch";
  return class_name(p->class_id);
}

const char *gr_pci_subject(const struct gr_topo *t, int idx, char *buf, size_t cap)
{
  char label[32], bus[32];
  const struct gr_pci *p = &t->pci[idx];
  gr_pci_label(t, idx, label, sizeof(label));
  gr_pci_busid(p, bus, sizeof(bus));
  if (strcmp(label, bus) == 0) {
    const char *role = p->role == GR_ROLE_ROOTPORT      ? "root port "
                       : p->role == GR_ROLE_SWITCH_UP   ? "switch upstream port "
                       : p->role == GR_ROLE_SWITCH_DOWN ? "switch downstream port "
                                                        : "";
    snprintf(buf, cap, "%s%s", role, bus);
  } else {
    snprintf(buf, cap, "%s %s", label, bus);
  }
  return buf;
}
