#include "worker/redis_transport.h"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "net/broker_url.h"
#include "net/resolver.h"

namespace webhookd {

namespace {

timeval ToTimeval(Duration d) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

// The most of an answer that is read: XADD answers with an entry id or an error, AUTH
// and SELECT with OK or an error. hiredis 0.14 buffers whatever length a bulk string
// announces, so a broker could otherwise make the process hold gigabytes.
constexpr size_t kMaxAnswer = size_t{64} * 1024;

// Set on the connection's thread, the only one that reads its replies, when an array was
// refused (RefuseArray).
thread_local bool array_refused = false;

// None of those commands answers with an array, and hiredis 0.14 allocates room for as
// many elements as an array announces: one is refused before anything is allocated.
void* RefuseArray(const redisReadTask*, int) {
  array_refused = true;
  return nullptr;  // the reader's error
}

// hiredis's reply functions, with RefuseArray; every context starts with the same ones.
redisReplyObjectFunctions* WithoutArrays(const redisReplyObjectFunctions* defaults) {
  static redisReplyObjectFunctions functions = [defaults] {
    redisReplyObjectFunctions f = *defaults;
    f.createArray = RefuseArray;
    return f;
  }();
  return &functions;
}

// A reply, freed with its scope.
struct Reply {
  redisReply* r = nullptr;
  ~Reply() {
    if (r != nullptr) freeReplyObject(r);
  }
};

// An XADD's reply as the answer: the entry id is the success.
SendResult FromReply(const redisReply* reply) {
  if (reply->type == REDIS_REPLY_STRING) {
    SendResult r;
    r.acknowledged = true;
    r.body = std::string(reply->str, reply->len);  // the entry id
    return r;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    return BrokerFailure("redis: " + std::string(reply->str, reply->len));
  }
  return BrokerFailure("redis: XADD answered something other than an entry id");
}

// Commands are pipelined: up to a window of XADDs are written before their replies are
// read, and Redis answers them in the order they were written.
class RedisSession final : public BrokerSession {
 public:
  RedisSession(const BrokerOptions& options, Resolver& resolver)
      : options_(options), resolver_(resolver) {}

  ~RedisSession() override { Close(); }

  RedisSession(const RedisSession&) = delete;
  RedisSession& operator=(const RedisSession&) = delete;

  bool Joins(const Outgoing&) override { return true; }

  void Begin(const Outgoing& out, Ticket ticket, Answers& answers) override {
    auto url = BrokerUrlOf(out, Transport::kRedis, "redis");
    if (!url) {
      answers.push_back({ticket, std::move(url.error())});
      return;
    }
    if (url->tls) {
      // Debian 12's hiredis (0.14) has no TLS.
      answers.push_back(
          {ticket, BrokerFailure("redis: rediss:// (TLS) is not supported by this build")});
      return;
    }
    const BrokerSettings broker = out.broker.value_or(BrokerSettings{});
    if (!broker.stream || broker.stream->empty()) {
      answers.push_back({ticket, BrokerFailure("redis: the destination has no broker.stream")});
      return;
    }
    // The attempt's one deadline, for every address tried and every write; a write that
    // would hold up a message written before it ends at that one's deadline instead.
    auto deadline = std::chrono::steady_clock::now() + options_.attempt_timeout;
    if (!pending_.empty()) deadline = std::min(deadline, pending_.front().deadline);
    if (auto failed = Connect(*url, broker, deadline, answers)) {
      answers.push_back({ticket, std::move(*failed)});
      return;
    }
    std::vector<std::string> args = {"XADD", *broker.stream};
    if (broker.max_len) {
      args.push_back("MAXLEN");
      args.push_back("~");
      args.push_back(std::to_string(*broker.max_len));
    }
    args.push_back("*");
    args.push_back("body");
    args.push_back(out.body);
    for (const auto& [name, value] : out.headers) {
      // The body's field is the body's: a custom header of that name does not replace it.
      if (EqualsIgnoreCase(name, "body")) continue;
      args.push_back(Lower(name));
      args.push_back(value);
    }
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()) !=
        REDIS_OK) {
      answers.push_back({ticket, Lost("redis: " + std::string(ctx_->errstr), false, answers)});
      return;
    }
    if (auto failed = Flush(deadline, answers)) {
      answers.push_back({ticket, std::move(*failed)});
      return;
    }
    pending_.push_back({ticket, deadline});
  }

