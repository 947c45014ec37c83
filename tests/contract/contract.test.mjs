// Tests of the contract tooling itself: `node --test` in this directory.
//
// The fixtures are hand-made: fixtures/good/ conforms to docs/openapi.json, and every
// line of fixtures/bad/ breaks it in one way (its "why" field, which the checker
// ignores, says which).

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { lint, duplicateKeys } from "./lint.mjs";
import { ExchangeChecker, checkRecords, readExchanges } from "./check_exchanges.mjs";
import { routes } from "./routes.mjs";
import { loadJson } from "./spec.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const specPath = path.join(here, "..", "..", "docs", "openapi.json");
const fixtures = path.join(here, "fixtures");
const { doc: spec } = loadJson(specPath);

function run(script, ...args) {
  return spawnSync(process.execPath, [path.join(here, script), ...args], { encoding: "utf8" });
}

function writeSpec(doc) {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "webhookd-contract-")), "openapi.json");
  writeFileSync(file, JSON.stringify(doc, null, 2));
  return file;
}

test("the project's document passes the lint", async () => {
  const { errors } = await lint(specPath);
  assert.deepEqual(errors, []);
  const cli = run("lint.mjs", specPath);
  assert.equal(cli.status, 0, cli.stderr);
});

test("the lint refuses what the OpenAPI schema allows but the project does not", async () => {
  const broken = structuredClone(spec);
  broken.paths["/v1/events"].get.responses.default = { description: "anything" };
  broken.paths["/v1/events"].post.operationId = "listEvents";
  broken.paths["/v1/deliveries/{id}"].parameters = [];
  broken.paths["/healthz"].get.security = [{ bearerAuth: [] }];
  broken.paths["/v1/events"].post.requestBody.content["application/json"].example = { type: "no spaces allowed" };
  const { errors } = await lint(writeSpec(broken));
  const text = errors.join("\n");
  assert.match(text, /GET \/v1\/events: response "default"/);
  assert.match(text, /operationId listEvents is also used/);
  assert.match(text, /GET \/v1\/deliveries\/\{id\}: \{id\} has no path parameter/);
  assert.match(text, /GET \/healthz: an operations route must need no key/);
  assert.match(text, /requestBody\/content\/application~1json\/example: .*type/);
  const cli = run("lint.mjs", writeSpec(broken));
  assert.equal(cli.status, 1);
});

test("the lint refuses a document that is not OpenAPI 3.1, and one with a key twice", async () => {
  const broken = structuredClone(spec);
  broken.paths["/v1/events"].get.parameters.push({ name: "x", in: "body" });
  const { errors } = await lint(writeSpec(broken));
  assert.match(errors.join("\n"), /not valid OpenAPI/);
  assert.deepEqual(duplicateKeys('{"a": {"b": 1, "c": "\\"b\\"", "b": 2}, "b": [{"b": 1}]}'), [
    'line 1: key "b" appears twice',
  ]);
});

test("every good exchange conforms and covers every operation", () => {
  const { records } = readExchanges(path.join(fixtures, "good"));
  const result = checkRecords(spec, records);
  const failures = [...result.failures.entries()].map(([k, list]) => `${k}: ${JSON.stringify(list)}`);
  assert.deepEqual(failures, []);
  assert.deepEqual(result.never, []);
  assert.equal(result.unrouted, 14);
  const cli = run("check_exchanges.mjs", specPath, path.join(fixtures, "good"));
  assert.equal(cli.status, 0, cli.stdout + cli.stderr);
  assert.match(cli.stdout, /0 failure\(s\)/);
});

test("every bad exchange fails, each for its own reason", () => {
  const dir = path.join(fixtures, "bad");
  const { records } = readExchanges(dir);
  const result = checkRecords(spec, records);
  const failed = [...result.failures.values()].flat().map((f) => f.where);
  const all = records.map((r) => `${r.file}:${r.line}`);
  assert.deepEqual(failed.sort(), all.sort(), "every line of fixtures/bad must fail");
  const cli = run("check_exchanges.mjs", specPath, dir);
  assert.equal(cli.status, 1);
  assert.match(cli.stdout, new RegExp(`${records.length} failure\\(s\\)`));
  assert.match(cli.stdout, /FAIL GET \/v1\/destinations\/\{id\}: 3 exchange/);
  assert.match(cli.stdout, /must have required property 'url'/);
  assert.match(cli.stdout, /\/tls\/client_key: must be equal to one of the allowed values \[null,"set"\]/);
  assert.match(cli.stdout, /\/auth\/client_secret: must be equal to one of the allowed values \["set"\]/);
  assert.match(cli.stdout, /must have required property 'builtin'/);
  assert.match(cli.stdout, /header Retry-After is missing/);
  assert.match(cli.stdout, /never exercised/);
});

test("an empty directory is a failure, not a pass", () => {
  const empty = mkdtempSync(path.join(tmpdir(), "webhookd-contract-"));
  const cli = run("check_exchanges.mjs", specPath, empty);
  assert.equal(cli.status, 1);
  assert.match(cli.stderr, /no exchanges/);
});

test("a literal segment beats a templated one; HEAD is answered by GET", () => {
  const doc = {
    openapi: "3.1.0",
    info: { title: "t", version: "1" },
    paths: {
      "/a/{x}": { get: { responses: { 200: { description: "t" } } } },
      "/a/b": { get: { responses: { 200: { description: "l" } } }, post: { responses: { 200: { description: "p" } } } },
      "/a/b/{y}": { delete: { responses: { 204: { description: "d" } } } },
      "/c/{x}": { post: { responses: { 200: { description: "c" } } } },
    },
  };
  const checker = new ExchangeChecker(doc);
  const where = (m, p) => {
    const op = checker.find(m, p);
    return op && `${op.method} ${op.path}`;
  };
  assert.equal(where("GET", "/a/b"), "GET /a/b");
  assert.equal(where("GET", "/a/c?q=1"), "GET /a/{x}");
  assert.equal(where("HEAD", "/a/b"), "GET /a/b");
  assert.equal(where("DELETE", "/a/b/7"), "DELETE /a/b/{y}");
  assert.equal(where("GET", "/a/"), null); // a template segment is never empty
  assert.equal(where("GET", "/c/1"), null);
  assert.equal(where("GET", "/a/b/c/d"), null);
});

test("routes lists every operation once, sorted, optionally in the server's {} spelling", () => {
  const list = routes(spec);
  assert.equal(list.length, [...new Set(list)].length);
  assert.deepEqual(list, [...list].sort());
  assert.ok(list.includes("POST /v1/admin/dead-letters/{id}/replay"));
  assert.ok(list.includes("GET /v1/admin/stats/series"));
  assert.ok(list.includes("POST /v1/filters/test"));
  assert.ok(routes(spec, { placeholders: true }).includes("POST /v1/admin/dead-letters/{}/replay"));
  assert.ok(routes(spec, { placeholders: true }).includes("PATCH /v1/event-types/{}"));
  const out = execFileSync(process.execPath, [path.join(here, "routes.mjs"), specPath], { encoding: "utf8" });
  assert.equal(out, list.join("\n") + "\n");
});

test("the fixtures are all there", () => {
  for (const kind of ["good", "bad"]) {
    const files = readdirSync(path.join(fixtures, kind)).filter((f) => f.endsWith(".jsonl"));
    assert.ok(files.length > 0, kind);
    for (const f of files) assert.ok(readFileSync(path.join(fixtures, kind, f), "utf8").trim(), f);
  }
});
