#pragma once

#include <string_view>

// Every SQL statement of webhookd, named; each is prepared under its name on every
// connection. DDL lives only in migrations/.
namespace webhookd::pg {

struct Query {
  std::string_view name;
  std::string_view sql;
};

// Timestamps leave the database as text in UTC (the session's TimeZone is UTC).

// ---- API keys ----
inline constexpr Query kCreateApiKey{"create_api_key", R"sql(
  INSERT INTO api_keys (name, role, key_hash) VALUES ($1, $2, $3)
  RETURNING id, name, role, created_at, revoked_at)sql"};

inline constexpr Query kEnsureAdminKey{"ensure_admin_key", R"sql(
  INSERT INTO api_keys (name, role, key_hash) VALUES ('bootstrap', 'admin', $1)
  ON CONFLICT (key_hash) DO UPDATE SET role = 'admin', revoked_at = NULL)sql"};

inline constexpr Query kListApiKeys{"list_api_keys", R"sql(
  SELECT id, name, role, created_at, revoked_at FROM api_keys ORDER BY id)sql"};

inline constexpr Query kRevokeApiKey{"revoke_api_key", R"sql(
  UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id)sql"};

inline constexpr Query kFindApiKey{"find_api_key", R"sql(
  SELECT id, name, role, created_at, revoked_at, key_hash FROM api_keys
   WHERE key_hash = $1 AND revoked_at IS NULL)sql"};

// ---- destinations ----
#define WEBHOOKD_DESTINATION_COLUMNS                                                   \
  "id, url, description, to_json(event_types)::text, secret, headers::text, enabled, " \
  "max_in_flight, created_at, updated_at"

inline constexpr Query kCreateDestination{"create_destination",
                                          "INSERT INTO destinations (url, description, "
                                          "event_types, secret, headers, enabled, max_in_flight)"
                                          " VALUES ($1, $2, $3::text[], $4, $5::jsonb, $6, "
                                          "$7::int) RETURNING " WEBHOOKD_DESTINATION_COLUMNS};

inline constexpr Query kGetDestination{"get_destination",
                                       "SELECT " WEBHOOKD_DESTINATION_COLUMNS
                                       " FROM destinations WHERE id = $1 AND deleted_at IS NULL"};

inline constexpr Query kListDestinations{
    "list_destinations",
    "SELECT " WEBHOOKD_DESTINATION_COLUMNS
    " FROM destinations"
    " WHERE deleted_at IS NULL AND ($1::bigint IS NULL OR id < $1) ORDER BY id DESC LIMIT $2"};

// $4 and $8 say whether event_types and max_in_flight were given (NULL is a value there).
inline constexpr Query kUpdateDestination{
    "update_destination",
    "UPDATE destinations SET url = coalesce($2, url), description = coalesce($3, description),"
    " event_types = CASE WHEN $4::boolean THEN $5::text[] ELSE event_types END,"
    " secret = coalesce($6, secret), headers = coalesce($7::jsonb, headers),"
    " enabled = coalesce($8::boolean, enabled),"
    " max_in_flight = CASE WHEN $9::boolean THEN $10::int ELSE max_in_flight END, updated_at = "
    "now()"
    " WHERE id = $1 AND deleted_at IS NULL RETURNING " WEBHOOKD_DESTINATION_COLUMNS};

#undef WEBHOOKD_DESTINATION_COLUMNS

inline constexpr Query kDeleteDestination{"delete_destination", R"sql(
  UPDATE destinations SET deleted_at = now(), enabled = false, updated_at = now()
   WHERE id = $1 AND deleted_at IS NULL RETURNING id)sql"};

inline constexpr Query kCancelDestinationDeliveries{"cancel_destination_deliveries", R"sql(
  UPDATE deliveries SET status = 'cancelled', next_attempt_at = NULL, lease_until = NULL,
         claim_token = NULL, updated_at = now()
   WHERE destination_id = $1 AND status IN ('pending', 'in_flight'))sql"};

// ---- events ----
inline constexpr Query kInsertEvent{"insert_event", R"sql(
  INSERT INTO events (type, payload) VALUES ($1, $2) RETURNING id, created_at)sql"};

// "p.*" matches every type starting with "p."; an empty list matches every type.
inline constexpr Query kFanOut{"fan_out", R"sql(
  INSERT INTO deliveries (event_id, destination_id, next_attempt_at)
  SELECT $1, t.id, now() FROM destinations t
   WHERE t.enabled AND t.deleted_at IS NULL
     AND (cardinality(t.event_types) = 0
          OR EXISTS (SELECT 1 FROM unnest(t.event_types) p
                      WHERE p = $2 OR (right(p, 2) = '.*' AND starts_with($2, left(p, -1)))))
   ORDER BY t.id
  RETURNING id, destination_id, created_at)sql"};

inline constexpr Query kFanOutTargeted{"fan_out_targeted", R"sql(
  INSERT INTO deliveries (event_id, destination_id, next_attempt_at)
  SELECT $1, t.id, now() FROM destinations t WHERE t.id = $2 AND t.enabled AND t.deleted_at IS NULL
  RETURNING id, destination_id, created_at)sql"};

// A whole group of ingests in one statement: ids drawn first so each row's deliveries
// can be matched back to its request by `ord`. A row with a key hash ($3) is ingested only
// if that API key is live; otherwise its `ord` comes back with a NULL id.
inline constexpr Query kInsertEventGroup{"insert_event_group", R"sql(
  WITH input AS (
    SELECT t.type, t.payload, t.key_hash, t.ord
      FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t(type, payload, key_hash, ord)),
  ids AS (
    SELECT ord, type, payload, nextval(pg_get_serial_sequence('events', 'id')) AS id FROM input x
     WHERE x.key_hash IS NULL
        OR EXISTS (SELECT 1 FROM api_keys k WHERE k.key_hash = x.key_hash AND k.revoked_at IS NULL)),
  ev AS (
    INSERT INTO events (id, type, payload) OVERRIDING SYSTEM VALUE
    SELECT id, type, payload FROM ids ORDER BY ord RETURNING id),
  dl AS (
    INSERT INTO deliveries (event_id, destination_id, next_attempt_at)
    SELECT i.id, t.id, now() FROM ids i JOIN destinations t
        ON t.enabled AND t.deleted_at IS NULL
       AND (cardinality(t.event_types) = 0
            OR EXISTS (SELECT 1 FROM unnest(t.event_types) p
                        WHERE p = i.type OR (right(p, 2) = '.*' AND starts_with(i.type, left(p, -1)))))
     ORDER BY i.id, t.id
    RETURNING id, event_id, destination_id)
  SELECT x.ord, i.id, now(), d.id, d.destination_id
    FROM input x LEFT JOIN ids i ON i.ord = x.ord LEFT JOIN dl d ON d.event_id = i.id
   ORDER BY x.ord, d.id)sql"};

inline constexpr Query kCountEvents{"count_events", R"sql(
  SELECT count(*) FROM events WHERE id = ANY($1::bigint[]))sql"};

inline constexpr Query kLiveDestinationExists{"live_destination_exists", R"sql(
  SELECT 1 FROM destinations WHERE id = $1 AND deleted_at IS NULL)sql"};

// Takes the key unless a live record holds it; waits for a concurrent writer of the
// same key to finish, so one key makes one event.
inline constexpr Query kTakeIdempotencyKey{"take_idempotency_key", R"sql(
  INSERT INTO idempotency_keys (key, request_hash, event_id) VALUES ($1, $2, $3)
  ON CONFLICT (key) DO UPDATE SET request_hash = EXCLUDED.request_hash,
     event_id = EXCLUDED.event_id, created_at = now()
   WHERE idempotency_keys.created_at < now() - interval '24 hours'
  RETURNING event_id)sql"};

inline constexpr Query kGetIdempotencyKey{"get_idempotency_key", R"sql(
  SELECT request_hash, event_id FROM idempotency_keys
   WHERE key = $1 AND created_at >= now() - interval '24 hours')sql"};

inline constexpr Query kNotifyWakeup{"notify_wakeup", R"sql(
  SELECT pg_notify('webhookd_wakeup', ''))sql"};

inline constexpr Query kGetEvent{"get_event", R"sql(
  SELECT id, type, payload, created_at FROM events WHERE id = $1)sql"};

inline constexpr Query kListEvents{"list_events", R"sql(
  SELECT id, type, payload, created_at FROM events
   WHERE ($1::bigint IS NULL OR id < $1) AND ($2::text IS NULL OR type = $2)
     AND ($3::timestamptz IS NULL OR created_at >= $3)
     AND ($4::timestamptz IS NULL OR created_at < $4)
   ORDER BY id DESC LIMIT $5)sql"};

// ---- deliveries and attempts ----
#define WEBHOOKD_DELIVERY_COLUMNS                                          \
  "id, event_id, destination_id, status, attempt_count, next_attempt_at, " \
  "last_attempt_at, last_status_code, last_error, created_at, updated_at"

inline constexpr Query kGetDelivery{
    "get_delivery", "SELECT " WEBHOOKD_DELIVERY_COLUMNS " FROM deliveries WHERE id = $1"};

inline constexpr Query kEventDeliveries{"event_deliveries",
                                        "SELECT " WEBHOOKD_DELIVERY_COLUMNS
                                        " FROM deliveries WHERE event_id = $1 ORDER BY id"};

inline constexpr Query kListDeliveries{
    "list_deliveries",
    "SELECT " WEBHOOKD_DELIVERY_COLUMNS
    " FROM deliveries"
    " WHERE ($1::bigint IS NULL OR id < $1) AND ($2::bigint IS NULL OR destination_id = $2)"
    " AND ($3::text IS NULL OR status = $3) ORDER BY id DESC LIMIT $4"};

#undef WEBHOOKD_DELIVERY_COLUMNS

inline constexpr Query kListAttempts{"list_attempts", R"sql(
  SELECT delivery_id, attempt_number, started_at, duration_ms, status_code, error,
         response_body, outcome
    FROM attempts WHERE delivery_id = $1 ORDER BY attempt_number)sql"};

// ---- the worker ----
// Claims are serialised by an advisory lock so the per-destination caps hold across
// workers; the claim is a function (migrations/0003_claim_function.sql) so that the lock
// and the claim take one round trip and no client-side transaction.
// $1 batch size, $2 lease in microseconds, $3 claim token, $4 default per-destination cap.
inline constexpr Query kClaimDue{"claim_due", R"sql(
  SELECT * FROM webhookd_claim($1::int, $2::bigint, $3::bigint, $4::int))sql"};

// One statement for a whole batch of attempt outcomes; rows whose claim token no longer
// matches are left alone and get no attempt row (joined on the token too, so a stale
// record of a delivery applied in the same batch gets none either).
inline constexpr Query kRecordOutcomes{"record_outcomes", R"sql(
  WITH u AS (
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::timestamptz[], $5::int[],
                         $6::int[], $7::text[], $8::text[], $9::text[], $10::text[],
                         $11::bigint[], $12::text[], $13::boolean[])
      AS u(id, token, attempt_number, started_at, duration_ms, status_code, error, body,
           outcome, next_status, wait_us, reason, disable)),
  upd AS (
    UPDATE deliveries d
       SET status = u.next_status, attempt_count = u.attempt_number,
           cycle_attempts = d.cycle_attempts + 1,
           next_attempt_at = CASE WHEN u.next_status = 'pending'
                                  THEN now() + u.wait_us * interval '1 microsecond' END,
           lease_until = NULL, claim_token = NULL, last_attempt_at = u.started_at,
           last_status_code = u.status_code, last_error = u.error, updated_at = now()
      FROM u
     WHERE d.id = u.id AND d.claim_token = u.token AND d.status = 'in_flight'
    RETURNING d.id, d.event_id, d.destination_id, u.token),
  att AS (
    INSERT INTO attempts (delivery_id, attempt_number, started_at, duration_ms, status_code,
                          error, response_body, outcome)
    SELECT u.id, u.attempt_number, u.started_at, u.duration_ms, u.status_code, u.error,
           u.body, u.outcome
      FROM u JOIN upd ON upd.id = u.id AND upd.token = u.token),
  dl AS (
    INSERT INTO dead_letters (delivery_id, event_id, destination_id, reason, attempt_count,
                              last_status_code, last_error)
    SELECT u.id, upd.event_id, upd.destination_id, u.reason, u.attempt_number,
           u.status_code, u.error
      FROM u JOIN upd ON upd.id = u.id AND upd.token = u.token
     WHERE u.next_status = 'dead_lettered'),
  dis AS (
    UPDATE destinations t SET enabled = false, updated_at = now()
     WHERE t.id IN (SELECT upd.destination_id FROM u JOIN upd
                     ON upd.id = u.id AND upd.token = u.token WHERE u.disable))
  SELECT id FROM upd)sql"};

