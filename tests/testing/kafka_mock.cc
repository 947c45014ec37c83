#include "tests/testing/kafka_mock.h"

#include <gtest/gtest.h>

#include <memory>

namespace webhookd::testing {

namespace {

// The Kafka protocol's ApiKey of a Produce request (not in librdkafka's public headers).
constexpr int16_t kProduceApiKey = 0;

// A configuration, or a test failure naming the property it refused.
rd_kafka_conf_t* Conf(const std::vector<std::pair<const char*, std::string>>& properties) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf, name, value.c_str(), errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
      ADD_FAILURE() << name << ": " << errstr;
    }
  }
  return conf;
}

rd_kafka_t* NewHandle(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    ADD_FAILURE() << "rd_kafka_new: " << errstr;
  }
  return rk;
}

KafkaRecord RecordOf(const rd_kafka_message_t& m) {
  KafkaRecord record;
  if (m.key != nullptr) record.key = std::string(static_cast<const char*>(m.key), m.key_len);
  record.value = std::string(static_cast<const char*>(m.payload), m.len);
  record.offset = m.offset;
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* name;
    const void* value;
    size_t size;
    for (size_t i = 0;
         rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
         ++i) {
      record.headers.emplace_back(name, std::string(static_cast<const char*>(value), size));
    }
  }
  return record;
}

}  // namespace

KafkaMock::KafkaMock(int brokers) {
  // The handle only hosts the cluster: it never produces, so it is told to log nothing.
  handle_ = NewHandle(RD_KAFKA_PRODUCER, Conf({{"log_level", "0"}}));
  if (handle_ == nullptr) return;
  cluster_ = rd_kafka_mock_cluster_new(handle_, brokers);
  if (cluster_ == nullptr) ADD_FAILURE() << "rd_kafka_mock_cluster_new failed";
}

KafkaMock::~KafkaMock() {
  if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
  if (handle_ != nullptr) rd_kafka_destroy(handle_);
}

std::string KafkaMock::bootstraps() const {
  return cluster_ != nullptr ? rd_kafka_mock_cluster_bootstraps(cluster_) : "";
}

std::string KafkaMock::url() const { return "kafka://" + bootstraps(); }

void KafkaMock::CreateTopic(const std::string& topic, int partitions) {
  EXPECT_EQ(rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1),
            RD_KAFKA_RESP_ERR_NO_ERROR);
}

void KafkaMock::FailProduceRequests(const std::vector<rd_kafka_resp_err_t>& errors) {
  std::vector<rd_kafka_resp_err_t> copy = errors;
  rd_kafka_mock_push_request_errors_array(cluster_, kProduceApiKey, copy.size(), copy.data());
}

void KafkaMock::Down() { EXPECT_EQ(rd_kafka_mock_broker_set_down(cluster_, -1), 0); }

void KafkaMock::Up() { EXPECT_EQ(rd_kafka_mock_broker_set_up(cluster_, -1), 0); }

std::vector<KafkaRecord> KafkaMock::Consume(const std::string& topic,
                                            std::chrono::milliseconds timeout) {
  std::vector<KafkaRecord> records;
  rd_kafka_t* consumer = NewHandle(RD_KAFKA_CONSUMER, Conf({{"bootstrap.servers", bootstraps()},
                                                            {"group.id", "webhookd-test"},
                                                            {"enable.auto.commit", "false"},
                                                            {"enable.partition.eof", "true"},
                                                            {"fetch.wait.max.ms", "10"},
                                                            {"fetch.error.backoff.ms", "10"},
                                                            {"log_level", "3"}}));
  if (consumer == nullptr) return records;
  // Knowing the partition's leader before the assignment spares the consumer the half
  // second it would otherwise wait to look the leader up again.
  if (rd_kafka_topic_t* handle = rd_kafka_topic_new(consumer, topic.c_str(), nullptr)) {
    const rd_kafka_metadata_t* metadata = nullptr;
    if (rd_kafka_metadata(consumer, 0, handle, &metadata, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_metadata_destroy(metadata);
    }
    rd_kafka_topic_destroy(handle);
  }
  std::unique_ptr<rd_kafka_topic_partition_list_t, decltype(&rd_kafka_topic_partition_list_destroy)>
      partitions(rd_kafka_topic_partition_list_new(1), &rd_kafka_topic_partition_list_destroy);
  rd_kafka_topic_partition_list_add(partitions.get(), topic.c_str(), 0)->offset =
      RD_KAFKA_OFFSET_BEGINNING;
  EXPECT_EQ(rd_kafka_assign(consumer, partitions.get()), RD_KAFKA_RESP_ERR_NO_ERROR);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool at_end = false;
  while (!at_end && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end = true;
    } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      ADD_FAILURE() << "consume " << topic << ": " << rd_kafka_message_errstr(m);
      at_end = true;
    } else {
      records.push_back(RecordOf(*m));
    }
    rd_kafka_message_destroy(m);
  }
  EXPECT_TRUE(at_end) << "the end of " << topic << " was not reached within the timeout";
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  return records;
}

}  // namespace webhookd::testing
