#include "worker/kafka_transport.h"

#include <librdkafka/rdkafka.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <syslog.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "net/broker_url.h"
#include "net/resolver.h"
#include "worker/kafka_broker_cap.h"

namespace webhookd {

namespace {

// How long the producer's thread waits in rd_kafka_poll while messages are in flight: a
// message Start hands over meanwhile waits at most this long to be produced.
constexpr int kPollMs = 10;

// The largest answer librdkafka takes from a broker (its default is 100 MB, taken into one
// buffer as soon as an answer's size says so, and a Metadata answer's parse asks four times
// that again): a producer's answers are small (a cluster of at most 16 brokers, the
// metadata of the topics it produces to), and 5 MiB stays within a connection's 16 MiB.
constexpr int kMaxResponseBytes = 1024 * 1024;

const std::string* FindHeader(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return &value;
  }
  return nullptr;
}

// The message key: the ordering key keeps a fifo key's messages on one partition, and the
// webhook-id otherwise spreads messages while keeping a message's retries on one.
const std::string* MessageKey(const Headers& headers) {
  if (const std::string* key = FindHeader(headers, "webhook-ordering-key")) return key;
  return FindHeader(headers, "webhook-id");
}

std::string BootstrapServers(const BrokerUrl& url) {
  std::string servers;
  for (const HostPort& host : url.hosts) {
    if (!servers.empty()) servers += ',';
    const bool v6 = host.host.find(':') != std::string::npos;
    servers += (v6 ? "[" + host.host + "]" : host.host) + ':' + std::to_string(host.port);
  }
  return servers;
}

// An addrinfo of the resolve callback's own, freed by FreeAddresses alone.
struct AddressNode {
  addrinfo ai{};
  sockaddr_storage storage{};
};

addrinfo* NewAddress(const IpAddress& address, int port, const addrinfo& hints) {
  auto* node = new AddressNode;
  node->ai.ai_socktype = hints.ai_socktype;
  node->ai.ai_protocol = hints.ai_protocol;
  node->ai.ai_addr = reinterpret_cast<sockaddr*>(&node->storage);
  if (address.v6) {
    auto* sa = reinterpret_cast<sockaddr_in6*>(&node->storage);
    sa->sin6_family = AF_INET6;
    sa->sin6_port = htons(static_cast<uint16_t>(port));
    std::memcpy(&sa->sin6_addr, address.bytes.data(), 16);
    node->ai.ai_family = AF_INET6;
    node->ai.ai_addrlen = sizeof(sockaddr_in6);
  } else {
    auto* sa = reinterpret_cast<sockaddr_in*>(&node->storage);
    sa->sin_family = AF_INET;
    sa->sin_port = htons(static_cast<uint16_t>(port));
    std::memcpy(&sa->sin_addr, address.bytes.data(), 4);
    node->ai.ai_family = AF_INET;
    node->ai.ai_addrlen = sizeof(sockaddr_in);
  }
  return &node->ai;
}

void FreeAddresses(addrinfo* list) {
  while (list != nullptr) {
    addrinfo* next = list->ai_next;
    // ai is AddressNode's first member, so the node starts where it does.
    delete reinterpret_cast<AddressNode*>(list);
    list = next;
  }
}

LogLevel LevelOf(int syslog_level) {
  if (syslog_level <= LOG_ERR) return LogLevel::kWarn;
  if (syslog_level <= LOG_NOTICE) return LogLevel::kInfo;
  return LogLevel::kDebug;
}

class KafkaSession final : public BrokerSession {
 public:
  KafkaSession(const BrokerOptions& options, Resolver& resolver)
      : options(options), resolver(resolver) {}

  ~KafkaSession() override { Close(); }

  KafkaSession(const KafkaSession&) = delete;
  KafkaSession& operator=(const KafkaSession&) = delete;

  bool Joins(const Outgoing&) override { return true; }

  void Begin(const Outgoing& out, Ticket ticket, Answers& answers) override {
    if (auto failed = Produce(out, ticket)) answers.push_back({ticket, std::move(*failed)});
    Collect(answers);
  }

