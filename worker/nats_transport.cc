#include "worker/nats_transport.h"

#include <nats/nats.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "net/broker_url.h"

namespace webhookd {

namespace {

constexpr auto kFirstBackoff = std::chrono::milliseconds(100);
constexpr auto kLastBackoff = std::chrono::seconds(5);

// libnats takes milliseconds, and reads 0 as "its default" or "do not wait".
int64_t Millis(Duration d) {
  return std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

// The connection's key: its URL and credentials, so that a destination whose password
// changed gets a connection of its own.
std::string KeyOf(const Outgoing& out) {
  std::string key = out.url;
  if (out.broker) {
    key += '\n' + out.broker->username.value_or("") + '\n' + out.broker->password.value_or("");
  }
  return key;
}

SendResult Failed(std::string error) {
  SendResult r;
  r.error = std::move(error);
  return r;
}

// libnats's words for the failure `status` that a call on this thread just returned.
std::string Words(natsStatus status) {
  natsStatus last = NATS_OK;
  const char* text = nats_GetLastError(&last);
  // The thread's last error may be an older one when the failing call set none.
  std::string_view words = last == status && text != nullptr && *text != '\0'
                               ? std::string_view(text)
                               : std::string_view(natsStatus_GetText(status));
  // Its texts begin with where in its source they were set: "(conn.c:1905): ".
  if (const size_t end = words.find("): "); words.starts_with('(') && end < 40) {
    words.remove_prefix(end + 3);
  }
  return words.starts_with("nats: ") ? std::string(words) : "nats: " + std::string(words);
}

// libnats never puts the password in its errors (it is not in the URL we give it); this
// makes sure of it whatever a server may echo back.
std::string WithoutPassword(std::string text, const BrokerSettings& broker) {
  if (!broker.password || broker.password->empty()) return text;
  constexpr std::string_view kHidden = "[password]";
  for (size_t at = text.find(*broker.password); at != std::string::npos;
       at = text.find(*broker.password, at + kHidden.size())) {
    text.replace(at, broker.password->size(), kHidden);
  }
  return text;
}

// A subject one may publish to: dot-separated tokens, none empty or a wildcard, and
// nothing a NATS protocol line would split on.
bool IsPublishSubject(std::string_view subject) {
  if (std::any_of(subject.begin(), subject.end(),
                  [](unsigned char c) { return c <= ' ' || c == 0x7f; })) {
    return false;
  }
  size_t start = 0;
  for (;;) {
    const size_t dot = subject.find('.', start);
    const std::string_view token = subject.substr(start, dot - start);
    if (token.empty() || token == "*" || token == ">") return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// broker.subject, or "webhooks.<type>" with the body's top-level "type"; else the error.
std::expected<std::string, std::string> SubjectOf(const Outgoing& out,
                                                  const BrokerSettings& broker) {
  std::string subject;
  if (broker.subject && !broker.subject->empty()) {
    subject = *broker.subject;
  } else {
    const auto body = nlohmann::json::parse(out.body, nullptr, /*allow_exceptions=*/false);
    const auto type = body.is_object() ? body.find("type") : body.end();
    if (!body.is_object() || type == body.end() || !type->is_string()) {
      return std::unexpected(
          "nats: the destination has no broker.subject and the body no string \"type\"");
    }
    subject = "webhooks." + type->get<std::string>();
  }
  if (!IsPublishSubject(subject)) {
    return std::unexpected("nats: '" + subject + "' is not a subject one can publish to");
  }
  return subject;
}

// A header line NATS can carry: a name without ':' or blanks, a value on one line.
bool IsSendableHeader(const std::string& name, const std::string& value) {
  const bool name_ok = !name.empty() && std::none_of(name.begin(), name.end(), [](unsigned char c) {
    return c <= ' ' || c == ':' || c == 0x7f;
  });
  return name_ok && value.find_first_of("\r\n") == std::string::npos;
}

struct MsgDeleter {
  void operator()(natsMsg* m) const { natsMsg_Destroy(m); }
};
using Msg = std::unique_ptr<natsMsg, MsgDeleter>;

struct OptionsDeleter {
  void operator()(natsOptions* o) const { natsOptions_Destroy(o); }
};
using NatsOptions = std::unique_ptr<natsOptions, OptionsDeleter>;

// One natsConnection_Connect, on a thread of its own. libnats 3.4.1 does a TLS handshake
// (tls://, or a nats:// server that asks for TLS) on a blocking socket with no deadline:
// a server that stalls there would hold the connection's thread, every message queued
// behind it (and with them the dispatcher's slots), and the destructor's join. The
// connection's thread waits for the connect no longer than a deadline; past it the
// attempt is abandoned, and its thread destroys what it gets whenever the server lets go.
struct ConnectAttempt {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;   // guarded by mu
  bool abandoned = false;  // guarded by mu
  natsConnection* nc = nullptr;
  natsStatus status = NATS_OK;
  std::string words;  // libnats's words for a failure, read on the connecting thread
  NatsOptions options;

  static std::shared_ptr<ConnectAttempt> Start(NatsOptions options) {
    auto attempt = std::make_shared<ConnectAttempt>();
    attempt->options = std::move(options);
    std::thread([attempt] {
      natsConnection* nc = nullptr;
      const natsStatus status = natsConnection_Connect(&nc, attempt->options.get());
      const std::string words = status == NATS_OK ? "" : Words(status);
      std::lock_guard lock(attempt->mu);
      if (attempt->abandoned) {
        if (nc != nullptr) natsConnection_Destroy(nc);
        attempt->finished = true;
        return;
      }
      attempt->nc = status == NATS_OK ? nc : nullptr;
      attempt->status = status;
      attempt->words = words;
      attempt->finished = true;
      attempt->cv.notify_all();
    }).detach();
    return attempt;
  }

  // True when it finished by `deadline`; else it is abandoned.
  bool WaitUntil(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu);
    if (cv.wait_until(lock, deadline, [&] { return finished; })) return true;
    abandoned = true;
    return false;
  }

  // Abandoned, and its thread still waits on the server.
  bool Hanging() {
    std::lock_guard lock(mu);
    return abandoned && !finished;
  }
};

// The PubAck's stream and sequence as the result's body, or JetStream's error.
SendResult FromPubAck(const natsMsg* reply, const std::string& subject) {
  const auto ack = nlohmann::json::parse(
      std::string_view(natsMsg_GetData(reply), static_cast<size_t>(natsMsg_GetDataLength(reply))),
      nullptr, /*allow_exceptions=*/false);
  if (!ack.is_object()) {
    return Failed("nats: the answer on subject '" + subject + "' is not a JetStream PubAck");
  }
  if (const auto error = ack.find("error"); error != ack.end()) {
    const auto description = error->is_object() ? error->find("description") : error->end();
    return Failed("nats: " + (description != error->end() && description->is_string()
                                  ? description->get<std::string>()
                                  : error->dump()));
  }
  const auto stream = ack.find("stream");
  const auto seq = ack.find("seq");
  if (stream == ack.end() || !stream->is_string() || seq == ack.end() ||
      !seq->is_number_unsigned()) {
    return Failed("nats: the answer on subject '" + subject + "' is not a JetStream PubAck");
  }
  nlohmann::json body = {{"stream", *stream}, {"seq", *seq}};
  if (ack.value("duplicate", false)) body["duplicate"] = true;
  SendResult r;
  r.acknowledged = true;
  r.body = body.dump();
  return r;
}

}  // namespace

struct NatsTransport::Connection {
  struct Job {
    Outgoing request;
    Done done;
    bool cancelled = false;
  };

  Connection(const Options& options, Resolver& resolver)
      : options(options), resolver(resolver), thread([this] { Run(); }) {}

  ~Connection() {
    {
      std::lock_guard lock(mu);
      stop = true;
      for (Job& job : jobs) job.cancelled = true;
    }
    cv.notify_all();
    thread.join();
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

  // The libnats connection is made, used and destroyed on this thread alone, so its own
  // threads are joined before this one ends.
  void Run() {
    Loop();
    Close();
    nats_ReleaseThreadMemory();
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
    if (sub != nullptr) natsSubscription_Destroy(sub);
    sub = nullptr;
    if (nc != nullptr) natsConnection_Destroy(nc);
    nc = nullptr;
  }

  // A failure of the connection: closed, and not made again before the backoff ends.
  SendResult Lost(std::string error, bool timed_out = false) {
    Close();
    failure = error;
    retry_at = std::chrono::steady_clock::now() + backoff;
    backoff = std::min<Duration>(backoff * 2, kLastBackoff);
    SendResult r = Failed(std::move(error));
    r.timed_out = timed_out;
    return r;
  }

  // What libnats connects with: the vetted addresses only (never servers a cluster
  // advertises, which were not vetted), and no reconnecting of its own.
  std::expected<NatsOptions, std::string> MakeOptions(const BrokerUrl& url,
                                                      const std::vector<IpAddress>& addresses,
                                                      const BrokerSettings& broker) {
    natsOptions* raw = nullptr;
    if (natsOptions_Create(&raw) != NATS_OK) return std::unexpected(Words(NATS_NO_MEMORY));
    NatsOptions opts(raw);
    std::vector<std::string> servers;
    servers.reserve(addresses.size());
    for (const IpAddress& address : addresses) {
      const std::string host = address.v6 ? "[" + address.ToString() + "]" : address.ToString();
      servers.push_back("nats://" + host + ":" + std::to_string(url.hosts.front().port));
    }
    std::vector<const char*> server_ptrs;
    server_ptrs.reserve(servers.size());
    for (const std::string& s : servers) server_ptrs.push_back(s.c_str());
    const int64_t timeout = Millis(options.attempt_timeout);
    natsStatus s = natsOptions_SetServers(opts.get(), server_ptrs.data(),
                                          static_cast<int>(server_ptrs.size()));
    if (s == NATS_OK) s = natsOptions_SetNoRandomize(opts.get(), true);
    if (s == NATS_OK) s = natsOptions_SetIgnoreDiscoveredServers(opts.get(), true);
    if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts.get(), false);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts.get(), timeout);
    if (s == NATS_OK) s = natsOptions_SetWriteDeadline(opts.get(), timeout);
    if (s == NATS_OK) s = natsOptions_SetSendAsap(opts.get(), true);
    if (s == NATS_OK) s = natsOptions_SetName(opts.get(), "webhookd");
    if (s == NATS_OK && broker.username) {
      s = natsOptions_SetUserInfo(opts.get(), broker.username->c_str(),
                                  broker.password ? broker.password->c_str() : nullptr);
    } else if (s == NATS_OK && broker.password) {
      s = natsOptions_SetToken(opts.get(), broker.password->c_str());  // a password alone
    }
    if (s != NATS_OK) return std::unexpected(Words(s));
    if (url.tls) {
      if (natsOptions_SetSecure(opts.get(), true) != NATS_OK) {
        return std::unexpected("nats: tls is not supported by this build");
      }
      // We connect to an address, so the certificate is checked against the URL's name.
      s = natsOptions_SetExpectedHostname(opts.get(), url.hosts.front().host.c_str());
      if (s != NATS_OK) return std::unexpected(Words(s));
    }
    return opts;
  }

  // nullopt when connected; else the result to answer with.
  std::optional<SendResult> Connect(const BrokerUrl& url, const BrokerSettings& broker) {
    if (nc != nullptr && !natsConnection_IsClosed(nc)) return std::nullopt;
    // The server ended it since the last message (libnats does not reconnect): made
    // again now, as that loss was already some message's error.
    Close();
    if (failure && std::chrono::steady_clock::now() < retry_at) {
      return Failed("nats: not connected, trying again shortly after: " + *failure);
    }
    const HostPort& host = url.hosts.front();
    auto addresses = VetHost(host.host, resolver, options.allow_private);
    if (!addresses) {
      if (addresses.error().kind == ErrorKind::kForbidden) {
        Log(LogLevel::kWarn, "a broker's address is not allowed",
            {{"detail", addresses.error().message}});
        SendResult r = Failed(std::string(kAddressNotAllowed));
        r.refused = true;
        return r;
      }
      return Lost("nats: " + addresses.error().message);
    }
    // One abandoned connect at a time: a server that stalls every handshake holds one
    // thread, not one per backoff.
    if (hanging_connect && hanging_connect->Hanging()) {
      return Lost("nats: the last connection's handshake has not ended");
    }
    hanging_connect.reset();
    auto opts = MakeOptions(url, *addresses, broker);
    if (!opts) return Lost(opts.error());
    auto attempt = ConnectAttempt::Start(std::move(*opts));
    // libnats's own timeout covers the TCP connect and the INFO; a second more for the rest.
    if (!attempt->WaitUntil(std::chrono::steady_clock::now() + options.attempt_timeout +
                            std::chrono::seconds(1))) {
      hanging_connect = std::move(attempt);
      return Lost("nats: no connection within the attempt timeout (the handshake stalled)",
                  /*timed_out=*/true);
    }
    if (attempt->status != NATS_OK) return Lost(WithoutPassword(attempt->words, broker));
    nc = attempt->nc;
    // One inbox for the connection's answers, a subject under it for each request.
    natsInbox* inbox = nullptr;
    natsStatus s = natsInbox_Create(&inbox);
    if (s == NATS_OK) {
      inbox_subject = inbox;
      natsInbox_Destroy(inbox);
      s = natsConnection_SubscribeSync(&sub, nc, (inbox_subject + ".*").c_str());
    }
    if (s != NATS_OK) return Lost(WithoutPassword(Words(s), broker));
    failure.reset();
    backoff = kFirstBackoff;
    return std::nullopt;
  }

  // The message to publish: the body, every header, and Nats-Msg-Id from webhook-id.
  std::expected<Msg, std::string> MakeMessage(const std::string& subject, const std::string& reply,
                                              const Outgoing& out) {
    natsMsg* raw = nullptr;
    natsStatus s = natsMsg_Create(&raw, subject.c_str(), reply.c_str(), out.body.data(),
                                  static_cast<int>(out.body.size()));
    if (s != NATS_OK) return std::unexpected(Words(s));
    Msg msg(raw);
    const std::string* webhook_id = nullptr;
    for (const auto& [name, value] : out.headers) {
      if (!IsSendableHeader(name, value)) {
        return std::unexpected("nats: the header '" + name + "' cannot be sent as a NATS header");
      }
      // Add, not Set: a name given twice keeps both values.
      if (s = natsMsgHeader_Add(msg.get(), name.c_str(), value.c_str()); s != NATS_OK) {
        return std::unexpected(Words(s));
      }
      if (EqualsIgnoreCase(name, "webhook-id")) webhook_id = &value;
    }
    if (webhook_id != nullptr) {
      // Set last, over any header of that name, as JetStream dedupes on it.
      if (s = natsMsgHeader_Set(msg.get(), "Nats-Msg-Id", webhook_id->c_str()); s != NATS_OK) {
        return std::unexpected(Words(s));
      }
    }
    return msg;
  }

  SendResult Send(const Outgoing& out) {
    auto url = ParseBrokerUrl(out.url);
    if (!url || url->transport != Transport::kNats) {
      return Failed("nats: " + (url ? std::string("not a nats URL") : url.error().message));
    }
    const BrokerSettings broker = out.broker.value_or(BrokerSettings{});
    auto subject = SubjectOf(out, broker);
    if (!subject) return Failed(subject.error());
    if (auto failed = Connect(*url, broker)) return *failed;
    const std::string reply = inbox_subject + "." + std::to_string(++requests);
    auto msg = MakeMessage(*subject, reply, out);
    if (!msg) return Failed(msg.error());
    if (natsStatus s = natsConnection_PublishMsg(nc, msg->get()); s != NATS_OK) {
      // Too big for the server is this message's fault, not the connection's.
      if (s == NATS_MAX_PAYLOAD) return Failed(Words(s));
      return Lost(WithoutPassword(Words(s), broker));
    }
    Msg answer;
    switch (const natsStatus s = NextAnswer(reply, &answer)) {
      case NATS_OK:
        return FromPubAck(answer.get(), *subject);
      case NATS_NO_RESPONDERS:
        // No stream listens on the subject; the connection itself is fine.
        return Failed("nats: no stream for subject '" + *subject + "'");
      case NATS_TIMEOUT:
        return Lost("nats: no PubAck within the attempt timeout", /*timed_out=*/true);
      default:
        return Lost(WithoutPassword(Words(s), broker));
    }
  }

  // The first answer on `reply` within the attempt timeout. Those on other subjects are
  // late ones to earlier requests (a subject may have more responders than its stream).
  // A "no responders" one has no subject to tell, but is never late: the server sends it
  // only when there is no one else to answer.
  natsStatus NextAnswer(const std::string& reply, Msg* answer) {
    const auto deadline = std::chrono::steady_clock::now() + options.attempt_timeout;
    for (;;) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= Duration::zero()) return NATS_TIMEOUT;
      natsMsg* raw = nullptr;
      const natsStatus s =
          natsSubscription_NextMsg(&raw, sub, Millis(std::chrono::duration_cast<Duration>(left)));
      Msg msg(raw);
      if (s != NATS_OK) return s;
      if (reply == natsMsg_GetSubject(msg.get())) {
        *answer = std::move(msg);
        return NATS_OK;
      }
    }
  }

