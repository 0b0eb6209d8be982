#!/usr/bin/env python3
"""Record real PyTorch traces and CUDA-graph dumps on a GPU, and feed them to planscope.

planscope reads Chrome/Kineto traces, PyTorch execution traces and
`cudaGraphDebugDotPrint` dumps that other tools wrote.  The files in the
repository's tests were written by hand or by planscope itself; this script
makes real ones with the PyTorch installed on a GPU machine, so that the
importers can be checked against what PyTorch and the CUDA driver actually
write today:

  multistream.json          Kineto trace: two streams, an event, pinned copies
  multistream-shapes.json   the same program with record_shapes=True
  multistream-et.json       PyTorch execution trace of that same run
  mlp-train.json            Kineto trace: bf16 MLP training steps (AdamW)
  cudagraph-replay.json     Kineto trace: three replays of a captured CUDA graph
  graph-forkjoin.dot        CUDA-graph dump: a fork onto a second stream, a join
  graph-cond.dot            CUDA-graph dump with a conditional node, where the
                            installed PyTorch can capture one

Every file is then given to `planscope-cli` (`analyze` for the Kineto traces,
`plan` and `simulate` for every file), and the answers are kept.  A refusal
by the CLI is data, not a failure of this script.

The device tool brings back only a few files, so everything is packed into
DIR/torch-data.tar.gz (members under `torch-data/`) and summarised in
DIR/torch-data.json; nothing else is left in DIR.

Usage (from the repository root):

  python3 build-aux/device-torch-data.py --cli _build/app/planscope-cli --out DIR [--quick]

Without PyTorch, or without a CUDA device, the script says so on stderr,
writes DIR/torch-data.json as {"skipped": REASON} and exits 0, so it can be
tried anywhere.  Exit status 1 means a usage error or a bug in this script;
recordings or CLI commands that fail are reported in the summary and still
exit 0.  It needs only the standard library and PyTorch (imported lazily).
"""

import argparse
import contextlib
import dataclasses
import json
import os
import platform
import re
import subprocess
import sys
import tarfile
import time
import traceback
import warnings

PROG = "device-torch-data"

SUMMARY_NAME = "torch-data.json"
ARCHIVE_NAME = "torch-data.tar.gz"
ARCHIVE_DIR = "torch-data"  # members of the archive live under this folder

# Names of the files the recordings write, in the order they are made.
MULTISTREAM = "multistream.json"
MULTISTREAM_SHAPES = "multistream-shapes.json"
MULTISTREAM_ET = "multistream-et.json"
MLP_TRAIN = "mlp-train.json"
CUDAGRAPH_REPLAY = "cudagraph-replay.json"
GRAPH_FORKJOIN = "graph-forkjoin.dot"
GRAPH_COND = "graph-cond.dot"

KINETO_TRACES = (MULTISTREAM, MULTISTREAM_SHAPES, MLP_TRAIN, CUDAGRAPH_REPLAY)
RECORDED = (MULTISTREAM, MULTISTREAM_SHAPES, MULTISTREAM_ET, MLP_TRAIN, CUDAGRAPH_REPLAY,
            GRAPH_FORKJOIN, GRAPH_COND)

CLI_COMMANDS = ("analyze", "plan", "simulate")
CLI_TIMEOUT_S = 120          # per command, as long as the deadline allows
CLI_LATE_TIMEOUT_S = 5       # per command once the deadline has passed
HEAD_BYTES = 4000            # how much of stdout/stderr goes into the summary
SAVE_LIMIT = 1 << 20         # a command's stdout is kept only below this size
TRACE_LIMIT = 16 << 20       # traces should stay well below this
MAX_WARNINGS = 10            # Python warnings kept per step


