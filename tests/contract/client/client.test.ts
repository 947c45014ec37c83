// A client generated from docs/openapi.json (openapi-typescript + openapi-fetch), used the
// way a producer would: the types come from the description, so a route or field the
// server does not have fails to compile, and one it answers differently fails here.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import createClient from "openapi-fetch";

import type { paths } from "./generated/schema.js";

const baseUrl = process.env.WEBHOOKD_URL;
const key = process.env.WEBHOOKD_API_KEY;
assert.ok(baseUrl && key, "set WEBHOOKD_URL and WEBHOOKD_API_KEY");

const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });

test("a generated client publishes an event and reads it back", async () => {
  const created = await client.POST("/v1/destinations", {
    body: { url: "http://127.0.0.1:9/unused", event_types: ["order.*"], description: "ts" },
  });
  assert.equal(created.response.status, 201);
  assert.ok(created.data);
  const destination = created.data.id;

  const idempotencyKey = `ts-${randomUUID()}`;
  const published = await client.POST("/v1/events", {
    params: { header: { "Idempotency-Key": idempotencyKey } },
    body: { type: "order.created", payload: { id: 42, total: "9.99", lines: [1, 2] } },
  });
  assert.equal(published.response.status, 202);
  assert.ok(published.data);
  const event = published.data.id;
  assert.deepEqual(
    published.data.deliveries.map((d) => d.destination_id),
    [destination],
  );

  // The same key and body again: the original answer, marked as a replay.
  const again = await client.POST("/v1/events", {
    params: { header: { "Idempotency-Key": idempotencyKey } },
    body: { type: "order.created", payload: { id: 42, total: "9.99", lines: [1, 2] } },
  });
  assert.equal(again.response.status, 202);
  assert.equal(again.response.headers.get("Idempotent-Replayed"), "true");
  assert.equal(again.data?.id, event);

  const read = await client.GET("/v1/events/{id}", { params: { path: { id: event } } });
  assert.equal(read.response.status, 200);
  assert.ok(read.data);
  assert.equal(read.data.type, "order.created");
  assert.deepEqual(read.data.payload, { id: 42, total: "9.99", lines: [1, 2] });
  assert.equal(read.data.deliveries?.[0]?.destination_id, destination);

  const listed = await client.GET("/v1/events", { params: { query: { type: "order.created" } } });
  assert.equal(listed.response.status, 200);
  assert.ok(listed.data?.data.some((e) => e.id === event));

  const missing = await client.GET("/v1/events/{id}", { params: { path: { id: "evt_999999" } } });
  assert.equal(missing.response.status, 404);
  assert.equal(missing.error?.status, 404);
});