  void Await(std::chrono::steady_clock::time_point until, Answers& answers) override {
    if (ctx_ == nullptr || pending_.empty()) {
      std::this_thread::sleep_until(until);  // nothing of ours in flight: cannot happen
      return;
    }
    if (ReadReplies(answers) || ctx_ == nullptr) return;  // some were read already
    if (!Readable(until)) return;
    if (redisBufferRead(ctx_) != REDIS_OK) {
      Lost("redis: " + std::string(ctx_->errstr), false, answers);
      return;
    }
    ReadReplies(answers);
    if (ctx_ != nullptr && Overlong()) Lost(std::string(kOverlong), false, answers);
  }

  // A Redis that answers nothing within the attempt timeout is taken for lost.
  void Expire(std::span<const Ticket>, Answers& answers) override {
    Lost("redis: no answer within the attempt timeout", /*timed_out=*/true, answers);
  }

 private:
  static constexpr std::string_view kOverlong = "redis: an answer longer than 64 KiB";

  // Whether the socket has something to read by `until`.
  bool Readable(std::chrono::steady_clock::time_point until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    pollfd fd{ctx_->fd, POLLIN, 0};
    return poll(&fd, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) > 0;
  }

  // What is left of `deadline`; nullopt when less than a millisecond (hiredis takes a zero
  // timeout for none).
  static std::optional<Duration> Left(std::chrono::steady_clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now());
    if (left < std::chrono::milliseconds(1)) return std::nullopt;
    return left;
  }

  // Writes all hiredis holds by `deadline`; nullopt when written, else the answer. Each
  // write may block, and a broker that reads a few bytes at a time lets each one write a
  // few: the socket's timeout is what is left of the deadline, and the deadline ends the
  // loop.
  std::optional<SendResult> Flush(std::chrono::steady_clock::time_point deadline,
                                  Answers& answers) {
    for (int written = 0; written == 0;) {
      const auto left = Left(deadline);
      if (!left) {
        return Lost("redis: the broker did not take the message within the attempt timeout",
                    /*timed_out=*/true, answers);
      }
      redisSetTimeout(ctx_, ToTimeval(*left));
      if (redisBufferWrite(ctx_, &written) != REDIS_OK) {
        return Lost("redis: " + std::string(ctx_->errstr), /*timed_out=*/false, answers);
      }
    }
    return std::nullopt;
  }

  // Whether the answer being read is past kMaxAnswer.
  bool Overlong() const { return ctx_->reader->len - ctx_->reader->pos > kMaxAnswer; }

  // The words for a reply the reader could not read.
  std::string ReadError() const {
    if (std::exchange(array_refused, false)) return "redis: an answer with an array";
    return "redis: " + std::string(ctx_->errstr);
  }

  void Close() {
    if (ctx_ != nullptr) redisFree(ctx_);
    ctx_ = nullptr;
  }

  // A failure of the connection: closed, every message in flight answered with `error`,
  // and not made again before the backoff ends. `error` as an answer.
  SendResult Lost(std::string error, bool timed_out, Answers& answers) {
    Close();
    SendResult r = backoff_.Lost(std::move(error), timed_out, std::chrono::steady_clock::now());
    for (const Written& written : pending_) answers.push_back({written.ticket, r});
    pending_.clear();
    return r;
  }

  // Answers the oldest messages in flight with the replies read so far; whether any was.
  bool ReadReplies(Answers& answers) {
    bool any = false;
    while (!pending_.empty()) {
      void* raw = nullptr;
      if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) {
        Lost(ReadError(), false, answers);
        return true;
      }
      if (raw == nullptr) break;
      Reply reply{static_cast<redisReply*>(raw)};
      answers.push_back({pending_.front().ticket, FromReply(reply.r)});
      pending_.pop_front();
      any = true;
    }
    return any;
  }

  // nullopt when connected; else the answer.
  std::optional<SendResult> Connect(const BrokerUrl& url, const BrokerSettings& broker,
                                    std::chrono::steady_clock::time_point deadline,
                                    Answers& answers) {
    if (ctx_ != nullptr) return std::nullopt;
    if (auto waiting = backoff_.Waiting(std::chrono::steady_clock::now())) return waiting;
    const HostPort& host = url.hosts.front();
    auto addresses = VetHost(host.host, resolver_, options_.allow_private);
    if (!addresses) {
      if (addresses.error().kind == ErrorKind::kForbidden) return BrokerRefused(addresses.error());
      return Lost("redis: " + addresses.error().message, false, answers);
    }
    std::string error = "redis: no address";
    bool timed_out = false;
    for (const IpAddress& address : *addresses) {
      const auto left = Left(deadline);
      if (!left) {
        error = "redis: no address answered within the attempt timeout";
        timed_out = true;
        break;
      }
      ctx_ = redisConnectWithTimeout(address.ToString().c_str(), host.port, ToTimeval(*left));
      if (ctx_ != nullptr && ctx_->err == 0) break;
      error = "redis: " + std::string(ctx_ != nullptr ? ctx_->errstr : "cannot allocate");
      Close();
    }
    if (ctx_ == nullptr) return Lost(error, timed_out, answers);
    ctx_->reader->fn = WithoutArrays(ctx_->reader->fn);
    if (broker.password) {
      std::vector<const char*> argv = {"AUTH"};
      std::vector<size_t> lens = {4};
      if (broker.username) {
        argv.push_back(broker.username->data());
        lens.push_back(broker.username->size());
      }
      argv.push_back(broker.password->data());
      lens.push_back(broker.password->size());
      if (auto failed = Command(argv, lens, "AUTH", deadline, answers)) return failed;
    }
    if (url.path != "0") {
      std::vector<const char*> argv = {"SELECT", url.path.c_str()};
      const std::vector<size_t> lens = {6, url.path.size()};
      if (auto failed = Command(argv, lens, "SELECT", deadline, answers)) return failed;
    }
    backoff_.Connected();
    return std::nullopt;
  }

  // A command, before anything is in flight, whose answer is only OK or an error; nullopt
  // when OK. Its answer is read as XADD's are, within the attempt timeout and kMaxAnswer
  // (hiredis's own reading has neither).
  std::optional<SendResult> Command(std::vector<const char*> argv, const std::vector<size_t>& lens,
                                    std::string_view what,
                                    std::chrono::steady_clock::time_point until, Answers& answers) {
    if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()) !=
        REDIS_OK) {
      return Lost("redis: " + std::string(ctx_->errstr), false, answers);
    }
    if (auto failed = Flush(until, answers)) return failed;
    for (;;) {
      void* raw = nullptr;
      if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) return Lost(ReadError(), false, answers);
      if (raw != nullptr) {
        Reply reply{static_cast<redisReply*>(raw)};
        if (reply.r->type != REDIS_REPLY_ERROR) return std::nullopt;
        return Lost("redis: " + std::string(what) + ": " + std::string(reply.r->str, reply.r->len),
                    false, answers);
      }
      if (Overlong()) return Lost(std::string(kOverlong), false, answers);
      if (!Readable(until)) {
        return Lost("redis: no answer to " + std::string(what) + " within the attempt timeout",
                    /*timed_out=*/true, answers);
      }
      if (redisBufferRead(ctx_) != REDIS_OK) {
        return Lost("redis: " + std::string(ctx_->errstr), false, answers);
      }
    }
  }

  const BrokerOptions& options_;
  Resolver& resolver_;
  ReconnectBackoff backoff_{"redis"};
  redisContext* ctx_ = nullptr;
  struct Written {
    Ticket ticket;
    std::chrono::steady_clock::time_point deadline;  // its attempt's
  };
  std::deque<Written> pending_;  // in the order written, which is the order answered
};

}  // namespace

RedisTransport::RedisTransport(Options options)
    : BrokerConnections(std::move(options), [](const BrokerOptions& o, Resolver& r) {
        return std::make_unique<RedisSession>(o, r);
      }) {}

}  // namespace webhookd