class UsageError(Exception):
    """A mistake in how the script was called (exit status 1)."""


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How big the recorded programs are; --quick picks the small set."""

    ms_dim: int            # multistream: square matrix size
    ms_rounds: int         # multistream: program runs inside the profiler
    mlp_in: int            # MLP: input/output width
    mlp_hidden: int        # MLP: hidden width
    mlp_batch: int
    mlp_warmup: int        # training steps before the profiler starts
    mlp_steps: int         # training steps inside the profiler
    graph_dim: int         # CUDA-graph models: width
    graph_batch: int
    replays: int           # CUDA-graph replays inside the profiler


FULL = Sizes(ms_dim=1024, ms_rounds=3, mlp_in=1024, mlp_hidden=4096, mlp_batch=256,
             mlp_warmup=3, mlp_steps=2, graph_dim=512, graph_batch=64, replays=3)
QUICK = Sizes(ms_dim=256, ms_rounds=1, mlp_in=256, mlp_hidden=1024, mlp_batch=64,
              mlp_warmup=1, mlp_steps=1, graph_dim=128, graph_batch=16, replays=2)


# --------------------------------------------------------------------------
# Command line


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 1 as the rest of this script's do."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(1, "%s: error: %s\n" % (PROG, message))


def parse_args(argv):
    p = _Parser(prog=PROG, description=__doc__.split("\n", 1)[0])
    p.add_argument("--cli", required=True, help="path to planscope-cli")
    p.add_argument("--out", required=True, help="folder for torch-data.json and the archive")
    p.add_argument("--quick", action="store_true", help="smaller programs, fewer steps")
    p.add_argument("--deadline", type=float, default=110.0, metavar="SECONDS",
                   help="wall-clock budget for the whole script (default 110); CLI commands "
                        "started after it get %d s each" % CLI_LATE_TIMEOUT_S)
    args = p.parse_args(argv)
    if not os.path.isfile(args.cli) or not os.access(args.cli, os.X_OK):
        raise UsageError("--cli %s: not an executable file" % args.cli)
    args.cli = os.path.abspath(args.cli)
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise UsageError("--out %s: %s" % (args.out, e.strerror or e))
    return args


# --------------------------------------------------------------------------
# Small helpers


def write_json(path, doc):
    """Writes DOC to PATH through a temporary file, so PATH is whole or absent."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def one_line(exc):
    """An exception as one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return "%s: %s" % (type(exc).__name__, text[0] if text else "")


def head(data):
    """The first HEAD_BYTES of a command's output, as text."""
    return data[:HEAD_BYTES].decode("utf-8", errors="replace")


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return None


class Step:
    """Runs one recording step, catching its failure and timing it.

    The step's record (status, seconds, error, Python warnings, the state
    of the device afterwards, and whatever the step adds through `info`)
    goes into the summary's "steps" list.
    """

    def __init__(self, summary, name, torch):
        self.torch = torch
        self.info = {"name": name, "status": "ok"}
        summary["steps"].append(self.info)

    def __enter__(self):
        self._t0 = time.monotonic()
        self._warnings = warnings.catch_warnings(record=True)
        self._caught = self._warnings.__enter__()
        warnings.simplefilter("always")
        print("%s: recording %s ..." % (PROG, self.info["name"]), flush=True)
        return self

    def __exit__(self, exc_type, exc, tb):
        self.info["device_state"] = settle(self.torch) or "ok"
        self._warnings.__exit__(None, None, None)
        self.info["seconds"] = round(time.monotonic() - self._t0, 3)
        if self._caught:
            msgs = [str(w.message).strip()[:300] for w in self._caught]
            self.info["warnings"] = msgs[:MAX_WARNINGS]
        if exc is not None:
            self.info["status"] = "failed"
            self.info["error"] = one_line(exc)
            self.info["traceback"] = traceback.format_exception(exc_type, exc, tb)[-6:]
            print("%s:   %s failed: %s" % (PROG, self.info["name"], one_line(exc)),
                  file=sys.stderr, flush=True)
        return exc is not None and issubclass(exc_type, Exception)


# --------------------------------------------------------------------------
# PyTorch


