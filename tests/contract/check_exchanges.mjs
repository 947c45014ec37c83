#!/usr/bin/env node
// Checks recorded HTTP exchanges with webhookd against its OpenAPI document.
//
//   node check_exchanges.mjs <openapi.json> <dir>
//
// Every *.jsonl file of <dir> holds one exchange a line, as the test harness records
// them: {"method", "path", "query"?, "status", "content_type", "body", "headers"?}
// (body a string, possibly empty; headers, when recorded, an object of response
// headers). Each is matched to an operation by path template (literal segments beat
// templated ones) and method (HEAD is answered by GET), and then:
//   - its status must be one the operation documents (there are no default responses);
//   - its content type (parameters such as charset aside) must be a documented one,
//     and a response documented without content must have an empty body;
//   - a JSON body must validate against the documented schema;
//   - when headers were recorded, every required documented header must be there.
// An exchange no operation answers passes only if it is a 404 or 405 problem detail:
// the router's answer to an unknown route or a wrong method, which bad-input tests
// provoke on purpose. Anything else fails.
//
// Prints a summary, failures grouped by operation (the first 3 examples of each) and
// the operations no exchange exercised; exits 1 on any failure, 2 on bad usage.

import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  loadJson,
  deref,
  operations,
  pointer,
  escapePointer,
  bareMediaType,
  isJsonMediaType,
  SchemaCompiler,
  formatErrors,
} from "./spec.mjs";

const EXAMPLES_PER_GROUP = 3;

// A matcher for one path template: a regexp per segment and a rank for precedence.
function compileTemplate(template) {
  const segments = template.split("/").slice(1);
  const parts = segments.map((seg) => {
    if (!seg.includes("{")) return { literal: seg, rank: 2 };
    const source = seg
      .split(/(\{[^}]+\})/)
      .map((piece) => (/^\{[^}]+\}$/.test(piece) ? "[^/]+" : piece.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("");
    return { regexp: new RegExp(`^${source}$`), rank: /^\{[^}]+\}$/.test(seg) ? 0 : 1 };
  });
  return {
    template,
    parts,
    matches(pathSegments) {
      return (
        pathSegments.length === parts.length &&
        parts.every((p, i) => (p.literal !== undefined ? p.literal === pathSegments[i] : p.regexp.test(pathSegments[i])))
      );
    },
  };
}

// Positive when `a` is the more specific template: compared segment by segment from
// the left, a literal segment beats a partly templated one, which beats a whole one.
function moreSpecific(a, b) {
  for (let i = 0; i < Math.min(a.parts.length, b.parts.length); i++) {
    if (a.parts[i].rank !== b.parts[i].rank) return a.parts[i].rank - b.parts[i].rank;
  }
  return 0;
}

export class ExchangeChecker {
  constructor(doc) {
    this.doc = doc;
    this.compiler = new SchemaCompiler(doc);
    this.byPath = new Map(); // template -> {matcher, ops: Map(METHOD -> operation)}
    for (const o of operations(doc)) {
      if (!this.byPath.has(o.path)) this.byPath.set(o.path, { matcher: compileTemplate(o.path), ops: new Map() });
      this.byPath.get(o.path).ops.set(o.method, o);
    }
    this.templates = [...this.byPath.values()].sort((a, b) => moreSpecific(b.matcher, a.matcher));
    this.allOperations = [...operations(doc)].map((o) => `${o.method} ${o.path}`);
    this.problemAt = doc.components?.schemas?.Problem ? pointer("components", "schemas", "Problem") : null;
  }

  // The operation that answers `method` on `requestPath`, or null.
  find(method, requestPath) {
    const segments = requestPath.split("?")[0].split("/").slice(1);
    for (const { matcher, ops } of this.templates) {
      if (!matcher.matches(segments)) continue;
      const op = ops.get(method) ?? (method === "HEAD" ? ops.get("GET") : undefined);
      if (op) return op;
    }
    return null;
  }

  // Problems with one exchange, as strings; [] when it conforms. `key` names the
  // operation it was checked against, for grouping.
  check(x) {
    const shape = [];
    if (typeof x !== "object" || x === null || Array.isArray(x)) return { key: "(unreadable lines)", problems: ["not a JSON object"] };
    if (typeof x.method !== "string" || !x.method) shape.push("no method");
    if (typeof x.path !== "string" || !x.path.startsWith("/")) shape.push("no path starting with /");
    if (!Number.isInteger(x.status)) shape.push("no integer status");
    if (x.body !== undefined && typeof x.body !== "string") shape.push("body is not a string");
    if (shape.length) return { key: "(unreadable lines)", problems: shape };

    const method = x.method.toUpperCase();
    const body = x.body ?? "";
    const mediaType = bareMediaType(x.content_type);
    const found = this.find(method, x.path);
    if (!found) {
      const key = `(undocumented) ${method} ${x.path.split("?")[0]}`;
      if (x.status !== 404 && x.status !== 405) {
        return { key, problems: [`no operation answers ${method} ${x.path.split("?")[0]}, yet it answered ${x.status}`] };
      }
      if (mediaType !== "application/problem+json") {
        return { key, problems: [`a ${x.status} for an unknown route or method must be application/problem+json, not ${JSON.stringify(x.content_type ?? "")}`] };
      }
      const problems = this.problemAt ? this.validateJson(this.problemAt, body, method) : [];
      return { key: "(unrouted 404/405)", problems, unrouted: true };
    }

    const key = `${found.method} ${found.path}`;
    const raw = found.op.responses?.[String(x.status)];
    if (!raw) {
      const documented = Object.keys(found.op.responses ?? {}).join(", ");
      return { key, problems: [`status ${x.status} is not documented (documented: ${documented})`] };
    }
    const responseAt = `${found.at}/responses/${x.status}`;
    const { value: response, at } = deref(this.doc, raw, responseAt);
    const problems = [];

    if (x.headers && typeof x.headers === "object") {
      const got = new Map(Object.entries(x.headers).map(([k, v]) => [k.toLowerCase(), v]));
      for (const [name, rawHeader] of Object.entries(response.headers ?? {})) {
        const { value: header } = deref(this.doc, rawHeader);
        if (header.required && !got.has(name.toLowerCase())) problems.push(`header ${name} is missing`);
      }
    }

    const content = response.content ?? {};
    const types = Object.keys(content);
    if (types.length === 0) {
      if (body !== "") problems.push(`status ${x.status} is documented without a body, yet one came (${body.length} bytes)`);
      return { key, problems };
    }
    const documentedType = types.find((t) => {
      const d = t.toLowerCase();
      return d === mediaType || d === "*/*" || (d.endsWith("/*") && mediaType.startsWith(d.slice(0, -1)));
    });
    if (!documentedType) {
      problems.push(`content type ${JSON.stringify(x.content_type ?? "")} is not documented for ${x.status} (documented: ${types.join(", ")})`);
      return { key, problems };
    }
    const schema = content[documentedType].schema;
    if (method === "HEAD" || !schema || !isJsonMediaType(mediaType)) return { key, problems };
    problems.push(...this.validateJson(`${at}/content/${escapePointer(documentedType)}/schema`, body, method));
    return { key, problems };
  }

