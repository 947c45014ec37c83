// Tenants (docs/api.md, "Tenants"): fan-out stays within a tenant, a tenant key sees its
// own tenant alone, and anything of another tenant answers exactly as an unknown id. The
// authorization matrix runs every route with every kind of key against every kind of id.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::tenants_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

Json Body(const httplib::Response& res) { return Json::parse(res.body, nullptr, false); }

// `webhookd keys create <args>` against `db`: {key id, key}.
std::pair<std::string, std::string> CreateKey(const TestDatabase& db,
                                              std::vector<std::string> args) {
  args.insert(args.begin(), {"keys", "create", "--name", "matrix"});
  auto [code, out] = WebhookdProcess::RunCommand(args, {{"DATABASE_URL", db.url()}});
  EXPECT_EQ(code, 0) << out;
  std::string text = out;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, std::regex(R"(key_[0-9]+)"))) << out;
  return {m.str(), text.substr(text.rfind('\n') + 1)};
}

int64_t Number(const std::string& id) { return std::stoll(id.substr(id.find('_') + 1)); }

// Every row webhookd keeps, as one digest: equal digests, nothing written.
std::string Snapshot(TestDatabase& db) {
  std::string sql = "SELECT md5(concat_ws('|'";
  for (const char* table :
       {"destinations", "destination_secrets", "events", "deliveries", "attempts", "dead_letters",
        "api_keys", "idempotency_keys", "event_types", "recoveries"}) {
    sql += std::string(", (SELECT string_agg(t::text, ',' ORDER BY t::text) FROM ") + table + " t)";
  }
  return db.Scalar(sql + "))");
}

enum class Owner { kT, kU, kNone, kUnknown };
enum class Who { kAdmin, kPublisher, kTenantT, kTenantU, kExpired, kRevoked };

const char* OwnerName(Owner o) {
  switch (o) {
    case Owner::kT:
      return "T's";
    case Owner::kU:
      return "U's";
    case Owner::kNone:
      return "tenant-less";
    case Owner::kUnknown:
      return "unknown";
  }
  return "?";
}

const char* WhoName(Who w) {
  switch (w) {
    case Who::kAdmin:
      return "admin";
    case Who::kPublisher:
      return "publisher";
    case Who::kTenantT:
      return "tenant T";
    case Who::kTenantU:
      return "tenant U";
    case Who::kExpired:
      return "expired tenant T";
    case Who::kRevoked:
      return "revoked";
  }
  return "?";
}

// One destination, event, delivery and dead letter owned alike.
struct Owned {
  std::string dst, evt, dlv, dlq;
};

class TenantWorld {
 public:
  TenantWorld(TestDatabase& db, WebhookdProcess& server) : db_(db), server_(server) {}

  Owned Make(Owner owner) {
    if (owner == Owner::kUnknown) return {"dst_999999", "evt_999999", "dlv_999999", "dlq_999999"};
    Json tenant = owner == Owner::kT ? Json("T") : owner == Owner::kU ? Json("U") : Json();
    auto d = server_.Call("POST", "/v1/destinations",
                          {{"url", "http://127.0.0.1:9/hook"}, {"tenant_id", tenant}});
    EXPECT_EQ(d.status, 201) << d.body;
    Owned o;
    o.dst = Body(d)["id"];
    auto e = server_.Call("POST", "/v1/events",
                          {{"type", "matrix.made"},
                           {"payload", {{"n", 1}}},
                           {"tenant_id", tenant},
                           {"destination_id", o.dst}});
    EXPECT_EQ(e.status, 202) << e.body;
    o.evt = Body(e)["id"];
    o.dlv = Body(e)["deliveries"][0]["id"];
    // A dead letter as the worker leaves one (this server runs no worker).
    const std::string dlv = std::to_string(Number(o.dlv));
    db_.Exec("DELETE FROM delivery_queue WHERE id = " + dlv +
             "; UPDATE deliveries SET status = 'dead_lettered', stopped_as = 'dead_lettered' WHERE "
             "id = " +
             dlv);
    o.dlq = "dlq_" + db_.Scalar(
                         "INSERT INTO dead_letters (delivery_id, event_id, destination_id, reason, "
                         "attempt_count) SELECT id, event_id, destination_id, 'exhausted', 5 FROM "
                         "deliveries WHERE id = " +
                         dlv + " RETURNING id");
    return o;
  }

