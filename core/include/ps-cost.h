/* ps-cost.h: the cost model: how long a node or a plan step takes on a
 * device, and which part of the device it occupies.
 *
 * Rates are what work reaches, not the spec sheet's peaks: memory traffic
 * moves at the device's memory bandwidth times its mem_efficiency
 * (ps_cost_mem_gbs), tensor-core work at the tensor peak times the share
 * a GEMM of its size reaches (ps_cost_gemm_efficiency); see ps-device.h.
 *
 * Kernels: `cost_ns` when the graph gives it; otherwise a roofline, the
 * larger of flops over the FLOP rate and traffic bytes over the memory
 * bandwidth, divided by the launch's efficiency: a grid with fewer blocks
 * than SMs uses only that fraction of the GPU, and a grid of several waves
 * loses the idle tail of its last wave.  Kernels that write f16/bf16
 * buffers (other than element-wise built-ins) use the tensor-core rate.
 * Copies and memsets: bytes over the link or memory bandwidth plus a fixed
 * latency; a device-to-device copy reads and writes device memory, so it
 * moves at half the memory bandwidth.  A fused group costs the sum of its members less the memory
 * traffic of its intermediates (a buffer one member writes and a later
 * member reads is read from registers, and not written at all when nothing
 * outside the group reads it), but never less than its members' compute
 * time.  Nodes of a conditional branch that the graph's `assume` excludes
 * cost nothing.  A kernel or an opaque node with no cost_ns, no flops or
 * traffic and no buffers (an imported CUDA graph without times) has an
 * unknown duration: it is modelled as 0 ns and flagged, so that views say
 * "unknown" instead of "0 ns".  Durations exclude launch latency, which the simulator
 * adds, and are clamped to [0, PS_COST_MAX_NS] (NaN counts as 0), as
 * ps_analysis_run does, so that sums of them stay finite. */
#ifndef PS_COST_H
#define PS_COST_H

#include "ps-device.h"
#include "ps-graph.h"
#include "ps-plan.h"

#define PS_COST_MAX_NS 1e15

/* The part of the device a piece of work occupies while it runs. */
typedef enum ps_resource {
  PS_RES_NONE = 0, /* takes no device time (events, barriers) */
  PS_RES_SM,       /* kernels, memsets, device-to-device copies */
  PS_RES_H2D,      /* host-to-device copy engine and link */
  PS_RES_D2H,      /* device-to-host copy engine and link */
  PS_RES_P2P,      /* peer link */
  PS_RES_HOST,     /* host callbacks */
  PS_RES__COUNT
} ps_resource;

typedef struct ps_cost {
  double ns;          /* duration alone on an idle device */
  double sm_fraction; /* share of the SMs requested, in (0, 1]; 0 for non-SM work */
  double flops;       /* as modelled (0 when unknown) */
  double bytes;       /* memory or link traffic, as modelled */
  uint8_t resource;   /* ps_resource */
  uint8_t skipped;    /* 1: in a conditional branch the model does not take */
  uint8_t unknown;    /* 1: nothing tells how long it takes (no cost_ns, no sizes); ns is 0 */
  uint8_t estimated;  /* 1: a kernel known only by its launch: ns is estimated from that */
} ps_cost;

/* The cost of one node. */
void ps_cost_node (const ps_device *d, const ps_graph *g, uint32_t v, ps_cost *out);

/* Durations of all nodes (ns, n_nodes entries), e.g. for ps_analysis_run. */
void ps_cost_nodes (const ps_device *d, const ps_graph *g, double *ns);

/* The cost of every step of a plan (out has n_steps entries); fused groups
 * as described above.  Returns 0 or PS_ENOMEM. */
int ps_cost_plan (const ps_device *d, const ps_plan *p, ps_cost *out);

/* A node's cost and what ps_cost_group takes of it besides, computed
 * ahead of the groups (ps_cost_scratch.parts). */
typedef struct ps_cost_part {
  ps_cost c;
  double compute_ns; /* its compute alone (0 with a given duration) */
  double efficiency; /* of the rate it runs at */
} ps_cost_part;

/* The cost of node v into *out, as ps_cost_node costs it. */
void ps_cost_node_part (const ps_device *d, const ps_graph *g, uint32_t v, ps_cost_part *out);

/* Per-graph scratch for ps_cost_group: how many nodes read each buffer,
 * and work arrays that ps_cost_group leaves zeroed. */
typedef struct ps_cost_scratch {
  uint32_t *readers, *local;
  uint8_t *written;
  /* Per node id, its part (ps_cost_node_part on the same device), which
   * ps_cost_group then reads instead of costing the node; NULL (as
   * ps_cost_scratch_init leaves it): costed there. */
  const ps_cost_part *parts;
  /* Every node ps_cost_group costs adds its share-time here
   * (ps_cost_share_time): with the nodes costed alone, the terms of
   * ps_cost_unfused_bound, had without costing a node twice. */
  double busy[PS_RES__COUNT];
  /* readers is another scratch's (ps_cost_scratch_init_shared). */
  bool shared;
} ps_cost_scratch;

int ps_cost_scratch_init (ps_cost_scratch *s, const ps_graph *g); /* 0 or PS_ENOMEM */
/* A scratch of its own for another thread, which reads the readers that
 * `from` (made by ps_cost_scratch_init on the same graph, and kept until
 * s is freed) counted instead of counting them again. */
int ps_cost_scratch_init_shared (ps_cost_scratch *s, const ps_graph *g,
                                 const ps_cost_scratch *from);
void ps_cost_scratch_free (ps_cost_scratch *s);

/* The cost of `count` nodes launched as one fused step (in the order the
 * step lists them), exactly as ps_cost_plan computes a fused step. */
void ps_cost_group (const ps_device *d, const ps_graph *g, const uint32_t *nodes, uint32_t count,
                    ps_cost_scratch *s, ps_cost *out);

/* The least time any plan of g without fusion (each node a step of its
 * own) can take on d, whatever its streams and order: the busiest
 * resource's total share-time, since the simulator gives work at most the
 * share of its resource it asks for (each node needs its solo time times
 * that share) and a resource has one whole share.  0 for a measured graph,
 * whose durations already hold their sharing. */
double ps_cost_unfused_bound (const ps_device *d, const ps_graph *g);
/* The share of its resource that work of cost c asks for, as the
 * simulator hands it out (ps-sim.h): its fraction of the SMs, or the whole
 * copy engine, link or host thread; within [1e-6, 1]. */
double ps_cost_share (const ps_cost *c);
/* One node's term of that bound: adds c's solo time times the share of
 * its resource it asks for to busy[its resource]; work of no resource or
 * no time adds nothing. */
void ps_cost_share_time (const ps_cost *c, double busy[PS_RES__COUNT]);
/* The bound from the summed terms: the busiest resource's. */
double ps_cost_busiest (const double busy[PS_RES__COUNT]);

/* The memory bandwidth streaming work reaches on d, in GB/s (bytes per
 * ns): mem_bandwidth_gbs times mem_efficiency. */
double ps_cost_mem_gbs (const ps_device *d);

/* The share of d's tensor-core peak a kernel of `flops` flops reaches:
 * the profile's gemm_efficiency points joined on a log scale of the
 * flops, the end points' shares beyond them, 1 without points. */
double ps_cost_gemm_efficiency (const ps_device *d, double flops);

/* Fraction of the SMs a launch of `blocks` blocks of `threads` threads
 * occupies, and the efficiency of the launch (see above), both in (0, 1]. */
void ps_cost_occupancy (const ps_device *d, uint64_t blocks, uint64_t threads,
                        double *sm_fraction, double *efficiency);

#endif
