#include "worker/amqp_transport.h"

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "net/address.h"
#include "net/broker_url.h"
#include "net/resolver.h"
#include "worker/socket_watchdog.h"

namespace webhookd {

namespace {

constexpr amqp_channel_t kChannel = 1;
constexpr int kFrameMax = 131072;  // librabbitmq's default
constexpr uint8_t kPersistent = 2;
// How far past its own deadline a call into librabbitmq may run before the watchdog shuts
// its socket down: the library's deadlines do not hold against a broker that keeps sending.
constexpr auto kOverrun = std::chrono::seconds(1);
constexpr std::string_view kHeld = "amqp: the broker held the connection past the attempt timeout";

timeval ToTimeval(Duration d) {
  const auto us =
      std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

// A view of `s` for librabbitmq, which takes non-const pointers it only reads.
amqp_bytes_t Bytes(const std::string& s) {
  return amqp_bytes_t{s.size(), const_cast<char*>(s.data())};
}

std::string Text(amqp_bytes_t b) { return std::string(static_cast<const char*>(b.bytes), b.len); }

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

std::unique_ptr<BIO, BioFree> Pem(const std::string& text) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Every certificate of `pem` trusted by `ctx`; false when it holds none.
bool TrustCas(SSL_CTX* ctx, const std::string& pem) {
  auto bio = Pem(pem);
  int added = 0;
  while (std::unique_ptr<X509, X509Free> cert{
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) {
    if (X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), cert.get()) == 1) ++added;
  }
  ERR_clear_error();  // the end of the text reads as an error
  return added > 0;
}

bool UseClientCertificate(SSL_CTX* ctx, const std::string& certificate, const std::string& key) {
  auto cert_bio = Pem(certificate);
  std::unique_ptr<X509, X509Free> cert{
      PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)};
  auto key_bio = Pem(key);
  std::unique_ptr<EVP_PKEY, KeyFree> pkey{
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr)};
  if (!cert || !pkey) return false;
  if (SSL_CTX_use_certificate(ctx, cert.get()) != 1) return false;
  while (X509* chain = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add_extra_chain_cert(ctx, chain) != 1) X509_free(chain);
  }
  ERR_clear_error();
  return SSL_CTX_use_PrivateKey(ctx, pkey.get()) == 1;
}

// An amqps socket: the broker's certificate must chain to the destination's CA (the
// system's when it names none) and name the URL's host. librabbitmq would check the name
// against what it connects to, which is the vetted address, so OpenSSL checks the host
// during the handshake instead. nullptr with `error` set when the settings are unusable.
amqp_socket_t* NewTlsSocket(amqp_connection_state_t conn, const std::string& host,
                            const std::optional<DestinationTls>& tls, std::string& error) {
  amqp_socket_t* socket = amqp_ssl_socket_new(conn);
  if (socket == nullptr) {
    error = "cannot make a TLS socket";
    return nullptr;
  }
  amqp_ssl_socket_set_verify_peer(socket, 1);
  amqp_ssl_socket_set_verify_hostname(socket, 0);
  auto* ctx = static_cast<SSL_CTX*>(amqp_ssl_socket_get_context(socket));
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
  const int named = ParseIpLiteral(host)
                        ? X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str())
                        : X509_VERIFY_PARAM_set1_host(param, host.data(), host.size());
  if (named != 1) {
    error = "cannot check the certificate's name";
  } else if (tls && tls->ca_certificate) {
    if (!TrustCas(ctx, *tls->ca_certificate)) error = "tls.ca_certificate holds no certificate";
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    error = "cannot load the system's CA certificates";
  }
  if (error.empty() && tls && tls->client_certificate && tls->client_key &&
      !UseClientCertificate(ctx, *tls->client_certificate, *tls->client_key)) {
    error = "the client certificate or its key cannot be used";
  }
  return error.empty() ? socket : nullptr;
}