inline constexpr Query kReleaseClaims{"release_claims", R"sql(
  UPDATE deliveries d SET status = 'pending', next_attempt_at = now(), lease_until = NULL,
         claim_token = NULL, updated_at = now()
    FROM unnest($1::bigint[], $2::bigint[]) AS u(id, token)
   WHERE d.id = u.id AND d.claim_token = u.token AND d.status = 'in_flight')sql"};

inline constexpr Query kRequeueExpired{"requeue_expired", R"sql(
  UPDATE deliveries SET status = 'pending', lease_until = NULL, claim_token = NULL,
         updated_at = now()
   WHERE status = 'in_flight' AND lease_until < now())sql"};

// Per enabled destination, through the same index the claim walks (a disabled
// destination's backlog is never scanned).
inline constexpr Query kNextDueAt{"next_due_at", R"sql(
  SELECT min(n.at) FROM destinations t CROSS JOIN LATERAL (
    SELECT d.next_attempt_at AS at FROM deliveries d
     WHERE d.destination_id = t.id AND d.status = 'pending'
     ORDER BY d.destination_id, d.next_attempt_at LIMIT 1) n
   WHERE t.enabled)sql"};

// Both partial indexes together cover exactly the unfinished rows.
inline constexpr Query kCountDeliveries{"count_deliveries", R"sql(
  SELECT count(*) FILTER (WHERE status = 'pending'),
         count(*) FILTER (WHERE status = 'in_flight'),
         count(*) FILTER (WHERE created_at < now() - interval '24 hours')
    FROM deliveries WHERE status IN ('pending', 'in_flight'))sql"};

