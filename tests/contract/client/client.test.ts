// A client generated from docs/openapi.json (openapi-typescript + openapi-fetch), used the
// way a producer would: the types come from the description, so a route or field the
// server does not have fails to compile, and one it answers differently fails here.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

test("a generated client keeps an event type with a schema and filters a destination's events", async () => {
  const name = `payment.succeeded.ts-${randomUUID().slice(0, 8)}`;
  const schema = {
    type: "object",
    required: ["id", "amount", "currency"],
    properties: {
      id: { type: "string" },
      amount: { type: "integer", minimum: 0 },
      currency: { type: "string", pattern: "^[A-Z]{3}$" },
    },
  };
  const created = await client.POST("/v1/event-types", {
    body: {
      name,
      description: "A payment was captured.",
      schema,
      examples: [{ id: "pay_1", amount: 1250, currency: "EUR" }],
    },
  });
  assert.equal(created.response.status, 201);
  assert.ok(created.data);
  assert.equal(created.data.name, name);
  assert.deepEqual(created.data.schema, schema);
  assert.equal(created.data.builtin, false);
  assert.equal(created.data.deprecated, false);

  const again = await client.POST("/v1/event-types", { body: { name } });
  assert.equal(again.response.status, 409);

  // An example the schema refuses is named by its JSON Pointer.
  const refused = await client.POST("/v1/event-types", {
    body: { name: `${name}.x`, schema, examples: [{ id: "pay_1", amount: "12.50", currency: "EUR" }] },
  });
  assert.equal(refused.response.status, 422);
  assert.deepEqual(
    refused.error?.errors?.map((e) => e.field),
    ["/examples/0/amount"],
  );

  // The catalog in name order, a page at a time; webhookd's own types are in it.
  const names: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const listed = await client.GET("/v1/event-types", {
      params: { query: { limit: 2, cursor } },
    });
    assert.equal(listed.response.status, 200);
    assert.ok(listed.data);
    assert.ok(listed.data.data.length <= 2);
    names.push(...listed.data.data.map((t) => t.name));
    if (listed.data.next_cursor === null) break;
    cursor = listed.data.next_cursor;
  }
  assert.ok(names.includes(name));
  assert.ok(names.includes("webhookd.delivery.dead_lettered"));
  assert.deepEqual(names, [...names].sort());

  const builtin = await client.GET("/v1/event-types/{name}", {
    params: { path: { name: "webhookd.delivery.dead_lettered" } },
  });
  assert.equal(builtin.data?.builtin, true);
  const readOnly = await client.PATCH("/v1/event-types/{name}", {
    params: { path: { name: "webhookd.delivery.dead_lettered" } },
    body: { deprecated: true },
  });
  assert.equal(readOnly.response.status, 403);

  const patched = await client.PATCH("/v1/event-types/{name}", {
    params: { path: { name } },
    body: { deprecated: true },
  });
  assert.equal(patched.response.status, 200);
  assert.equal(patched.data?.deprecated, true);
  assert.deepEqual(patched.data?.examples, [{ id: "pay_1", amount: 1250, currency: "EUR" }]);

  // The filter test answers as the fan-out decides.
  const filter = '$.amount >= 100 && $.currency == "EUR"';
  const yes = await client.POST("/v1/filters/test", {
    body: { filter, payload: { id: "p", amount: 1250, currency: "EUR" } },
  });
  assert.equal(yes.response.status, 200);
  assert.equal(yes.data?.matches, true);
  const no = await client.POST("/v1/filters/test", {
    body: { filter, payload: { id: "p", amount: 99, currency: "EUR" } },
  });
  assert.equal(no.data?.matches, false);
  const bad = await client.POST("/v1/filters/test", { body: { filter: "$.amount >= $min", payload: {} } });
  assert.equal(bad.response.status, 422);
  assert.equal(bad.error?.errors?.[0]?.field, "filter");

  const destination = await client.POST("/v1/destinations", {
    body: { url: "http://127.0.0.1:9/payments", event_types: [name], filter },
  });
  assert.equal(destination.response.status, 201);
  assert.ok(destination.data);
  assert.equal(destination.data.filter, filter);
  const destinationId = destination.data.id;

  const matching = await client.POST("/v1/events", {
    body: { type: name, payload: { id: "pay_2", amount: 1250, currency: "EUR" } },
  });
  assert.equal(matching.response.status, 202);
  assert.deepEqual(
    matching.data?.deliveries.map((d) => d.destination_id),
    [destinationId],
  );
  const filteredOut = await client.POST("/v1/events", {
    body: { type: name, payload: { id: "pay_3", amount: 5, currency: "USD" } },
  });
  assert.equal(filteredOut.response.status, 202);
  assert.deepEqual(filteredOut.data?.deliveries, []);

  // A payload the type's schema refuses: one error per violation, under /payload.
  const invalid = await client.POST("/v1/events", {
    body: { type: name, payload: { amount: -5, currency: "EUR" } },
  });
  assert.equal(invalid.response.status, 422);
  assert.deepEqual(
    invalid.error?.errors?.map((e) => e.field).sort(),
    ["/payload/amount", "/payload/id"],
  );

  const unfiltered = await client.PATCH("/v1/destinations/{id}", {
    params: { path: { id: destinationId } },
    body: { filter: null },
  });
  assert.equal(unfiltered.response.status, 200);
  assert.equal(unfiltered.data?.filter, null);

  const deleted = await client.DELETE("/v1/event-types/{name}", { params: { path: { name } } });
  assert.equal(deleted.response.status, 204);
  const gone = await client.GET("/v1/event-types/{name}", { params: { path: { name } } });
  assert.equal(gone.response.status, 404);
});

