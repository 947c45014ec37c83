// What a tenant's Kafka "cluster" could make a worker hold through its metadata, driven
// through the worker's own Kafka transport in this process so its threads can be counted,
// against a stand-in cluster on loopback that answers ApiVersions and Metadata only.
// Before: librdkafka made a broker, and started a thread, for every broker a Metadata
// answer named (up to 10,000), before any address was vetted: a cluster naming 2,000
// brokers grew this process by 2,005 threads for the whole attempt. And it took an answer
// as large as its size said, up to 100 MB: a Metadata answer of 64 MiB grew the heap by
// 320 MiB.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "tests/testing/wait.h"
#include "worker/kafka_transport.h"

namespace webhookd::kafka_cluster_security_test {
namespace {

using namespace std::chrono_literals;

size_t ThreadCount() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                           std::filesystem::directory_iterator()));
}

void PutInt16(std::string& out, int16_t v) {
  const auto u = static_cast<uint16_t>(v);
  out += static_cast<char>(u >> 8);
  out += static_cast<char>(u & 0xff);
}

void PutInt32(std::string& out, int32_t v) {
  const auto u = static_cast<uint32_t>(v);
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((u >> shift) & 0xff);
}

void PutString(std::string& out, const std::string& s) {
  PutInt16(out, static_cast<int16_t>(s.size()));
  out += s;
}

int32_t GetInt32(const char* p) {
  return static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint8_t>(p[0])) << 24) |
                              (static_cast<uint32_t>(static_cast<uint8_t>(p[1])) << 16) |
                              (static_cast<uint32_t>(static_cast<uint8_t>(p[2])) << 8) |
                              static_cast<uint32_t>(static_cast<uint8_t>(p[3])));
}

int16_t GetInt16(const char* p) {
  return static_cast<int16_t>((static_cast<uint16_t>(static_cast<uint8_t>(p[0])) << 8) |
                              static_cast<uint16_t>(static_cast<uint8_t>(p[1])));
}

constexpr int16_t kMetadata = 3;
constexpr int16_t kApiVersions = 18;