 private:
  TestDatabase& db_;
  WebhookdProcess& server_;
};

// A route that names one row.
struct IdRoute {
  std::string method;
  std::string path;  // "{}" is the id
  char kind;         // d(estination), e(vent), v (delivery), q (dead letter)
  bool admin_route;  // under /v1/admin/: publisher keys get 403
  bool writes;       // a 2xx changes rows, so each call gets fresh rows
  Json body = nullptr;
};

std::string IdOf(const Owned& o, char kind) {
  switch (kind) {
    case 'd':
      return o.dst;
    case 'e':
      return o.evt;
    case 'v':
      return o.dlv;
    default:
      return o.dlq;
  }
}

// The status a key must get for a row of `owner` on a route (2xx shown as 200).
int Expected(Who who, Owner owner, bool admin_route) {
  switch (who) {
    case Who::kExpired:
    case Who::kRevoked:
      return 401;
    case Who::kAdmin:
      return owner == Owner::kUnknown ? 404 : 200;
    case Who::kPublisher:
      if (admin_route) return 403;
      return owner == Owner::kUnknown ? 404 : 200;
    case Who::kTenantT:
      return owner == Owner::kT ? 200 : 404;
    case Who::kTenantU:
      return owner == Owner::kU ? 200 : 404;
  }
  return 0;
}

int Kind(int status) { return status >= 200 && status < 300 ? 200 : status; }

class TenantsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<WebhookdProcess>(
        db_.url(), "server",
        std::map<std::string, std::string>{{"WEBHOOKD_PUBLIC_URL", "https://hooks.example.com/"}});
    keys_[Who::kAdmin] = server_->admin_key();
    keys_[Who::kPublisher] = CreateKey(db_, {"--role", "publisher"}).second;
    keys_[Who::kTenantT] = CreateKey(db_, {"--role", "tenant", "--tenant", "T"}).second;
    keys_[Who::kTenantU] =
        CreateKey(db_, {"--role", "tenant", "--tenant", "U", "--ttl", "1h"}).second;
    auto [expired_id, expired] =
        CreateKey(db_, {"--role", "tenant", "--tenant", "T", "--ttl", "1h"});
    keys_[Who::kExpired] = expired;
    auto [revoked_id, revoked] = CreateKey(db_, {"--role", "tenant", "--tenant", "T"});
    keys_[Who::kRevoked] = revoked;
    // Both worked until now.
    ASSERT_EQ(server_->Call("GET", "/v1/destinations", nullptr, expired).status, 200);
    ASSERT_EQ(server_->Call("GET", "/v1/destinations", nullptr, revoked).status, 200);
    db_.Exec("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = " +
             std::to_string(Number(expired_id)));
    auto [code, out] =
        WebhookdProcess::RunCommand({"keys", "revoke", revoked_id}, {{"DATABASE_URL", db_.url()}});
    ASSERT_EQ(code, 0) << out;
  }

  // Calls and checks one cell: the status, a problem body for errors, and no write
  // unless the answer was 2xx. Returns the response.
  httplib::Response Cell(Who who, const std::string& method, const std::string& path,
                         const Json& body, int expected) {
    const std::string before = Snapshot(db_);
    auto res = server_->Call(method, path, body, keys_[who]);
    ++cells_;
    EXPECT_EQ(Kind(res.status), expected)
        << WhoName(who) << " " << method << " " << path << ": " << res.body;
    if (Kind(res.status) != 200) {
      EXPECT_EQ(res.get_header_value("Content-Type"), "application/problem+json") << res.body;
      EXPECT_EQ(Snapshot(db_), before) << WhoName(who) << " " << method << " " << path
                                       << " wrote although it answered " << res.status;
    }
    return res;
  }

  TestDatabase db_;
  std::unique_ptr<WebhookdProcess> server_;
  std::map<Who, std::string> keys_;
  int cells_ = 0;
};

const std::vector<Who> kEveryone = {Who::kAdmin,   Who::kPublisher, Who::kTenantT,
                                    Who::kTenantU, Who::kExpired,   Who::kRevoked};