  // Reports come only out of rd_kafka_poll; it is called in short slices so that a
  // message Start hands over meanwhile waits at most one to be produced.
  void Await(std::chrono::steady_clock::time_point until, Answers& answers) override {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    const int wait = static_cast<int>(std::clamp<int64_t>(left.count(), 0, kPollMs));
    if (rk == nullptr) {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait));
      return;
    }
    if (cap->Enter()) {
      rd_kafka_poll(rk, wait);
      cap->Leave();
    }
    if (cap->tripped()) Trip();
    Collect(answers);
  }

  // librdkafka looks for expired messages about once a second, and a message queued for a
  // broker that is down may wait for two of those looks, so its own timeout report can
  // come well after the attempt timeout. The attempt ends at its deadline instead, in the
  // same words; librdkafka drops the message soon after (message.timeout.ms is the same).
  void Expire(std::span<const Ticket> expired, Answers& answers) override {
    for (Ticket ticket : expired) {
      if (in_flight.erase(ticket) == 0) continue;
      SendResult r = BrokerFailure("kafka: " +
                                   std::string(rd_kafka_err2str(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)));
      r.timed_out = true;
      answers.push_back({ticket, std::move(r)});
    }
  }

 private:
  void Collect(Answers& answers) {
    std::move(reports.begin(), reports.end(), std::back_inserter(answers));
    reports.clear();
  }

  // Every message still in flight gets its report now, as purged.
  void Close() {
    if (rk == nullptr) return;
    if (cap->Enter()) {
      rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      cap->Leave();
    }
    for (int i = 0; i < 100 && !in_flight.empty() && cap->Enter(); ++i) {
      rd_kafka_poll(rk, kPollMs);
      cap->Leave();
    }
    if (cap->tripped()) {
      Trip();
      return;
    }
    Destroy("kafka: the producer ended before the message's delivery report");
  }

  // The cluster named more brokers than the cap: the producer goes, with every message it
  // held, and the next is made only after a backoff (ReconnectBackoff), so a cluster that
  // does it again costs a producer's threads for a moment at a time.
  void Trip() {
    Log(LogLevel::kWarn, "kafka: a cluster named more brokers than a producer may have",
        {{"producer", rd_kafka_name(rk)}});
    backoff.Lost(KafkaBrokerCap::TrippedError(), false, std::chrono::steady_clock::now());
    Destroy(KafkaBrokerCap::TrippedError());
  }

  // Ends the producer; a message still in flight is answered with `error`.
  void Destroy(const std::string& error) {
    cap->Release();
    rd_kafka_destroy(rk);
    rk = nullptr;
    cap.reset();
    // Purged messages are reported by then, unless the producer tripped its cap; this
    // keeps each answered once.
    for (Ticket ticket : in_flight) reports.push_back({ticket, BrokerFailure(error)});
    in_flight.clear();
  }

  static int64_t ToMillis(Duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  }

  // nullopt when handed to librdkafka (its report answers it); else the answer now.
  std::optional<SendResult> Produce(const Outgoing& out, Ticket ticket) {
    auto url = BrokerUrlOf(out, Transport::kKafka, "kafka");
    if (!url) return std::move(url.error());
    const BrokerSettings broker = out.broker.value_or(BrokerSettings{});
    if (!broker.topic || broker.topic->empty()) {
      return BrokerFailure("kafka: the destination has no broker.topic");
    }
    if (rk != nullptr && cap->Enter()) {
      const bool fatal = rd_kafka_fatal_error(rk, nullptr, 0) != RD_KAFKA_RESP_ERR_NO_ERROR;
      cap->Leave();
      // An idempotent producer that lost track of its sequence numbers produces no more;
      // its messages end as purged and a new producer takes the next ones.
      if (fatal) Close();
    }
    if (rk != nullptr && cap->tripped()) Trip();
    if (rk == nullptr) {
      if (auto waiting = backoff.Waiting(std::chrono::steady_clock::now())) return waiting;
      if (auto failed = Make(*url, broker)) return failed;
    }

    const std::string* key = MessageKey(out.headers);
    std::vector<std::string> names;
    names.reserve(out.headers.size());
    for (const auto& header : out.headers) names.push_back(Lower(header.first));
    std::vector<rd_kafka_vu_t> vus;
    vus.reserve(names.size() + 5);  // add's references stay valid
    auto add = [&vus](rd_kafka_vtype_t type) -> rd_kafka_vu_t& {
      vus.push_back(rd_kafka_vu_t{});
      vus.back().vtype = type;
      return vus.back();
    };
    add(RD_KAFKA_VTYPE_TOPIC).u.cstr = broker.topic->c_str();
    add(RD_KAFKA_VTYPE_MSGFLAGS).u.i = RD_KAFKA_MSG_F_COPY;
    rd_kafka_vu_t& value = add(RD_KAFKA_VTYPE_VALUE);
    value.u.mem.ptr = const_cast<char*>(out.body.data());
    value.u.mem.size = out.body.size();
    if (key != nullptr) {
      rd_kafka_vu_t& k = add(RD_KAFKA_VTYPE_KEY);
      k.u.mem.ptr = const_cast<char*>(key->data());
      k.u.mem.size = key->size();
    }
    for (size_t i = 0; i < names.size(); ++i) {
      rd_kafka_vu_t& h = add(RD_KAFKA_VTYPE_HEADER);
      h.u.header.name = names[i].c_str();
      h.u.header.val = out.headers[i].second.data();
      h.u.header.size = static_cast<ssize_t>(out.headers[i].second.size());
    }
    // NOLINTNEXTLINE(performance-no-int-to-ptr): a tag, never dereferenced
    add(RD_KAFKA_VTYPE_OPAQUE).u.ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(ticket));

    if (!cap->Enter()) {
      Trip();
      return BrokerFailure(KafkaBrokerCap::TrippedError());
    }
    rd_kafka_error_t* error = rd_kafka_produceva(rk, vus.data(), vus.size());
    cap->Leave();
    if (error != nullptr) {
      std::string text = "kafka: " + std::string(rd_kafka_error_string(error));
      rd_kafka_error_destroy(error);
      return BrokerFailure(std::move(text));
    }
    in_flight.insert(ticket);
    return std::nullopt;
  }

  // nullopt when the producer is made.
  std::optional<SendResult> Make(const BrokerUrl& url, const BrokerSettings& broker) {
    // The bootstrap hosts are vetted here as well as in OnResolve so that a refused one
    // is refused (permanent) rather than timed out like a lost cluster.
    for (const HostPort& host : url.hosts) {
      auto addresses = VetHost(host.host, resolver, options.allow_private);
      if (!addresses && addresses.error().kind == ErrorKind::kForbidden) {
        return BrokerRefused(addresses.error());
      }
      if (!addresses) return BrokerFailure("kafka: " + addresses.error().message);
    }
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    std::string error;
    const std::string timeout = std::to_string(ToMillis(options.attempt_timeout));
    // Idempotence keeps a partition's order across librdkafka's own retries (a retried
    // batch cannot land after the one behind it, nor twice); the dispatcher sends a fifo
    // key's next message only once the last is confirmed, so per-key order needs nothing
    // more.
    bool ok = Set(conf, "bootstrap.servers", BootstrapServers(url), error) &&
              Set(conf, "client.id", "webhookd", error) && Set(conf, "acks", "all", error) &&
              Set(conf, "enable.idempotence", "true", error) &&
              Set(conf, "message.timeout.ms", timeout, error) &&
              Set(conf, "receive.message.max.bytes", std::to_string(kMaxResponseBytes), error);
    if (ok && (broker.username || broker.password)) {
      ok = Set(conf, "security.protocol", "sasl_plaintext", error) &&
           Set(conf, "sasl.mechanisms", "PLAIN", error) &&
           Set(conf, "sasl.username", broker.username.value_or(""), error) &&
           Set(conf, "sasl.password", broker.password.value_or(""), error);
    }
    if (!ok) {
      rd_kafka_conf_destroy(conf);
      return BrokerFailure("kafka: " + error);
    }
    auto made_cap = std::make_unique<KafkaBrokerCap>(static_cast<int>(url.hosts.size()));
    if (!made_cap->Install(conf, error)) {
      rd_kafka_conf_destroy(conf);
      return BrokerFailure("kafka: " + error);
    }
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_dr_msg_cb(conf, &KafkaSession::OnDelivery);
    rd_kafka_conf_set_resolve_cb(conf, &KafkaSession::OnResolve);
    rd_kafka_conf_set_log_cb(conf, &KafkaSession::OnLog);
    rd_kafka_conf_set_error_cb(conf, &KafkaSession::OnError);
    char errstr[512] = {0};
    // On success rd_kafka_new owns conf; on failure it is still ours. The brokers it makes
    // may hear from the cluster before it returns.
    made_cap->Enter();
    rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    made_cap->Leave();
    if (rk == nullptr) {
      rd_kafka_conf_destroy(conf);
      return BrokerFailure("kafka: " + std::string(errstr));
    }
    cap = std::move(made_cap);
    return std::nullopt;
  }

  // librdkafka's reason names the property and may quote its value, so a refused password
  // is told without it.
  static bool Set(rd_kafka_conf_t* conf, const char* name, const std::string& value,
                  std::string& error) {
    char errstr[512] = {0};
    if (rd_kafka_conf_set(conf, name, value.c_str(), errstr, sizeof(errstr)) == RD_KAFKA_CONF_OK) {
      return true;
    }
    error = std::strcmp(name, "sasl.password") == 0 ? "sasl.password was not accepted" : errstr;
    return false;
  }

  // On this producer's thread, inside rd_kafka_poll or rd_kafka_flush.
  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
    auto* session = static_cast<KafkaSession*>(opaque);
    const Ticket ticket = reinterpret_cast<uintptr_t>(message->_private);
    if (session->in_flight.erase(ticket) == 0) {
      // Already ended at its deadline. A confirm after all means that the attempt's retry
      // will be a second copy.
      if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        Log(LogLevel::kInfo, "kafka: a message that timed out was confirmed after all");
      }
      return;
    }
    SendResult r;
    if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      session->backoff.Connected();
      r.acknowledged = true;
      r.body = "{\"partition\":" + std::to_string(message->partition) +
               ",\"offset\":" + std::to_string(message->offset) + "}";
    } else {
      r.error = "kafka: " + std::string(rd_kafka_err2str(message->err));
      r.timed_out = message->err == RD_KAFKA_RESP_ERR__MSG_TIMED_OUT;
    }
    session->reports.push_back({ticket, std::move(r)});
  }

  // On librdkafka's broker threads, for every host it is about to connect to: the
  // private-address rule over the addresses it will use, so what it connects to is what
  // was vetted (no second lookup that could answer otherwise). A null node, service and
  // hints ask to free an earlier answer.
  static int OnResolve(const char* node, const char* service, const addrinfo* hints, addrinfo** res,
                       void* opaque) {
    if (node == nullptr && service == nullptr && hints == nullptr) {
      FreeAddresses(*res);
      *res = nullptr;
      return 0;
    }
    *res = nullptr;
    if (node == nullptr || hints == nullptr) return EAI_NONAME;
    const auto* session = static_cast<const KafkaSession*>(opaque);
    auto addresses = VetHost(node, session->resolver, session->options.allow_private);
    if (!addresses) {
      if (addresses.error().kind == ErrorKind::kForbidden) {
        Log(LogLevel::kWarn, "a Kafka broker's address is not allowed",
            {{"detail", addresses.error().message}});
        return EAI_FAIL;
      }
      return addresses.error().kind == ErrorKind::kUnavailable ? EAI_AGAIN : EAI_NONAME;
    }
    const auto port = ParseBoundedInt(service != nullptr ? service : "", 1, 65535);
    if (!port) return EAI_SERVICE;
    addrinfo** tail = res;
    for (const IpAddress& address : *addresses) {
      const int family = address.v6 ? AF_INET6 : AF_INET;
      if (hints->ai_family != AF_UNSPEC && hints->ai_family != family) continue;
      *tail = NewAddress(address, static_cast<int>(*port), *hints);
      tail = &(*tail)->ai_next;
    }
    return *res != nullptr ? 0 : EAI_NONAME;
  }

  // Only a fatal error is news: the others were logged as they happened (OnLog), and
  // without this callback librdkafka would log each a second time.
  static void OnError(rd_kafka_t* rk, int err, const char* reason, void*) {
    if (err != RD_KAFKA_RESP_ERR__FATAL) return;
    char fatal[512] = {0};
    rd_kafka_fatal_error(rk, fatal, sizeof(fatal));
    Log(LogLevel::kWarn, "kafka: the producer failed for good and will be made again",
        {{"producer", rd_kafka_name(rk)}, {"detail", fatal[0] != 0 ? fatal : reason}});
  }

  static void OnLog(const rd_kafka_t* rk, int level, const char* facility, const char* text) {
    const LogLevel ours = LevelOf(level);
    if (!LogEnabled(ours)) return;
    Log(ours, "kafka", {{"producer", rd_kafka_name(rk)}, {"facility", facility}, {"detail", text}});
  }

  const BrokerOptions& options;
  Resolver& resolver;
  rd_kafka_t* rk = nullptr;
  std::unique_ptr<KafkaBrokerCap> cap;  // rk's; every call into rk goes through it
  ReconnectBackoff backoff{"kafka"};    // after a producer tripped its cap
  std::set<Ticket> in_flight;           // handed to librdkafka, not yet reported or expired
  Answers reports;                      // what OnDelivery reported, for the next Collect
};

}  // namespace

KafkaTransport::KafkaTransport(Options options)
    : BrokerConnections(std::move(options), [](const BrokerOptions& o, Resolver& r) {
        return std::make_unique<KafkaSession>(o, r);
      }) {}

}  // namespace webhookd
