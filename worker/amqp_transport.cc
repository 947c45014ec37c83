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
#include <condition_variable>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "net/address.h"
#include "net/broker_url.h"

namespace webhookd {

namespace {

constexpr auto kFirstBackoff = std::chrono::milliseconds(100);
constexpr auto kLastBackoff = std::chrono::seconds(5);
constexpr amqp_channel_t kChannel = 1;
constexpr int kFrameMax = 131072;  // librabbitmq's default
constexpr uint8_t kPersistent = 2;

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

// The connection's key: its URL, credentials and TLS settings, so that a destination
// whose password or CA changed gets a connection of its own.
std::string KeyOf(const Outgoing& out) {
  std::string key = out.url;
  if (out.broker) {
    key += '\n' + out.broker->username.value_or("") + '\n' + out.broker->password.value_or("");
  }
  if (out.tls) {
    key += '\n' + out.tls->ca_certificate.value_or("") + '\n' +
           out.tls->client_certificate.value_or("") + '\n' + out.tls->client_key.value_or("");
  }
  return key;
}

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

// The event type: the body's top-level "type" member.
std::optional<std::string> EventType(const std::string& body) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  const auto type = json.find("type");
  if (type == json.end() || !type->is_string()) return std::nullopt;
  return type->get<std::string>();
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

SendResult Failed(std::string error) {
  SendResult r;
  r.error = std::move(error);
  return r;
}

}  // namespace

struct AmqpTransport::Connection {
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
    // A connection is closed politely (its channel with it), so the broker logs no lost
    // client; a broker that does not answer holds up the shutdown a second at most.
    if (conn != nullptr) {
      timeval tv{1, 0};
      amqp_set_rpc_timeout(conn, &tv);
      amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
    }
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
    if (conn != nullptr) amqp_destroy_connection(conn);
    conn = nullptr;
    channel_open = false;
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

  // nullopt when connected with a channel in confirm mode; else the result to answer with.
  std::optional<SendResult> Connect(const BrokerUrl& url, const Outgoing& out) {
    if (conn != nullptr) return channel_open ? std::nullopt : OpenChannel();
    const BrokerSettings broker = out.broker.value_or(BrokerSettings{});
    if (failure && std::chrono::steady_clock::now() < retry_at) {
      return Failed("amqp: not connected, trying again shortly after: " + *failure);
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
      return Lost("amqp: " + addresses.error().message);
    }
    timeval tv = ToTimeval(options.attempt_timeout);
    int status = AMQP_STATUS_HOSTNAME_RESOLUTION_FAILED;
    for (const IpAddress& address : *addresses) {
      conn = amqp_new_connection();
      std::string tls_error;
      amqp_socket_t* socket =
          url.tls ? NewTlsSocket(conn, host.host, out.tls, tls_error) : amqp_tcp_socket_new(conn);
      if (!tls_error.empty()) {
        Close();
        return Failed("amqp: " + tls_error);
      }
      status = socket == nullptr
                   ? AMQP_STATUS_NO_MEMORY
                   : amqp_socket_open_noblock(socket, address.ToString().c_str(), host.port, &tv);
      if (status == AMQP_STATUS_OK) break;
      Close();
    }
    if (conn == nullptr) {
      return Lost("amqp: " + std::string(amqp_error_string2(status)),
                  status == AMQP_STATUS_TIMEOUT);
    }
    // Without these the login and the channel's RPCs would wait for a hung broker forever.
    amqp_set_handshake_timeout(conn, &tv);
    amqp_set_rpc_timeout(conn, &tv);
    // No credentials: RabbitMQ's default user, guest/guest (which a stock RabbitMQ lets in
    // from loopback only).
    const bool anonymous = !broker.username && !broker.password;
    const std::string username = anonymous ? "guest" : broker.username.value_or("");
    const std::string password = anonymous ? "guest" : broker.password.value_or("");
    const std::string vhost = DecodeVhost(url.path);
    const amqp_rpc_reply_t login =
        amqp_login(conn, vhost.c_str(), 0, kFrameMax, /*heartbeat=*/0, AMQP_SASL_METHOD_PLAIN,
                   username.c_str(), password.c_str());
    if (login.reply_type != AMQP_RESPONSE_NORMAL) {
      return Lost("amqp: login: " + RpcError(login), TimedOut(login));
    }
    if (auto failed = OpenChannel()) return failed;
    failure.reset();
    backoff = kFirstBackoff;
    return std::nullopt;
  }

  // The channel's confirm mode is what makes a basic.ack mean the broker took the message.
  std::optional<SendResult> OpenChannel() {
    amqp_channel_open(conn, kChannel);
    amqp_rpc_reply_t reply = amqp_get_rpc_reply(conn);
    if (reply.reply_type == AMQP_RESPONSE_NORMAL) {
      amqp_confirm_select(conn, kChannel);
      reply = amqp_get_rpc_reply(conn);
    }
    if (reply.reply_type != AMQP_RESPONSE_NORMAL) {
      return Lost("amqp: opening a channel: " + RpcError(reply), TimedOut(reply));
    }
    channel_open = true;
    next_tag = 1;
    return std::nullopt;
  }

  SendResult Send(const Outgoing& out) {
    auto url = ParseBrokerUrl(out.url);
    if (!url || url->transport != Transport::kAmqp) {
      return Failed("amqp: " + (url ? std::string("not an amqp URL") : url.error().message));
    }
    const BrokerSettings broker = out.broker.value_or(BrokerSettings{});
    const std::string exchange = broker.exchange.value_or("");
    std::optional<std::string> routing_key = broker.routing_key;
    if (!routing_key) routing_key = EventType(out.body);
    if (!routing_key) return Failed("amqp: no broker.routing_key and the body has no type");
    if (auto failed = Connect(*url, out)) return *failed;
    if (const int status = Publish(out, exchange, *routing_key); status != AMQP_STATUS_OK) {
      return Lost("amqp: " + std::string(amqp_error_string2(status)));
    }
    return AwaitConfirm(next_tag++, exchange, *routing_key);
  }