TEST_F(TenantsE2eTest, EveryRouteEveryKeyEveryKindOfId) {
  TenantWorld world(db_, *server_);
  const std::map<Owner, Owned> shared = {{Owner::kT, world.Make(Owner::kT)},
                                         {Owner::kU, world.Make(Owner::kU)},
                                         {Owner::kNone, world.Make(Owner::kNone)},
                                         {Owner::kUnknown, world.Make(Owner::kUnknown)}};
  const std::vector<IdRoute> routes = {
      {"GET", "/v1/destinations/{}", 'd', false, false},
      {"PATCH", "/v1/destinations/{}", 'd', false, true, {{"description", "patched"}}},
      {"DELETE", "/v1/destinations/{}", 'd', false, true},
      {"GET", "/v1/destinations/{}/secret", 'd', false, false},
      {"POST", "/v1/destinations/{}/secret/rotate", 'd', false, true, Json::object()},
      {"GET", "/v1/events/{}", 'e', false, false},
      {"GET", "/v1/deliveries/{}", 'v', false, false},
      {"GET", "/v1/deliveries/{}/attempts", 'v', false, false},
      {"POST", "/v1/admin/dead-letters/{}/replay", 'q', true, true},
      // Admin and tenant keys, as a replay: a publisher key is 403.
      {"POST", "/v1/destinations/{}/recover", 'd', true, true, {{"since", "2020-01-01T00:00:00Z"}}},
  };
  const std::vector<Owner> owners = {Owner::kT, Owner::kU, Owner::kNone, Owner::kUnknown};
  std::set<std::string> not_found_bodies_by_route;
  for (const IdRoute& route : routes) {
    std::set<std::string> not_found_bodies;
    for (Who who : kEveryone) {
      for (Owner owner : owners) {
        SCOPED_TRACE(std::string(WhoName(who)) + " on " + OwnerName(owner) + " id");
        const Owned rows = route.writes ? world.Make(owner) : shared.at(owner);
        std::string path = route.path;
        path.replace(path.find("{}"), 2, IdOf(rows, route.kind));
        const int expected = Expected(who, owner, route.admin_route);
        auto res = Cell(who, route.method, path, route.body, expected);
        if (res.status == 404) not_found_bodies.insert(res.body);
        // What a tenant key may see carries its tenant.
        if (Kind(res.status) == 200 && res.status != 204 &&
            (who == Who::kTenantT || who == Who::kTenantU) && Body(res).contains("tenant_id")) {
          EXPECT_EQ(Body(res)["tenant_id"], who == Who::kTenantT ? "T" : "U") << res.body;
        }
      }
    }
    // Another tenant's id, a tenant-less id and an unknown id: one body, byte for byte.
    EXPECT_EQ(not_found_bodies.size(), 1u) << route.method << " " << route.path;
  }

  // Lists: a tenant key's list holds its tenant's rows alone, whatever the filter says.
  for (const std::string list :
       {"/v1/destinations", "/v1/events", "/v1/deliveries", "/v1/admin/dead-letters"}) {
    const bool admin_route = list.starts_with("/v1/admin/");
    for (Who who : kEveryone) {
      for (const std::string query : {"", "?tenant_id=T", "?tenant_id=U"}) {
        SCOPED_TRACE(std::string(WhoName(who)) + " lists " + list + query);
        const int expected = Expected(who, Owner::kT, admin_route) == 404
                                 ? 200
                                 : Expected(who, Owner::kT, admin_route);
        auto res = Cell(who, "GET", list + query, nullptr, expected);
        if (res.status != 200) continue;
        std::set<Json> tenants;
        for (const Json body = Body(res); const Json& item : body.value("data", Json::array()))
          tenants.insert(item["tenant_id"]);
        std::set<Json> want;
        if (who == Who::kTenantT) {
          if (query != "?tenant_id=U") want = {Json("T")};
        } else if (who == Who::kTenantU) {
          if (query != "?tenant_id=T") want = {Json("U")};
        } else if (query.empty()) {
          want = {Json("T"), Json("U"), Json()};
        } else {
          want = {Json(query.substr(query.find('=') + 1))};
        }
        EXPECT_EQ(tenants, want) << res.body;
      }
    }
  }

  // A list of one status: a key's page of that status is its unfiltered list's rows of
  // that status, neither more nor fewer (an unscoped key's has a statement of its own).
  for (Who who : kEveryone) {
    const int expected =
        Expected(who, Owner::kT, false) == 404 ? 200 : Expected(who, Owner::kT, false);
    auto all = Cell(who, "GET", "/v1/deliveries?limit=1000", nullptr, expected);
    if (all.status != 200) continue;
    const Json every = Body(all);
    ASSERT_TRUE(every["next_cursor"].is_null()) << all.body;
    for (const std::string status : {"pending", "dead_lettered", "succeeded"}) {
      SCOPED_TRACE(std::string(WhoName(who)) + " lists deliveries " + status);
      std::vector<Json> want, got;
      for (const Json& item : every["data"]) {
        if (item["status"] == status) want.push_back(item["id"]);
      }
      auto res = Cell(who, "GET", "/v1/deliveries?limit=1000&status=" + status, nullptr, 200);
      for (const Json& item : Body(res).value("data", Json::array())) got.push_back(item["id"]);
      EXPECT_EQ(got, want) << res.body;
    }
  }

  // Routes a tenant key may not use at all, and the publisher's and admin's answers.
  struct Plain {
    std::string method, path;
    Json body;
    std::map<Who, int> expected;  // absent: 401 (expired, revoked)
  };
  const std::vector<Plain> plain = {
      {"POST",
       "/v1/events",
       {{"type", "matrix.event"}, {"payload", Json::object()}, {"tenant_id", "T"}},
       {{Who::kAdmin, 200}, {Who::kPublisher, 200}, {Who::kTenantT, 403}, {Who::kTenantU, 403}}},
      {"GET",
       "/v1/admin/stats",
       nullptr,
       {{Who::kAdmin, 200}, {Who::kPublisher, 403}, {Who::kTenantT, 403}, {Who::kTenantU, 403}}},
      {"GET",
       "/v1/admin/stats/series",
       nullptr,
       {{Who::kAdmin, 200}, {Who::kPublisher, 403}, {Who::kTenantT, 403}, {Who::kTenantU, 403}}},
      {"GET",
       "/v1/admin/tenants",
       nullptr,
       {{Who::kAdmin, 200}, {Who::kPublisher, 403}, {Who::kTenantT, 403}, {Who::kTenantU, 403}}},
      {"POST",
       "/v1/admin/tenants/T/portal-links",
       Json::object(),
       {{Who::kAdmin, 200}, {Who::kPublisher, 403}, {Who::kTenantT, 403}, {Who::kTenantU, 403}}},
      // The event catalog: read by every key, written by none of a tenant's (the role is
      // checked before the body: a bad one is 422 for those who may write, 403 for others).
      {"GET",
       "/v1/event-types",
       nullptr,
       {{Who::kAdmin, 200}, {Who::kPublisher, 200}, {Who::kTenantT, 200}, {Who::kTenantU, 200}}},
      {"GET",
       "/v1/event-types/webhookd.destination.disabled",
       nullptr,
       {{Who::kAdmin, 200}, {Who::kPublisher, 200}, {Who::kTenantT, 200}, {Who::kTenantU, 200}}},
      {"POST",
       "/v1/event-types",
       {{"name", "matrix.type"}, {"schema", "not a schema"}},
       {{Who::kAdmin, 422}, {Who::kPublisher, 422}, {Who::kTenantT, 403}, {Who::kTenantU, 403}}},
      {"PATCH",
       "/v1/event-types/webhookd.destination.disabled",
       {{"deprecated", true}},
       {{Who::kAdmin, 403}, {Who::kPublisher, 403}, {Who::kTenantT, 403}, {Who::kTenantU, 403}}},
      {"DELETE",
       "/v1/event-types/no.such.type",
       nullptr,
       {{Who::kAdmin, 404}, {Who::kPublisher, 404}, {Who::kTenantT, 403}, {Who::kTenantU, 403}}},
      {"POST",
       "/v1/filters/test",
       {{"filter", "$.a == 1"}, {"payload", {{"a", 1}}}},
       {{Who::kAdmin, 200}, {Who::kPublisher, 200}, {Who::kTenantT, 200}, {Who::kTenantU, 200}}},
  };
  for (const Plain& p : plain) {
    for (Who who : kEveryone) {
      SCOPED_TRACE(std::string(WhoName(who)) + " " + p.method + " " + p.path);
      auto it = p.expected.find(who);
      Cell(who, p.method, p.path, p.body, it == p.expected.end() ? 401 : it->second);
    }
  }

  // Creating a destination: a tenant key's is its own tenant's, whatever the body says.
  for (Who who : kEveryone) {
    SCOPED_TRACE(WhoName(who));
    const int expected = who == Who::kExpired || who == Who::kRevoked ? 401 : 200;
    auto res = Cell(who, "POST", "/v1/destinations",
                    {{"url", "http://127.0.0.1:9/new"}, {"tenant_id", "U"}}, expected);
    if (res.status != 201) continue;
    EXPECT_EQ(Body(res)["tenant_id"], who == Who::kTenantT ? "T" : "U") << res.body;
  }

  // Bulk replay: a tenant key replays its own tenant's dead letters and no one else's.
  for (Owner owner : {Owner::kT, Owner::kU, Owner::kNone}) world.Make(owner);
  const auto unreplayed = [&](const std::string& tenant_clause) {
    // A dead letter of a deleted destination is never replayed: those are not counted.
    return db_.Scalar(
        "SELECT count(*) FROM dead_letters x JOIN destinations t ON t.id = x.destination_id "
        "WHERE x.replayed_at IS NULL AND t.deleted_at IS NULL AND x." +
        tenant_clause);
  };
  const std::string t_before = unreplayed("tenant_id = 'T'");
  const std::string others_before = unreplayed("tenant_id IS DISTINCT FROM 'T'");
  ASSERT_NE(t_before, "0");
  Cell(Who::kPublisher, "POST", "/v1/admin/dead-letters/replay", Json::object(), 403);
  Cell(Who::kExpired, "POST", "/v1/admin/dead-letters/replay", Json::object(), 401);
  Cell(Who::kRevoked, "POST", "/v1/admin/dead-letters/replay", Json::object(), 401);
  auto res =
      Cell(Who::kTenantT, "POST", "/v1/admin/dead-letters/replay", {{"tenant_id", "U"}}, 200);
  EXPECT_EQ(Body(res)["replayed"], 0) << res.body;  // U's are not T's to replay
  res = Cell(Who::kTenantT, "POST", "/v1/admin/dead-letters/replay", {{"all", true}}, 200);
  EXPECT_EQ(Body(res)["replayed"], std::stoi(t_before)) << res.body;
  EXPECT_EQ(unreplayed("tenant_id = 'T'"), "0");
  EXPECT_EQ(unreplayed("tenant_id IS DISTINCT FROM 'T'"), others_before);

  std::printf(
      "tenants matrix: %d cells (10 id routes x 6 keys x 4 kinds of id, 4 lists x 6 keys "
      "x 3 filters, 5 routes tenant keys may not use x 6 keys, create x 6, bulk replay)\n",
      cells_);
}

