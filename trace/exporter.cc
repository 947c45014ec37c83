#include "trace/exporter.h"

#include <algorithm>
#include <utility>

#include "base/log.h"

namespace webhookd::trace {
namespace {

using std::chrono::milliseconds;

// t + d, held at the clock's end instead of overflowing.
template <typename TimePoint>
TimePoint Later(TimePoint t, milliseconds d) {
  if (d.count() <= 0) return t;
  if (std::chrono::duration_cast<milliseconds>(TimePoint::max() - t) <= d) return TimePoint::max();
  return t + d;
}

// OTLP/HTTP's retryable answers; any other non-2xx will not get better by resending.
bool Retryable(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

// Options built by hand rather than by ExporterOptionsFromEnv: a batch of at least one
// span that fits in the queue, or the thread would take nothing or wait for ever.
ExporterOptions Checked(ExporterOptions options) {
  options.max_queue_size = std::max<size_t>(options.max_queue_size, 1);
  options.max_export_batch_size =
      std::clamp<size_t>(options.max_export_batch_size, 1, options.max_queue_size);
  return options;
}

}  // namespace

OtlpExporter::OtlpExporter(ExporterOptions options, std::unique_ptr<OtlpTransport> transport,
                           Counter& exported, Counter& dropped, WaitClock& clock)
    : options_(Checked(std::move(options))),
      transport_(std::move(transport)),
      exported_(exported),
      dropped_(dropped),
      clock_(clock) {
  thread_ = std::thread([this] { Run(); });
}

OtlpExporter::~OtlpExporter() { Shutdown(milliseconds(0)); }

void OtlpExporter::Emit(Span span) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_ || queue_.size() >= options_.max_queue_size) {
      dropped_.Inc();
      return;
    }
    if (queue_.empty()) {
      queue_since_ = clock_.Now();
      wake = true;  // the thread starts the schedule delay's wait
    }
    queue_.push_back(std::move(span));
    if (queue_.size() == options_.max_export_batch_size) wake = true;
  }
  if (wake) cv_.notify_one();
}

void OtlpExporter::Shutdown(milliseconds deadline) {
  std::lock_guard join_lock(shutdown_mu_);
  if (!thread_.joinable()) return;
  const auto real_deadline = Later(std::chrono::steady_clock::now(), deadline);
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    stop_by_ = Later(clock_.Now(), deadline);
  }
  cv_.notify_all();
  bool finished;
  {
    std::unique_lock lock(mu_);
    if (real_deadline == std::chrono::steady_clock::time_point::max()) {
      finished_cv_.wait(lock, [this] { return finished_; });
    } else {
      finished_cv_.wait_until(lock, real_deadline, [this] { return finished_; });
    }
    finished = finished_;
  }
  if (!finished) transport_->Cancel();
  thread_.join();
}

void OtlpExporter::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    while (!stopping_ && queue_.size() < options_.max_export_batch_size) {
      if (queue_.empty()) {
        clock_.WaitUntil(cv_, lock, TimePoint::max());
        continue;
      }
      const TimePoint due = Later(queue_since_, options_.schedule_delay);
      if (clock_.Now() >= due) break;
      clock_.WaitUntil(cv_, lock, due);
    }
    if (queue_.empty()) break;  // stopping, and all was exported
    if (stopping_ && clock_.Now() >= stop_by_) {
      dropped_.Inc(queue_.size());
      queue_.clear();
      break;
    }
    const size_t n = std::min(queue_.size(), options_.max_export_batch_size);
    std::vector<Span> batch(std::make_move_iterator(queue_.begin()),
                            std::make_move_iterator(queue_.begin() + static_cast<ptrdiff_t>(n)));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(n));
    queue_since_ = clock_.Now();  // what is left waits from now
    lock.unlock();
    Export(batch);
    lock.lock();
  }
  finished_ = true;
  lock.unlock();
  finished_cv_.notify_all();
}

OtlpExporter::TimePoint OtlpExporter::StopBy() {
  std::lock_guard lock(mu_);
  return stop_by_;
}

void OtlpExporter::Export(const std::vector<Span>& batch) {
  const size_t n = batch.size();
  const bool json = options_.protocol == OtlpProtocol::kHttpJson;
  const std::string body =
      json ? EncodeJson(batch, options_.resource) : EncodeProtobuf(batch, options_.resource);
  const std::string_view content_type = json ? kJsonContentType : kProtobufContentType;
  const TimePoint export_deadline = Later(clock_.Now(), options_.export_timeout);
  milliseconds backoff = kFirstBackoff;
  for (int attempt = 1;; ++attempt) {
    const TimePoint deadline = std::min(export_deadline, StopBy());
    const TimePoint now = clock_.Now();
    if (now >= deadline) {
      LogDrop("no time left to export", 0, n, "");
      dropped_.Inc(n);
      return;
    }
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - now);
    const milliseconds timeout = std::max(milliseconds(1), std::min(left, options_.timeout));
    const Result<TransportAnswer> answer =
        transport_->Post(options_.endpoint, options_.headers, content_type, body, timeout);
    if (answer && answer->status >= 200 && answer->status < 300) {
      exported_.Inc(n);
      last_logged_.clear();  // a later failure is news again
      return;
    }
    const int status = answer ? answer->status : 0;
    const std::string error = answer ? "" : answer.error().message;
    if (answer && !Retryable(status)) {
      LogDrop("the collector refused the spans", status, n, error);
      dropped_.Inc(n);
      return;
    }
    if (attempt == kMaxTries) {
      LogDrop("the collector failed every try", status, n, error);
      dropped_.Inc(n);
      return;
    }
    const milliseconds wait = answer && answer->retry_after ? *answer->retry_after : backoff;
    backoff *= 2;
    if (!Backoff(Later(clock_.Now(), wait), export_deadline)) {
      LogDrop("the next try would come after the export's deadline", status, n, error);
      dropped_.Inc(n);
      return;
    }
  }
}

bool OtlpExporter::Backoff(TimePoint until, TimePoint export_deadline) {
  std::unique_lock lock(mu_);
  while (true) {
    // Read again after every wake: a Shutdown may have brought the deadline closer.
    if (until >= std::min(export_deadline, stop_by_)) return false;
    if (clock_.Now() >= until) return true;
    clock_.WaitUntil(cv_, lock, until);
  }
}

void OtlpExporter::LogDrop(std::string_view why, int status, size_t spans,
                           const std::string& error) {
  // Once per kind of failure, not per batch: a collector that is down would otherwise
  // write a line every schedule delay. Neither the endpoint nor the headers appear:
  // either may hold credentials.
  std::string kind = std::string(why) + "/" + std::to_string(status);
  if (kind == last_logged_) return;
  last_logged_ = std::move(kind);
  Log(LogLevel::kWarn, "trace export dropped spans",
      {{"reason", why},
       {"status", status},
       {"spans", static_cast<int64_t>(spans)},
       {"error", error}});
}

}  // namespace webhookd::trace