def load_torch():
    """Returns (torch, environment, None) when PyTorch can use a CUDA device here.

    Otherwise returns (None, None, reason).  CUDA is initialised here, since
    is_available() can be true on a machine whose driver then refuses.
    """
    try:
        import torch  # imported lazily, so the script runs without it
    except Exception as e:  # ImportError, but also a broken install (OSError ...)
        return None, None, "import torch failed: %s" % one_line(e)
    where = "torch %s (CUDA %s)" % (torch.__version__, torch.version.cuda)
    try:
        if not torch.cuda.is_available():
            return None, None, where + ": torch.cuda.is_available() is false"
        torch.cuda.init()
        return torch, describe_torch(torch), None
    except Exception as e:
        return None, None, "%s: CUDA initialisation failed: %s" % (where, one_line(e))


def describe_torch(torch):
    """Versions and the GPU, for the summary and the first lines of output."""
    props = torch.cuda.get_device_properties(0)
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cudnn": cudnn,
        "gpu": torch.cuda.get_device_name(0),
        "gpu_capability": "%d.%d" % (props.major, props.minor),
        "gpu_memory_bytes": props.total_memory,
    }


def settle(torch):
    """Waits for the GPU and drops cached blocks between steps.

    A step that failed may have left an error queued on the device; it is
    reported here (not raised) so that the next step still gets its chance.
    """
    try:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        return None
    except Exception as e:
        return one_line(e)


def new_profile(torch, record_shapes):
    """A schedule-free profiler over CPU and CUDA activities."""
    from torch.profiler import ProfilerActivity, profile
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                   record_shapes=record_shapes)


def export_trace(prof, path, info):
    """Writes the Kineto trace and notes its size (and a warning if it is big)."""
    prof.export_chrome_trace(path)
    size = file_size(path)
    info.setdefault("files", []).append(os.path.basename(path))
    if size is not None and size >= TRACE_LIMIT:
        info.setdefault("notes", []).append("%s is %d bytes, over 16 MiB"
                                            % (os.path.basename(path), size))


# --------------------------------------------------------------------------
# 2a. A multi-stream program: two streams, an event, pinned copies


class MultiStreamProgram:
    """Work on two streams joined by an event, with pinned copies on both.

    Stream B uploads its input while A uploads and computes; A records an
    event after its compute, B waits on it and computes on A's result, and
    both download into pinned host memory.  Every run ends with a
    synchronize, so tensors used across streams outlive their last use and
    need no record_stream.
    """

    def __init__(self, torch, n):
        self.torch = torch
        dev = "cuda"
        self.a = torch.cuda.Stream()
        self.b = torch.cuda.Stream()
        self.ready = torch.cuda.Event()
        self.w1 = torch.randn(n, n, device=dev) / n ** 0.5
        self.w2 = torch.randn(n, n, device=dev) / n ** 0.5
        self.w3 = torch.randn(n, n, device=dev) / n ** 0.5
        self.host_in_a = torch.randn(n, n).pin_memory()
        self.host_in_b = torch.randn(n, n).pin_memory()
        self.host_out_a = torch.empty(n, n, pin_memory=True)
        self.host_out_b = torch.empty(n, n, pin_memory=True)
        torch.cuda.synchronize()

    def __call__(self):
        torch = self.torch
        mark = torch.profiler.record_function
        a, b = self.a, self.b
        with torch.cuda.stream(b), mark("b.upload"):
            y = self.host_in_b.to("cuda", non_blocking=True)
        with torch.cuda.stream(a), mark("a.compute"):
            x = self.host_in_a.to("cuda", non_blocking=True)
            h = torch.relu(x @ self.w1)
            h = torch.tanh(h @ self.w2)
            h = h * 0.5 + 1.0
            self.ready.record(a)
        b.wait_event(self.ready)
        with torch.cuda.stream(b), mark("b.compute"):
            z = torch.sigmoid((h + y) @ self.w3)
            self.host_out_b.copy_(z, non_blocking=True)
        with torch.cuda.stream(a), mark("a.download"):
            self.host_out_a.copy_(h, non_blocking=True)
        torch.cuda.synchronize()


