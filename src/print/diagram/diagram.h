/* The machine's block diagram, drawn the way vendors draw their PCIe block
 * diagrams: CPU sockets side by side joined by their link, root complexes
 * below them, PCIe switches with their uplinks and lane budgets, GPUs, NICs,
 * NVMe drives and NVSwitches at the bottom, NVLinks and NVSwitch fabrics
 * between the GPUs, each P2P hive shaded, bottleneck links in red.
 *
 * The SVG is a standalone document that may also sit inline in HTML: root
 * <svg class="gr-diagram">, each GPU a <g class="node gpu" data-gpu="GPU0">,
 * other nodes <g class="node cpu|rc|switch|nic|nvme|nvswitch|fabric">, every
 * text a <text class="label"> (link labels also "edge-label"), hive shading
 * <rect class="hive">; no ids, scripts or external references. The layout is
 * gpurig's own (docs/report.md says why), so the output is the same on
 * every machine.
 *
 * Ownership: gr_diagram_svg and gr_diagram_dot return strings the caller
 * frees. */
#ifndef GPURIG_PRINT_DIAGRAM_H
#define GPURIG_PRINT_DIAGRAM_H

#include <stdio.h>

#include "analysis/machine.h"

char *gr_diagram_svg(const struct gr_machine *m);
/* The same wiring as Graphviz DOT text (for those who lay it out with dot). */
char *gr_diagram_dot(const struct gr_machine *m);
/* A small text diagram for one screen: a line per root complex (CPU, root
 * complex, switch, the devices below), one for the socket link, one per
 * NVSwitch fabric, one for the hives; at most 10 lines of at most width
 * columns (summarised where the machine has more). */
void gr_diagram_text(FILE *out, const struct gr_machine *m, int width);

#endif
