/* ps-kernel-src.c: generates the CUDA C of built-in, synthetic, spin and
 * fused kernels, and reads user modules (see ps-kernel-src.h for the
 * semantics).  Plain text: this file needs no CUDA headers. */
#include "ps-kernel-src.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-profiler-private.h"

/* ---- a growing string --------------------------------------------------- */

void
ps__ksrc_printf (ps__ksrc_buf *b, const char *fmt, ...)
{
  if (b->oom)
    return;
  for (;;) {
    va_list ap;
    va_start (ap, fmt);
    size_t room = b->cap - b->len;
    int n = vsnprintf (b->cap ? b->s + b->len : NULL, room, fmt, ap);
    va_end (ap);
    if (n < 0) {
      b->oom = true;
      return;
    }
    if ((size_t) n < room) {
      b->len += (size_t) n;
      return;
    }
    if (ps_array_grow (&b->s, &b->cap, (uint64_t) b->len + (size_t) n + 1, 1, PS_ARRAY_MAX) < 0) {
      b->oom = true;
      return;
    }
  }
}

/* ---- dtypes ------------------------------------------------------------- */

static const struct {
  const char *name, *ctype, *load, *store, *round;
} dt_info[PS_DT__COUNT] = {
  [PS_DT_F32] = { "f32", "float", "p[i]", "v", "v" },
  [PS_DT_F16] = { "f16", "__half", "__half2float (p[i])", "__float2half_rn (v)",
                  "__half2float (__float2half_rn (v))" },
  [PS_DT_BF16] = { "bf16", "__nv_bfloat16", "__bfloat162float (p[i])", "__float2bfloat16_rn (v)",
                   "__bfloat162float (__float2bfloat16_rn (v))" },
  [PS_DT_I32] = { "i32", "int", "(float) p[i]", "__float2int_rn (v)",
                  "(float) __float2int_rn (v)" },
  [PS_DT_U8] = { "u8", "unsigned char", "(float) p[i]",
                 "(unsigned char) min (__float2uint_rn (v), 255u)",
                 "(float) min (__float2uint_rn (v), 255u)" },
};

static ps_dtype
buf_dtype (const ps_graph *g, uint32_t b)
{
  uint8_t dt = g->buffers[b].dtype;
  return dt < PS_DT__COUNT ? (ps_dtype) dt : PS_DT_F32;
}

uint64_t
ps_buffer_elements (const ps_graph *g, uint32_t b)
{
  uint32_t size = ps_dtype_size (buf_dtype (g, b));
  return size ? g->buffers[b].bytes / size : 0;
}

static void
emit_dtype_helpers (ps__ksrc_buf *b, ps_dtype dt)
{
  const char *n = dt_info[dt].name, *t = dt_info[dt].ctype;
  ps__ksrc_printf (b,
                 "static __device__ __forceinline__ float\nps_ld_%s (const %s *p, ps_u64 i, "
                 "ps_u64 n)\n{\n  if (n == 0)\n    return 0.0f;\n  if (i >= n)\n    i %%= n;\n"
                 "  return %s;\n}\n",
                 n, t, dt_info[dt].load);
  ps__ksrc_printf (b,
                 "static __device__ __forceinline__ void\nps_st_%s (%s *p, ps_u64 i, float v)\n"
                 "{\n  p[i] = %s;\n}\n",
                 n, t, dt_info[dt].store);
  ps__ksrc_printf (b,
                 "static __device__ __forceinline__ float\nps_rt_%s (float v)\n{\n"
                 "  return %s;\n}\n",
                 n, dt_info[dt].round);
}

static void
emit_preamble (ps__ksrc_buf *b, const bool used[PS_DT__COUNT])
{
  if (used[PS_DT_F16])
    ps__ksrc_printf (b, "#include <cuda_fp16.h>\n");
  if (used[PS_DT_BF16])
    ps__ksrc_printf (b, "#include <cuda_bf16.h>\n");
  ps__ksrc_printf (b, "typedef unsigned long long ps_u64;\n\n"
                    "static __device__ __forceinline__ ps_u64\nps_now (void)\n{\n  ps_u64 t;\n"
                    "  asm volatile (\"mov.u64 %%0, %%%%globaltimer;\" : \"=l\"(t));\n"
                    "  return t;\n}\n");
  for (int dt = 0; dt < PS_DT__COUNT; dt++)
    if (used[dt])
      emit_dtype_helpers (b, (ps_dtype) dt);
  ps__ksrc_printf (b, "\n");
}

/* ---- deterministic inputs ----------------------------------------------- */

