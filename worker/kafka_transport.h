#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "net/resolver.h"
#include "worker/async_sender.h"

namespace webhookd {

// Delivers to Apache Kafka (docs/brokers.md): each message is produced to broker.topic
// with acks=all by an idempotent producer. Its key is the webhook-ordering-key header when
// there is one, else the webhook-id; its value is the body; every header goes along as a
// Kafka header, its name in lowercase. The delivery report is the answer: without an
// error it is the success (its partition and offset are the result's body); with one, an
// error in Kafka's own words, so the attempt is retryable. A message the cluster has not
// confirmed within the attempt timeout is timed out then, and librdkafka gives up on it
// too (message.timeout.ms): a cluster that is down holds an attempt no longer than that.
//
// One producer per destination URL and credentials, made on its first message once every
// bootstrap host passed the private-address rule. Every address librdkafka resolves after
// that (bootstrap hosts again, and the brokers the cluster's metadata names) is vetted by
// the same rule in its resolve callback, so neither a broker advertised on a private
// address nor a bootstrap name that later resolves to one is ever connected to; messages
// that only such a broker could take time out instead.
//
// Threads: one per producer, made when its first message comes and joined by the
// destructor. It hands each message to librdkafka in the order Start was called and
// polls the producer, so every `done` is called from it: out of a delivery report, at a
// message's deadline, or at once for a message that could not be handed over.
// librdkafka adds threads of its own per producer (a main one and one per broker it
// knows of, plus the resolve callback's lookups on them), so a slow or lost cluster holds
// up only the destinations that name it.
class KafkaTransport final : public AsyncSender {
 public:
  struct Options {
    Duration attempt_timeout = std::chrono::seconds(15);
    bool allow_private = false;
    Resolver* resolver = nullptr;  // null: a SystemResolver of its own
  };

  explicit KafkaTransport(Options options);
  // Messages handed to a producer get until the attempt timeout for their reports; those
  // not handed to one end with not_started.
  ~KafkaTransport() override;
  KafkaTransport(const KafkaTransport&) = delete;
  KafkaTransport& operator=(const KafkaTransport&) = delete;

  // AsyncSender:
  void Start(Outgoing request, Done done) override;
  void CancelUnstarted() override;

  // A producer and its thread; defined in the .cc.
  struct Producer;

 private:
  Options options_;
  std::unique_ptr<Resolver> own_resolver_;
  Resolver* resolver_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Producer>> producers_;  // guarded by mu_
};

}  // namespace webhookd
