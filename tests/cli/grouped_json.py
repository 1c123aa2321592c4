#!/usr/bin/env python3
"""Expands `gpurig topo --json`'s grouped matrices (docs/json.md, "Grouped matrices") back to one row
and column per GPU, as a consumer would.

  grouped_json.py GROUPED.json             checks the grouped document: every GPU in one group, every
                                           matrix a row and a column per group, every ordered pair of
                                           groups in gpu_group_pairs, each own bottleneck a bridge
                                           above its GPU, each bottleneck's pair groups adding up to
                                           its pairs, once each; prints the expanded pair count
  grouped_json.py GROUPED.json FULL.json   also: the expansion equals FULL's per-GPU members (FULL from
                                           a gpurig that printed them per GPU), member by member

Exit 0 when every check holds, 1 with the first difference otherwise."""
import json
import sys


def fail(msg):
    print("grouped_json: FAIL: " + msg)
    sys.exit(1)


def expand(d):
    """The per-GPU members (gpu_matrix, ..., gpu_pairs, p2p_matrix, copy_matrix_gbps) of grouped d."""
    groups = [g["gpus"] for g in d["gpu_groups"]]
    n = len(d["gpus"])
    group_of = {}
    for k, members in enumerate(groups):
        for g in members:
            if g in group_of:
                fail("GPU%d is in two groups" % g)
            group_of[g] = k
    if sorted(group_of) != list(range(n)):
        fail("the groups do not hold every GPU once")
    out = {}
    diag = {"gpu_matrix": "X", "nccl_matrix": "X", "bw_matrix_gbps": None, "nccl_bw_matrix_gbps": None}
    for key, x in diag.items():
        m = d[key]
        if len(m) != len(groups) or any(len(row) != len(groups) for row in m):
            fail(key + " is not a row and a column per group")
        out[key] = [[x if i == j else m[group_of[i]][group_of[j]] for j in range(n)] for i in range(n)]
    out["gpu_nic_matrix"] = [d["gpu_nic_matrix"][group_of[i]] for i in range(n)]
    pairs = {(p["from_group"], p["to_group"]): p for p in d["gpu_group_pairs"]}
    parent = {p["pci_bus_id"]: p["parent"] for p in d["pci"]}
    bus = [g["pci_bus_id"] for g in d["gpus"]]
    out["gpu_pairs"] = []
    for a in range(n):
        for b in range(a + 1, n):
            ga, gb = group_of[a], group_of[b]
            p = pairs.get((ga, gb))
            if p is None:
                fail("no gpu_group_pairs entry from group %d to group %d" % (ga, gb))
            own = p["bottleneck_own"]
            bid = p["bottleneck_pci_bus_id"]
            if own is not None:
                g, k = (a, ga) if own == "from" else (b, gb)
                bid = p["bottleneck_pci_bus_ids"][groups[k].index(g)]
                up = bus[g]
                while up is not None and up != bid:
                    up = parent.get(up)
                if up is None:
                    fail("GPU%d's own bottleneck %s is not above it" % (g, bid))
            q = {"a": a, "b": b}
            for f in ("level", "nccl_level", "nccl_p2p", "bottleneck"):
                q[f] = p[f]
            q["bottleneck_pci_bus_id"] = bid
            for f in ("bw_gbps", "nccl_bw_gbps", "nvlink_inferred"):
                q[f] = p[f]
            out["gpu_pairs"].append(q)
    out["bottlenecks"] = expand_bottlenecks(d, groups)
    pr = d.get("prediction") or {}
    if pr.get("matrices_by_group"):
        for key, x in (("p2p_matrix", "X"), ("copy_matrix_gbps", None)):
            m = pr[key]
            out[key] = [[x if i == j else m[group_of[i]][group_of[j]] for j in range(n)] for i in range(n)]
    return out


def expand_bottlenecks(d, groups):
    """bottlenecks with each link's groups expanded to its pairs, [a, b] with a < b in matrix order."""
    b = json.loads(json.dumps(d["bottlenecks"]))
    for link in b["links"]:
        if "pairs" in link:
            fail("link %s lists its pairs one by one in a grouped document" % link["pci_bus_id"])
        forms = [k for k in ("pair_groups", "group_pairs", "with_groups") if k in link]
        if len(forms) != 1:
            fail("link %s: not one of pair_groups, group_pairs, with_groups: %s" % (link["pci_bus_id"], forms))
        pairs = []
        for g in link.pop("pair_groups", []):
            got = [(x, y) for x in groups[g["from_group"]] for y in groups[g["to_group"]] if x < y and
                   (g["gpu"] is None or (y if g["gpu_end"] == "to" else x) == g["gpu"])]
            if len(got) != g["npairs"]:
                fail("link %s: a pair group of %d pairs expands to %d" % (link["pci_bus_id"], g["npairs"], len(got)))
            pairs += got
        for c, e in link.pop("group_pairs", []):
            pairs += [(min(x, y), max(x, y)) for x in groups[c] for y in groups[e] if x != y and (c != e or x < y)]
        if "with_groups" in link:
            g = link.pop("gpu")
            pairs += [(min(g, y), max(g, y)) for e in link.pop("with_groups") for y in groups[e] if y != g]
        if len(pairs) != link.pop("npairs") or len(set(pairs)) != len(pairs):
            fail("link %s: its groups do not add up to its npairs, once each" % link["pci_bus_id"])
        link["pairs"] = [list(p) for p in sorted(pairs)]
    return b


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        sys.exit(2)
    d = json.load(open(sys.argv[1]))
    if "gpu_groups" not in d:
        fail("no gpu_groups: the document is per GPU")
    out = expand(d)
    if len(sys.argv) == 3:
        full = json.load(open(sys.argv[2]))
        for key, v in out.items():
            ref = full["prediction"][key] if key in ("p2p_matrix", "copy_matrix_gbps") else full[key]
            if v != ref:
                fail(key + " differs from the per-GPU document")
    print("grouped_json: %d GPUs in %d groups, %d pairs expanded" % (len(d["gpus"]), len(d["gpu_groups"]),
                                                                     len(out["gpu_pairs"])))


main()
