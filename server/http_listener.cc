#include "server/http_listener.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <iterator>
#include <list>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/log.h"
#include "server/client_address.h"
#include "server/http_head.h"

namespace webhookd {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// A body up to this size that has arrived with its head is read with it, so a small
// request costs one trip to a handler thread, not two.
constexpr size_t kReadAheadBody = 64 * size_t{1024};
// After an answer that leaves a body unread, what is read and dropped before closing, so
// the client sees the answer rather than a reset.
constexpr size_t kLingerBytes = size_t{1024} * 1024;
constexpr std::chrono::seconds kLingerTime{2};

// Handler threads: Admit and Handle calls, in order of arrival. A job goes to the thread
// that went idle last, so a light load keeps to a few threads and their warm caches
// instead of spreading over all of them (which also kept every thread's allocator cache
// filled: memory that never came back after a burst).
class WorkPool {
 public:
  explicit WorkPool(int threads) : workers_(static_cast<size_t>(threads)) {
    for (size_t i = 0; i < workers_.size(); ++i) {
      workers_[i].thread = std::thread([this, i] { Work(workers_[i]); });
    }
  }
  ~WorkPool() { Stop(); }
  void Post(std::function<void()> job) {
    std::unique_lock lock(mu_);
    if (!idle_.empty()) {
      Worker* w = idle_.back();
      idle_.pop_back();
      w->job = std::move(job);
      lock.unlock();
      w->cv.notify_one();
      return;
    }
    jobs_.push_back(std::move(job));
  }
  // Runs what is queued, then joins.
  void Stop() {
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
      stop_ = true;
    }
    for (auto& w : workers_) w.cv.notify_one();
    for (auto& w : workers_) w.thread.join();
  }

 private:
  struct Worker {
    std::thread thread;
    std::condition_variable cv;
    std::function<void()> job;  // handed over by Post, guarded by mu_
  };

  void Work(Worker& self) {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mu_);
        if (!jobs_.empty()) {
          job = std::move(jobs_.front());
          jobs_.pop_front();
        } else if (stop_) {
          return;
        } else {
          idle_.push_back(&self);
          self.cv.wait(lock, [&] { return self.job || stop_; });
          if (!self.job) {
            // Stopping: leave the idle list so no job is handed to a thread that left.
            std::erase(idle_, &self);
            continue;
          }
          job = std::move(self.job);
          self.job = nullptr;
        }
      }
      job();
    }
  }

  std::mutex mu_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_, when no thread is idle
  std::vector<Worker*> idle_;               // guarded by mu_; the last went idle last
  bool stop_ = false;
  std::vector<Worker> workers_;
};

// Header values come from the code, but a CR or LF must never split a header.
std::string HeaderSafe(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) out.push_back(c == '\r' || c == '\n' ? ' ' : c);
  return out;
}

class Connection;

}  // namespace

struct HttpListener::Impl {
  Impl(HttpHandler& h, Options o)
      : handler(h),
        options(o),
        acceptor(net::make_strand(ioc)),
        pool(o.handler_threads),
        begin_pool(o.begin_threads) {}

  void Accept();
  // False when `client` holds its share of connections already: the caller closes it.
  bool Opened(const std::shared_ptr<Connection>& c, const std::string& client);
  void Closed(const std::string& client);
  void StopPools() {
    begin_pool.Stop();  // first: what it runs may post to `pool`
    pool.Stop();
  }

  HttpHandler& handler;
  Options options;
  net::io_context ioc;
  // On a strand of its own: its completions, Stop's close and the retry timer never run
  // at once on the two I/O threads.
  tcp::acceptor acceptor;
  WorkPool pool;        // Admit and Handle
  WorkPool begin_pool;  // Begin: never a socket thread, never waits on the database
  std::atomic<bool> stopping{false};

  std::mutex mu;  // guards the four below
  std::list<std::weak_ptr<Connection>> connections;
  std::unordered_map<std::string, int> per_client;  // open connections by ClientOf
  int open = 0;
  bool accept_paused = false;
};

namespace {

// One client connection: its requests one after another (keep-alive), every step on its
// strand.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(HttpListener::Impl& listener, tcp::socket socket, std::string client)
      : listener_(listener),
        client_(std::move(client)),
        options_(listener.options),
        stream_(std::move(socket)),
        buffer_(options_.max_header_bytes + 16 * size_t{1024}) {}

