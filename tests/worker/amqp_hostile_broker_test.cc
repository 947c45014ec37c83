// The AMQP transport (worker/amqp_transport.h) against a broker written to hold it: one
// that speaks enough AMQP 0-9-1 to be connected to, then sends heartbeat frames without
// end. librabbitmq reads those for as long as they come, whatever its deadline, so only
// the transport's watchdog (worker/socket_watchdog.h) ends the wait. One that streams
// content frames before it acks the publish: librabbitmq keeps every frame it read until
// told to release them, so the transport releases them as it goes. And a name with 30
// addresses that never answer a connect: the attempt keeps one deadline for all of them.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "tests/testing/black_hole.h"
#include "worker/amqp_transport.h"

namespace webhookd::amqp_hostile_broker_test {
namespace {

using namespace std::chrono_literals;

std::string Be16(uint16_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v & 0xff)}; }
std::string Be32(uint32_t v) { return Be16(static_cast<uint16_t>(v >> 16)) + Be16(v & 0xffff); }

// A frame: type, channel, size, payload and the end octet.
std::string Frame(uint8_t type, uint16_t channel, const std::string& payload) {
  return std::string(1, static_cast<char>(type)) + Be16(channel) +
         Be32(static_cast<uint32_t>(payload.size())) + payload + "\xCE";
}

std::string Method(uint16_t channel, uint16_t class_id, uint16_t method_id,
                   const std::string& arguments = "") {
  return Frame(1, channel, Be16(class_id) + Be16(method_id) + arguments);
}

std::string LongString(const std::string& s) { return Be32(static_cast<uint32_t>(s.size())) + s; }

const std::string kHeartbeat = Frame(8, 0, "");

// Where the broker stops answering and starts sending heartbeats (kContent: 64 MiB of
// content frames after the publish, then its ack).
enum class FloodFrom { kLogin, kPublish, kContent };