// $1: the window in microseconds.
inline constexpr Query kStats{"stats", R"sql(
  WITH a AS (
    SELECT count(*) AS attempts,
           count(*) FILTER (WHERE outcome = 'retryable') AS retryable,
           count(*) FILTER (WHERE outcome = 'success') AS successes,
           coalesce(avg(attempt_number) FILTER (WHERE outcome = 'success'), 0)::float8 AS avg_success,
           count(*) FILTER (WHERE attempt_number = 2) AS second,
           count(*) FILTER (WHERE attempt_number = 2 AND outcome = 'success') AS second_ok
      FROM attempts WHERE started_at >= now() - $1::bigint * interval '1 microsecond'),
  dl AS (
    SELECT count(*) AS n FROM dead_letters
     WHERE dead_lettered_at >= now() - $1::bigint * interval '1 microsecond'),
  g AS (
    SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
           count(*) FILTER (WHERE status = 'in_flight') AS in_flight,
           count(*) FILTER (WHERE created_at < now() - interval '24 hours') AS old
      FROM deliveries WHERE status IN ('pending', 'in_flight'))
  SELECT a.attempts, a.retryable, a.successes, a.avg_success, a.second, a.second_ok, dl.n,
         g.pending, g.in_flight, g.old
    FROM a, dl, g)sql"};