  void Start() { NextRequest(); }
  // Closes a connection never started (its client is over its share): it was not
  // counted, so it is not uncounted either.
  void Refuse() {
    closed_ = true;
    beast::error_code ignored;
    stream_.socket().close(ignored);
  }

  // On Stop: a connection waiting for its next request closes now; one in a request
  // closes after answering it.
  void StopIfIdle() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      if (self->idle_) self->stream_.cancel();
    });
  }

 private:
  using Parser = http::request_parser<http::string_body>;

  void NextRequest() {
    if (listener_.stopping) return Close();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(options_.max_header_bytes));
    parser_->body_limit(options_.max_body_bytes);
    request_ = HttpRequest{};
    if (buffer_.size() > 0) return BeginRequest();  // pipelined: already here
    // Idle until the first byte: at most idle_timeout.
    idle_ = true;
    stream_.expires_after(options_.idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->idle_ = false;
                              if (ec) return self->Close();
                              self->buffer_.commit(n);
                              self->BeginRequest();
                            });
  }

  // The request's first bytes are here: all of it must be within request_deadline.
  void BeginRequest() {
    deadline_ = std::chrono::steady_clock::now() + options_.request_deadline;
    stream_.expires_at(deadline_);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHead(ec); });
  }

  void OnHead(beast::error_code ec) {
    if (ec) {
      const int status = StatusForParseError(ec);
      return status == 0 ? Close() : Refuse(status);
    }
    if (const int status = ReadHead(parser_->get(), options_.max_header_fields, request_)) {
      return Refuse(status);
    }
    beast::error_code ignored;
    request_.remote = stream_.socket().remote_endpoint(ignored).address().to_string();
    const auto& head = parser_->get();
    request_.arrived = std::chrono::steady_clock::now();
    request_.has_body = !parser_->is_done();
    keep_alive_ = head.keep_alive();
    head_only_ = request_.method == "HEAD";

    if (auto reply = listener_.handler.Immediate(request_)) {
      return Respond(*reply, /*body_unread=*/request_.has_body);
    }
    if (!request_.has_body) return RunHandler(/*admit=*/true);
    const auto length = parser_->content_length();
    if (length && *length <= kReadAheadBody && buffer_.size() >= *length) {
      // The whole body came with the head: nothing more is read from the network.
      return ReadBody(/*admit_after=*/true);
    }
    // Admitted first: a body is read only for a request that may have it.
    listener_.pool.Post([self = shared_from_this(), work = Work()]() mutable {
      std::optional<Reply> reply =
          self->Guarded([&] { return self->listener_.handler.Admit(self->request_); });
      net::post(self->stream_.get_executor(), [self, reply = std::move(reply)]() mutable {
        if (reply) return self->Respond(*reply, /*body_unread=*/true);
        self->ContinueAndReadBody();
      });
    });
  }

  // A client that sent "Expect: 100-continue" waits for this before sending its body.
  void ContinueAndReadBody() {
    if (!beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      return ReadBody(/*admit_after=*/false);
    }
    static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    stream_.expires_at(deadline_);
    net::async_write(stream_, net::buffer(kContinue),
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->Close();
                       self->ReadBody(/*admit_after=*/false);
                     });
  }

  void ReadBody(bool admit_after) {
    stream_.expires_at(deadline_);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this(), admit_after](beast::error_code ec, size_t) {
                       if (ec) {
                         const int status = StatusForParseError(ec);
                         return status == 0 ? self->Close() : self->Refuse(status);
                       }
                       self->request_.body = std::move(self->parser_->get().body());
                       self->RunHandler(admit_after);
                     });
  }

  // On a handler thread: Admit (unless done already), then Handle; the answer is written
  // back on the strand. A request not yet admitted that has its body is first offered to
  // Begin, on a thread of the begin pool (Begin may parse and validate the body: never
  // on a socket thread).
  void RunHandler(bool admit, bool may_begin = true) {
    if (admit && may_begin && request_.has_body) {
      listener_.begin_pool.Post([self = shared_from_this(), work = Work()] {
        if (!self->TakeLater(/*begin=*/true)) self->PostHandler(/*admit=*/true);
      });
      return;
    }
    PostHandler(admit);
  }

  void PostHandler(bool admit) {
    listener_.pool.Post([self = shared_from_this(), admit, work = Work()]() mutable {
      HttpHandler& h = self->listener_.handler;
      std::optional<Reply> reply;
      if (admit) reply = self->Guarded([&] { return h.Admit(self->request_); });
      if (!reply && self->TakeLater(/*begin=*/false)) return;
      if (!reply)
        reply = self->Guarded([&] { return std::optional<Reply>(h.Handle(self->request_)); });
      net::post(self->stream_.get_executor(),
                [self, reply = std::move(reply)]() mutable { self->Respond(*reply); });
    });
  }

  // Offers the request to the handler's Begin (`begin`, on a begin-pool thread) or, once
  // admitted, its HandleLater (on a handler thread); true when it was taken. `later`
  // answers once: a handler that throws (it must not) is answered 500 here unless it had
  // answered. Handed back (nullopt), the request goes on where it would have without.
  bool TakeLater(bool begin) {
    auto answered = std::make_shared<std::atomic<bool>>(false);
    HttpHandler::Later later = [self = shared_from_this(), answered, begin,
                                work = Work()](std::optional<Reply> reply) mutable {
      if (answered->exchange(true)) return;
      net::post(self->stream_.get_executor(), [self, begin, reply = std::move(reply)]() mutable {
        if (reply) return self->Respond(*reply);
        if (begin) return self->RunHandler(/*admit=*/true, /*may_begin=*/false);
        self->PostHandler(/*admit=*/false);
      });
    };
    try {
      HttpHandler& h = listener_.handler;
      return begin ? h.Begin(request_, std::move(later))
                   : h.HandleLater(request_, std::move(later));
    } catch (const std::exception& e) {
      Log(LogLevel::kError, "handler threw", {{"path", request_.path}, {"error", e.what()}});
    } catch (...) {
      Log(LogLevel::kError, "handler threw", {{"path", request_.path}});
    }
    if (!answered->exchange(true)) {
      net::post(stream_.get_executor(), [self = shared_from_this()] {
        self->Respond(ProblemReply(500, "an internal error occurred"));
      });
    }
    return true;
  }

  // A handler that throws answers 500; the process goes on.
  template <typename F>
  std::optional<Reply> Guarded(F&& f) {
    try {
      return f();
    } catch (const std::exception& e) {
      Log(LogLevel::kError, "handler threw", {{"path", request_.path}, {"error", e.what()}});
    } catch (...) {
      Log(LogLevel::kError, "handler threw", {{"path", request_.path}});
    }
    return ProblemReply(500, "an internal error occurred");
  }

  // Keeps the io_context running while a handler thread holds the connection.
  net::any_io_executor Work() {
    return net::prefer(listener_.ioc.get_executor(), net::execution::outstanding_work.tracked);
  }

  void Refuse(int status) {
    keep_alive_ = false;
    Respond(listener_.handler.Refused(status), /*body_unread=*/true);
  }

  void Respond(const Reply& reply, bool body_unread = false) {
    const bool keep = keep_alive_ && !body_unread && !listener_.stopping;
    const int status = reply.status;
    const auto reason = http::obsolete_reason(static_cast<http::status>(status));
    out_.clear();
    out_ += "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
    const bool has_content = status != 204 && status != 304 && !(status >= 100 && status < 200);
    if (has_content && !reply.content_type.empty()) {
      out_ += "Content-Type: " + HeaderSafe(reply.content_type) + "\r\n";
    }
    for (const auto& [name, value] : reply.headers) {
      out_ += HeaderSafe(name) + ": " + HeaderSafe(value) + "\r\n";
    }
    if (has_content) out_ += "Content-Length: " + std::to_string(reply.body.size()) + "\r\n";
    out_ += keep ? "Keep-Alive: timeout=" +
                       std::to_string(
                           std::chrono::duration_cast<std::chrono::seconds>(options_.idle_timeout)
                               .count()) +
                       "\r\n"
                 : "Connection: close\r\n";
    out_ += "\r\n";
    if (has_content && !head_only_) out_ += reply.body;
    stream_.expires_after(options_.write_timeout);
    net::async_write(stream_, net::buffer(out_),
                     [self = shared_from_this(), keep](beast::error_code ec, size_t) {
                       if (ec) return self->Close();
                       if (keep) return self->NextRequest();
                       self->Linger();
                     });
  }

  // Half-closes, then reads and drops what the client still sends (a body never read),
  // for a bounded time and size, so it reads the answer before the connection goes.
  void Linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    lingered_ = 0;
    stream_.expires_after(kLingerTime);
    Drain();
  }
  void Drain() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(16384),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->lingered_ += n;
                              if (ec || self->lingered_ > kLingerBytes) return self->Close();
                              self->Drain();
                            });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    listener_.Closed(client_);
  }

  HttpListener::Impl& listener_;
  const std::string client_;  // ClientOf the remote address, as counted by the listener
  const HttpListener::Options& options_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  HttpRequest request_;
  std::string out_;
  std::chrono::steady_clock::time_point deadline_;
  size_t lingered_ = 0;
  bool idle_ = false;
  bool keep_alive_ = false;
  bool head_only_ = false;
  bool closed_ = false;
};

}  // namespace