  validateJson(schemaAt, body, method) {
    if (method === "HEAD") return [];
    let value;
    try {
      value = JSON.parse(body);
    } catch (e) {
      return [`the body is not JSON: ${e.message}`];
    }
    const validate = this.compiler.validatorAt(schemaAt);
    return validate(value) ? [] : formatErrors(validate.errors);
  }
}

// [{file, line, exchange | error}] for every non-blank line of every *.jsonl in dir.
export function readExchanges(dir) {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl") && statSync(path.join(dir, f)).isFile())
    .sort();
  const out = [];
  for (const f of files) {
    const lines = readFileSync(path.join(dir, f), "utf8").split("\n");
    lines.forEach((text, i) => {
      if (!text.trim()) return;
      const where = { file: f, line: i + 1 };
      try {
        out.push({ ...where, exchange: JSON.parse(text) });
      } catch (e) {
        out.push({ ...where, error: `not JSON: ${e.message}` });
      }
    });
  }
  return { files, records: out };
}

// Checks every record; returns counts, failure groups and unexercised operations.
export function checkRecords(doc, records) {
  const checker = new ExchangeChecker(doc);
  const covered = new Set();
  const failures = new Map(); // key -> [{where, summary, problems}]
  let unrouted = 0;
  for (const r of records) {
    const x = r.exchange;
    const result = r.error ? { key: "(unreadable lines)", problems: [r.error] } : checker.check(x);
    if (result.unrouted && !result.problems.length) unrouted++;
    if (!r.error && !result.key.startsWith("(")) covered.add(result.key);
    if (result.problems.length) {
      if (!failures.has(result.key)) failures.set(result.key, []);
      const readable = !r.error && x !== null && typeof x === "object";
      const query = readable && typeof x.query === "string" && x.query && !String(x.path).includes("?") ? `?${x.query.replace(/^\?/, "")}` : "";
      const summary = readable ? `${x.method ?? "?"} ${x.path ?? "(no path)"}${query} -> ${x.status ?? "?"} ${x.content_type ?? ""}`.trim() : "";
      failures.get(result.key).push({ where: `${r.file}:${r.line}`, summary, problems: result.problems });
    }
  }
  const never = checker.allOperations.filter((k) => !covered.has(k));
  const failed = [...failures.values()].reduce((n, list) => n + list.length, 0);
  return { total: records.length, covered, operations: checker.allOperations.length, unrouted, failures, failed, never };
}

function report(result, files, dir) {
  const lines = [];
  lines.push(
    `${result.total} exchanges in ${files.length} file(s) of ${dir}; ` +
      `${result.covered.size} of ${result.operations} operations covered; ` +
      `${result.unrouted} unrouted 404/405 probe(s) accepted; ${result.failed} failure(s)`,
  );
  for (const [key, list] of [...result.failures.entries()].sort()) {
    lines.push("", `FAIL ${key}: ${list.length} exchange(s)`);
    for (const f of list.slice(0, EXAMPLES_PER_GROUP)) {
      lines.push(`  ${f.where}${f.summary ? "  " + f.summary : ""}`);
      for (const p of f.problems) lines.push(`      ${p}`);
    }
    if (list.length > EXAMPLES_PER_GROUP) lines.push(`  … and ${list.length - EXAMPLES_PER_GROUP} more`);
  }
  if (result.never.length) {
    lines.push("", `never exercised (${result.never.length}):`);
    for (const k of result.never) lines.push(`  ${k}`);
  }
  return lines.join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.length !== 2 || args.includes("--help")) {
    console.error("usage: node check_exchanges.mjs <openapi.json> <dir of *.jsonl>");
    process.exit(2);
  }
  const [specPath, dir] = args;
  let doc, files, records;
  try {
    ({ doc } = loadJson(specPath));
    ({ files, records } = readExchanges(dir));
  } catch (e) {
    console.error(`error: ${e.message}`);
    process.exit(2);
  }
  if (records.length === 0) {
    console.error(`error: no exchanges in ${dir} (no *.jsonl file, or only blank lines)`);
    process.exit(1);
  }
  const result = checkRecords(doc, records);
  console.log(report(result, files, dir));
  process.exit(result.failed ? 1 : 0);
}