TEST_F(TenantsE2eTest, AnEventReachesItsOwnTenantsDestinationsAlone) {
  const auto create = [&](Json tenant, std::vector<std::string> types) {
    auto res = server_->Call(
        "POST", "/v1/destinations",
        {{"url", "http://127.0.0.1:9/x"}, {"tenant_id", tenant}, {"event_types", types}});
    EXPECT_EQ(res.status, 201) << res.body;
    return Body(res)["id"].get<std::string>();
  };
  const std::string t_orders = create("T", {"order.*"});
  const std::string t_invoices = create("T", {"invoice.*"});
  const std::string u_orders = create("U", {"order.*"});
  const std::string none_orders = create(nullptr, {"order.*"});
  const auto fan_out = [&](Json tenant, const std::string& type) {
    auto res = server_->Call("POST", "/v1/events",
                             {{"type", type}, {"payload", Json::object()}, {"tenant_id", tenant}});
    EXPECT_EQ(res.status, 202) << res.body;
    std::set<std::string> reached;
    for (const Json body = Body(res); const Json& d : body.value("deliveries", Json::array()))
      reached.insert(d["destination_id"]);
    return reached;
  };
  EXPECT_EQ(fan_out("T", "order.created"), std::set<std::string>{t_orders});
  EXPECT_EQ(fan_out("T", "invoice.paid"), std::set<std::string>{t_invoices});
  EXPECT_EQ(fan_out("U", "order.created"), std::set<std::string>{u_orders});
  EXPECT_EQ(fan_out(nullptr, "order.created"), std::set<std::string>{none_orders});
  EXPECT_EQ(fan_out("V", "order.created"), std::set<std::string>{});

  // A named destination must be the event's tenant's (or tenant-less for an event
  // without one); otherwise 422 on destination_id and nothing is written.
  struct Case {
    Json tenant;
    std::string destination;
    int status;
  };
  for (const Case& c : std::vector<Case>{{"T", u_orders, 422},
                                         {"T", none_orders, 422},
                                         {nullptr, t_orders, 422},
                                         {"U", t_invoices, 422},
                                         {"T", t_invoices, 202},
                                         {nullptr, none_orders, 202}}) {
    SCOPED_TRACE(c.tenant.dump() + " -> " + c.destination);
    const std::string before = Snapshot(db_);
    auto res = server_->Call("POST", "/v1/events",
                             {{"type", "order.created"},
                              {"payload", Json::object()},
                              {"tenant_id", c.tenant},
                              {"destination_id", c.destination}});
    EXPECT_EQ(res.status, c.status) << res.body;
    if (c.status == 422) {
      EXPECT_EQ(Body(res)["errors"][0]["field"], "destination_id") << res.body;
      EXPECT_EQ(Snapshot(db_), before);
    }
  }

  // tenant_id is set at creation and never changes.
  for (const auto& [id, patch, status] :
       std::vector<std::tuple<std::string, Json, int>>{{t_orders, "U", 422},
                                                       {t_orders, nullptr, 422},
                                                       {none_orders, "T", 422},
                                                       {t_orders, "T", 200},
                                                       {none_orders, nullptr, 200}}) {
    SCOPED_TRACE(id + " tenant_id " + patch.dump());
    const std::string before = Snapshot(db_);
    auto res = server_->Call("PATCH", "/v1/destinations/" + id,
                             {{"tenant_id", patch}, {"description", "renamed"}});
    EXPECT_EQ(res.status, status) << res.body;
    if (status == 422) {
      EXPECT_EQ(Body(res)["errors"][0]["field"], "tenant_id") << res.body;
      EXPECT_EQ(Snapshot(db_), before);
    }
  }
  // A bad tenant_id anywhere is a 422 naming it.
  for (const std::string& bad :
       std::vector<std::string>{"", "has space", std::string(129, 'a'), "é"}) {
    auto res =
        server_->Call("POST", "/v1/events",
                      {{"type", "order.created"}, {"payload", Json::object()}, {"tenant_id", bad}});
    EXPECT_EQ(res.status, 422) << res.body;
    EXPECT_EQ(
        server_->Call("GET", "/v1/events?tenant_id=" + std::string(bad.empty() ? "%20" : "a%20b"))
            .status,
        422);
  }

  // The tenants and their counts.
  auto res = server_->Call("GET", "/v1/admin/tenants");
  ASSERT_EQ(res.status, 200) << res.body;
  std::map<std::string, Json> by_id;
  for (const Json body = Body(res); const Json& t : body.value("data", Json::array()))
    by_id[t["tenant_id"]] = t;
  ASSERT_EQ(by_id.count("T"), 1u) << res.body;
  EXPECT_EQ(by_id["T"]["destinations"], 2);
  EXPECT_EQ(by_id["T"]["pending"], 3);  // order.created, invoice.paid, the targeted one
  EXPECT_EQ(by_id["T"]["dead_letters"], 0);
  EXPECT_EQ(by_id["U"]["destinations"], 1);
  EXPECT_EQ(by_id["V"]["destinations"], 0);  // it exists: an event carries its id
  EXPECT_EQ(by_id.size(), 3u) << res.body;
  // Pages in tenant_id order.
  auto page = Body(server_->Call("GET", "/v1/admin/tenants?limit=2"));
  ASSERT_EQ(page["data"].size(), 2u);
  EXPECT_EQ(page["data"][0]["tenant_id"], "T");
  EXPECT_EQ(page["next_cursor"], "U");
  auto rest = Body(server_->Call("GET", "/v1/admin/tenants?limit=2&cursor=U"));
  ASSERT_EQ(rest["data"].size(), 1u);
  EXPECT_EQ(rest["data"][0]["tenant_id"], "V");
  EXPECT_TRUE(rest["next_cursor"].is_null());
}

