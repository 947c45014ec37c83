#pragma once

#include <librdkafka/rdkafka.h>

#include <condition_variable>
#include <mutex>
#include <string>

namespace webhookd {

// Holds one Kafka producer to at most kMaxLearned brokers learned from its cluster's
// metadata (docs/brokers.md). librdkafka 2.0.2 makes a broker, and starts its thread, for
// every broker a Metadata answer names (up to 10,000), before any address is vetted, and
// has no setting that limits it; a tenant's cluster could name thousands.
//
// How: an on_broker_state_change interceptor sees each broker as it is made, on the thread
// that makes it (librdkafka's main thread, for learned ones), with librdkafka's own lock
// held. Once the count passes the cap, that call does not return (so no further broker is
// made) until the producer's thread has seen the trip and is destroying the producer:
// destruction marks the producer as terminating before it takes that lock, and a
// terminating producer makes no more brokers. While the producer's thread is inside a
// librdkafka call, which may itself wait for that lock, the main thread is let go a
// moment at a time instead, so the two cannot wait for each other; that costs at most a
// broker or two past the cap.
//
// The producer's thread brackets each of its calls into librdkafka with Enter and Leave
// and calls Release just before rd_kafka_destroy. Must outlive the producer.
class KafkaBrokerCap {
 public:
  static constexpr int kMaxLearned = 16;

  // `bootstrap`: the producer's bootstrap hosts, made before any metadata comes.
  explicit KafkaBrokerCap(int bootstrap);
  KafkaBrokerCap(const KafkaBrokerCap&) = delete;
  KafkaBrokerCap& operator=(const KafkaBrokerCap&) = delete;

  // Adds the interceptors to `conf`, before rd_kafka_new; false with `error` if refused.
  bool Install(rd_kafka_conf_t* conf, std::string& error);

  // false when the cap has tripped: the producer is to be destroyed, not called.
  bool Enter();
  void Leave();
  bool tripped();
  // The producer's thread is about to call rd_kafka_destroy.
  void Release();

  // The words for the messages a tripped producer held.
  static std::string TrippedError();

 private:
  static rd_kafka_resp_err_t OnNew(rd_kafka_t* rk, const rd_kafka_conf_t* conf, void* opaque,
                                   char* errstr, size_t errstr_size);
  static rd_kafka_resp_err_t OnThreadStart(rd_kafka_t* rk, rd_kafka_thread_type_t type,
                                           const char* name, void* opaque);
  static rd_kafka_resp_err_t OnBrokerStateChange(rd_kafka_t* rk, int32_t id, const char* secproto,
                                                 const char* name, int port, const char* state,
                                                 void* opaque);
  // A broker was made, on the thread that made it.
  void Added();

  const int allowed_;  // the bootstrap hosts, librdkafka's internal broker and the cap
  std::mutex mu_;
  std::condition_variable cv_;
  int made_ = 0;           // guarded by mu_
  bool tripped_ = false;   // guarded by mu_
  bool in_call_ = false;   // guarded by mu_
  bool released_ = false;  // guarded by mu_
};

}  // namespace webhookd