// ---- dead letters ----
#define WEBHOOKD_DEAD_LETTER_FILTER                                                    \
  " ($1::bigint IS NULL OR destination_id = $1) AND ($2::text IS NULL OR reason = $2)" \
  " AND ($3::timestamptz IS NULL OR dead_lettered_at >= $3)"                           \
  " AND ($4::timestamptz IS NULL OR dead_lettered_at < $4)"

inline constexpr Query kListDeadLetters{
    "list_dead_letters",
    "SELECT id, delivery_id, event_id, destination_id, reason, attempt_count, last_status_code,"
    " last_error, dead_lettered_at, replayed_at FROM dead_letters WHERE" WEBHOOKD_DEAD_LETTER_FILTER
    " AND ($5::bigint IS NULL OR id < $5) ORDER BY id DESC LIMIT $6"};

// A replay restarts the schedule (cycle_attempts = 0) but keeps attempt_count, so the
// attempt log counts on.
#define WEBHOOKD_REPLAY_DELIVERIES                                                            \
  " UPDATE deliveries d SET status = 'pending', cycle_attempts = 0, next_attempt_at = now()," \
  " lease_until = NULL, claim_token = NULL, updated_at = now()"                               \
  " FROM dl WHERE d.id = dl.delivery_id AND d.status = 'dead_lettered'"

