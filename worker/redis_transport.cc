#include "worker/redis_transport.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "net/broker_url.h"

namespace webhookd {

namespace {

constexpr auto kFirstBackoff = std::chrono::milliseconds(100);
constexpr auto kLastBackoff = std::chrono::seconds(5);

timeval ToTimeval(Duration d) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

// A reply, freed with its scope.
struct Reply {
  redisReply* r = nullptr;
  ~Reply() {
    if (r != nullptr) freeReplyObject(r);
  }
};

// The connection's key: its URL and credentials, so that a destination whose password
// changed gets a connection of its own.
std::string KeyOf(const Outgoing& out) {
  std::string key = out.url;
  if (out.broker) {
    key += '\n' + out.broker->username.value_or("") + '\n' + out.broker->password.value_or("");
  }
  return key;
}

}  // namespace

struct RedisTransport::Connection {
  struct Job {
    Outgoing request;
    Done done;
    bool cancelled = false;
  };

  Connection(const Options& options, Resolver& resolver)
      : options(options), resolver(resolver), thread([this] { Loop(); }) {}

  ~Connection() {
    {
      std::lock_guard lock(mu);
      stop = true;
      for (Job& job : jobs) job.cancelled = true;
    }
    cv.notify_all();
    thread.join();
    Close();
  }

  void Push(Outgoing request, Done done) {
    {
      std::lock_guard lock(mu);
      jobs.push_back(Job{std::move(request), std::move(done)});
    }
    cv.notify_one();
  }

  void CancelUnstarted() {
    std::lock_guard lock(mu);
    for (Job& job : jobs) job.cancelled = true;
    cv.notify_all();
  }