TEST_F(TenantsE2eTest, APortalLinkIsAnExpiringTenantKeyInTheUrlFragment) {
  auto res = server_->Call("POST", "/v1/admin/tenants/T/portal-links", {{"ttl", "2h"}});
  ASSERT_EQ(res.status, 201) << res.body;
  const Json link = Body(res);
  const std::string key = link["key"];
  EXPECT_EQ(link["url"], "https://hooks.example.com/ui/#key=" + key);
  EXPECT_EQ(db_.Scalar("SELECT (expires_at - now()) BETWEEN interval '119 minutes' AND "
                       "interval '2 hours' FROM api_keys WHERE role = 'tenant' AND tenant_id = 'T' "
                       "ORDER BY id DESC LIMIT 1"),
            "t");
  // It is a tenant key of T.
  server_->Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/u"}, {"tenant_id", "U"}});
  auto mine = server_->Call("GET", "/v1/destinations", nullptr, key);
  ASSERT_EQ(mine.status, 200) << mine.body;
  EXPECT_EQ(Body(mine)["data"].size(), 0u) << mine.body;
  EXPECT_EQ(server_->Call("GET", "/v1/admin/stats", nullptr, key).status, 403);
  // Without a body: an hour.
  res = server_->Call("POST", "/v1/admin/tenants/T/portal-links");
  ASSERT_EQ(res.status, 201) << res.body;
  // Bad ttls and tenant ids are 422, and make no key.
  const std::string keys_before = db_.Scalar("SELECT count(*) FROM api_keys");
  for (const Json& ttl : {Json("8d"), Json("0s"), Json("soon"), Json(60)}) {
    auto bad = server_->Call("POST", "/v1/admin/tenants/T/portal-links", {{"ttl", ttl}});
    EXPECT_EQ(bad.status, 422) << ttl << bad.body;
  }
  EXPECT_EQ(server_->Call("POST", "/v1/admin/tenants/a%20b/portal-links").status, 422);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM api_keys"), keys_before);
  // Once expired it is refused like any unknown key.
  db_.Exec("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE role = 'tenant'");
  auto after = server_->Call("GET", "/v1/destinations", nullptr, key);
  EXPECT_EQ(after.status, 401);
  EXPECT_EQ(after.body,
            server_->Call("GET", "/v1/destinations", nullptr, "whk_unknown_0123456789").body);
}