  int Publish(const Outgoing& out, const std::string& exchange, const std::string& routing_key) {
    std::vector<std::string> names;
    std::vector<amqp_table_entry_t> entries = HeaderTable(out.headers, names);
    const std::string content_type = "application/json";
    const std::optional<std::string> id = HeaderValue(out.headers, "webhook-id");
    amqp_basic_properties_t props{};
    props._flags =
        AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_HEADERS_FLAG;
    props.content_type = Bytes(content_type);
    props.delivery_mode = kPersistent;
    props.headers = amqp_table_t{static_cast<int>(entries.size()), entries.data()};
    if (id) {
      props._flags |= AMQP_BASIC_MESSAGE_ID_FLAG;
      props.message_id = Bytes(*id);
    }
    return amqp_basic_publish(conn, kChannel, Bytes(exchange), Bytes(routing_key),
                              /*mandatory=*/1, /*immediate=*/0, &props, Bytes(out.body));
  }

  // Waits for the broker's word on the message tagged `tag`. With mandatory set, a message
  // no queue took comes back as a basic.return before its basic.ack; the return decides.
  SendResult AwaitConfirm(uint64_t tag, const std::string& exchange,
                          const std::string& routing_key) {
    const auto deadline = std::chrono::steady_clock::now() + options.attempt_timeout;
    std::optional<std::string> returned;
    for (;;) {
      timeval tv = ToTimeval(
          std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now()));
      amqp_frame_t frame{};
      const int status = amqp_simple_wait_frame_noblock(conn, &frame, &tv);
      if (status == AMQP_STATUS_TIMEOUT) {
        return Lost("amqp: no confirm from the broker within the attempt timeout", true);
      }
      if (status != AMQP_STATUS_OK) return Lost("amqp: " + std::string(amqp_error_string2(status)));
      // The returned message's header and body frames are of no use here.
      if (frame.frame_type != AMQP_FRAME_METHOD) continue;
      const void* decoded = frame.payload.method.decoded;
      switch (frame.payload.method.id) {
        case AMQP_BASIC_ACK_METHOD: {
          if (static_cast<const amqp_basic_ack_t*>(decoded)->delivery_tag < tag) continue;
          if (returned) return Failed(*returned);
          SendResult r;
          r.acknowledged = true;
          return r;
        }
        case AMQP_BASIC_NACK_METHOD:
          if (static_cast<const amqp_basic_nack_t*>(decoded)->delivery_tag < tag) continue;
          return Failed("amqp: the broker nacked the message");
        case AMQP_BASIC_RETURN_METHOD: {
          const auto* m = static_cast<const amqp_basic_return_t*>(decoded);
          std::string text = "amqp: unroutable: ";
          text.append(CloseText(m->reply_text, m->reply_code))
              .append(" for exchange '")
              .append(exchange)
              .append("' routing key '")
              .append(routing_key)
              .append("'");
          returned = std::move(text);
          continue;
        }
        case AMQP_CHANNEL_CLOSE_METHOD: {
          const auto* m = static_cast<const amqp_channel_close_t*>(decoded);
          std::string error =
              "amqp: the broker closed the channel: " + CloseText(m->reply_text, m->reply_code);
          // The connection stays; the channel is opened again on the next message.
          amqp_channel_close_ok_t ok{};
          amqp_send_method(conn, kChannel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
          channel_open = false;
          return Failed(std::move(error));
        }
        case AMQP_CONNECTION_CLOSE_METHOD: {
          const auto* m = static_cast<const amqp_connection_close_t*>(decoded);
          std::string error =
              "amqp: the broker closed the connection: " + CloseText(m->reply_text, m->reply_code);
          amqp_connection_close_ok_t ok{};
          amqp_send_method(conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
          return Lost(std::move(error));
        }
        default:
          continue;
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
  amqp_connection_state_t conn = nullptr;
  bool channel_open = false;
  uint64_t next_tag = 1;  // the channel's next delivery tag, counted as the broker does
  std::optional<std::string> failure;
  std::chrono::steady_clock::time_point retry_at;
  Duration backoff = kFirstBackoff;
  std::thread thread;  // last: it starts with everything above made
};

AmqpTransport::AmqpTransport(Options options) : options_(options) {
  if (options_.resolver == nullptr) {
    own_resolver_ = std::make_unique<SystemResolver>(options_.attempt_timeout);
    resolver_ = own_resolver_.get();
  } else {
    resolver_ = options_.resolver;
  }
}

AmqpTransport::~AmqpTransport() {
  std::map<std::string, std::unique_ptr<Connection>> connections;
  {
    std::lock_guard lock(mu_);
    connections.swap(connections_);
  }
  // Each joins its thread, ending what it had not started; outside the lock, as a send's
  // `done` may call Start.
  connections.clear();
}

void AmqpTransport::Start(Outgoing request, Done done) {
  std::lock_guard lock(mu_);
  auto& connection = connections_[KeyOf(request)];
  if (!connection) connection = std::make_unique<Connection>(options_, *resolver_);
  connection->Push(std::move(request), std::move(done));
}

void AmqpTransport::CancelUnstarted() {
  std::lock_guard lock(mu_);
  for (auto& [key, connection] : connections_) connection->CancelUnstarted();
}

}  // namespace webhookd
