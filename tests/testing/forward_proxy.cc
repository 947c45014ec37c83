#include "tests/testing/forward_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/testing/wait.h"

namespace webhookd::testing {
namespace {

bool Accepting(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

ForwardProxy::ForwardProxy() {
  char dir[] = "/tmp/webhookd-proxy-XXXXXX";
  if (::mkdtemp(dir) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = dir;
  port_ = FreePort();
  std::ofstream conf(dir_ + "/tinyproxy.conf");
  conf << "Port " << port_ << "\n"
       << "Listen 127.0.0.1\n"
       << "Timeout 30\n"
       << "LogFile \"" << dir_ << "/tinyproxy.log\"\n"
       << "LogLevel Connect\n"
       << "MaxClients 200\n"
       << "Allow 127.0.0.1\n"
       << "DisableViaHeader Yes\n";
  conf.close();
  Start();
}

ForwardProxy::~ForwardProxy() {
  process_.reset();
  std::system(("rm -rf '" + dir_ + "'").c_str());
}

void ForwardProxy::Start() {
  // -d: in the foreground, so the Process owns it.
  process_ = std::make_unique<Process>(
      std::vector<std::string>{"/usr/bin/tinyproxy", "-d", "-c", dir_ + "/tinyproxy.conf"},
      std::map<std::string, std::string>{}, dir_ + "/stdout.log");
  if (!WaitUntil([&] { return Accepting(port_); }, std::chrono::seconds(10))) {
    throw std::runtime_error("tinyproxy did not start: " + ReadFile(dir_ + "/stdout.log"));
  }
}

void ForwardProxy::Stop() {
  process_.reset();  // SIGKILL, waited for
}

std::vector<std::string> ForwardProxy::Connects() const {
  std::vector<std::string> out;
  static const std::regex kConnect(R"(Request \(file descriptor \d+\): CONNECT (\S+) HTTP)");
  std::istringstream log(ReadFile(dir_ + "/tinyproxy.log"));
  for (std::string line; std::getline(log, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kConnect)) out.push_back(m[1]);
  }
  return out;
}

}  // namespace webhookd::testing