inline constexpr Query kReplayDeadLetter{
    "replay_dead_letter",
    "WITH dl AS (UPDATE dead_letters x SET replayed_at = now()"
    " WHERE x.id = $1 AND x.replayed_at IS NULL AND EXISTS (SELECT 1 FROM destinations t"
    " WHERE t.id = x.destination_id AND t.deleted_at IS NULL) RETURNING "
    "delivery_id)" WEBHOOKD_REPLAY_DELIVERIES " RETURNING d.id"};

inline constexpr Query kDeadLetterState{"dead_letter_state", R"sql(
  SELECT x.replayed_at IS NOT NULL, t.deleted_at IS NOT NULL
    FROM dead_letters x JOIN destinations t ON t.id = x.destination_id WHERE x.id = $1)sql"};

// One chunk of a bulk replay; SKIP LOCKED lets two bulk replays share the work without
// either replaying a dead letter the other took.
inline constexpr Query kReplayDeadLetterChunk{
    "replay_dead_letter_chunk",
    "WITH dl AS (UPDATE dead_letters x SET replayed_at = now() WHERE x.id IN ("
    " SELECT id FROM dead_letters WHERE replayed_at IS NULL AND" WEBHOOKD_DEAD_LETTER_FILTER
    " AND EXISTS (SELECT 1 FROM destinations t WHERE t.id = dead_letters.destination_id"
    " AND t.deleted_at IS NULL) ORDER BY id LIMIT $5 FOR UPDATE SKIP LOCKED)"
    " RETURNING delivery_id), r AS (" WEBHOOKD_REPLAY_DELIVERIES
    " RETURNING 1)"
    " SELECT count(*) FROM dl"};

#undef WEBHOOKD_DEAD_LETTER_FILTER
#undef WEBHOOKD_REPLAY_DELIVERIES

// ---- readiness ----
inline constexpr Query kAppliedMigrations{"applied_migrations", R"sql(
  SELECT version FROM schema_migrations ORDER BY version)sql"};

inline constexpr Query kAllQueries[] = {kCreateApiKey,
                                        kEnsureAdminKey,
                                        kListApiKeys,
                                        kRevokeApiKey,
                                        kFindApiKey,
                                        kCreateDestination,
                                        kGetDestination,
                                        kListDestinations,
                                        kUpdateDestination,
                                        kDeleteDestination,
                                        kCancelDestinationDeliveries,
                                        kInsertEvent,
                                        kInsertEventGroup,
                                        kCountEvents,
                                        kFanOut,
                                        kFanOutTargeted,
                                        kLiveDestinationExists,
                                        kTakeIdempotencyKey,
                                        kGetIdempotencyKey,
                                        kNotifyWakeup,
                                        kGetEvent,
                                        kListEvents,
                                        kGetDelivery,
                                        kEventDeliveries,
                                        kListDeliveries,
                                        kListAttempts,
                                        kClaimDue,
                                        kRecordOutcomes,
                                        kReleaseClaims,
                                        kRequeueExpired,
                                        kNextDueAt,
                                        kCountDeliveries,
                                        kStats,
                                        kListDeadLetters,
                                        kReplayDeadLetter,
                                        kDeadLetterState,
                                        kReplayDeadLetterChunk,
                                        kAppliedMigrations};

}  // namespace webhookd::pg