static uint64_t
mix (uint64_t seed, uint64_t i)
{
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double
ps_fill_value (ps_dtype dt, uint64_t seed, uint64_t i)
{
  uint64_t z = mix (seed, i);
  switch (dt) {
  case PS_DT_I32:
    return (double) ((int64_t) (z % 201) - 100);
  case PS_DT_U8:
    return (double) (z & 255);
  default:
    /* (float) of a 24-bit integer times 2^-23, minus 1: exact in float. */
    return (double) (z >> 40) * (1.0 / 8388608.0) - 1.0;
  }
}

uint64_t
ps_hash64 (const void *data, size_t len, uint64_t h)
{
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t
ps_fill_seed (const char *name)
{
  return ps_hash64 (name, strlen (name), PS_HASH64_INIT);
}

static const char support_code[] =
  "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
  "typedef unsigned long long ps_u64;\n\n"
  "static __device__ __forceinline__ ps_u64\nps_mix (ps_u64 seed, ps_u64 i)\n{\n"
  "  ps_u64 z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;\n"
  "  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;\n"
  "  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;\n  return z ^ (z >> 31);\n}\n"
  "static __device__ __forceinline__ float\nps_unit (ps_u64 z)\n{\n"
  "  return (float) (z >> 40) * (1.0f / 8388608.0f) - 1.0f;\n}\n"
  "#define PS_INIT(NAME, T, EXPR) \\\n"
  "  extern \"C\" __global__ void NAME (T *p, ps_u64 n, ps_u64 seed) \\\n  { \\\n"
  "    ps_u64 stride = (ps_u64) gridDim.x * blockDim.x; \\\n"
  "    for (ps_u64 i = (ps_u64) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) { \\\n"
  "      ps_u64 z = ps_mix (seed, i); \\\n      p[i] = EXPR; \\\n    } \\\n  }\n"
  "PS_INIT (ps_init_f32, float, ps_unit (z))\n"
  "PS_INIT (ps_init_f16, __half, __float2half_rn (ps_unit (z)))\n"
  "PS_INIT (ps_init_bf16, __nv_bfloat16, __float2bfloat16_rn (ps_unit (z)))\n"
  "PS_INIT (ps_init_i32, int, (int) (z % 201) - 100)\n"
  "PS_INIT (ps_init_u8, unsigned char, (unsigned char) (z & 255))\n";

const char *
ps_ksrc_support_code (void)
{
  return support_code;
}

/* ---- context ------------------------------------------------------------ */

int
ps_ksrc_ctx_init (ps_ksrc_ctx *c, const ps_graph *g)
{
  memset (c, 0, sizeof *c);
  c->g = g;
  size_t n = g->n_buffers ? g->n_buffers : 1;
  c->readers = calloc (n, sizeof *c->readers);
  c->param_of = malloc (n * sizeof *c->param_of);
  if (!c->readers || !c->param_of) {
    ps_ksrc_ctx_free (c);
    return PS_ENOMEM;
  }
  for (uint32_t b = 0; b < g->n_buffers; b++)
    c->param_of[b] = PS_NONE;
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    const ps_node *nd = &g->nodes[v];
    for (uint32_t r = 0; r < nd->reads_count; r++) {
      uint32_t b = g->access[nd->reads_begin + r];
      if (b < g->n_buffers)
        c->readers[b]++;
    }
    if (nd->op == PS_OP_KERNEL && nd->aux < g->n_kernels) {
      const ps_kernel *k = &g->kernels[nd->aux];
      for (uint32_t a = 0; a < k->args_count && k->args_begin + a < g->n_kargs; a++) {
        const ps_karg *ka = &g->kargs[k->args_begin + a];
        if (ka->kind == PS_KARG_BUFFER && ka->v.buffer < g->n_buffers)
          c->readers[ka->v.buffer]++;
      }
    }
    if (nd->op == PS_OP_CONDITIONAL && nd->aux < g->n_conds &&
        g->conds[nd->aux].condition < g->n_buffers)
      c->readers[g->conds[nd->aux].condition]++;
  }
  return 0;
}

void
ps_ksrc_ctx_free (ps_ksrc_ctx *c)
{
  free (c->readers);
  free (c->param_of);
  memset (c, 0, sizeof *c);
}

void
ps_ksrc_free (ps_ksrc *k)
{
  free (k->code);
  free (k->header);
  free (k->module_path);
  free (k->parts);
  free (k->bufs);
  free (k->nodes);
  memset (k, 0, sizeof *k);
}

/* ---- members ------------------------------------------------------------ */

enum { M_BUILTIN, M_SYNTHETIC, M_SPIN, M_MODULE };

/* The most members and buffers one generated kernel takes: 96 buffers are
 * 1.5 KiB of parameters, and 32 bodies keep NVRTC fast. */
#define PS__FUSE_MAX_MEMBERS 32
#define PS__FUSE_MAX_BUFS 96

static int
member_class (const ps_graph *g, uint32_t v)
{
  const ps_node *nd = &g->nodes[v];
  const ps_kernel *kr = &g->kernels[nd->aux];
  if (kr->module != PS_NONE)
    return M_MODULE;
  if (nd->impl == PS_IMPL_SPIN)
    return M_SPIN;
  if (ps_impl_elementwise ((ps_impl) nd->impl))
    return M_BUILTIN;
  return M_SYNTHETIC;
}

static uint32_t
node_read (const ps_graph *g, uint32_t v, uint32_t r)
{
  return g->access[g->nodes[v].reads_begin + r];
}

static uint32_t
node_write (const ps_graph *g, uint32_t v, uint32_t w)
{
  return g->access[g->nodes[v].writes_begin + w];
}

/* Elements a member's loop covers: its write for built-ins, the largest
 * of its buffers for synthetic kernels. */
static uint64_t
member_n (const ps_graph *g, uint32_t v, int cls)
{
  const ps_node *nd = &g->nodes[v];
  uint64_t n = 0;
  if (cls == M_SPIN)
    return 0;
  for (uint32_t w = 0; w < nd->writes_count; w++) {
    uint64_t e = ps_buffer_elements (g, node_write (g, v, w));
    n = e > n ? e : n;
  }
  if (cls == M_SYNTHETIC)
    for (uint32_t r = 0; r < nd->reads_count; r++) {
      uint64_t e = ps_buffer_elements (g, node_read (g, v, r));
      n = e > n ? e : n;
    }
  return n;
}

static uint64_t
member_pad (const ps_graph *g, uint32_t v, int cls)
{
  const ps_node *nd = &g->nodes[v];
  if ((cls != M_SPIN && cls != M_SYNTHETIC) || !(nd->flags & PS_NODE_HAS_COST))
    return 0;
  double ns = nd->cost_ns;
  /* A minute of busy-waiting is already far beyond any sensible graph. */
  if (!(ns > 0))
    return 0;
  return ns > 60e9 ? (uint64_t) 60e9 : (uint64_t) llround (ns);
}

/* A float literal that reads back as the same float. */
static void
emit_float (ps__ksrc_buf *b, double x)
{
  float f = (float) x;
  if (isnan (f))
    ps__ksrc_printf (b, "__int_as_float (0x7fc00000)");
  else if (isinf (f))
    ps__ksrc_printf (b, "%s__int_as_float (0x7f800000)", f < 0 ? "-" : "");
  else
    ps__ksrc_printf (b, "%.9ef", (double) f);
}

/* Names the param of buffer `buf`, registering it when new. */
static uint32_t
param (const ps_ksrc_ctx *c, ps_ksrc *k, uint32_t buf)
{
  return c->param_of[buf];
}

/* What the emitter tracks per buffer parameter of a fused kernel. */
typedef struct emit_state {
  bool fused;
  uint8_t *written; /* a member wrote it: later reads use r<j> */
  uint8_t *kept;    /* written somewhere in the group: has a register */
  uint8_t *store;   /* stored after the members (fused) */
} emit_state;

static void
emit_read (ps__ksrc_buf *b, const ps_ksrc_ctx *c, ps_ksrc *k, const emit_state *st, uint32_t buf)
{
  uint32_t j = param (c, k, buf);
  if (st->fused && st->written[j])
    ps__ksrc_printf (b, "r%u", j);
  else
    ps__ksrc_printf (b, "ps_ld_%s (b%u, i, n%u)", dt_info[buf_dtype (c->g, buf)].name, j, j);
}

static void
emit_write (ps__ksrc_buf *b, const ps_ksrc_ctx *c, ps_ksrc *k, emit_state *st, uint32_t buf,
            const char *value)
{
  uint32_t j = param (c, k, buf);
  const char *dn = dt_info[buf_dtype (c->g, buf)].name;
  if (st->fused) {
    ps__ksrc_printf (b, "r%u = ps_rt_%s (%s);\n", j, dn, value);
    st->written[j] = 1;
  } else {
    ps__ksrc_printf (b, "ps_st_%s (b%u, i, %s);\n", dn, j, value);
  }
}

/* The body of one member inside the loop over i. */
static void
emit_member (ps__ksrc_buf *b, const ps_ksrc_ctx *c, ps_ksrc *k, emit_state *st, uint32_t v,
             uint32_t idx)
{
  const ps_graph *g = c->g;
  const ps_node *nd = &g->nodes[v];
  const ps_kernel *kr = &g->kernels[nd->aux];
  int cls = member_class (g, v);
  ps__ksrc_printf (b, "    /* member %u: %s */\n", idx,
                 cls == M_SYNTHETIC ? "synthetic" : ps_impl_name ((ps_impl) nd->impl));
  if (cls == M_SPIN)
    return;
  ps__ksrc_printf (b, "    if (i < m%u) {\n", idx);
  if (cls == M_SYNTHETIC) {
    ps__ksrc_printf (b, "      float acc = 0.0f;\n");
    uint64_t n_member = member_n (g, v, cls);
    for (uint32_t r = 0; r < nd->reads_count; r++) {
      uint32_t buf = node_read (g, v, r);
      /* A buffer it also writes, with fewer elements than it computes:
       * read only the element this thread writes, so that no thread reads
       * what another one is writing (one member alone can race, not only
       * a fused group). */
      bool own = false;
      for (uint32_t w = 0; w < nd->writes_count && !own; w++)
        own = node_write (g, v, w) == buf && ps_buffer_elements (g, buf) < n_member;
      ps__ksrc_printf (b, "      acc += ");
      if (own && !(st->fused && st->written[param (c, k, buf)]))
        ps__ksrc_printf (b, "(i < n%u ? ", param (c, k, buf));
      emit_read (b, c, k, st, buf);
      if (own && !(st->fused && st->written[param (c, k, buf)]))
        ps__ksrc_printf (b, " : 0.0f)");
      ps__ksrc_printf (b, ";\n");
    }
    if (nd->reads_count > 1) {
      ps__ksrc_printf (b, "      acc *= ");
      emit_float (b, 1.0 / nd->reads_count);
      ps__ksrc_printf (b, ";\n");
    }
    if (nd->reads_count)
      ps__ksrc_printf (b, "      sink_acc += acc;\n");
    for (uint32_t w = 0; w < nd->writes_count; w++) {
      uint32_t buf = node_write (g, v, w);
      ps__ksrc_printf (b, "      if (i < n%u)\n        ", param (c, k, buf));
      emit_write (b, c, k, st, buf, "acc");
    }
    ps__ksrc_printf (b, "    }\n");
    return;
  }

  /* Built-ins: the loader checked their read and write counts; a graph
   * made some other way gets zeros for missing operands. */
  int nr = ps_impl_reads ((ps_impl) nd->impl);
  for (int r = 0; r < nr; r++) {
    ps__ksrc_printf (b, "      const float a%d = ", r);
    if ((uint32_t) r < nd->reads_count)
      emit_read (b, c, k, st, node_read (g, v, (uint32_t) r));
    else
      ps__ksrc_printf (b, "0.0f");
    ps__ksrc_printf (b, ";\n");
  }
  ps__ksrc_printf (b, "      const float v = ");
  switch ((ps_impl) nd->impl) {
  case PS_IMPL_COPY:
    ps__ksrc_printf (b, "a0");
    break;
  case PS_IMPL_SCALE:
    emit_float (b, kr->alpha);
    ps__ksrc_printf (b, " * a0");
    break;
  case PS_IMPL_ADD_SCALAR:
    ps__ksrc_printf (b, "a0 + ");
    emit_float (b, kr->beta);
    break;
  case PS_IMPL_RELU:
    ps__ksrc_printf (b, "fmaxf (a0, 0.0f)");
    break;
  case PS_IMPL_GELU:
    ps__ksrc_printf (b, "0.5f * a0 * (1.0f + erff (a0 * 0.70710678118654752f))");
    break;
  case PS_IMPL_SIGMOID:
    ps__ksrc_printf (b, "1.0f / (1.0f + expf (-a0))");
    break;
  case PS_IMPL_TANH:
    ps__ksrc_printf (b, "tanhf (a0)");
    break;
  case PS_IMPL_EXP:
    ps__ksrc_printf (b, "expf (a0)");
    break;
  case PS_IMPL_NEG:
    ps__ksrc_printf (b, "-a0");
    break;
  case PS_IMPL_ADD:
    ps__ksrc_printf (b, "a0 + a1");
    break;
  case PS_IMPL_MUL:
    ps__ksrc_printf (b, "a0 * a1");
    break;
  case PS_IMPL_SUB:
    ps__ksrc_printf (b, "a0 - a1");
    break;
  case PS_IMPL_FILL:
  default:
    emit_float (b, kr->value);
    break;
  }
  ps__ksrc_printf (b, ";\n");
  if (nd->writes_count) {
    ps__ksrc_printf (b, "      ");
    emit_write (b, c, k, st, node_write (g, v, 0), "v");
  }
  ps__ksrc_printf (b, "    }\n");
}

/* One __global__ function running `members` (indices into k->nodes) with
 * the buffer parameters bufs[0 .. n_bufs). */
static void
emit_kernel (ps__ksrc_buf *b, const ps_ksrc_ctx *c, ps_ksrc *k, emit_state *st,
             const uint32_t *members, uint32_t nm, const char *fname, const uint32_t *bufs,
             uint32_t n_bufs)
{
  const ps_graph *g = c->g;
  bool pad = false, sink = false;
  for (uint32_t m = 0; m < nm; m++) {
    int cls = member_class (g, k->nodes[members[m]]);
    pad |= cls == M_SPIN || cls == M_SYNTHETIC;
    sink |= cls == M_SYNTHETIC && g->nodes[k->nodes[members[m]]].reads_count > 0;
  }

  ps__ksrc_printf (b, "extern \"C\" __global__ void\n%s (", fname);
  for (uint32_t j = 0; j < n_bufs; j++)
    ps__ksrc_printf (b, "%s *__restrict__ b%u, ps_u64 n%u, ", dt_info[buf_dtype (g, bufs[j])].ctype,
                   j, j);
  ps__ksrc_printf (b, "ps_u64 N, ps_u64 pad_ns, int sink)\n{\n");
  if (pad)
    ps__ksrc_printf (b, "  const ps_u64 t0 = ps_now ();\n");
  ps__ksrc_printf (b, "  const ps_u64 threads = (ps_u64) blockDim.x * blockDim.y * blockDim.z;\n"
                    "  const ps_u64 stride = threads * gridDim.x * gridDim.y * gridDim.z;\n"
                    "  const ps_u64 first = (((ps_u64) blockIdx.z * gridDim.y + blockIdx.y) * "
                    "gridDim.x + blockIdx.x) * threads\n"
                    "                       + ((ps_u64) threadIdx.z * blockDim.y + threadIdx.y) * "
                    "blockDim.x + threadIdx.x;\n");
  /* Each member's element count, from the counts passed in. */
  for (uint32_t m = 0; m < nm; m++) {
    uint32_t v = k->nodes[members[m]];
    const ps_node *nd = &g->nodes[v];
    int cls = member_class (g, v);
    if (cls == M_SPIN)
      continue;
    ps__ksrc_printf (b, "  ps_u64 m%u = 0;\n", m);
    for (uint32_t w = 0; w < nd->writes_count; w++)
      ps__ksrc_printf (b, "  m%u = n%u > m%u ? n%u : m%u;\n", m, param (c, k, node_write (g, v, w)),
                     m, param (c, k, node_write (g, v, w)), m);
    if (cls == M_SYNTHETIC)
      for (uint32_t r = 0; r < nd->reads_count; r++)
        ps__ksrc_printf (b, "  m%u = n%u > m%u ? n%u : m%u;\n", m,
                         param (c, k, node_read (g, v, r)), m, param (c, k, node_read (g, v, r)),
                         m);
  }
  if (sink)
    ps__ksrc_printf (b, "  float sink_acc = 0.0f;\n");
  ps__ksrc_printf (b, "  for (ps_u64 i = first; i < N; i += stride) {\n");
  if (st->fused)
    for (uint32_t j = 0; j < n_bufs; j++) {
      st->written[j] = 0;
      if (st->kept[j])
        ps__ksrc_printf (b, "    float r%u = 0.0f;\n", j);
    }
  for (uint32_t m = 0; m < nm; m++)
    emit_member (b, c, k, st, k->nodes[members[m]], m);
  if (st->fused)
    for (uint32_t j = 0; j < n_bufs; j++)
      if (st->kept[j] && st->store[j])
        ps__ksrc_printf (b, "    if (i < n%u)\n      ps_st_%s (b%u, i, r%u);\n", j,
                       dt_info[buf_dtype (g, bufs[j])].name, j, j);
  ps__ksrc_printf (b, "  }\n");
  if (sink) {
    /* sink is always 0: the store only keeps the reads alive. */
    for (uint32_t m = 0; m < nm; m++) {
      uint32_t v = k->nodes[members[m]];
      if (member_class (g, v) == M_SYNTHETIC && g->nodes[v].reads_count) {
        uint32_t buf = node_read (g, v, 0);
        ps__ksrc_printf (b, "  if (sink)\n    ps_st_%s (b%u, 0, sink_acc);\n",
                       dt_info[buf_dtype (g, buf)].name, param (c, k, buf));
        break;
      }
    }
  }
  if (pad)
    ps__ksrc_printf (b, "  if (pad_ns)\n    while (ps_now () - t0 < pad_ns) {\n    }\n");
  ps__ksrc_printf (b, "}\n");
}

/* ---- user modules ------------------------------------------------------- */

static int
read_module (ps_ksrc *k, const ps_graph *g, uint32_t v, ps_gpu_error *err)
{
  const ps_kernel *kr = &g->kernels[g->nodes[v].aux];
  const char *m = ps_graph_str (g, kr->module);
  const char *node = ps_node_name (g, v);
  size_t ml = strlen (m);
  if (ml > 3 && strcmp (m + ml - 3, ".cu") == 0)
    k->kind = PS_KSRC_USER_CU;
  else if (ml > 4 && strcmp (m + ml - 4, ".ptx") == 0)
    k->kind = PS_KSRC_USER_PTX;
  else if (ml > 6 && strcmp (m + ml - 6, ".cubin") == 0)
    k->kind = PS_KSRC_USER_CUBIN;
  else
    return ps_gpu_error_set (err, PS_GPU_BAD_MODULE, 0,
                             "node \"%s\": a module is a .ptx, .cubin or .cu file, not \"%s\"",
                             node, m);

  /* Relative paths are relative to the graph file. */
  const char *gp = g->path ? g->path : "";
  const char *slash = strrchr (gp, '/');
  size_t dl = m[0] == '/' || !slash ? 0 : (size_t) (slash - gp) + 1;
  k->module_path = malloc (dl + ml + 1);
  if (!k->module_path)
    return PS_ENOMEM;
  memcpy (k->module_path, gp, dl);
  memcpy (k->module_path + dl, m, ml + 1);

  ps_diag d;
  ps_diag_init (&d, k->module_path);
  int r = ps_file_read_named (k->module_path, (size_t) 256 << 20, &k->code, &k->code_len, &d);
  if (r == PS_ELIMIT)
    r = ps_gpu_error_set (err, PS_GPU_BAD_MODULE, 0,
                          "node \"%s\": module %s is larger than 256 MiB", node, k->module_path);
  else if (r != 0)
    r = ps_gpu_error_set (err, r == PS_ENOMEM ? PS_GPU_NO_MEMORY : PS_GPU_BAD_MODULE, 0,
                          "node \"%s\": module: %s", node,
                          d.count ? d.entries[0].message : ps_strerror (r));
  ps_diag_free (&d);
  if (r != 0)
    return r;
  snprintf (k->function, sizeof k->function, "%s", ps_graph_str (g, kr->function));
  k->n_parts = 1;
  k->parts = calloc (1, sizeof *k->parts);
  if (!k->parts)
    return PS_ENOMEM;
  k->parts[0].node = v;
  return 0;
}

/* ---- building ----------------------------------------------------------- */

static int
cmp_u32 (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  return x < y ? -1 : x > y;
}

static void
comment_text (ps__ksrc_buf *b, const char *s)
{
  /* Node names are arbitrary UTF-8: keep the comment a single line. */
  for (; *s; s++)
    ps__ksrc_printf (b, "%c", (unsigned char) *s < 0x20 || *s == 0x7f ? '?' : *s);
}

/* Gives buf the next parameter of the launch whose buffers start at
 * k->bufs[begin], unless it has one. */
static void
add_param (const ps_ksrc_ctx *c, ps_ksrc *k, uint32_t begin, uint32_t buf)
{
  if (c->param_of[buf] != PS_NONE)
    return;
  c->param_of[buf] = k->n_bufs - begin;
  k->bufs[k->n_bufs++] = buf;
}

int
ps_ksrc_build (ps_ksrc *k, const ps_ksrc_ctx *c, const uint32_t *nodes, uint32_t n,
               ps_gpu_error *err)
{
  const ps_graph *g = c->g;
  memset (k, 0, sizeof *k);
  if (n == 0)
    return 0;
  k->nodes = malloc ((size_t) n * sizeof *k->nodes);
  if (!k->nodes)
    return PS_ENOMEM;
  memcpy (k->nodes, nodes, (size_t) n * sizeof *nodes);
  ps_array_sort (k->nodes, n, sizeof *k->nodes, cmp_u32);
  k->n_nodes = n;
  k->fused = n > 1;

  uint64_t n_acc = 0;
  for (uint32_t m = 0; m < n; m++) {
    uint32_t v = k->nodes[m];
    if (v >= g->n_nodes || g->nodes[v].op != PS_OP_KERNEL || g->nodes[v].aux >= g->n_kernels) {
      ps_ksrc_free (k);
      return ps_gpu_error_set (err, PS_GPU_COMPILE_FAILED, 0, "node %u is not a kernel", v);
    }
    if (member_class (g, v) == M_MODULE && n > 1) {
      ps_gpu_error_set (err, PS_GPU_BAD_MODULE, 0,
                        "node \"%s\" runs a module and cannot be part of a fused group",
                        ps_node_name (g, v));
      ps_ksrc_free (k);
      return PS_EINVAL;
    }
    n_acc += g->nodes[v].reads_count + g->nodes[v].writes_count;
  }

  ps__ksrc_buf hb = { 0 };
  ps__ksrc_printf (&hb, "// planscope kernel for node%s ", n > 1 ? "s" : "");
  for (uint32_t m = 0; m < n; m++) {
    ps__ksrc_printf (&hb, "%s\"", m ? ", " : "");
    comment_text (&hb, ps_node_name (g, k->nodes[m]));
    ps__ksrc_printf (&hb, "\"");
  }
  ps__ksrc_printf (&hb, "\n");
  if (hb.oom) {
    free (hb.s);
    ps_ksrc_free (k);
    return PS_ENOMEM;
  }
  k->header = hb.s;

  if (member_class (g, k->nodes[0]) == M_MODULE) {
    int r = read_module (k, g, k->nodes[0], err);
    if (r != 0) {
      ps_ksrc_free (k);
      return r;
    }
    return 0;
  }

  uint32_t n_cap = (uint32_t) (n_acc ? n_acc : 1);
  k->bufs = malloc ((size_t) n_cap * sizeof *k->bufs);
  uint8_t *flags = calloc (n_cap, 3);
  uint32_t *inside = calloc (n_cap, sizeof *inside);
  uint64_t *mn = malloc ((size_t) n * sizeof *mn);
  uint32_t *chunk_end = malloc ((size_t) n * sizeof *chunk_end);
  k->parts = calloc (n, sizeof *k->parts);
  int ret = 0;
  if (!k->bufs || !flags || !inside || !mn || !chunk_end || !k->parts) {
    ret = PS_ENOMEM;
    goto out;
  }
  emit_state st = { .written = flags, .kept = flags + n_cap, .store = flags + 2 * n_cap };

  /* One register per buffer is sound only when every member that reads a
   * buffer the group writes computes no more elements than that buffer
   * has, so that it reads the element it computes. */
  bool sound = true;
  char why[200] = "";
  for (uint32_t m = 0; m < n; m++) {
    const ps_node *nd = &g->nodes[k->nodes[m]];
    mn[m] = member_n (g, k->nodes[m], member_class (g, k->nodes[m]));
    for (uint32_t w = 0; w < nd->writes_count; w++)
      c->param_of[node_write (g, k->nodes[m], w)] = 0;
  }
  for (uint32_t m = 0; m < n && sound && n > 1; m++) {
    uint32_t v = k->nodes[m];
    for (uint32_t r = 0; r < g->nodes[v].reads_count; r++) {
      uint32_t buf = node_read (g, v, r);
      if (c->param_of[buf] != PS_NONE && mn[m] > ps_buffer_elements (g, buf)) {
        sound = false;
        snprintf (why, sizeof why, "\"%.60s\" reads \"%.60s\" cyclically and the group writes it",
                  ps_node_name (g, v), ps_buffer_name (g, buf));
        break;
      }
    }
  }
  for (uint32_t m = 0; m < n; m++)
    for (uint32_t w = 0; w < g->nodes[k->nodes[m]].writes_count; w++)
      c->param_of[node_write (g, k->nodes[m], w)] = PS_NONE;

  /* Launches: one member each when unsound; else runs of consecutive
   * members, cut so that a kernel stays small enough to compile and its
   * parameters fit the 4 KiB CUDA allows. */
  uint32_t n_chunks = 0;
  for (uint32_t m = 0; m < n;) {
    uint32_t end = m + 1, nb = 0;
    if (sound) {
      for (end = m; end < n && end - m < PS__FUSE_MAX_MEMBERS; end++) {
        const ps_node *nd = &g->nodes[k->nodes[end]];
        uint32_t add = 0;
        for (uint32_t a = 0; a < nd->reads_count + nd->writes_count; a++) {
          uint32_t buf = a < nd->reads_count ? node_read (g, k->nodes[end], a)
                                             : node_write (g, k->nodes[end], a - nd->reads_count);
          if (c->param_of[buf] == PS_NONE) {
            c->param_of[buf] = 0;
            k->bufs[nb + add++] = buf;
          }
        }
        if (end > m && nb + add > PS__FUSE_MAX_BUFS) {
          for (uint32_t j = 0; j < add; j++)
            c->param_of[k->bufs[nb + j]] = PS_NONE;
          break;
        }
        nb += add;
      }
      for (uint32_t j = 0; j < nb; j++)
        c->param_of[k->bufs[j]] = PS_NONE;
    }
    chunk_end[n_chunks++] = end;
    m = end;
  }

  bool used[PS_DT__COUNT] = { false };
  for (uint32_t m = 0; m < n; m++) {
    const ps_node *nd = &g->nodes[k->nodes[m]];
    for (uint32_t a = 0; a < nd->reads_count; a++)
      used[buf_dtype (g, node_read (g, k->nodes[m], a))] = true;
    for (uint32_t a = 0; a < nd->writes_count; a++)
      used[buf_dtype (g, node_write (g, k->nodes[m], a))] = true;
  }

  /* The function name: what the kernel does. */
  ps__ksrc_buf nb = { 0 };
  ps__ksrc_printf (&nb, "ps_%s", n > 1 ? "fused" : "");
  for (uint32_t m = 0; m < n && nb.len < 90; m++) {
    uint32_t v = k->nodes[m];
    int cls = member_class (g, v);
    ps__ksrc_printf (&nb, "%s%s", n > 1 ? "_" : "",
                   cls == M_SYNTHETIC ? "synthetic" : ps_impl_name ((ps_impl) g->nodes[v].impl));
  }
  if (n == 1) {
    const ps_node *nd = &g->nodes[k->nodes[0]];
    if (nd->writes_count || nd->reads_count)
      ps__ksrc_printf (&nb, "_%s", dt_info[buf_dtype (g, nd->writes_count
                                                         ? node_write (g, k->nodes[0], 0)
                                                         : node_read (g, k->nodes[0], 0))].name);
  }
  if (nb.oom) {
    free (nb.s);
    ret = PS_ENOMEM;
    goto out;
  }
  snprintf (k->function, sizeof k->function, "%s", nb.s);
  free (nb.s);
  if (!sound)
    snprintf (k->note, sizeof k->note, "not fused into one loop: %s; runs as %u launches", why, n);
  else if (n_chunks > 1)
    snprintf (k->note, sizeof k->note,
              "a group of %u kernels runs as %u launches of at most %u fused kernels", n,
              n_chunks, PS__FUSE_MAX_MEMBERS);

  ps__ksrc_buf b = { 0 };
  emit_preamble (&b, used);
  k->n_bufs = 0;
  for (uint32_t ci = 0, m0 = 0; ci < n_chunks; m0 = chunk_end[ci++]) {
    uint32_t m1 = chunk_end[ci], begin = k->n_bufs;
    /* This launch's buffers, in order of first use. */
    for (uint32_t m = m0; m < m1; m++) {
      const ps_node *nd = &g->nodes[k->nodes[m]];
      for (uint32_t r = 0; r < nd->reads_count; r++)
        add_param (c, k, begin, node_read (g, k->nodes[m], r));
      for (uint32_t w = 0; w < nd->writes_count; w++)
        add_param (c, k, begin, node_write (g, k->nodes[m], w));
    }
    uint32_t nbufs = k->n_bufs - begin;
    const uint32_t *bufs = k->bufs + begin;
    st.fused = m1 - m0 > 1;
    memset (flags, 0, (size_t) n_cap * 3);
    memset (inside, 0, (size_t) nbufs * sizeof *inside);
    /* Which buffers the launch writes (kept in registers), and which of
     * them must reach memory: read outside it, or external. */
    for (uint32_t m = m0; m < m1; m++) {
      const ps_node *nd = &g->nodes[k->nodes[m]];
      for (uint32_t w = 0; w < nd->writes_count; w++)
        st.kept[param (c, k, node_write (g, k->nodes[m], w))] = 1;
      for (uint32_t r = 0; r < nd->reads_count; r++)
        inside[param (c, k, node_read (g, k->nodes[m], r))]++;
    }
    for (uint32_t j = 0; j < nbufs; j++)
      st.store[j] =
        (g->buffers[bufs[j]].flags & PS_BUF_EXTERNAL) || c->readers[bufs[j]] > inside[j];

    uint32_t members[PS__FUSE_MAX_MEMBERS];
    for (uint32_t m = m0; m < m1; m++)
      members[m - m0] = m;
    char fname[160];
    if (n_chunks > 1)
      snprintf (fname, sizeof fname, "%s_p%u", k->function, ci);
    else
      snprintf (fname, sizeof fname, "%s", k->function);
    emit_kernel (&b, c, k, &st, members, m1 - m0, fname, bufs, nbufs);
    if (ci + 1 < n_chunks)
      ps__ksrc_printf (&b, "\n");

    ps_ksrc_part *pt = &k->parts[ci];
    pt->bufs_begin = begin;
    pt->bufs_count = nbufs;
    pt->node = k->nodes[m0];
    uint64_t best = 0;
    for (uint32_t m = m0; m < m1; m++) {
      uint32_t v = k->nodes[m];
      uint64_t t = ps_kernel_threads (&g->kernels[g->nodes[v].aux]);
      if (t > best) {
        best = t;
        pt->node = v;
      }
      pt->n = mn[m] > pt->n ? mn[m] : pt->n;
      pt->pad_ns += member_pad (g, v, member_class (g, v));
    }
    pt->one_wave = pt->pad_ns > 0;
    for (uint32_t j = 0; j < nbufs; j++)
      c->param_of[bufs[j]] = PS_NONE;
  }
  k->n_parts = n_chunks;
  if (b.oom) {
    free (b.s);
    ret = PS_ENOMEM;
    goto out;
  }
  k->kind = PS_KSRC_GENERATED;
  k->code = b.s;
  k->code_len = b.len;

out:
  free (flags);
  free (inside);
  free (mn);
  free (chunk_end);
  if (ret != 0)
    ps_ksrc_free (k);
  return ret;
}

int
ps_ksrc_build_step (ps_ksrc *k, const ps_ksrc_ctx *c, const ps_plan *p, uint32_t step,
                    ps_gpu_error *err)
{
  memset (k, 0, sizeof *k);
  if (step >= p->n_steps)
    return PS_EINVAL;
  const ps_step *s = &p->steps[step];
  if (s->op != PS_OP_KERNEL || s->nodes_count == 0)
    return 0;
  return ps_ksrc_build (k, c, p->step_nodes + s->nodes_begin, s->nodes_count, err);
}
