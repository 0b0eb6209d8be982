/* ps-test-trace.h: a small hand-made Kineto trace the replay and app
 * tests share (what it holds is said below). */
#ifndef PS_TEST_TRACE_H
#define PS_TEST_TRACE_H

/* Times in µs, as Kineto writes them.  Stream 7: a (launched inside the
 * CPU op aten::mm), then b, which the host launched only after a had
 * ended (launch-bound).  Stream 8: c waits for
 * the event recorded on 7 after a, launched early.  Stream 9: an NCCL
 * kernel that sits idle, waiting for other ranks.  Stream 10: d "waits"
 * for b by a record that the measurement contradicts (d starts first). */
static const char ps_test_trace[] =
  "{\"schemaVersion\": 1, \"traceEvents\": [\n"
  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": 999, \"dur\": 6,"
  " \"pid\": 1, \"tid\": 1, \"args\": {\"External id\": 40}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 1000,"
  " \"dur\": 4, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 1}},\n"
  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 1006, \"dur\": 100, \"pid\": 0,"
  " \"tid\": 7, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaEventRecord\", \"ts\": 1005,"
  " \"dur\": 1, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 3}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\", \"ts\": 1007,"
  " \"dur\": 0, \"pid\": 0, \"tid\": 8, \"args\": {\"device\": 0, \"stream\": 8,"
  " \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 3,"
  " \"cuda_sync_kind\": \"Stream Wait Event\"}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 1008,"
  " \"dur\": 3, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 4}},\n"
  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"c\", \"ts\": 1106, \"dur\": 30, \"pid\": 0,"
  " \"tid\": 8, \"args\": {\"device\": 0, \"stream\": 8, \"correlation\": 4}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 1200,"
  " \"dur\": 5, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 2}},\n"
  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b\", \"ts\": 1207, \"dur\": 50, \"pid\": 0,"
  " \"tid\": 7, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 2}},\n"
  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_AllReduce\", \"ts\": 1300,"
  " \"dur\": 20, \"pid\": 0, \"tid\": 9, \"args\": {\"device\": 0, \"stream\": 9}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaEventRecord\", \"ts\": 1206,"
  " \"dur\": 1, \"pid\": 1, \"tid\": 1, \"args\": {\"correlation\": 5}},\n"
  "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\", \"ts\": 1208,"
  " \"dur\": 0, \"pid\": 0, \"tid\": 10, \"args\": {\"device\": 0, \"stream\": 10,"
  " \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 5,"
  " \"cuda_sync_kind\": \"Stream Wait Event\"}},\n"
  "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device -> Pinned)\","
  " \"ts\": 1250, \"dur\": 10, \"pid\": 0, \"tid\": 10, \"args\": {\"device\": 0,"
  " \"stream\": 10}}\n"
  "]}\n";

#endif