void HttpListener::Impl::Accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open() || ec == net::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors, say: try again shortly rather than spin.
      Log(LogLevel::kWarn, "accept failed", {{"error", ec.message()}});
      auto timer = std::make_shared<net::steady_timer>(acceptor.get_executor(),
                                                       std::chrono::milliseconds(50));
      timer->async_wait([this, timer](beast::error_code) {
        if (acceptor.is_open()) Accept();
      });
      return;
    }
    beast::error_code ignored;
    const auto remote = socket.remote_endpoint(ignored);
    std::string client = ignored ? std::string() : ClientOf(remote.address().to_string());
    // Without TCP_NODELAY every response waits ~40 ms on delayed ACKs.
    socket.set_option(tcp::no_delay(true), ignored);
    auto c = std::make_shared<Connection>(*this, std::move(socket), client);
    if (Opened(c, client)) {
      c->Start();
    } else {
      // Over its share: closed at once, no answer written, so a client holding its
      // share already costs nothing more than the accept.
      c->Refuse();
    }
    {
      std::lock_guard lock(mu);
      if (open >= options.max_connections) {
        accept_paused = true;  // Closed() accepts again
        return;
      }
    }
    Accept();
  });
}

bool HttpListener::Impl::Opened(const std::shared_ptr<Connection>& c, const std::string& client) {
  std::lock_guard lock(mu);
  int& mine = per_client[client];
  if (mine >= options.max_connections_per_client) return false;
  ++mine;
  ++open;
  connections.remove_if([](const std::weak_ptr<Connection>& w) { return w.expired(); });
  connections.push_back(c);
  return true;
}