// The URL's path is the vhost; "%2F" is how a URL spells the vhost "/".
std::string DecodeVhost(std::string_view path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    int byte = 0;
    if (path[i] == '%' && i + 3 <= path.size() &&
        std::from_chars(path.data() + i + 1, path.data() + i + 3, byte, 16).ptr ==
            path.data() + i + 3) {
      out += static_cast<char>(byte);
      i += 2;
    } else {
      out += path[i];
    }
  }
  return out;
}

// What a close method says, as RabbitMQ words it ("NOT_FOUND - no exchange ...") with
// its code.
std::string CloseText(amqp_bytes_t text, int code) {
  return Text(text) + " (" + std::to_string(code) + ")";
}

// The broker's words for a failed RPC, or the library's when the broker said nothing.
std::string RpcError(const amqp_rpc_reply_t& reply) {
  switch (reply.reply_type) {
    case AMQP_RESPONSE_NORMAL:
      return "";
    case AMQP_RESPONSE_NONE:
      return "no reply";
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
      return amqp_error_string2(reply.library_error);
    case AMQP_RESPONSE_SERVER_EXCEPTION:
      if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
        const auto* m = static_cast<const amqp_connection_close_t*>(reply.reply.decoded);
        return CloseText(m->reply_text, m->reply_code);
      }
      if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
        const auto* m = static_cast<const amqp_channel_close_t*>(reply.reply.decoded);
        return CloseText(m->reply_text, m->reply_code);
      }
      return "an unexpected method from the broker";
  }
  return "an unknown reply";
}

bool TimedOut(const amqp_rpc_reply_t& reply) {
  return reply.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
         reply.library_error == AMQP_STATUS_TIMEOUT;
}

// Each header as a long string of the headers table; `names` holds the lowercased names
// the entries point into (reserved first, so that none moves).
std::vector<amqp_table_entry_t> HeaderTable(const Headers& headers,
                                            std::vector<std::string>& names) {
  names.clear();
  names.reserve(headers.size());
  std::vector<amqp_table_entry_t> entries;
  for (const auto& [name, value] : headers) {
    names.push_back(Lower(name));
    amqp_table_entry_t entry{};
    entry.key = Bytes(names.back());
    entry.value.kind = AMQP_FIELD_KIND_UTF8;
    entry.value.value.bytes = Bytes(value);
    entries.push_back(entry);
  }
  return entries;
}

std::optional<std::string> HeaderValue(const Headers& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return std::nullopt;
}

// A message published on the channel and not yet confirmed.
struct Pending {
  Ticket ticket = 0;
  // What a basic.return names the message by: its message-id (the webhook-id), exchange
  // and routing key.
  std::string message_id;
  std::string exchange;
  std::string routing_key;
  std::optional<std::string> returned;             // the basic.return's words, once one came for it
  std::chrono::steady_clock::time_point deadline;  // its attempt's
};

// A basic.return whose content header, which holds the message-id, is still to come.
struct Return {
  std::string words;
  std::string exchange;
  std::string routing_key;
};

class AmqpSession final : public BrokerSession {
 public:
  AmqpSession(const BrokerOptions& options, Resolver& resolver)
      : options_(options), resolver_(resolver) {}

  ~AmqpSession() override {
    // A connection is closed politely (its channel with it), so the broker logs no lost
    // client; a broker that does not answer holds up the shutdown a second at most.
    if (conn_ != nullptr) {
      timeval tv{1, 0};
      amqp_set_rpc_timeout(conn_, &tv);
      SocketWatchdog::Armed armed = Guard(std::chrono::seconds(1));
      amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
    }
    Close();
  }

  AmqpSession(const AmqpSession&) = delete;
  AmqpSession& operator=(const AmqpSession&) = delete;

  bool Joins(const Outgoing&) override { return true; }