class ExecutionTrace:
    """An ExecutionTraceObserver whose failures are noted instead of raised.

    The first failure (of register, start, stop or unregister) is kept in
    `error`; after it the observer is only unregistered, so that the Kineto
    trace recorded beside it is still written.
    """

    def __init__(self, torch, path):
        self.error = None
        self.observer = None
        self.registered = False
        try:
            self.observer = torch.profiler.ExecutionTraceObserver()
            self.observer.register_callback(path)
            self.registered = True
        except Exception as e:
            self.error = "register_callback(): " + one_line(e)

    def _call(self, method):
        try:
            getattr(self.observer, method)()
        except Exception as e:
            self.error = self.error or "%s(): %s" % (method, one_line(e))

    def start(self):
        if self.error is None and self.registered:
            self._call("start")

    def stop(self):
        if self.error is None and self.registered:
            self._call("stop")

    def close(self):
        """Unregisters the observer, which finalises the file."""
        if self.registered:
            self.registered = False
            self._call("unregister_callback")


def has_plain_et_api(torch):
    cls = getattr(torch.profiler, "ExecutionTraceObserver", None)
    return cls is not None and all(
        hasattr(cls, m) for m in ("register_callback", "start", "stop", "unregister_callback"))


def record_multistream(torch, sizes, out, summary):
    """Two Kineto traces of the multi-stream program, and an execution trace."""
    program = None
    with Step(summary, "multistream", torch) as step:
        program = MultiStreamProgram(torch, sizes.ms_dim)
        program()  # warm-up: cuBLAS handles, allocator blocks
        with new_profile(torch, record_shapes=False) as prof:
            for _ in range(sizes.ms_rounds):
                program()
        export_trace(prof, os.path.join(out, MULTISTREAM), step.info)
    with Step(summary, "multistream-shapes", torch) as step:
        if program is None:
            raise RuntimeError("the multistream program could not be built")
        record_multistream_with_et(torch, program, sizes, out, step.info)


def record_multistream_with_et(torch, program, sizes, out, info):
    """The record_shapes=True trace, with an execution trace of the same run.

    The observer runs inside the profiler, so that the execution trace and
    the Kineto trace describe one run and can be joined (`import --et`).
    """
    et_path = os.path.join(out, MULTISTREAM_ET)
    et = ExecutionTrace(torch, et_path)
    try:
        if has_plain_et_api(torch):
            info["execution_trace_api"] = "ExecutionTraceObserver.start/stop"
            with new_profile(torch, record_shapes=True) as prof:
                et.start()
                for _ in range(sizes.ms_rounds):
                    program()
                et.stop()
        else:
            # No plain observer API: let the profiler drive the observer.
            info["execution_trace_api"] = "profile(execution_trace_observer=)"
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                         record_shapes=True, execution_trace_observer=et.observer) as prof:
                for _ in range(sizes.ms_rounds):
                    program()
    finally:
        et.close()
    export_trace(prof, os.path.join(out, MULTISTREAM_SHAPES), info)
    if et.error is None and not file_size(et_path):
        et.error = "no execution trace was written"
    if et.error is not None:
        info["execution_trace_error"] = et.error
        info["status"] = "partial"
    else:
        info["files"].append(MULTISTREAM_ET)


# --------------------------------------------------------------------------
# 2b. A bf16 MLP training step


