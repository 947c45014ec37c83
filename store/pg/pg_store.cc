#include "store/pg/pg_store.h"

namespace webhookd::pg {

PgStore::PgStore(const std::string& url, Options options)
    : box_(std::move(options.secrets)),
      pool_(url, options.api_connections, Plans::kPerCall, options.api_acquire_timeout,
            options.api_statement_timeout),
      worker_pool_(url, options.worker_connections, Plans::kGenericByKey),
      committer_(options.committers > 0
                     ? std::make_unique<GroupCommitter>(url, options.committers,
                                                        options.api_statement_timeout)
                     : nullptr),
      keys_(pool_),
      destinations_(pool_, box_),
      events_(pool_, committer_.get()),
      delivery_reads_(pool_),
      dead_letters_(pool_),
      delivery_queue_(worker_pool_, box_),
      feeds_(pool_, box_),
      operations_(pool_),
      retention_(pool_),
      erasures_(pool_),
      recoveries_(pool_),
      secrets_(pool_, box_),
      tenants_(pool_),
      catalog_(pool_),
      sources_(pool_, box_) {}

PgStore::~PgStore() = default;

}  // namespace webhookd::pg
