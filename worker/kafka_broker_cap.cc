#include "worker/kafka_broker_cap.h"

#include <chrono>
#include <cstring>
#include <thread>

namespace webhookd {

namespace {

constexpr const char* kName = "webhookd.broker_cap";

// Set on librdkafka's broker threads: a state a broker reports from its own thread is a
// change of an existing broker (DOWN back to INIT), never a broker made.
thread_local bool t_broker_thread = false;

// How long a held main thread waits for a producer thread inside librdkafka to come out
// before it lets one more broker through, in case that call waits for librdkafka's lock.
constexpr auto kLetThrough = std::chrono::milliseconds(100);

// After Release, how long the main thread still waits: rd_kafka_destroy marks the
// producer as terminating within it, so the next broker the metadata names is not made.
constexpr auto kReleaseGrace = std::chrono::milliseconds(50);

}  // namespace

KafkaBrokerCap::KafkaBrokerCap(int bootstrap) : allowed_(bootstrap + 1 + kMaxLearned) {}

bool KafkaBrokerCap::Install(rd_kafka_conf_t* conf, std::string& error) {
  if (rd_kafka_conf_interceptor_add_on_new(conf, kName, &KafkaBrokerCap::OnNew, this) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    error = "the broker cap's interceptor was not accepted";
    return false;
  }
  return true;
}

bool KafkaBrokerCap::Enter() {
  std::lock_guard lock(mu_);
  if (tripped_) return false;
  in_call_ = true;
  return true;
}

void KafkaBrokerCap::Leave() {
  {
    std::lock_guard lock(mu_);
    in_call_ = false;
  }
  cv_.notify_all();
}

bool KafkaBrokerCap::tripped() {
  std::lock_guard lock(mu_);
  return tripped_;
}

void KafkaBrokerCap::Release() {
  {
    std::lock_guard lock(mu_);
    released_ = true;
  }
  cv_.notify_all();
}

std::string KafkaBrokerCap::TrippedError() {
  return "kafka: the cluster names more than " + std::to_string(kMaxLearned) +
         " brokers; at most " + std::to_string(kMaxLearned) + " are allowed";
}

rd_kafka_resp_err_t KafkaBrokerCap::OnNew(rd_kafka_t* rk, const rd_kafka_conf_t*, void* opaque,
                                          char*, size_t) {
  rd_kafka_resp_err_t err =
      rd_kafka_interceptor_add_on_thread_start(rk, kName, &KafkaBrokerCap::OnThreadStart, opaque);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return err;
  return rd_kafka_interceptor_add_on_broker_state_change(
      rk, kName, &KafkaBrokerCap::OnBrokerStateChange, opaque);
}

rd_kafka_resp_err_t KafkaBrokerCap::OnThreadStart(rd_kafka_t*, rd_kafka_thread_type_t type,
                                                  const char*, void*) {
  if (type == RD_KAFKA_THREAD_BROKER) t_broker_thread = true;
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

// A broker is made in INIT and reports it from the thread that made it; its own thread
// may later go back to INIT (sparse connections), which is not a broker made.
rd_kafka_resp_err_t KafkaBrokerCap::OnBrokerStateChange(rd_kafka_t*, int32_t, const char*,
                                                        const char*, int, const char* state,
                                                        void* opaque) {
  if (!t_broker_thread && state != nullptr && std::strcmp(state, "INIT") == 0) {
    static_cast<KafkaBrokerCap*>(opaque)->Added();
  }
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

void KafkaBrokerCap::Added() {
  std::unique_lock lock(mu_);
  if (++made_ <= allowed_) return;
  tripped_ = true;
  for (;;) {
    if (released_) {
      lock.unlock();
      std::this_thread::sleep_for(kReleaseGrace);
      return;
    }
    if (in_call_) {
      // Still inside after kLetThrough: the call may be waiting for the lock held here.
      if (!cv_.wait_for(lock, kLetThrough, [&] { return released_ || !in_call_; })) return;
      continue;
    }
    cv_.wait(lock, [&] { return released_ || in_call_; });
  }
}

}  // namespace webhookd