  void Begin(const Outgoing& out, Ticket ticket, Answers& answers) override {
    auto url = BrokerUrlOf(out, Transport::kAmqp, "amqp");
    if (!url) {
      answers.push_back({ticket, std::move(url.error())});
      return;
    }
    const BrokerSettings broker = out.broker.value_or(BrokerSettings{});
    const std::string exchange = broker.exchange.value_or("");
    std::optional<std::string> routing_key = broker.routing_key;
    if (!routing_key) routing_key = EventTypeOf(out.body);
    if (!routing_key) {
      answers.push_back(
          {ticket, BrokerFailure("amqp: no broker.routing_key and the body has no type")});
      return;
    }
    // The attempt's one deadline, for every address tried, the login and every write; a
    // write that would hold up a message published before it ends at that one's deadline.
    auto deadline = std::chrono::steady_clock::now() + options_.attempt_timeout;
    if (!pending_.empty()) deadline = std::min(deadline, pending_.begin()->second.deadline);
    if (auto failed = Connect(*url, out, deadline, answers)) {
      answers.push_back({ticket, std::move(*failed)});
      return;
    }
    const std::string id = HeaderValue(out.headers, "webhook-id").value_or("");
    if (const int status = Publish(out, id, exchange, *routing_key, deadline);
        status != AMQP_STATUS_OK) {
      answers.push_back({ticket, Lost(Words(status), watchdog_.Fired(), answers)});
      return;
    }
    pending_.emplace(next_tag_++,
                     Pending{ticket, id, exchange, *routing_key, std::nullopt, deadline});
  }

  void Await(std::chrono::steady_clock::time_point until, Answers& answers) override {
    if (conn_ == nullptr || pending_.empty()) {
      std::this_thread::sleep_until(until);  // nothing of ours in flight: cannot happen
      return;
    }
    SocketWatchdog::Armed armed(watchdog_, amqp_get_sockfd(conn_), until + kOverrun);
    // The first frame is waited for; those already sent after it are read without waiting.
    timeval tv =
        ToTimeval(std::chrono::duration_cast<Duration>(until - std::chrono::steady_clock::now()));
    for (;;) {
      amqp_frame_t frame{};
      const int status = amqp_simple_wait_frame_noblock(conn_, &frame, &tv);
      if (status == AMQP_STATUS_TIMEOUT) return;
      if (status != AMQP_STATUS_OK) {
        Lost(Words(status), watchdog_.Fired(), answers);
        return;
      }
      Handle(frame, answers);
      // Every frame read is kept in the connection's pool until released: a broker that
      // streams frames would otherwise grow it without end. Handle keeps nothing of it.
      if (conn_ != nullptr) amqp_maybe_release_buffers(conn_);
      // A broker that sends frames without end (answers to nothing, say) must not keep
      // the thread from its deadlines: the reading stops at `until` all the same.
      if (conn_ == nullptr || pending_.empty() || std::chrono::steady_clock::now() >= until) {
        return;
      }
      tv = timeval{0, 0};
    }
  }

  // A broker that confirms nothing within the attempt timeout is taken for lost.
  void Expire(std::span<const Ticket>, Answers& answers) override {
    Lost("amqp: no confirm from the broker within the attempt timeout", true, answers);
  }

 private:
  // The watchdog armed for a call that may take `allowed`, and kOverrun more.
  SocketWatchdog::Armed Guard(Duration allowed) {
    return SocketWatchdog::Armed(watchdog_, amqp_get_sockfd(conn_),
                                 std::chrono::steady_clock::now() + allowed + kOverrun);
  }

  // The watchdog armed for a call that must end by `deadline`, and kOverrun more.
  SocketWatchdog::Armed GuardUntil(std::chrono::steady_clock::time_point deadline) {
    return SocketWatchdog::Armed(watchdog_, amqp_get_sockfd(conn_), deadline + kOverrun);
  }