def build_mlp_step(torch, sizes):
    """A 3-layer bf16 MLP with AdamW; returns a function doing one training step."""
    nn = torch.nn
    d_in, d_h = sizes.mlp_in, sizes.mlp_hidden
    model = nn.Sequential(nn.Linear(d_in, d_h), nn.GELU(),
                          nn.Linear(d_h, d_h), nn.GELU(),
                          nn.Linear(d_h, d_in)).to(device="cuda", dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(sizes.mlp_batch, d_in, device="cuda", dtype=torch.bfloat16)
    target = torch.randn(sizes.mlp_batch, d_in, device="cuda", dtype=torch.bfloat16)
    mark = torch.profiler.record_function

    def step():
        with mark("forward"):
            loss = nn.functional.mse_loss(model(x).float(), target.float())
        with mark("backward"):
            loss.backward()
        with mark("optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

    return step


def record_mlp_train(torch, sizes, out, summary):
    with Step(summary, "mlp-train", torch) as step:
        train_step = build_mlp_step(torch, sizes)
        for _ in range(sizes.mlp_warmup):
            train_step()
        torch.cuda.synchronize()
        with new_profile(torch, record_shapes=False) as prof:
            for _ in range(sizes.mlp_steps):
                train_step()
            torch.cuda.synchronize()
        export_trace(prof, os.path.join(out, MLP_TRAIN), step.info)


# --------------------------------------------------------------------------
# 2c. Replays of a captured CUDA graph


def small_model(torch, n):
    nn = torch.nn
    return nn.Sequential(nn.Linear(n, n), nn.ReLU(), nn.Linear(n, n), nn.GELU(),
                         nn.Linear(n, n)).cuda()


def warm_up(torch, fn, iterations=3):
    """Runs FN on a side stream before capture, as the PyTorch docs require."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(iterations):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()


def record_cudagraph_replay(torch, sizes, out, summary):
    with Step(summary, "cudagraph-replay", torch) as step, torch.no_grad():
        model = small_model(torch, sizes.graph_dim)
        static_in = torch.randn(sizes.graph_batch, sizes.graph_dim, device="cuda")
        inputs = [torch.randn_like(static_in) for _ in range(sizes.replays)]
        warm_up(torch, lambda: model(static_in))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = model(static_in)
        with new_profile(torch, record_shapes=False) as prof:
            for batch in inputs:
                static_in.copy_(batch)
                graph.replay()
            torch.cuda.synchronize()
        step.info["output_sum"] = float(static_out.sum())
        export_trace(prof, os.path.join(out, CUDAGRAPH_REPLAY), step.info)


# --------------------------------------------------------------------------
# 3. CUDA-graph debug dumps


def debug_graph(torch):
    """A CUDAGraph that keeps its cudaGraph_t after capture, for debug_dump."""
    graph = torch.cuda.CUDAGraph()
    graph.enable_debug_mode()
    return graph


def dump_graph(torch, graph, path):
    """Replays GRAPH once (it must be valid) and writes its DOT dump to PATH.

    debug_dump only warns when cudaGraphDebugDotPrint fails, so the file is
    checked here.
    """
    graph.replay()
    torch.cuda.synchronize()
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
    graph.debug_dump(path)
    if not file_size(path):
        raise RuntimeError("debug_dump wrote no file at %s" % path)


def record_forkjoin_dot(torch, sizes, out, summary):
    """A graph that forks onto a second stream and joins back."""
    with Step(summary, "graph-forkjoin", torch) as step, torch.no_grad():
        n = sizes.graph_dim
        x = torch.randn(n, n, device="cuda")
        w = torch.randn(n, n, device="cuda") / n ** 0.5
        s2 = torch.cuda.Stream()

        def body():
            cur = torch.cuda.current_stream()
            a = x * 2.0
            s2.wait_stream(cur)                # fork
            with torch.cuda.stream(s2):
                b = torch.relu(x @ w)
            c = torch.sin(a) @ w               # meanwhile on the capture stream
            cur.wait_stream(s2)                # join
            return b + c, a, b, c              # keep every temporary alive

        warm_up(torch, body)
        graph = debug_graph(torch)
        with torch.cuda.graph(graph):
            outputs = body()
        dump_graph(torch, graph, os.path.join(out, GRAPH_FORKJOIN))
        step.info["files"] = [GRAPH_FORKJOIN]
        step.info["output_sum"] = float(outputs[0].sum())


def dot_has_conditional(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return re.search(r"\bCONDITIONAL\b", f.read()) is not None


class CondCapture:
    """Ways to capture a graph holding a conditional node, newest first.

    Each method captures `y = x * 3; r = cond(pred, sin*2, cos+1, y); r + 1`
    into a fresh debug graph and returns it.
    """

    def __init__(self, torch, n):
        self.torch = torch
        self.x = torch.randn(n, device="cuda")
        self.pred = torch.tensor(True, device="cuda")  # a bool scalar on the GPU
        self.out = None  # what the last capture computed, kept alive with the graph

    @staticmethod
    def true_fn(t):
        return t.sin() * 2.0

    @staticmethod
    def false_fn(t):
        return t.cos() + 1.0

    def body(self):
        y = self.x * 3.0
        r = self.torch.cond(self.pred, self.true_fn, self.false_fn, (y,))
        return r + 1.0

    def with_dispatch_modes(self):
        """torch.cond with the dispatch modes that build CUDA conditional nodes (PyTorch 2.11+?)."""
        torch = self.torch
        from torch._higher_order_ops.cudagraph_conditional_nodes import (
            CUDAGraphCaptureControlFlowOpDispatchMode, ControlFlowOpWarmupDispatchMode)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), ControlFlowOpWarmupDispatchMode():
            self.body()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = debug_graph(torch)
        with torch.cuda.graph(graph, stream=side), CUDAGraphCaptureControlFlowOpDispatchMode():
            self.out = self.body()
        return graph

    def plain(self):
        """Eager torch.cond under stream capture, as it comes."""
        torch = self.torch
        warm_up(torch, self.body, iterations=1)
        graph = debug_graph(torch)
        with torch.cuda.graph(graph):
            self.out = self.body()
        return graph

    def raw_if_node(self):
        """CUDAGraph's own IF-node capture, without torch.cond."""
        torch = self.torch
        graph = debug_graph(torch)
        if not hasattr(graph, "begin_capture_to_if_node"):
            raise RuntimeError("CUDAGraph has no begin_capture_to_if_node")
        y = torch.empty_like(self.x)
        r = torch.empty_like(self.x)
        with torch.cuda.graph(graph):
            torch.mul(self.x, 3.0, out=y)
            r.copy_(y)
            graph.begin_capture_to_if_node(self.pred)
            r.sin_().mul_(2.0)  # in place: nothing is allocated inside the body
            graph.end_capture_to_conditional_node()
            r.add_(1.0)
        self.out = (y, r)
        return graph

    def methods(self):
        return [("torch.cond+dispatch-modes", self.with_dispatch_modes),
                ("torch.cond", self.plain),
                ("CUDAGraph.begin_capture_to_if_node", self.raw_if_node)]


def try_cond_capture(torch, method, path, attempt):
    """Captures with METHOD and dumps the graph to PATH; notes the outcome in ATTEMPT."""
    try:
        dump_graph(torch, method(), path)
    except Exception as e:
        attempt["error"] = one_line(e)
        attempt["device_state"] = settle(torch) or "ok"
        return False
    attempt["conditional_node"] = dot_has_conditional(path)
    return True


def record_cond_dot(torch, sizes, out, summary):
    """A graph with a conditional node, by the first capture method that makes one.

    A capture that works but holds no conditional node is kept as
    graph-cond.dot unless a later method makes one with a conditional node.
    """
    path = os.path.join(out, GRAPH_COND)
    candidate = path + ".try"
    with Step(summary, "graph-cond", torch) as step, torch.no_grad():
        attempts = step.info["attempts"] = []
        try:
            for name, method in CondCapture(torch, sizes.graph_dim).methods():
                attempt = {"method": name}
                attempts.append(attempt)
                if not try_cond_capture(torch, method, candidate, attempt):
                    continue
                if attempt["conditional_node"] or not os.path.exists(path):
                    os.replace(candidate, path)
                    step.info["method"] = name
                if attempt["conditional_node"]:
                    break
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(candidate)
        if not any(a.get("conditional_node") for a in attempts):
            step.info["status"] = "unsupported"
            step.info["error"] = "conditional capture not supported: " + "; ".join(
                "%s: %s" % (a["method"], a.get("error", "captured, but no conditional node"))
                for a in attempts)
        if os.path.exists(path):
            step.info["files"] = [GRAPH_COND]


# --------------------------------------------------------------------------
# 4. Feeding the files to planscope-cli


def cli_environment(cli):
    """The environment for the CLI: a bundle's lib/ beside its bin/ goes on LD_LIBRARY_PATH.

    build-aux/device-bundle.sh ships the CLI as _device/bin/planscope-cli
    with the shared libraries it needs in _device/lib.
    """
    env = dict(os.environ)
    lib = os.path.join(os.path.dirname(os.path.dirname(cli)), "lib")
    if os.path.basename(os.path.dirname(cli)) == "bin" and os.path.isdir(lib):
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (lib, env.get("LD_LIBRARY_PATH")) if p)
    return env


class CliRunner:
    """Runs planscope-cli on a file, within the script's deadline."""

    def __init__(self, cli, out, deadline):
        self.cli = cli
        self.env = cli_environment(cli)
        self.out = out
        self.deadline = deadline
        self.late_timeout_seen = False

    def run(self, command, name):
        """Runs `CLI COMMAND DIR/NAME`; returns its record for the summary."""
        remaining = self.deadline - time.monotonic()
        if self.late_timeout_seen:
            return {"exit": None, "skipped": "past the deadline after a timeout"}
        timeout = min(CLI_TIMEOUT_S, remaining) if remaining > CLI_LATE_TIMEOUT_S \
            else CLI_LATE_TIMEOUT_S
        argv = [self.cli, command, os.path.join(self.out, name)]
        t0 = time.monotonic()
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                                  env=self.env, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as e:
            self.late_timeout_seen = remaining <= CLI_LATE_TIMEOUT_S
            return {"exit": None, "timed_out": True, "timeout_s": round(timeout, 1),
                    "stdout_head": head(e.stdout or b""), "stderr_head": head(e.stderr or b"")}
        except OSError as e:
            return {"exit": None, "error": one_line(e)}
        record = {"exit": proc.returncode, "seconds": round(time.monotonic() - t0, 3),
                  "stdout_bytes": len(proc.stdout),
                  "stdout_head": head(proc.stdout), "stderr_head": head(proc.stderr)}
        record["stdout_file"] = self.save_stdout(command, name, proc.stdout)
        return record

    def save_stdout(self, command, name, data):
        """Keeps a command's whole stdout beside the file, when it is small and not empty."""
        if not data or len(data) >= SAVE_LIMIT:
            return None
        saved = "%s.%s.txt" % (name, command)
        with open(os.path.join(self.out, saved), "wb") as f:
            f.write(data)
        return saved


def commands_for(name):
    """`analyze` reads Kineto traces; `plan` and `simulate` take every file."""
    return CLI_COMMANDS if name in KINETO_TRACES else ("plan", "simulate")


def feed_cli(runner, names):
    """Runs the CLI on every produced file; returns {file: {command: record}}."""
    results = {}
    for name in names:
        results[name] = {}
        for command in commands_for(name):
            results[name][command] = runner.run(command, name)
    return results


# --------------------------------------------------------------------------
# 5. Packing and reporting


def pack(out, names):
    """Puts NAMES (files in OUT) into OUT/torch-data.tar.gz, then deletes them."""
    archive = os.path.join(out, ARCHIVE_NAME)
    tmp = archive + ".tmp"
    with tarfile.open(tmp, "w:gz") as tar:
        for name in names:
            tar.add(os.path.join(out, name), arcname="%s/%s" % (ARCHIVE_DIR, name))
    os.replace(tmp, archive)
    for name in names:
        os.remove(os.path.join(out, name))
    return file_size(archive)


def exit_cell(record):
    """One table cell: the exit status, T/O, skip or '-'."""
    if record is None:
        return "-"
    if record.get("timed_out"):
        return "T/O"
    if record.get("exit") is None:
        return "skip" if record.get("skipped") else "err"
    return str(record["exit"])


def print_table(files, cli):
    rows = [("file", "bytes") + CLI_COMMANDS]
    for name, size in files.items():
        cmds = cli.get(name, {})
        rows.append((name, str(size)) + tuple(exit_cell(cmds.get(c)) for c in CLI_COMMANDS))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.rjust(w) if i else cell.ljust(w)
                        for i, (cell, w) in enumerate(zip(r, widths))).rstrip())


