#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/metrics.h"
#include "trace/exporter_options.h"
#include "trace/otlp_transport.h"
#include "trace/span.h"
#include "trace/wait_clock.h"

namespace webhookd::trace {

// A batch span processor and OTLP/HTTP exporter in one: spans are queued by Emit and
// sent to the collector in batches by a thread of its own.
//
// Threads. Any number of threads call Emit; one background thread (started by the
// constructor, joined by Shutdown) does everything else: it waits until the queue holds
// a full batch or `schedule_delay` has passed since spans began to wait (the queue
// became non-empty, or the last batch was taken from it), takes up to
// `max_export_batch_size` spans, encodes them and POSTs them through the transport, which
// only it uses. The mutex `mu_` guards the queue, `queue_since_`, `stopping_` and
// `stop_by_`; the thread never holds it while encoding or talking to the collector, so
// Emit waits for nothing but another Emit's push or the thread's take. `cv_` wakes the
// thread when a span starts the queue, a batch fills, or Shutdown is called; the thread
// also waits on it between retries, so Shutdown cuts a backoff short. Shutdown waits on
// `finished_cv_` for the thread to end, in real time whatever the clock, and past its
// deadline cancels the transport so that a collector that does not answer cannot hold
// it. The counters are atomic; `last_logged_` belongs to the thread.
//
// Outcomes. A 2xx answer counts the batch's spans in `exported`. 429, 502, 503, 504 and
// transport errors are retried after 1 s, 2 s, 4 s... (or the Retry-After the collector
// asks for) up to 5 tries, while the export's timeout allows; other answers and
// exhausted retries drop the batch. Dropped spans, those refused by a full queue
// included, count in `dropped`.
class OtlpExporter final : public SpanSink {
 public:
  static constexpr int kMaxTries = 5;
  static constexpr std::chrono::milliseconds kFirstBackoff{1000};

  // `exported`, `dropped` and `clock` must outlive the exporter.
  OtlpExporter(ExporterOptions options, std::unique_ptr<OtlpTransport> transport, Counter& exported,
               Counter& dropped, WaitClock& clock = SteadyWaitClock());
  ~OtlpExporter() override;  // Shutdown(0): what is queued is dropped, an export is not retried
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  // O(1) and never blocks on I/O. A full queue, or a shut-down exporter, drops the span.
  void Emit(Span span) override;

  // Takes no more spans, exports what is queued within `deadline` (retries included) and
  // joins the thread; spans still queued then are dropped. Later calls return at once.
  void Shutdown(std::chrono::milliseconds deadline);

 private:
  using TimePoint = WaitClock::TimePoint;
  enum class Outcome { kExported, kRetry, kRejected };

  void Run();
  // Sends one batch and answers for all its spans in the counters. Called by the thread
  // without `mu_`.
  void Export(const std::vector<Span>& batch);
  // Waits on `cv_` until `until`, or less when a Shutdown's deadline comes first; false
  // when that deadline leaves no time to wait it out.
  bool Backoff(TimePoint until, TimePoint export_deadline);
  TimePoint StopBy();
  void LogDrop(std::string_view why, int status, size_t spans, const std::string& error);

  const ExporterOptions options_;
  const std::unique_ptr<OtlpTransport> transport_;
  Counter& exported_;
  Counter& dropped_;
  WaitClock& clock_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Span> queue_;                // guarded by mu_
  TimePoint queue_since_{};               // guarded by mu_: when the queue last became non-empty
  bool stopping_ = false;                 // guarded by mu_
  TimePoint stop_by_ = TimePoint::max();  // guarded by mu_: Shutdown's deadline
  bool finished_ = false;                 // guarded by mu_: the thread is done
  std::condition_variable finished_cv_;

  std::string last_logged_;  // the thread's: the last drop reason logged
  std::mutex shutdown_mu_;   // one Shutdown joins the thread
  std::thread thread_;
};

}  // namespace webhookd::trace
