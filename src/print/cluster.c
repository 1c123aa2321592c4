/* The cluster section; see cluster.h. */
#include "print/cluster.h"

#include "print/predict.h"

/* "ring 9.1 GB/s busbw over 2 nodes (the network: ...)", or why there is none. */
static void allreduce_line(FILE *out, const struct gr_cluster_prediction *c)
{
  if (c->nodes < 2) {
    fprintf(out, "  Inter-node all-reduce: one node (nodes 1): nothing crosses the network\n");
    return;
  }
  if (c->busbw_gbps <= 0) {
    fprintf(out, "  Inter-node all-reduce: not predicted: the NIC's port rate is unknown (give it: nic ... speed GBIT)\n");
    return;
  }
  fprintf(out, "  Inter-node all-reduce (ring over %d nodes x %d GPUs): %.1f GB/s busbw, bound by the %s (%.1f GB/s; "
          "the node alone %.1f GB/s)\n", c->nodes, c->gpus_per_node, c->busbw_gbps,
          c->busbw_gbps < c->intra_busbw_gbps || c->intra_busbw_gbps <= 0 ? "network" : "node", c->inter_busbw_gbps,
          c->intra_busbw_gbps);
  if (c->nodes == 2)
    fprintf(out, "  On 2 nodes NCCL picks its tree for large all-reduces, whose busbw can read above the NIC rate "
            "(NVIDIA/nccl-tests#196); NCCL_ALGO=Ring measures the figure above\n");
}

void gr_print_cluster(FILE *out, const struct gr_cluster_prediction *c)
{
  fprintf(out, "\nCluster (%d node%s, fabric %s", c->nodes, c->nodes == 1 ? "" : "s", c->fabric);
  if (c->oversubscription > 1)
    fprintf(out, " oversubscribed %.3g:1", c->oversubscription);
  fprintf(out, "):\n");
  if (c->nics == 0)
    fprintf(out, "  NICs: none: the nodes have no network to join them\n");
  else if (c->nic_gbps > 0)
    fprintf(out, "  NICs per node: %zu x %s (%.0f Gb/s%s), %.1f GB/s per direction; bound: %s\n", c->nics,
            c->nic_model, c->port_gbit, c->rdma ? ", RDMA" : ", no RDMA", c->nic_gbps, c->nic_bound);
  else
    fprintf(out, "  NICs per node: %zu x %s, port rate unknown (not in data/nics.tsv; nic ... speed GBIT)\n", c->nics,
            c->nic_model);
  fprintf(out, "  GPUDirect RDMA: %s\n", c->gdr_why);
  allreduce_line(out, c);
  for (size_t i = 0; i < c->nverdicts; i++)
    fprintf(out, "  %s: %s: %s\n", c->verdicts[i].workload, gr_rating_name(c->verdicts[i].rating),
            c->verdicts[i].reason);
}

void gr_print_cluster_brief(FILE *out, const struct gr_cluster_prediction *c)
{
  if (c->nodes >= 2 && c->busbw_gbps > 0)
    fprintf(out, "Across %d nodes: %.1f GB/s all-reduce busbw (%zu x %s, %.1f GB/s per node)\n", c->nodes,
            c->busbw_gbps, c->nics, c->nic_model, c->nic_gbps);
  else
    fprintf(out, "Across %d node%s: no inter-node all-reduce predicted\n", c->nodes, c->nodes == 1 ? "" : "s");
  fprintf(out, "GPUDirect RDMA: %s\n", c->gdr_why);
}

static json_t *num_or_null(double v)
{
  return v > 0 ? json_real(v) : json_null();
}

static json_t *verdicts_json(const struct gr_cluster_prediction *c)
{
  json_t *a = json_array();
  for (size_t i = 0; i < c->nverdicts; i++)
    json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "workload", c->verdicts[i].workload, "rating",
                                       gr_rating_name(c->verdicts[i].rating), "reason", c->verdicts[i].reason));
  return a;
}

json_t *gr_cluster_to_json(const struct gr_cluster_prediction *c)
{
  json_t *j = json_object();
  json_object_set_new(j, "nodes", json_integer(c->nodes));
  json_object_set_new(j, "gpus_per_node", json_integer(c->gpus_per_node));
  json_object_set_new(j, "fabric", json_string(c->fabric));
  json_object_set_new(j, "oversubscription", json_real(c->oversubscription));
  json_object_set_new(j, "nics_per_node", json_integer((json_int_t)c->nics));
  json_object_set_new(j, "nic_model", c->nics ? json_string(c->nic_model) : json_null());
  json_object_set_new(j, "rdma", json_boolean(c->rdma));
  json_object_set_new(j, "port_gbit", num_or_null(c->port_gbit));
  json_object_set_new(j, "nic_gbps", num_or_null(c->nic_gbps));
  json_object_set_new(j, "nic_bound", c->nic_gbps > 0 ? json_string(c->nic_bound) : json_null());
  json_object_set_new(j, "gdr", json_boolean(c->gdr));
  json_object_set_new(j, "gdr_read", json_boolean(c->gdr_read));
  json_object_set_new(j, "gdr_gpus", json_integer(c->gdr_gpus));
  json_object_set_new(j, "gdr_why", json_string(c->gdr_why));
  json_object_set_new(j, "intra_busbw_gbps", num_or_null(c->intra_busbw_gbps));
  json_object_set_new(j, "inter_busbw_gbps", num_or_null(c->inter_busbw_gbps));
  json_object_set_new(j, "busbw_gbps", num_or_null(c->busbw_gbps));
  json_object_set_new(j, "scaling", num_or_null(c->scaling));
  json_object_set_new(j, "verdicts", verdicts_json(c));
  return j;
}
