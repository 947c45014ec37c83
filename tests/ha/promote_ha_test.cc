// A failover by hand: a primary with a synchronous streaming standby, the primary's
// postmaster and every backend SIGKILLed under ingest and delivery, the standby promoted
// with `pg_ctl promote`. webhookd runs on the multi-host URL throughout and must follow
// on its own (FailoverLoad checks what it must keep).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/testing/failover_load.h"
#include "tests/testing/pg_cluster.h"

namespace webhookd::testing::promote_ha_test {
namespace {

TEST(PromoteHaTest, KilledPrimaryAndAPromotedSyncStandbyLoseNoAcceptedEvent) {
  PgCluster primary;
  primary.CreateMigratedDatabase("webhookd_ha");
  auto standby = PgCluster::StandbyOf(primary);
  primary.MakeSynchronous();
  const std::string url = "postgresql://webhookd@127.0.0.1:" + std::to_string(primary.port()) +
                          ",127.0.0.1:" + std::to_string(standby->port()) +
                          "/webhookd_ha?target_session_attrs=read-write&connect_timeout=2";

  FailoverLoad load(url);
  load.Run({[&] {
    const auto killed = std::chrono::steady_clock::now();
    primary.KillPostmaster();
    // An operator's reaction time, so that webhookd is seen answering without a primary.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    standby->Promote();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  }});
  load.Check("promote failover");
}

}  // namespace
}  // namespace webhookd::testing::promote_ha_test
