#pragma once

#include "worker/broker_connections.h"

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
// One producer per destination URL and credentials (worker/broker_connections.h), made on its first
// message once every bootstrap host passed the private-address rule. Every address librdkafka
// resolves after that (bootstrap hosts again, and the brokers the cluster's metadata names) is
// vetted by the same rule in its resolve callback, so neither a broker advertised on a private
// address nor a bootstrap name that later resolves to one is ever connected to; messages
// that only such a broker could take time out instead.
//
// A cluster may name at most 16 brokers (worker/kafka_broker_cap.h): one whose metadata
// names more fails the messages of its producer, which is destroyed, in retryable words
// ("kafka: the cluster names more than 16 brokers; ..."), and the next producer is made
// after a backoff.
//
// Threads: librdkafka's own per producer (a main one, an internal one and one per broker
// it knows of, at most the bootstrap hosts and 16, plus the resolve callback's lookups on
// them), beside the producer's thread of
// worker/broker_connections.h, which hands each message to librdkafka in the order Start
// was called and polls it, so every answer comes from that thread: out of a delivery
// report, at a message's deadline, or at once for a message that could not be handed
// over. A slow or lost cluster holds up only the destinations that name it.
class KafkaTransport final : public BrokerConnections {
 public:
  explicit KafkaTransport(Options options);
};

}  // namespace webhookd
