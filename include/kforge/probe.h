// kforge diagnostic probes for candidates.
//
//   #include <kforge/probe.h>
//   KFORGE_PROBE("row_max", row_max_buffer, rows);   // float data, element count
//
// Place probes at pipeline boundaries (after a reduction, before normalisation, ...). The
// engine enables them only when it asks for diagnostics (it compiles with
// -DKFORGE_PROBES=1); otherwise the macro expands to nothing and costs nothing. With
// probes on, kforge records min, max, mean, standard deviation, NaN and Inf counts and a
// small sample of each probed buffer and compares them with the reference's intermediate
// values of the same name, where the task's reference defines them (`kforge tasks --references`).
//
// Probes read host memory (CPU backend); the buffer must stay valid during the call.
#pragma once

#if defined(KFORGE_PROBES) && KFORGE_PROBES
extern "C" void kforge_probe_record(const char* name, const float* data, long count) __attribute__((weak));
#define KFORGE_PROBE(name, data, count)                                                        \
  do {                                                                                         \
    if (kforge_probe_record) kforge_probe_record((name), (const float*)(data), (long)(count)); \
  } while (0)
#else
#define KFORGE_PROBE(name, data, count) \
  do {                                  \
  } while (0)
#endif