  const Options& options;
  Resolver& resolver;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Job> jobs;  // guarded by mu
  bool stop = false;     // guarded by mu
  // The connection thread's own.
  natsConnection* nc = nullptr;
  natsSubscription* sub = nullptr;  // on inbox_subject.*
  // A connect abandoned at its deadline whose thread has not returned yet.
  std::shared_ptr<ConnectAttempt> hanging_connect;
  std::string inbox_subject;
  uint64_t requests = 0;
  std::optional<std::string> failure;
  std::chrono::steady_clock::time_point retry_at;
  Duration backoff = kFirstBackoff;
  std::thread thread;  // last: it starts with everything above made
};

NatsTransport::NatsTransport(Options options) : options_(options) {
  if (options_.resolver == nullptr) {
    own_resolver_ = std::make_unique<SystemResolver>(options_.attempt_timeout);
    resolver_ = own_resolver_.get();
  } else {
    resolver_ = options_.resolver;
  }
}

NatsTransport::~NatsTransport() {
  std::map<std::string, std::unique_ptr<Connection>> connections;
  {
    std::lock_guard lock(mu_);
    connections.swap(connections_);
  }
  // Each joins its thread, ending what it had not started; outside the lock, as a send's
  // `done` may call Start.
  connections.clear();
}

void NatsTransport::Start(Outgoing request, Done done) {
  std::lock_guard lock(mu_);
  auto& connection = connections_[KeyOf(request)];
  if (!connection) connection = std::make_unique<Connection>(options_, *resolver_);
  connection->Push(std::move(request), std::move(done));
}

void NatsTransport::CancelUnstarted() {
  std::lock_guard lock(mu_);
  for (auto& [key, connection] : connections_) connection->CancelUnstarted();
}

}  // namespace webhookd