def recorded_files(out):
    """The recorded files that exist, in recording order, with their sizes.

    A file a failed step left behind (cut short, or empty) is listed and
    packed too; the CLI is given every one that is not empty.
    """
    files = {}
    for name in RECORDED:
        size = file_size(os.path.join(out, name))
        if size is not None:
            files[name] = size
    return files


def clear_outputs(out):
    """Removes what an earlier run left in OUT, so nothing stale is packed."""
    for name in RECORDED:
        for suffix in ("", ".try") + tuple(".%s.txt" % c for c in CLI_COMMANDS):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(out, name + suffix))


# --------------------------------------------------------------------------
# Main


def skip(out, reason):
    print("%s: no PyTorch with CUDA here: %s" % (PROG, reason), file=sys.stderr)
    write_json(os.path.join(out, SUMMARY_NAME), {"skipped": reason})
    return 0


def record_all(torch, sizes, out, summary):
    """Every recording, each on its own: one failure does not stop the rest."""
    record_multistream(torch, sizes, out, summary)
    record_mlp_train(torch, sizes, out, summary)
    record_cudagraph_replay(torch, sizes, out, summary)
    record_forkjoin_dot(torch, sizes, out, summary)
    record_cond_dot(torch, sizes, out, summary)  # last: a failed capture may upset the device