TEST_F(TenantsE2eTest, TenantKeysCreatedAndRevokedWhileRequestsRun) {
  TenantWorld world(db_, *server_);
  world.Make(Owner::kT);
  world.Make(Owner::kU);
  // Each round: a fresh key of T is used by readers, revoked, and from then on refused.
  constexpr int kRounds = 6;
  constexpr int kReaders = 3;
  std::atomic<int> wrong{0}, served{0}, after_revoke_ok{0};
  for (int round = 0; round < kRounds; ++round) {
    auto link = server_->Call("POST", "/v1/admin/tenants/T/portal-links");
    ASSERT_EQ(link.status, 201) << link.body;
    const std::string key = Body(link)["key"];
    const std::string id = "key_" + db_.Scalar("SELECT max(id) FROM api_keys");
    std::atomic<bool> revoked{false}, stop{false};
    std::vector<std::thread> readers;
    for (int r = 0; r < kReaders; ++r) {
      readers.emplace_back([&] {
        const auto deadline = std::chrono::steady_clock::now() + 20s;
        while (!stop && std::chrono::steady_clock::now() < deadline) {
          const bool was_revoked = revoked;
          auto res = server_->Call("GET", "/v1/events", nullptr, key);
          if (res.status == 200) {
            ++served;
            if (was_revoked) ++after_revoke_ok;
            for (const Json body = Body(res); const Json& e : body.value("data", Json::array())) {
              if (e["tenant_id"] != "T") ++wrong;
            }
          } else if (res.status != 401) {
            ++wrong;
          }
        }
      });
    }
    std::this_thread::sleep_for(150ms);
    auto [code, out] =
        WebhookdProcess::RunCommand({"keys", "revoke", id}, {{"DATABASE_URL", db_.url()}});
    EXPECT_EQ(code, 0) << out;
    revoked = true;
    std::this_thread::sleep_for(150ms);
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_EQ(server_->Call("GET", "/v1/events", nullptr, key).status, 401);
  }
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(after_revoke_ok.load(), 0) << "a revoked key was served";
  EXPECT_GT(served.load(), 0);
}

}  // namespace
}  // namespace webhookd::testing::tenants_e2e_test