// A Kafka "cluster" on 127.0.0.1 whose every Metadata answer names `brokers` brokers, at
// 127.1.x.y:9092 (nothing listens there). It answers ApiVersions as a broker of Kafka 2.x
// would, Metadata (versions 0 to 4) with those brokers and no topic (or with a huge
// answer), and nothing else.
// One connection at a time, at most 64 of them, for 60 seconds at most.
class ManyBrokersCluster {
 public:
  // `huge`: instead, every Metadata answer announces `huge` bytes and sends them.
  explicit ManyBrokersCluster(int brokers, size_t huge = 0) : brokers_(brokers), huge_(huge) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listener_, 8), 0);
    socklen_t len = sizeof(addr);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ManyBrokersCluster() {
    stop_ = true;
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    close(listener_);
  }
  ManyBrokersCluster(const ManyBrokersCluster&) = delete;
  ManyBrokersCluster& operator=(const ManyBrokersCluster&) = delete;

  std::string url() const { return "kafka://127.0.0.1:" + std::to_string(port_); }
  int metadata_answers() const { return metadata_answers_.load(); }

 private:
  void Serve() {
    const auto end = std::chrono::steady_clock::now() + 60s;
    for (int i = 0; i < 64 && !stop_ && std::chrono::steady_clock::now() < end; ++i) {
      const int fd = accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      timeval tv{0, 100'000};  // a blocked read or write gives up every 100 ms, to see stop_
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
      std::string frame;
      while (!stop_ && std::chrono::steady_clock::now() < end && ReadFrame(fd, frame)) {
        if (frame.size() < 8) break;
        const int16_t key = GetInt16(frame.data());
        const int16_t version = GetInt16(frame.data() + 2);
        const int32_t correlation = GetInt32(frame.data() + 4);
        std::string body;
        if (key == kApiVersions) {
          body = ApiVersions(version);
        } else if (key == kMetadata && huge_ > 0) {
          ++metadata_answers_;
          if (!SendHuge(fd, correlation, end)) break;
          continue;
        } else if (key == kMetadata) {
          body = Metadata(version);
          ++metadata_answers_;
        } else {
          continue;  // never answered
        }
        std::string out;
        PutInt32(out, static_cast<int32_t>(body.size() + 4));
        PutInt32(out, correlation);
        out += body;
        if (!WriteAll(fd, out)) break;
      }
      close(fd);
    }
  }

  // A Metadata answer whose size says huge_ bytes, that many sent behind it (as long as
  // the client reads them, until `end`); false when the client went away.
  bool SendHuge(int fd, int32_t correlation, std::chrono::steady_clock::time_point end) {
    std::string head;
    PutInt32(head, static_cast<int32_t>(huge_ + 4));
    PutInt32(head, correlation);
    if (!WriteAll(fd, head)) return false;
    const std::string filler(64 * 1024, ':');
    size_t sent = 0;
    while (sent < huge_ && !stop_ && std::chrono::steady_clock::now() < end) {
      const size_t n = std::min(filler.size(), huge_ - sent);
      if (!WriteAll(fd, std::string_view(filler).substr(0, n))) return false;
      sent += n;
    }
    return sent == huge_;
  }

  // A request of at most 1 MiB; false when the peer went away or the cluster stops.
  bool ReadFrame(int fd, std::string& frame) {
    char size[4];
    if (!ReadExactly(fd, size, 4)) return false;
    const int32_t n = GetInt32(size);
    if (n < 0 || n > (1 << 20)) return false;
    frame.assign(static_cast<size_t>(n), '\0');
    return ReadExactly(fd, frame.data(), frame.size());
  }

  bool ReadExactly(int fd, char* p, size_t n) {
    while (n > 0) {
      if (stop_) return false;
      const ssize_t got = recv(fd, p, n, 0);
      if (got == 0) return false;
      if (got < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        return false;
      }
      p += got;
      n -= static_cast<size_t>(got);
    }
    return true;
  }

  bool WriteAll(int fd, std::string_view data) {
    size_t sent = 0;
    while (sent < data.size()) {
      if (stop_) return false;
      const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        return false;
      }
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // Produce 0-7, Metadata 0-4, ApiVersions 0-3, InitProducerId 0-1: enough for an
  // idempotent producer to ask for metadata.
  static std::string ApiVersions(int16_t version) {
    struct Range {
      int16_t key, min, max;
    };
    constexpr Range kRanges[] = {{0, 0, 7}, {kMetadata, 0, 4}, {kApiVersions, 0, 3}, {22, 0, 1}};
    const bool flexible = version >= 3;
    std::string body;
    PutInt16(body, 0);
    if (flexible) {
      body += static_cast<char>(std::size(kRanges) + 1);  // compact array: count + 1
    } else {
      PutInt32(body, static_cast<int32_t>(std::size(kRanges)));
    }
    for (const Range& r : kRanges) {
      PutInt16(body, r.key);
      PutInt16(body, r.min);
      PutInt16(body, r.max);
      if (flexible) body += '\0';  // no tagged fields
    }
    if (version >= 1) PutInt32(body, 0);  // throttle time
    if (flexible) body += '\0';
    return body;
  }

  std::string Metadata(int16_t version) const {
    std::string body;
    if (version >= 3) PutInt32(body, 0);  // throttle time
    PutInt32(body, brokers_);
    for (int i = 0; i < brokers_; ++i) {
      PutInt32(body, i + 1);
      PutString(body, "127.1." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1));
      PutInt32(body, 9092);
      if (version >= 1) PutInt16(body, -1);  // no rack
    }
    if (version >= 2) PutString(body, "many-brokers");
    if (version >= 1) PutInt32(body, 1);  // controller
    PutInt32(body, 0);                    // no topic
    return body;
  }

  const int brokers_;
  const size_t huge_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_ = false;
  std::atomic<int> metadata_answers_ = 0;
  std::thread thread_;
};

KafkaTransport::Options Loopback() {
  KafkaTransport::Options o;
  o.attempt_timeout = 3s;
  o.allow_private = true;  // the cluster and the brokers it names are on loopback
  return o;
}

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer's own count (its allocator_interface.h, not installed here).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

// The bytes the process's heap holds now. Not its resident memory: the sanitizer keeps
// what is freed aside for a while, so that grows with every allocation ever made.
size_t HeapBytes() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

Outgoing Message(const std::string& url) {
  Outgoing out;
  out.url = url;
  out.body = R"({"type":"order.created","data":{}})";
  out.headers = {{"webhook-id", "msg_1"}};
  BrokerSettings broker;
  broker.topic = "webhooks";
  out.broker = std::move(broker);
  out.tenant = "tenant";
  out.destination_id = 1;
  return out;
}

struct Sent {
  SendResult result;
  std::chrono::steady_clock::duration took{};
  size_t most_threads = 0;  // while it was in flight
  size_t most_heap = 0;     // likewise
};

