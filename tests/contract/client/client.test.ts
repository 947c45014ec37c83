// A client generated from docs/openapi.json (openapi-typescript + openapi-fetch), used the
// way a producer would: the types come from the description, so a route or field the
// server does not have fails to compile, and one it answers differently fails here.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import createClient from "openapi-fetch";

import type { components, paths } from "./generated/schema.js";

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

// A token endpoint and a receiver on loopback (run.sh allows private destinations): the
// endpoint hands out tok-1, tok-2, … and the receiver refuses tok-1 with a 401, so the
// first attempt also gets a token refused and a new one fetched within it.
type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

async function listen(handler: Handler): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => handler(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${address.port}` };
}

test("a generated client keeps a destination's OAuth client credentials, the secret write-only", async () => {
  const tokenRequests: { authorization?: string; contentType?: string; body: string }[] = [];
  const tokens = await listen((req, body, res) => {
    tokenRequests.push({ authorization: req.headers.authorization, contentType: req.headers["content-type"], body });
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ access_token: `tok-${tokenRequests.length}`, token_type: "Bearer", expires_in: 3600 }));
  });
  const bearers: (string | undefined)[] = [];
  const receiver = await listen((req, _body, res) => {
    bearers.push(req.headers.authorization);
    res.writeHead(req.headers.authorization === "Bearer tok-1" ? 401 : 204);
    res.end();
  });
  try {
    const secret = "a client secret: 100% ours";
    const auth: components["schemas"]["DestinationAuthInput"] = {
      type: "oauth2_client_credentials",
      token_url: `${tokens.url}/oauth2/token`,
      client_id: "tsclient",
      client_secret: secret,
      scope: "webhooks:write",
    };
    const eventType = `oauth.ts-${randomUUID().slice(0, 8)}`;
    const created = await client.POST("/v1/destinations", {
      body: { url: `${receiver.url}/hook`, event_types: [eventType], auth },
    });
    assert.equal(created.response.status, 201);
    assert.ok(created.data?.auth);
    const id = created.data.id;
    assert.deepEqual(created.data.auth, { ...auth, client_secret: "set" });
    assert.ok(!JSON.stringify(created.data).includes(secret), "the secret was answered");

    const read = await client.GET("/v1/destinations/{id}", { params: { path: { id } } });
    assert.equal(read.response.status, 200);
    assert.deepEqual(read.data?.auth, created.data.auth);
    const listed = await client.GET("/v1/destinations", { params: { query: { limit: 1000 } } });
    assert.ok(listed.data?.data.some((d) => d.id === id && d.auth?.client_secret === "set"));
    assert.ok(!JSON.stringify(listed.data).includes(secret), "the secret was listed");

    // One attempt: a 401 for tok-1, a new token, then the receiver's 204.
    const published = await client.POST("/v1/events", {
      body: { type: eventType, payload: { id: 1 }, destination_id: id },
    });
    assert.equal(published.response.status, 202);
    const delivery = published.data?.deliveries[0]?.id;
    assert.ok(delivery);
    let status = "";
    for (let i = 0; i < 100 && status !== "succeeded"; i++) {
      const got = await client.GET("/v1/deliveries/{id}", { params: { path: { id: delivery } } });
      status = got.data?.status ?? "";
      if (status !== "succeeded") await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, "succeeded");
    assert.deepEqual(bearers, ["Bearer tok-1", "Bearer tok-2"]);
    const attempts = await client.GET("/v1/deliveries/{id}/attempts", { params: { path: { id: delivery } } });
    assert.deepEqual(attempts.data?.data.map((a) => [a.status_code, a.outcome]), [[204, "success"]]);
    // RFC 6749 4.4: a form POST, the client in HTTP Basic, each part form-encoded.
    assert.equal(tokenRequests.length, 2);
    assert.equal(tokenRequests[0]?.contentType, "application/x-www-form-urlencoded");
    assert.equal(tokenRequests[0]?.body, "grant_type=client_credentials&scope=webhooks%3Awrite");
    const basic = `tsclient:${encodeURIComponent(secret).replace(/%20/g, "+")}`;
    assert.equal(tokenRequests[0]?.authorization, `Basic ${Buffer.from(basic).toString("base64")}`);

    // The auth read back, "set" and all, goes back with another scope; the secret stays.
    const kept = await client.PATCH("/v1/destinations/{id}", {
      params: { path: { id } },
      body: { description: "oauth", auth: { ...(read.data?.auth ?? auth), scope: null } },
    });
    assert.equal(kept.response.status, 200);
    assert.equal(kept.data?.description, "oauth");
    assert.deepEqual(kept.data?.auth, { ...auth, client_secret: "set", scope: null });
    const again = await client.POST("/v1/events", {
      body: { type: eventType, payload: { id: 2 }, destination_id: id },
    });
    assert.equal(again.response.status, 202);
    for (let i = 0; i < 100 && tokenRequests.length < 3; i++) await new Promise((r) => setTimeout(r, 100));
    // New credentials, a new token: asked for with the kept secret and no scope.
    assert.equal(tokenRequests[2]?.authorization, tokenRequests[0]?.authorization);
    assert.equal(tokenRequests[2]?.body, "grant_type=client_credentials");

    const refused = await client.POST("/v1/destinations", {
      body: { url: `${receiver.url}/hook`, auth: { ...auth, client_secret: "set" } },
    });
    assert.equal(refused.response.status, 422);
    assert.deepEqual(refused.error?.errors?.map((e) => e.field), ["auth.client_secret"]);
    const malformed = await client.POST("/v1/destinations", {
      body: {
        url: `${receiver.url}/hook`,
        // Not what the description allows: sent anyway, to see the server refuse it.
        auth: { ...auth, token_url: "ftp://127.0.0.1/token", client_id: "", audience: "x" } as typeof auth,
      },
    });
    assert.equal(malformed.response.status, 422);
    assert.deepEqual(
      malformed.error?.errors?.map((e) => e.field).sort(),
      ["auth.audience", "auth.client_id", "auth.token_url"],
    );

    const cleared = await client.PATCH("/v1/destinations/{id}", { params: { path: { id } }, body: { auth: null } });
    assert.equal(cleared.response.status, 200);
    assert.equal(cleared.data?.auth, null);
    const noSecret = await client.PATCH("/v1/destinations/{id}", {
      params: { path: { id } },
      body: { auth: { ...auth, client_secret: "set" } },
    });
    assert.equal(noSecret.response.status, 422);
    assert.deepEqual(noSecret.error?.errors?.map((e) => e.field), ["auth.client_secret"]);
    const deleted = await client.DELETE("/v1/destinations/{id}", { params: { path: { id } } });
    assert.equal(deleted.response.status, 204);
  } finally {
    for (const { server } of [tokens, receiver]) {
      server.close();
      server.closeAllConnections();
    }
  }
});

test("a generated client keeps a broker destination's settings, the password write-only", async () => {
  // No broker needs to listen: the destination is written and read back, nothing is sent.
  const password = "a broker password: 100% ours";
  const broker: components["schemas"]["BrokerSettingsInput"] = {
    stream: `hooks-${randomUUID().slice(0, 8)}`,
    max_len: 1000,
    username: "hooks",
    password,
  };
  const created = await client.POST("/v1/destinations", {
    body: { url: "redis://127.0.0.1:6399/2", event_types: ["broker.ts"], broker, enabled: false },
  });
  assert.equal(created.response.status, 201);
  assert.ok(created.data?.broker);
  const id = created.data.id;
  assert.deepEqual(created.data.broker, { ...broker, username: "set", password: "set" });
  assert.ok(!JSON.stringify(created.data).includes(password), "the password was answered");

  const listed = await client.GET("/v1/destinations", { params: { query: { limit: 1000 } } });
  assert.ok(listed.data?.data.some((d) => d.id === id && d.broker?.password === "set"));
  assert.ok(!JSON.stringify(listed.data).includes(password), "the password was listed");

  // A setting of another transport is refused, naming it.
  const refused = await client.PATCH("/v1/destinations/{id}", {
    params: { path: { id } },
    body: { broker: { ...broker, password: "set", topic: "orders" } },
  });
  assert.equal(refused.response.status, 422);
  assert.deepEqual(
    refused.error?.errors?.map((e) => e.field),
    ["broker.topic"],
  );
  // "set" keeps the stored credentials.
  const kept = await client.PATCH("/v1/destinations/{id}", {
    params: { path: { id } },
    body: { broker: { stream: broker.stream, username: "set", password: "set" } },
  });
  assert.equal(kept.response.status, 200);
  assert.deepEqual(kept.data?.broker, { stream: broker.stream, username: "set", password: "set" });
});
