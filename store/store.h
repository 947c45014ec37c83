#pragma once

#include "store/catalog_store.h"
#include "store/dead_letter_store.h"
#include "store/delivery_queue.h"
#include "store/delivery_reads.h"
#include "store/destination_store.h"
#include "store/erasure_store.h"
#include "store/event_store.h"
#include "store/feed_store.h"
#include "store/key_store.h"
#include "store/operations_store.h"
#include "store/recovery_store.h"
#include "store/retention_store.h"
#include "store/secret_store.h"
#include "store/source_store.h"
#include "store/tenant_store.h"

namespace webhookd {

// Every narrow store at once: what the PostgreSQL adapter implements. Only the
// composition root (cmd/webhookd/serve.cc) and the adapter's own tests see it; every
// other consumer takes the one interface it needs.
class Store : public KeyStore,
              public DestinationStore,
              public EventStore,
              public DeliveryReads,
              public DeadLetterStore,
              public DeliveryQueue,
              public OperationsStore,
              public RetentionStore,
              public ErasureStore,
              public SecretStore,
              public TenantStore,
              public CatalogStore,
              public SourceStore,
              public FeedStore,
              public RecoveryStore {};

}  // namespace webhookd