  void Loop() {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return !jobs.empty() || stop; });
        if (jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      SendResult result;
      if (job.cancelled) {
        result.not_started = true;
        result.error = "not started";
      } else {
        result = Send(job.request);
      }
      job.done(std::move(result));
    }
  }

  void Close() {
    if (ctx != nullptr) redisFree(ctx);
    ctx = nullptr;
  }

  // A failure of the connection: closed, and not made again before the backoff ends.
  SendResult Lost(std::string error, bool timed_out = false) {
    Close();
    failure = error;
    retry_at = std::chrono::steady_clock::now() + backoff;
    backoff = std::min<Duration>(backoff * 2, kLastBackoff);
    SendResult r;
    r.error = std::move(error);
    r.timed_out = timed_out;
    return r;
  }

  // nullopt when connected; else the result to answer with.
  std::optional<SendResult> Connect(const BrokerUrl& url, const BrokerSettings& broker) {
    if (ctx != nullptr) return std::nullopt;
    if (failure && std::chrono::steady_clock::now() < retry_at) {
      SendResult r;
      r.error = "redis: not connected, trying again shortly after: " + *failure;
      return r;
    }
    const HostPort& host = url.hosts.front();
    auto addresses = VetHost(host.host, resolver, options.allow_private);
    if (!addresses) {
      if (addresses.error().kind == ErrorKind::kForbidden) {
        Log(LogLevel::kWarn, "a broker's address is not allowed",
            {{"detail", addresses.error().message}});
        SendResult r;
        r.refused = true;
        r.error = std::string(kAddressNotAllowed);
        return r;
      }
      return Lost("redis: " + addresses.error().message);
    }
    const timeval tv = ToTimeval(options.attempt_timeout);
    std::string error = "redis: no address";
    for (const IpAddress& address : *addresses) {
      ctx = redisConnectWithTimeout(address.ToString().c_str(), host.port, tv);
      if (ctx != nullptr && ctx->err == 0) break;
      error = "redis: " + std::string(ctx != nullptr ? ctx->errstr : "cannot allocate");
      Close();
    }
    if (ctx == nullptr) return Lost(error);
    redisSetTimeout(ctx, tv);
    if (broker.password) {
      std::vector<const char*> argv = {"AUTH"};
      std::vector<size_t> lens = {4};
      if (broker.username) {
        argv.push_back(broker.username->data());
        lens.push_back(broker.username->size());
      }
      argv.push_back(broker.password->data());
      lens.push_back(broker.password->size());
      if (auto failed = Command(argv, lens, "AUTH")) return failed;
    }
    if (url.path != "0") {
      std::vector<const char*> argv = {"SELECT", url.path.c_str()};
      const std::vector<size_t> lens = {6, url.path.size()};
      if (auto failed = Command(argv, lens, "SELECT")) return failed;
    }
    failure.reset();
    backoff = kFirstBackoff;
    return std::nullopt;
  }

  // A command whose answer is only OK or an error; nullopt when OK.
  std::optional<SendResult> Command(std::vector<const char*> argv, const std::vector<size_t>& lens,
                                    std::string_view what) {
    Reply reply{static_cast<redisReply*>(
        redisCommandArgv(ctx, static_cast<int>(argv.size()), argv.data(), lens.data()))};
    if (reply.r == nullptr) return Lost("redis: " + std::string(ctx->errstr));
    if (reply.r->type == REDIS_REPLY_ERROR) {
      return Lost("redis: " + std::string(what) + ": " + std::string(reply.r->str, reply.r->len));
    }
    return std::nullopt;
  }

  SendResult Send(const Outgoing& out) {
    auto url = ParseBrokerUrl(out.url);
    if (!url || url->transport != Transport::kRedis) {
      SendResult r;
      r.error = "redis: " + (url ? std::string("not a redis URL") : url.error().message);
      return r;
    }
    if (url->tls) {
      // Debian 12's hiredis (0.14) has no TLS.
      SendResult r;
      r.error = "redis: rediss:// (TLS) is not supported by this build";
      return r;
    }
    const BrokerSettings broker = out.broker.value_or(BrokerSettings{});
    if (!broker.stream || broker.stream->empty()) {
      SendResult r;
      r.error = "redis: the destination has no broker.stream";
      return r;
    }
    if (auto failed = Connect(*url, broker)) return *failed;

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
    Reply reply{static_cast<redisReply*>(
        redisCommandArgv(ctx, static_cast<int>(argv.size()), argv.data(), lens.data()))};
    if (reply.r == nullptr) {
      const bool timed_out = ctx->err == REDIS_ERR_IO && (errno == EAGAIN || errno == ETIMEDOUT);
      return Lost(
          "redis: " + std::string(timed_out ? "no answer within the attempt timeout" : ctx->errstr),
          timed_out);
    }
    SendResult r;
    if (reply.r->type == REDIS_REPLY_STRING) {
      r.acknowledged = true;
      r.body = std::string(reply.r->str, reply.r->len);  // the entry id
    } else if (reply.r->type == REDIS_REPLY_ERROR) {
      r.error = "redis: " + std::string(reply.r->str, reply.r->len);
    } else {
      r.error = "redis: XADD answered something other than an entry id";
    }
    return r;
  }

  const Options& options;
  Resolver& resolver;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Job> jobs;  // guarded by mu
  bool stop = false;     // guarded by mu
  // The connection thread's own.
  redisContext* ctx = nullptr;
  std::optional<std::string> failure;
  std::chrono::steady_clock::time_point retry_at;
  Duration backoff = kFirstBackoff;
  std::thread thread;  // last: it starts with everything above made
};

RedisTransport::RedisTransport(Options options) : options_(options) {
  if (options_.resolver == nullptr) {
    own_resolver_ = std::make_unique<SystemResolver>(options_.attempt_timeout);
    resolver_ = own_resolver_.get();
  } else {
    resolver_ = options_.resolver;
  }
}

RedisTransport::~RedisTransport() {
  std::map<std::string, std::unique_ptr<Connection>> connections;
  {
    std::lock_guard lock(mu_);
    connections.swap(connections_);
  }
  // Each joins its thread, ending what it had not started; outside the lock, as a send's
  // `done` may call Start.
  connections.clear();
}

void RedisTransport::Start(Outgoing request, Done done) {
  std::lock_guard lock(mu_);
  auto& connection = connections_[KeyOf(request)];
  if (!connection) connection = std::make_unique<Connection>(options_, *resolver_);
  connection->Push(std::move(request), std::move(done));
}

void RedisTransport::CancelUnstarted() {
  std::lock_guard lock(mu_);
  for (auto& [key, connection] : connections_) connection->CancelUnstarted();
}

}  // namespace webhookd