def feed_and_pack(args, summary, t0):
    """Steps 4 and 5: the CLI on every recorded file, then the archive and the summary."""
    files = recorded_files(args.out)
    runner = CliRunner(args.cli, args.out, t0 + args.deadline)
    cli = feed_cli(runner, [name for name, size in files.items() if size])
    saved = [r["stdout_file"] for cmds in cli.values() for r in cmds.values()
             if r.get("stdout_file")]
    members = list(files) + saved
    summary["files"] = files
    summary["cli"] = {"path": args.cli, "results": cli,
                      "LD_LIBRARY_PATH": runner.env.get("LD_LIBRARY_PATH")}
    summary["archive"] = {"name": ARCHIVE_NAME, "folder": ARCHIVE_DIR, "members": members,
                          "bytes": pack(args.out, members)}
    summary["seconds"] = round(time.monotonic() - t0, 3)
    write_json(os.path.join(args.out, SUMMARY_NAME), summary)

    print_table(files, cli)
    bad = ["%s %s" % (s["name"], s["status"]) for s in summary["steps"] if s["status"] != "ok"]
    print("%s: %d files in %s, summary in %s, %.1f s%s" % (
        PROG, len(files), os.path.join(args.out, ARCHIVE_NAME),
        os.path.join(args.out, SUMMARY_NAME), summary["seconds"],
        "; not ok: " + ", ".join(bad) if bad else ""))


def main(argv):
    t0 = time.monotonic()
    try:
        args = parse_args(argv)
    except UsageError as e:
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return 1
    torch, env, reason = load_torch()
    if torch is None:
        return skip(args.out, reason)
    print("%s: torch %s, CUDA %s, GPU %s" % (PROG, env["torch"], env["torch_cuda"], env["gpu"]),
          flush=True)
    sizes = QUICK if args.quick else FULL
    summary = {"format": "planscope-torch-data", "version": 1, "quick": args.quick,
               "environment": env, "sizes": dataclasses.asdict(sizes), "steps": []}
    clear_outputs(args.out)
    torch.manual_seed(0)
    record_all(torch, sizes, args.out, summary)
    summary["record_seconds"] = round(time.monotonic() - t0, 3)
    feed_and_pack(args, summary, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
