#include "worker/nats_transport.h"

#include <nats/nats.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <expected>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
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

// libnats takes milliseconds, and reads 0 as "its default" or "do not wait".
int64_t Millis(Duration d) {
  return std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
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
    const std::optional<std::string> type = EventTypeOf(out.body);
    if (!type) {
      return std::unexpected(
          "nats: the destination has no broker.subject and the body no string \"type\"");
    }
    subject = "webhooks." + *type;
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

// The abandoned connects' threads against the process's exit. libssl registers
// OpenSSL's exit handler when it loads, before anything of ours; the one registered here
// runs before it (atexit handlers run in reverse) and, under the lock, marks the exit: a
// thread that frees a connect's TLS context after that crashed on OpenSSL's freed locks
// (under ThreadSanitizer, 1 run in 4 of the stalled-handshake test), so from then on it
// frees nothing and the process's end takes it all.
struct ConnectThreads {
  std::mutex mu;
  bool exiting = false;  // guarded by mu
  std::atomic<int> running{0};

  static ConnectThreads& Get() {
    // Never destroyed: a detached thread may use it while the process exits.
    static auto* threads = [] {
      auto* t = new ConnectThreads;
      std::atexit([] {
        std::lock_guard lock(Get().mu);
        Get().exiting = true;
      });
      return t;
    }();
    return *threads;
  }
};

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
    ConnectThreads& threads = ConnectThreads::Get();
    ++threads.running;
    std::thread([attempt, &threads] {
      natsConnection* nc = nullptr;
      const natsStatus status = natsConnection_Connect(&nc, attempt->options.get());
      const std::string words = status == NATS_OK ? "" : Words(status);
      std::unique_lock lock(attempt->mu);
      if (attempt->abandoned) {
        // The last owner: what it holds is freed here, unless the process is exiting.
        std::lock_guard exit_lock(threads.mu);
        if (!threads.exiting) {
          if (nc != nullptr) natsConnection_Destroy(nc);
          attempt->options.reset();
        } else {
          static_cast<void>(attempt->options.release());
        }
        attempt->finished = true;
        --threads.running;
        return;
      }
      --threads.running;
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
    return BrokerFailure("nats: the answer on subject '" + subject + "' is not a JetStream PubAck");
  }
  if (const auto error = ack.find("error"); error != ack.end()) {
    const auto description = error->is_object() ? error->find("description") : error->end();
    return BrokerFailure("nats: " + (description != error->end() && description->is_string()
                                         ? description->get<std::string>()
                                         : error->dump()));
  }
  const auto stream = ack.find("stream");
  const auto seq = ack.find("seq");
  if (stream == ack.end() || !stream->is_string() || seq == ack.end() ||
      !seq->is_number_unsigned()) {
    return BrokerFailure("nats: the answer on subject '" + subject + "' is not a JetStream PubAck");
  }
  nlohmann::json body = {{"stream", *stream}, {"seq", *seq}};
  if (ack.value("duplicate", false)) body["duplicate"] = true;
  SendResult r;
  r.acknowledged = true;
  r.body = body.dump();
  return r;
}

// A request published and not yet answered.
struct Pending {
  Ticket ticket = 0;
  std::string subject;
};

class NatsSession final : public BrokerSession {
 public:
  NatsSession(const BrokerOptions& options, Resolver& resolver)
      : options_(options), resolver_(resolver) {}

  // The libnats connection is made, used and destroyed on the connection's thread alone,
  // so its own threads are joined before that one ends.
  ~NatsSession() override {
    Close();
    nats_ReleaseThreadMemory();
  }

  NatsSession(const NatsSession&) = delete;
  NatsSession& operator=(const NatsSession&) = delete;

  // A "no responders" answer does not say which request it is for (libnats drops its
  // subject), so requests in flight together share one subject: such an answer is then
  // the oldest one's, and any other would get one too.
  bool Joins(const Outgoing& next) override {
    if (pending_.empty()) return true;
    auto subject = SubjectOf(next, next.broker.value_or(BrokerSettings{}));
    return !subject || *subject == subject_;  // one with no subject is answered at once
  }

  void Begin(const Outgoing& out, Ticket ticket, Answers& answers) override {
    auto url = BrokerUrlOf(out, Transport::kNats, "nats");
    if (!url) {
      answers.push_back({ticket, std::move(url.error())});
      return;
    }
    const BrokerSettings broker = out.broker.value_or(BrokerSettings{});
    auto subject = SubjectOf(out, broker);
    if (!subject) {
      answers.push_back({ticket, BrokerFailure(subject.error())});
      return;
    }
    if (auto failed = Connect(*url, broker, answers)) {
      answers.push_back({ticket, std::move(*failed)});
      return;
    }
    const uint64_t request = ++requests_;
    auto msg = MakeMessage(*subject, inbox_subject_ + "." + std::to_string(request), out);
    if (!msg) {
      answers.push_back({ticket, BrokerFailure(msg.error())});
      return;
    }
    if (natsStatus s = natsConnection_PublishMsg(nc_, msg->get()); s != NATS_OK) {
      // Too big for the server is this message's fault, not the connection's.
      answers.push_back({ticket, s == NATS_MAX_PAYLOAD
                                     ? BrokerFailure(Words(s))
                                     : Lost(WithoutPassword(Words(s), broker), false, answers)});
      return;
    }
    subject_ = *subject;
    pending_.emplace(request, Pending{ticket, *subject});
  }

  void Await(std::chrono::steady_clock::time_point until, Answers& answers) override {
    if (nc_ == nullptr || pending_.empty()) {
      std::this_thread::sleep_until(until);  // nothing of ours in flight: cannot happen
      return;
    }
    // The first answer is waited for; those already queued after it are read at once.
    int64_t wait =
        Millis(std::chrono::duration_cast<Duration>(until - std::chrono::steady_clock::now()));
    for (;;) {
      natsMsg* raw = nullptr;
      const natsStatus s = natsSubscription_NextMsg(&raw, sub_, wait);
      Msg msg(raw);
      switch (s) {
        case NATS_OK:
          OnAnswer(msg.get(), answers);
          break;
        case NATS_NO_RESPONDERS: {
          // No stream listens on the subject; the connection itself is fine.
          auto oldest = pending_.begin();
          answers.push_back({oldest->second.ticket, BrokerFailure("nats: no stream for subject '" +
                                                                  oldest->second.subject + "'")});
          pending_.erase(oldest);
          break;
        }
        case NATS_TIMEOUT:
          return;
        default:
          Lost(WithoutPassword(Words(s), broker_), false, answers);
          return;
      }
      // A server that sends answers without end (to requests it never had, say) must not
      // keep the thread from its deadlines: the reading stops at `until` all the same.
      uint64_t queued = 0;
      if (pending_.empty() || std::chrono::steady_clock::now() >= until ||
          natsSubscription_QueuedMsgs(sub_, &queued) != NATS_OK || queued == 0) {
        return;
      }
      wait = 1;
    }
  }

  // A server that acknowledges nothing within the attempt timeout is taken for lost.
  void Expire(std::span<const Ticket>, Answers& answers) override {
    Lost("nats: no PubAck within the attempt timeout", /*timed_out=*/true, answers);
  }

 private:
  // The connection goes first: its destroy joins libnats's reader thread. libnats 3.4's
  // reader looks a subscription up and locks it without holding a reference (mended in
  // 3.6), so a subscription destroyed while the reader runs is read after it is freed,
  // which a server that keeps sending made happen. Ours is the last reference once the
  // reader has stopped.
  void Close() {
    if (nc_ != nullptr) natsConnection_Destroy(nc_);
    nc_ = nullptr;
    if (sub_ != nullptr) natsSubscription_Destroy(sub_);
    sub_ = nullptr;
  }

  void AnswerAll(const SendResult& result, Answers& answers) {
    for (auto& [request, pending] : pending_) answers.push_back({pending.ticket, result});
    pending_.clear();
  }

  // A failure of the connection: closed, every request in flight answered with `error`,
  // and not made again before the backoff ends. `error` as an answer.
  SendResult Lost(std::string error, bool timed_out, Answers& answers) {
    Close();
    SendResult r = backoff_.Lost(std::move(error), timed_out, std::chrono::steady_clock::now());
    AnswerAll(r, answers);
    return r;
  }

  // An answer on the inbox: the PubAck (or JetStream's error) for the request its subject
  // names. One for a request no longer in flight is dropped (a subject may have more
  // responders than its stream).
  void OnAnswer(const natsMsg* msg, Answers& answers) {
    std::string_view subject = natsMsg_GetSubject(msg);
    if (!subject.starts_with(inbox_subject_ + ".")) return;
    subject.remove_prefix(inbox_subject_.size() + 1);
    uint64_t request = 0;
    if (std::from_chars(subject.data(), subject.data() + subject.size(), request).ptr !=
        subject.data() + subject.size()) {
      return;
    }
    auto it = pending_.find(request);
    if (it == pending_.end()) return;
    answers.push_back({it->second.ticket, FromPubAck(msg, it->second.subject)});
    pending_.erase(it);
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
    const int64_t timeout = Millis(options_.attempt_timeout);
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

  // nullopt when connected; else the answer.
  std::optional<SendResult> Connect(const BrokerUrl& url, const BrokerSettings& broker,
                                    Answers& answers) {
    if (nc_ != nullptr && !natsConnection_IsClosed(nc_)) return std::nullopt;
    if (nc_ != nullptr) {
      // The server ended it since the last message (libnats does not reconnect): made
      // again now, and what was in flight on it will get no answer.
      AnswerAll(BrokerFailure("nats: the server closed the connection"), answers);
      Close();
    }
    if (auto waiting = backoff_.Waiting(std::chrono::steady_clock::now())) return waiting;
    broker_ = broker;
    const HostPort& host = url.hosts.front();
    auto addresses = VetHost(host.host, resolver_, options_.allow_private);
    if (!addresses) {
      if (addresses.error().kind == ErrorKind::kForbidden) return BrokerRefused(addresses.error());
      return Lost("nats: " + addresses.error().message, false, answers);
    }
    // One abandoned connect at a time: a server that stalls every handshake holds one
    // thread, not one per backoff.
    if (hanging_connect_ && hanging_connect_->Hanging()) {
      return Lost("nats: the last connection's handshake has not ended", false, answers);
    }
    hanging_connect_.reset();
    auto opts = MakeOptions(url, *addresses, broker);
    if (!opts) return Lost(opts.error(), false, answers);
    auto attempt = ConnectAttempt::Start(std::move(*opts));
    // libnats's own timeout covers the TCP connect and the INFO; a second more for the rest.
    if (!attempt->WaitUntil(std::chrono::steady_clock::now() + options_.attempt_timeout +
                            std::chrono::seconds(1))) {
      hanging_connect_ = std::move(attempt);
      return Lost("nats: no connection within the attempt timeout (the handshake stalled)",
                  /*timed_out=*/true, answers);
    }
    if (attempt->status != NATS_OK) {
      return Lost(WithoutPassword(attempt->words, broker), false, answers);
    }
    nc_ = attempt->nc;
    // One inbox for the connection's answers, a subject under it for each request.
    natsInbox* inbox = nullptr;
    natsStatus s = natsInbox_Create(&inbox);
    if (s == NATS_OK) {
      inbox_subject_ = inbox;
      natsInbox_Destroy(inbox);
      s = natsConnection_SubscribeSync(&sub_, nc_, (inbox_subject_ + ".*").c_str());
    }
    if (s != NATS_OK) return Lost(WithoutPassword(Words(s), broker), false, answers);
    backoff_.Connected();
    return std::nullopt;
  }

  // The message to publish: the body, every header, and Nats-Msg-Id from webhook-id.
  static std::expected<Msg, std::string> MakeMessage(const std::string& subject,
                                                     const std::string& reply,
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

  const BrokerOptions& options_;
  Resolver& resolver_;
  ReconnectBackoff backoff_{"nats"};
  BrokerSettings broker_;  // the credentials connected with, kept out of errors
  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;  // on inbox_subject_.*
  // A connect abandoned at its deadline whose thread has not returned yet.
  std::shared_ptr<ConnectAttempt> hanging_connect_;
  std::string inbox_subject_;
  uint64_t requests_ = 0;
  std::string subject_;                  // that of every request in flight
  std::map<uint64_t, Pending> pending_;  // by the number ending its reply subject
};

}  // namespace

NatsTransport::NatsTransport(Options options)
    : BrokerConnections(std::move(options), [](const BrokerOptions& o, Resolver& r) {
        return std::make_unique<NatsSession>(o, r);
      }) {}

int NatsTransport::AbandonedConnects() { return ConnectThreads::Get().running.load(); }

}  // namespace webhookd