  // What is left of `deadline`, in `tv`; false when less than a millisecond is.
  static bool Left(std::chrono::steady_clock::time_point deadline, timeval& tv) {
    const auto left =
        std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now());
    if (left < std::chrono::milliseconds(1)) return false;
    tv = ToTimeval(left);
    return true;
  }

  // The words for a failed call: the library's, unless the watchdog ended it.
  std::string Words(int status) {
    return watchdog_.Fired() ? std::string(kHeld)
                             : "amqp: " + std::string(amqp_error_string2(status));
  }

  // The watchdog is disarmed first: the socket it would shut down is closed here, and its
  // number may be another's a moment later.
  void Close() {
    watchdog_.Disarm();
    if (conn_ != nullptr) amqp_destroy_connection(conn_);
    conn_ = nullptr;
    channel_open_ = false;
    return_.reset();
  }

  // A failure of the connection: closed, every message in flight answered with `error`,
  // and not made again before the backoff ends. `error` as an answer.
  SendResult Lost(std::string error, bool timed_out, Answers& answers) {
    Close();
    SendResult r = backoff_.Lost(std::move(error), timed_out, std::chrono::steady_clock::now());
    AnswerAll(r, answers);
    return r;
  }

  void AnswerAll(const SendResult& result, Answers& answers) {
    for (auto& [tag, pending] : pending_) answers.push_back({pending.ticket, result});
    pending_.clear();
  }

  // nullopt when connected with a channel in confirm mode; else the answer.
  std::optional<SendResult> Connect(const BrokerUrl& url, const Outgoing& out,
                                    std::chrono::steady_clock::time_point deadline,
                                    Answers& answers) {
    if (conn_ != nullptr) return channel_open_ ? std::nullopt : OpenChannel(deadline, answers);
    const auto now = std::chrono::steady_clock::now();
    if (auto waiting = backoff_.Waiting(now)) return waiting;
    const BrokerSettings broker = out.broker.value_or(BrokerSettings{});
    const HostPort& host = url.hosts.front();
    auto addresses = VetHost(host.host, resolver_, options_.allow_private);
    if (!addresses) {
      if (addresses.error().kind == ErrorKind::kForbidden) return BrokerRefused(addresses.error());
      return Lost("amqp: " + addresses.error().message, false, answers);
    }
    int status = AMQP_STATUS_HOSTNAME_RESOLUTION_FAILED;
    for (const IpAddress& address : *addresses) {
      timeval tv{};
      if (!Left(deadline, tv)) {
        status = AMQP_STATUS_TIMEOUT;
        break;
      }
      conn_ = amqp_new_connection();
      std::string tls_error;
      amqp_socket_t* socket =
          url.tls ? NewTlsSocket(conn_, host.host, out.tls, tls_error) : amqp_tcp_socket_new(conn_);
      if (!tls_error.empty()) {
        Close();
        return BrokerFailure("amqp: " + tls_error);
      }
      status = socket == nullptr
                   ? AMQP_STATUS_NO_MEMORY
                   : amqp_socket_open_noblock(socket, address.ToString().c_str(), host.port, &tv);
      if (status == AMQP_STATUS_OK) break;
      Close();
    }
    if (conn_ == nullptr) {
      return Lost("amqp: " + std::string(amqp_error_string2(status)), status == AMQP_STATUS_TIMEOUT,
                  answers);
    }
    // Without these the login and the channel's RPCs would wait for a hung broker forever.
    timeval tv{};
    if (!Left(deadline, tv))
      return Lost("amqp: " + std::string(amqp_error_string2(AMQP_STATUS_TIMEOUT)), true, answers);
    amqp_set_handshake_timeout(conn_, &tv);
    amqp_set_rpc_timeout(conn_, &tv);
    // No credentials: RabbitMQ's default user, guest/guest (which a stock RabbitMQ lets in
    // from loopback only).
    const bool anonymous = !broker.username && !broker.password;
    const std::string username = anonymous ? "guest" : broker.username.value_or("");
    const std::string password = anonymous ? "guest" : broker.password.value_or("");
    const std::string vhost = DecodeVhost(url.path);
    amqp_rpc_reply_t login{};
    {
      SocketWatchdog::Armed armed = GuardUntil(deadline);
      login = amqp_login(conn_, vhost.c_str(), 0, kFrameMax, /*heartbeat=*/0,
                         AMQP_SASL_METHOD_PLAIN, username.c_str(), password.c_str());
    }
    if (watchdog_.Fired()) return Lost(std::string(kHeld), true, answers);
    if (login.reply_type != AMQP_RESPONSE_NORMAL) {
      return Lost("amqp: login: " + RpcError(login), TimedOut(login), answers);
    }
    if (auto failed = OpenChannel(deadline, answers)) return failed;
    backoff_.Connected();
    return std::nullopt;
  }

  // The channel's confirm mode is what makes a basic.ack mean the broker took the message.
  std::optional<SendResult> OpenChannel(std::chrono::steady_clock::time_point deadline,
                                        Answers& answers) {
    amqp_rpc_reply_t reply{};
    {
      timeval tv{};
      if (!Left(deadline, tv)) {
        return Lost("amqp: opening a channel: no time left of the attempt", true, answers);
      }
      amqp_set_rpc_timeout(conn_, &tv);
      SocketWatchdog::Armed armed = GuardUntil(deadline);
      amqp_channel_open(conn_, kChannel);
      reply = amqp_get_rpc_reply(conn_);
      if (reply.reply_type == AMQP_RESPONSE_NORMAL) {
        amqp_confirm_select(conn_, kChannel);
        reply = amqp_get_rpc_reply(conn_);
      }
    }
    if (watchdog_.Fired()) return Lost(std::string(kHeld), true, answers);
    if (reply.reply_type != AMQP_RESPONSE_NORMAL) {
      return Lost("amqp: opening a channel: " + RpcError(reply), TimedOut(reply), answers);
    }
    channel_open_ = true;
    next_tag_ = 1;
    amqp_maybe_release_buffers(conn_);  // the RPCs' answers
    return std::nullopt;
  }

  int Publish(const Outgoing& out, const std::string& id, const std::string& exchange,
              const std::string& routing_key, std::chrono::steady_clock::time_point deadline) {
    std::vector<std::string> names;
    std::vector<amqp_table_entry_t> entries = HeaderTable(out.headers, names);
    const std::string content_type = "application/json";
    amqp_basic_properties_t props{};
    props._flags =
        AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_HEADERS_FLAG;
    props.content_type = Bytes(content_type);
    props.delivery_mode = kPersistent;
    props.headers = amqp_table_t{static_cast<int>(entries.size()), entries.data()};
    if (!id.empty()) {
      props._flags |= AMQP_BASIC_MESSAGE_ID_FLAG;
      props.message_id = Bytes(id);
    }
    // librabbitmq writes with no deadline: a broker that stops reading would hold it.
    SocketWatchdog::Armed armed = GuardUntil(deadline);
    return amqp_basic_publish(conn_, kChannel, Bytes(exchange), Bytes(routing_key),
                              /*mandatory=*/1, /*immediate=*/0, &props, Bytes(out.body));
  }

  void Handle(const amqp_frame_t& frame, Answers& answers) {
    if (frame.frame_type == AMQP_FRAME_HEADER) {
      if (return_) MarkReturned(frame, answers);
      return;
    }
    // A returned message's body frames are of no use here.
    if (frame.frame_type != AMQP_FRAME_METHOD) return;
    const void* decoded = frame.payload.method.decoded;
    switch (frame.payload.method.id) {
      case AMQP_BASIC_ACK_METHOD: {
        const auto* m = static_cast<const amqp_basic_ack_t*>(decoded);
        Settle(m->delivery_tag, m->multiple != 0, std::nullopt, answers);
        return;
      }
      case AMQP_BASIC_NACK_METHOD: {
        const auto* m = static_cast<const amqp_basic_nack_t*>(decoded);
        Settle(m->delivery_tag, m->multiple != 0, "amqp: the broker nacked the message", answers);
        return;
      }
      case AMQP_BASIC_RETURN_METHOD: {
        const auto* m = static_cast<const amqp_basic_return_t*>(decoded);
        std::string words = "amqp: unroutable: ";
        words.append(CloseText(m->reply_text, m->reply_code))
            .append(" for exchange '")
            .append(Text(m->exchange))
            .append("' routing key '")
            .append(Text(m->routing_key))
            .append("'");
        return_ = Return{std::move(words), Text(m->exchange), Text(m->routing_key)};
        return;
      }
      case AMQP_CHANNEL_CLOSE_METHOD: {
        const auto* m = static_cast<const amqp_channel_close_t*>(decoded);
        // The connection stays; the channel is opened again on the next message, and what
        // was in flight on this one is answered with the broker's words.
        const SendResult closed = BrokerFailure("amqp: the broker closed the channel: " +
                                                CloseText(m->reply_text, m->reply_code));
        amqp_channel_close_ok_t ok{};
        amqp_send_method(conn_, kChannel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
        channel_open_ = false;
        return_.reset();
        AnswerAll(closed, answers);
        return;
      }
      case AMQP_CONNECTION_CLOSE_METHOD: {
        const auto* m = static_cast<const amqp_connection_close_t*>(decoded);
        std::string error =
            "amqp: the broker closed the connection: " + CloseText(m->reply_text, m->reply_code);
        amqp_connection_close_ok_t ok{};
        amqp_send_method(conn_, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
        Lost(std::move(error), false, answers);
        return;
      }
      default:
        return;
    }
  }

  // With mandatory set, a message no queue took comes back as a basic.return before its
  // basic.ack. The return names no delivery tag, so the message is the oldest one in
  // flight with the returned message-id, exchange and routing key (RabbitMQ returns in
  // publish order); the return decides its answer when the ack comes.
  void MarkReturned(const amqp_frame_t& frame, Answers&) {
    const auto* props =
        static_cast<const amqp_basic_properties_t*>(frame.payload.properties.decoded);
    const std::string id = props != nullptr && (props->_flags & AMQP_BASIC_MESSAGE_ID_FLAG) != 0
                               ? Text(props->message_id)
                               : std::string();
    for (auto& [tag, pending] : pending_) {
      if (!pending.returned && pending.message_id == id && pending.exchange == return_->exchange &&
          pending.routing_key == return_->routing_key) {
        pending.returned = std::move(return_->words);
        break;
      }
    }
    return_.reset();
  }

  // A basic.ack or basic.nack: for `tag` alone, or with `multiple` for every tag up to it
  // (0 with `multiple`: every one).
  void Settle(uint64_t tag, bool multiple, const std::optional<std::string>& nacked,
              Answers& answers) {
    auto first = multiple ? pending_.begin() : pending_.find(tag);
    auto last = multiple ? (tag == 0 ? pending_.end() : pending_.upper_bound(tag))
                         : (first == pending_.end() ? first : std::next(first));
    for (auto it = first; it != last; ++it) {
      const Pending& pending = it->second;
      SendResult r;
      if (nacked) {
        r = BrokerFailure(*nacked);
      } else if (pending.returned) {
        r = BrokerFailure(*pending.returned);
      } else {
        r.acknowledged = true;
      }
      answers.push_back({pending.ticket, std::move(r)});
    }
    pending_.erase(first, last);
  }

  const BrokerOptions& options_;
  Resolver& resolver_;
  ReconnectBackoff backoff_{"amqp"};
  amqp_connection_state_t conn_ = nullptr;
  bool channel_open_ = false;
  uint64_t next_tag_ = 1;  // the channel's next delivery tag, counted as the broker does
  std::map<uint64_t, Pending> pending_;  // by delivery tag
  std::optional<Return> return_;
  // Last, so that its thread is joined before the connection goes.
  SocketWatchdog watchdog_;
};

}  // namespace

AmqpTransport::AmqpTransport(Options options)
    : BrokerConnections(std::move(options), [](const BrokerOptions& o, Resolver& r) {
        return std::make_unique<AmqpSession>(o, r);
      }) {}

}  // namespace webhookd
