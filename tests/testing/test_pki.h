#pragma once

#include <string>

namespace webhookd::testing {

// Certificates made by the openssl command for one test, in a temporary directory: a CA,
// a server certificate for 127.0.0.1 signed by it, a client certificate signed by it, and
// a second CA with a client certificate of its own (what a receiver must refuse).
class TestPki {
 public:
  TestPki();  // throws std::runtime_error if openssl fails
  ~TestPki();
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  // The PEM text of ca.pem, server.pem, server.key, client.pem, client.key, other_ca.pem,
  // other_client.pem, other_client.key.
  std::string Pem(const std::string& name) const;

 private:
  std::string dir_;
};

}  // namespace webhookd::testing
