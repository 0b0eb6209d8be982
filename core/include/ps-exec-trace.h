/* ps-exec-trace.h: a PyTorch execution trace (ExecutionTraceObserver, the
 * Chakra JSON schema), read for what each operator touched.
 *
 * An execution trace lists the framework's operators ("nodes") with their
 * record-function id (rf_id), the id a Kineto trace of the same run gives
 * the same operator (its cpu_op's "Record function id", or in older traces
 * its "External id"), and their inputs and outputs.  A tensor argument is
 * written [tensor id, storage id, offset, element count, element size,
 * device]; planscope keeps the tensors on CUDA devices: which storage, how
 * far into it the tensor reaches, its element type, and whether it was an
 * input or an output.  Lists of tensors count as their tensors.  Both the
 * 1.0 layout ("inputs", "input_types") and the 1.1 one ("inputs":
 * {"values", "types"}) are read.  Everything else is skipped. */
#ifndef PS_EXEC_TRACE_H
#define PS_EXEC_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "ps-error.h"

typedef struct ps_et_tensor {
  int64_t storage; /* storage id */
  uint64_t bytes;  /* (offset + elements) x element size: how far into the storage it reaches */
  int32_t device;  /* CUDA device ordinal */
  uint8_t dtype;   /* ps_dtype (u8 for types planscope does not name) */
  uint8_t output;  /* an output (else an input) */
} ps_et_tensor;

typedef struct ps_et_op {
  int64_t rf_id;
  uint32_t name; /* offset into strings */
  uint32_t tensors_begin, tensors_count; /* its CUDA tensors, in tensors */
} ps_et_op;

typedef struct ps_exec_trace {
  char schema[32];
  uint32_t n_nodes;           /* nodes read */
  uint32_t n_ops, ops_cap;    /* nodes with an rf_id, sorted by it */
  ps_et_op *ops;
  uint32_t n_tensors, tensors_cap;
  ps_et_tensor *tensors;
  char *strings;
  uint32_t strings_len, strings_cap;
} ps_exec_trace;

/* Reads an execution trace from memory, gzip-compressed or not.  Errors
 * (not JSON, not an execution trace) go to diag with their position. */
int ps_exec_trace_read (ps_exec_trace *et, const char *data, size_t len, ps_diag *diag);
void ps_exec_trace_free (ps_exec_trace *et);

/* The operator with that rf_id, or NULL. */
const ps_et_op *ps_exec_trace_find (const ps_exec_trace *et, int64_t rf_id);

static inline const char *
ps_et_op_name (const ps_exec_trace *et, const ps_et_op *op)
{
  return et->strings + op->name;
}

#endif