// Sends `out` and counts this process's threads until its result comes (10 s at most).
Sent SendCounting(AsyncSender& sender, Outgoing out) {
  auto promise = std::make_shared<std::promise<SendResult>>();
  auto result = promise->get_future();
  Sent sent;
  sent.most_threads = ThreadCount();
  sent.most_heap = HeapBytes();
  const auto start = std::chrono::steady_clock::now();
  sender.Start(std::move(out), [promise](SendResult r) { promise->set_value(std::move(r)); });
  while (result.wait_for(5ms) != std::future_status::ready) {
    sent.most_threads = std::max(sent.most_threads, ThreadCount());
    sent.most_heap = std::max(sent.most_heap, HeapBytes());
    if (std::chrono::steady_clock::now() - start > 10s) {
      ADD_FAILURE() << "no result within 10 s";
      return sent;
    }
  }
  sent.took = std::chrono::steady_clock::now() - start;
  sent.result = result.get();
  return sent;
}

// A producer holds librdkafka's main thread, its internal broker, the bootstrap broker and
// at most 16 learned ones (a broker or two more may slip past while the cap trips), beside
// the connection's own thread and the transport's closer.
constexpr size_t kProducerThreads = 16 + 10;

TEST(KafkaClusterSecurityTest, AClusterNamingFiveThousandBrokersFailsTheAttemptWithinItsBound) {
  ManyBrokersCluster cluster(5000);
  const size_t before = ThreadCount();
  size_t most = before;
  {
    KafkaTransport transport(Loopback());
    const Sent sent = SendCounting(transport, Message(cluster.url()));
    most = std::max(most, sent.most_threads);
    EXPECT_FALSE(sent.result.acknowledged);
    EXPECT_FALSE(sent.result.refused);  // retryable: the cluster may be fixed
    EXPECT_NE(sent.result.error.value_or("").find("names more than 16 brokers"), std::string::npos)
        << sent.result.error.value_or("");
    EXPECT_LE(sent.took, Loopback().attempt_timeout + 1s);
    EXPECT_GE(cluster.metadata_answers(), 1);

    // The next attempt, at once, is answered at once (the producer is made again after a
    // backoff), in the same words.
    const Sent again = SendCounting(transport, Message(cluster.url()));
    most = std::max(most, again.most_threads);
    EXPECT_NE(again.result.error.value_or("").find("names more than 16 brokers"), std::string::npos)
        << again.result.error.value_or("");
  }
  EXPECT_LE(most, before + kProducerThreads)
      << "threads: " << before << " before, " << most << " at most";
  EXPECT_TRUE(testing::WaitUntil([&] { return ThreadCount() <= before; }, 5s))
      << ThreadCount() << " threads, " << before << " before";
}

TEST(KafkaClusterSecurityTest, AClusterNamingSixteenBrokersIsNotRefused) {
  ManyBrokersCluster cluster(16);
  const size_t before = ThreadCount();
  KafkaTransport transport(Loopback());
  const Sent sent = SendCounting(transport, Message(cluster.url()));
  // The stand-in never takes a message: it times out, as for any cluster that does not.
  EXPECT_FALSE(sent.result.acknowledged);
  EXPECT_TRUE(sent.result.timed_out) << sent.result.error.value_or("");
  EXPECT_EQ(sent.result.error.value_or("").find("brokers"), std::string::npos)
      << sent.result.error.value_or("");
  EXPECT_GE(cluster.metadata_answers(), 1);
  EXPECT_LE(sent.most_threads, before + kProducerThreads);
}

// Before, librdkafka took a response as large as its size said, up to 100 MB, into one
// buffer (and a Metadata answer's parse asks four times that again).
TEST(KafkaClusterSecurityTest, AMetadataAnswerOfSixtyFourMiBIsNotTaken) {
  constexpr size_t kHuge = size_t{64} * 1024 * 1024;
  ManyBrokersCluster cluster(0, kHuge);
  KafkaTransport transport(Loopback());
  const size_t before = HeapBytes();
  const Sent sent = SendCounting(transport, Message(cluster.url()));
  EXPECT_FALSE(sent.result.acknowledged);
  EXPECT_LE(sent.took, Loopback().attempt_timeout + 1s);
  EXPECT_GE(cluster.metadata_answers(), 1);
  // One connection holds at most 16 MiB.
  EXPECT_LT(sent.most_heap, before + size_t{16} * 1024 * 1024)
      << "heap: " << before / 1024 << " KiB before, " << sent.most_heap / 1024 << " KiB at most";
}

}  // namespace
}  // namespace webhookd::kafka_cluster_security_test