void HttpListener::Impl::Closed(const std::string& client) {
  bool resume = false;
  {
    std::lock_guard lock(mu);
    --open;
    if (auto it = per_client.find(client); it != per_client.end() && --it->second <= 0) {
      per_client.erase(it);
    }
    if (accept_paused && !stopping) {
      accept_paused = false;
      resume = true;
    }
  }
  if (resume) net::post(acceptor.get_executor(), [this] { Accept(); });
}

HttpListener::HttpListener(HttpHandler& handler, Options options)
    : impl_(std::make_unique<Impl>(handler, options)) {}

HttpListener::~HttpListener() { impl_->StopPools(); }

Result<int> HttpListener::Bind(const std::string& host, int port) {
  beast::error_code ec;
  tcp::resolver resolver(impl_->ioc);
  auto found = resolver.resolve(host, std::to_string(port),
                                tcp::resolver::numeric_service | tcp::resolver::passive, ec);
  if (ec || found.empty()) {
    return Fail(ErrorKind::kUnavailable, "cannot resolve " + host + ": " + ec.message());
  }
  const tcp::endpoint endpoint = found.begin()->endpoint();
  tcp::acceptor& a = impl_->acceptor;
  if (a.open(endpoint.protocol(), ec); !ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  // The kernel's queue is where connections beyond max_connections wait; as long as the
  // kernel allows (net.core.somaxconn), so a burst of connections from one client that
  // are closed on accept does not overflow it and drop another client's handshake.
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    // The message first: closing would overwrite the error with its own success.
    const std::string why = ec.message();
    a.close(ec);
    return Fail(ErrorKind::kUnavailable,
                "cannot listen on " + host + ":" + std::to_string(port) + ": " + why);
  }
  return static_cast<int>(a.local_endpoint().port());
}

void HttpListener::Run() {
  if (!impl_->stopping) net::post(impl_->acceptor.get_executor(), [this] { impl_->Accept(); });
  std::vector<std::thread> extra;
  for (int i = 1; i < impl_->options.io_threads; ++i) {
    extra.emplace_back([this] { impl_->ioc.run(); });
  }
  impl_->ioc.run();
  for (auto& t : extra) t.join();
  impl_->StopPools();
}

void HttpListener::Stop() {
  impl_->stopping = true;
  net::post(impl_->acceptor.get_executor(), [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
    std::lock_guard lock(impl_->mu);
    for (auto& w : impl_->connections) {
      if (auto c = w.lock()) c->StopIfIdle();
    }
  });
}

}  // namespace webhookd
