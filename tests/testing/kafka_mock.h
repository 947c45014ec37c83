#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace webhookd::testing {

// One message as a consumer reads it back.
struct KafkaRecord {
  std::optional<std::string> key;  // nullopt: produced without one
  std::string value;
  std::vector<std::pair<std::string, std::string>> headers;  // in order
  int64_t offset = -1;
};

// A Kafka cluster of librdkafka's own mock brokers (rdkafka_mock.h), listening on
// 127.0.0.1 in this process, since Debian packages no Kafka. Its brokers answer on
// librdkafka threads of the handle it lives in.
class KafkaMock {
 public:
  explicit KafkaMock(int brokers = 1);
  ~KafkaMock();
  KafkaMock(const KafkaMock&) = delete;
  KafkaMock& operator=(const KafkaMock&) = delete;

  // "127.0.0.1:port,..." and the same as a destination's kafka:// URL.
  std::string bootstraps() const;
  std::string url() const;

  void CreateTopic(const std::string& topic, int partitions = 1);

  // The next `count` Produce requests fail with these errors, in order.
  void FailProduceRequests(const std::vector<rd_kafka_resp_err_t>& errors);

  // Every broker drops its connections and takes no new ones, until Up.
  void Down();
  void Up();

  // Partition 0 of `topic` from its beginning, read by a consumer of its own until its end
  // or `timeout`, whichever comes first.
  std::vector<KafkaRecord> Consume(const std::string& topic,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  rd_kafka_t* handle_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
};

}  // namespace webhookd::testing