class HeartbeatFlooder {
 public:
  explicit HeartbeatFlooder(FloodFrom from) : from_(from) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listener_, 4), 0);
    socklen_t len = sizeof(addr);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~HeartbeatFlooder() {
    stop_ = true;
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    close(listener_);
  }
  HeartbeatFlooder(const HeartbeatFlooder&) = delete;
  HeartbeatFlooder& operator=(const HeartbeatFlooder&) = delete;

  std::string url() const { return "amqp://127.0.0.1:" + std::to_string(port_); }
  // Whether the client ended the connection while it was being flooded, waiting a
  // second for the flood to meet the end.
  bool CutOff() const {
    for (int i = 0; i < 100 && !cut_off_; ++i) std::this_thread::sleep_for(10ms);
    return cut_off_;
  }

 private:
  // Reads `n` bytes; false when the client is gone.
  bool Read(int fd, size_t n) {
    char buf[4096];
    while (n > 0) {
      const ssize_t got = recv(fd, buf, std::min(n, sizeof(buf)), 0);
      if (got <= 0) return false;
      n -= static_cast<size_t>(got);
    }
    return true;
  }

  // Reads one frame of the client's, whatever it is.
  bool ReadFrame(int fd) {
    unsigned char head[7];
    if (recv(fd, head, sizeof(head), MSG_WAITALL) != static_cast<ssize_t>(sizeof(head))) {
      return false;
    }
    const uint32_t size = (uint32_t{head[3]} << 24) | (uint32_t{head[4]} << 16) |
                          (uint32_t{head[5]} << 8) | uint32_t{head[6]};
    return Read(fd, size + 1);
  }

  bool Send(int fd, const std::string& bytes) {
    return send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }

  void Serve() {
    const int fd = accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    // A blocked send gives up every 100 ms, so that the flood sees stop_.
    timeval tv{0, 100'000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (Handshake(fd)) {
      if (from_ == FloodFrom::kContent) {
        StreamContent(fd);
      } else {
        Flood(fd);
      }
    }
    close(fd);
  }

  // connection.start .. confirm.select-ok, up to where the flood begins; false when the
  // client went away.
  bool Handshake(int fd) {
    if (!Read(fd, 8)) return false;  // "AMQP" 0 0 9 1
    const std::string start = std::string("\x00\x09", 2) + Be32(0) /* no properties */ +
                              LongString("PLAIN") + LongString("en_US");
    if (!Send(fd, Method(0, 10, 10, start)) || !ReadFrame(fd)) return false;  // start-ok
    if (from_ == FloodFrom::kLogin) return true;
    const std::string tune = Be16(0) + Be32(131072) + Be16(0);
    if (!Send(fd, Method(0, 10, 30, tune))) return false;
    if (!ReadFrame(fd) || !ReadFrame(fd)) return false;  // tune-ok, connection.open
    if (!Send(fd, Method(0, 10, 41, std::string(1, '\0'))) || !ReadFrame(fd)) return false;
    if (!Send(fd, Method(1, 20, 11, Be32(0))) || !ReadFrame(fd)) return false;  // confirm.select
    if (!Send(fd, Method(1, 85, 11))) return false;
    return ReadFrame(fd);  // basic.publish
  }

  // All of `bytes`, reading and dropping the client's writes meanwhile; false when the
  // client went away or the test ends.
  bool SendAll(int fd, const std::string& bytes) {
    size_t at = 0;
    const auto end = std::chrono::steady_clock::now() + 20s;
    while (at < bytes.size() && !stop_ && std::chrono::steady_clock::now() < end) {
      const ssize_t sent = send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
      if (sent > 0) at += static_cast<size_t>(sent);
      char sink[4096];
      while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
      }
    }
    return at == bytes.size();
  }

  // 64 MiB of body frames on the channel, then basic.ack of delivery tag 1; then waits
  // for the client to go.
  void StreamContent(int fd) {
    const std::string body = Frame(3, 1, std::string(120'000, 'x'));
    for (int i = 0; i < 560; ++i) {
      if (!SendAll(fd, body)) return;
    }
    const std::string tag = Be32(0) + Be32(1);
    if (!SendAll(fd, Method(1, 60, 80, tag + std::string(1, '\0')))) return;
    char sink[4096];
    const auto end = std::chrono::steady_clock::now() + 20s;
    while (!stop_ && std::chrono::steady_clock::now() < end) {
      const ssize_t got = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
      if (got == 0) return;
      if (got < 0) std::this_thread::sleep_for(10ms);
    }
  }

  // Heartbeats as fast as the client reads them, for ten seconds at most.
  void Flood(int fd) {
    std::string flood;
    for (int i = 0; i < 1024; ++i) flood += kHeartbeat;
    const auto end = std::chrono::steady_clock::now() + 10s;
    size_t at = 0;  // where in `flood` the next send starts: a send cut short by the
                    // timeout must not leave half a frame
    while (!stop_ && std::chrono::steady_clock::now() < end) {
      const ssize_t sent = send(fd, flood.data() + at, flood.size() - at, MSG_NOSIGNAL);
      if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        cut_off_ = true;
        return;
      }
      if (sent > 0) at = (at + static_cast<size_t>(sent)) % flood.size();
      // The client's writes are read and dropped; its end of the connection is the end.
      char sink[4096];
      ssize_t got = 0;
      while ((got = recv(fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0) {
      }
      if (got == 0) {
        cut_off_ = true;
        return;
      }
    }
  }

  const FloodFrom from_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_ = false;
  std::atomic<bool> cut_off_ = false;
  std::thread thread_;
};

Outgoing Message(const std::string& url) {
  Outgoing out;
  out.url = url;
  out.body = R"({"type":"order.created"})";
  out.headers = {{"webhook-id", "evt_1"}};
  return out;
}

SendResult SendAndWait(AmqpTransport& transport, Outgoing out) {
  std::promise<SendResult> p;
  auto f = p.get_future();
  transport.Start(std::move(out), [&p](SendResult r) { p.set_value(std::move(r)); });
  if (f.wait_for(30s) != std::future_status::ready) {
    ADD_FAILURE() << "no result within 30 s";
    std::abort();  // the callback still refers to p
  }
  return f.get();
}

AmqpTransport::Options Loopback() {
  AmqpTransport::Options o;
  o.attempt_timeout = 1s;
  o.allow_private = true;
  return o;
}

// The attempt timeout (1 s), the watchdog's second of grace, and its tick.
TEST(AmqpHostileBrokerTest,
     HeartbeatsWithoutEndAfterThePublishHoldAMessageNoLongerThanItsDeadline) {
  HeartbeatFlooder broker(FloodFrom::kPublish);
  const auto started = std::chrono::steady_clock::now();
  {
    AmqpTransport transport(Loopback());
    const SendResult r = SendAndWait(transport, Message(broker.url()));
    EXPECT_FALSE(r.acknowledged);
    ASSERT_TRUE(r.error);
    EXPECT_TRUE(r.timed_out) << *r.error;
    EXPECT_LT(std::chrono::steady_clock::now() - started, 4s) << *r.error;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s) << "the transport's end waited";
  EXPECT_TRUE(broker.CutOff());
}

// The login's deadline (the attempt's, 1 s), the grace and the tick.
TEST(AmqpHostileBrokerTest, HeartbeatsWithoutEndAtTheLoginEndTheConnectionAtItsDeadline) {
  HeartbeatFlooder broker(FloodFrom::kLogin);
  const auto started = std::chrono::steady_clock::now();
  {
    AmqpTransport transport(Loopback());
    const SendResult r = SendAndWait(transport, Message(broker.url()));
    EXPECT_FALSE(r.acknowledged);
    ASSERT_TRUE(r.error);
    // The watchdog's words; or, when the flood paused long enough for librabbitmq to look
    // at its deadline (a loaded machine), the library's own.
    EXPECT_TRUE(*r.error == "amqp: the broker held the connection past the attempt timeout" ||
                r.error->find("timed out") != std::string::npos)
        << *r.error;
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 6s) << "the transport's end waited";
  EXPECT_TRUE(broker.CutOff());
}

// The process's resident memory, in bytes.
size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  size_t resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

TEST(AmqpHostileBrokerTest, ContentFramesStreamedBeforeTheAckAreNotKept) {
  HeartbeatFlooder broker(FloodFrom::kContent);
  auto options = Loopback();
  options.attempt_timeout = 20s;  // the 64 MiB take their time on a loaded machine
  AmqpTransport transport(options);
  const size_t before = ResidentBytes();
  const SendResult r = SendAndWait(transport, Message(broker.url()));
  const size_t after = ResidentBytes();
  EXPECT_TRUE(r.acknowledged) << r.error.value_or("");
  // One connection holds at most 16 MiB; kept, the frames would be 64.
  EXPECT_LT(after, before + size_t{16} * 1024 * 1024)
      << "resident: " << before / 1024 << " KiB before, " << after / 1024 << " KiB after";
}

TEST(AmqpHostileBrokerTest, ThirtyAddressesThatNeverAnswerTakeOneAttemptTimeoutNotThirty) {
  testing::BlackHole hole;
  testing::ManyAddresses resolver(30);
  auto options = Loopback();
  options.resolver = &resolver;
  AmqpTransport transport(options);
  const auto started = std::chrono::steady_clock::now();
  const SendResult r =
      SendAndWait(transport, Message("amqp://many.test:" + std::to_string(hole.port())));
  EXPECT_FALSE(r.acknowledged);
  EXPECT_TRUE(r.timed_out) << r.error.value_or("");
  // One attempt timeout (1 s), with room for a loaded machine; thirty would be 30 s.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

}  // namespace
}  // namespace webhookd::amqp_hostile_broker_test