// A throwaway CA, a client certificate it signed with its key, and a key of nobody's
// certificate, made with the openssl command for this run alone. EC keys: fast.
function makePki(): { ca: string; cert: string; key: string; otherKey: string } {
  const dir = mkdtempSync(join(tmpdir(), "webhookd-tsclient-pki-"));
  try {
    const openssl = (...args: string[]) =>
      execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    openssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
      "-subj", "/CN=webhookd tsclient test CA");
    openssl("req", ...ec, "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=tsclient");
    openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
      "-set_serial", "2", "-days", "10", "-out", "client.pem");
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "other.key");
    const read = (name: string) => readFileSync(join(dir, name), "utf8");
    return { ca: read("ca.pem"), cert: read("client.pem"), key: read("client.key"), otherKey: read("other.key") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a generated client keeps a destination's TLS settings, the key write-only", async () => {
  const pki = makePki();
  const created = await client.POST("/v1/destinations", {
    body: {
      url: "https://127.0.0.1:9/mtls",
      tls: { client_certificate: pki.cert, client_key: pki.key, ca_certificate: pki.ca },
    },
  });
  assert.equal(created.response.status, 201);
  assert.ok(created.data?.tls);
  const id = created.data.id;
  assert.equal(created.data.tls.client_certificate, pki.cert);
  assert.equal(created.data.tls.client_key, "set");
  assert.equal(created.data.tls.ca_certificate, pki.ca);
  // The certificate was made for 10 days.
  const expires = Date.parse(created.data.tls.expires_at ?? "");
  assert.ok(expires > Date.now() + 9 * 86400e3 && expires < Date.now() + 11 * 86400e3, created.data.tls.expires_at ?? "null");
  assert.ok(!JSON.stringify(created.data).includes("PRIVATE KEY"), "the key was answered");

  const read = await client.GET("/v1/destinations/{id}", { params: { path: { id } } });
  assert.equal(read.response.status, 200);
  assert.deepEqual(read.data?.tls, created.data.tls);
  const listed = await client.GET("/v1/destinations", { params: { query: { limit: 1000 } } });
  assert.ok(!JSON.stringify(listed.data).includes("PRIVATE KEY"), "the key was listed");

  // The tls read back, "set" and expires_at included, goes back unchanged.
  const kept = await client.PATCH("/v1/destinations/{id}", {
    params: { path: { id } },
    body: { description: "mtls", tls: read.data?.tls ?? null },
  });
  assert.equal(kept.response.status, 200);
  assert.equal(kept.data?.description, "mtls");
  assert.deepEqual(kept.data?.tls, created.data.tls);

  const mismatched = await client.POST("/v1/destinations", {
    body: {
      url: "https://127.0.0.1:9/mtls",
      tls: { client_certificate: pki.cert, client_key: pki.otherKey },
    },
  });
  assert.equal(mismatched.response.status, 422);
  assert.deepEqual(mismatched.error?.errors?.map((e) => e.field), ["tls.client_key"]);
  const keyless = await client.POST("/v1/destinations", {
    body: { url: "https://127.0.0.1:9/mtls", tls: { client_certificate: pki.cert, client_key: "set" } },
  });
  assert.equal(keyless.response.status, 422);
  assert.deepEqual(keyless.error?.errors?.map((e) => e.field), ["tls.client_key"]);

  // The CA alone: the certificate and the key go.
  const caOnly = await client.PATCH("/v1/destinations/{id}", {
    params: { path: { id } },
    body: { tls: { ca_certificate: pki.ca } },
  });
  assert.equal(caOnly.response.status, 200);
  assert.deepEqual(caOnly.data?.tls, {
    client_certificate: null,
    client_key: null,
    ca_certificate: pki.ca,
    expires_at: null,
  });
  const cleared = await client.PATCH("/v1/destinations/{id}", {
    params: { path: { id } },
    body: { tls: null },
  });
  assert.equal(cleared.response.status, 200);
  assert.equal(cleared.data?.tls, null);
  const deleted = await client.DELETE("/v1/destinations/{id}", { params: { path: { id } } });
  assert.equal(deleted.response.status, 204);
});
