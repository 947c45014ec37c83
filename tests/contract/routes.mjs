#!/usr/bin/env node
// Prints every "METHOD /path" the OpenAPI document describes, one a line, sorted.
//
//   node routes.mjs <openapi.json> [--placeholders]
//
// --placeholders writes each {name} of a path template as {}, the spelling of the
// server's own route table, so the two lists can be compared as text.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadJson, operations } from "./spec.mjs";

export function routes(doc, { placeholders = false } = {}) {
  const out = [];
  for (const { method, path: template } of operations(doc)) {
    out.push(`${method} ${placeholders ? template.replace(/\{[^}]+\}/g, "{}") : template}`);
  }
  return [...new Set(out)].sort();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const placeholders = args.includes("--placeholders");
  const rest = args.filter((a) => a !== "--placeholders");
  if (rest.length !== 1 || rest[0] === "--help") {
    console.error("usage: node routes.mjs <openapi.json> [--placeholders]");
    process.exit(2);
  }
  try {
    const { doc } = loadJson(rest[0]);
    process.stdout.write(routes(doc, { placeholders }).join("\n") + "\n");
  } catch (e) {
    console.error(`error: ${e.message}`);
    process.exit(2);
  }
}
