// What lint.mjs, check_exchanges.mjs and routes.mjs share: reading the document,
// following its local $refs, walking its operations, and compiling its schemas with
// Ajv's draft 2020-12 (the dialect of OpenAPI 3.1).

import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

// Reads and parses a JSON document; throws an Error whose message names the file.
export function loadJson(path) {
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new Error(`cannot read ${path}: ${e.message}`);
  }
  try {
    return { text, doc: JSON.parse(text) };
  } catch (e) {
    throw new Error(`${path} is not valid JSON: ${e.message}`);
  }
}

export function escapePointer(segment) {
  return String(segment).replaceAll("~", "~0").replaceAll("/", "~1");
}

export function pointer(...segments) {
  return "#" + segments.map((s) => "/" + escapePointer(s)).join("");
}

// The value at a local reference such as "#/components/schemas/Problem".
export function resolvePointer(doc, ref) {
  if (typeof ref !== "string" || !ref.startsWith("#")) {
    throw new Error(`only local references are supported: ${JSON.stringify(ref)}`);
  }
  if (ref === "#") return doc;
  if (!ref.startsWith("#/")) throw new Error(`not a JSON pointer: ${ref}`);
  let value = doc;
  for (const raw of ref.slice(2).split("/")) {
    const unescape = (s) => s.replaceAll("~1", "/").replaceAll("~0", "~");
    let key = unescape(raw);
    if (value !== null && typeof value === "object" && !Object.hasOwn(value, key)) {
      // A pointer in a URI fragment may also be percent-encoded ("%7Bid%7D").
      try {
        key = unescape(decodeURIComponent(raw));
      } catch {
        // not percent-encoded after all
      }
    }
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) {
      throw new Error(`unresolved reference ${ref}`);
    }
    value = value[key];
  }
  return value;
}

// Follows Reference Objects until a real object; returns it with the pointer it was
// found at, so that what is compiled from it can be cached by place.
export function deref(doc, value, at) {
  const seen = new Set();
  while (value && typeof value === "object" && typeof value.$ref === "string") {
    if (seen.has(value.$ref)) throw new Error(`reference cycle through ${value.$ref}`);
    seen.add(value.$ref);
    at = value.$ref;
    value = resolvePointer(doc, value.$ref);
  }
  return { value, at };
}

// Every operation of `paths`, as {path, method ("GET"), op, at (its pointer), pathItem}.
export function* operations(doc) {
  for (const [path, rawItem] of Object.entries(doc.paths ?? {})) {
    const { value: pathItem, at } = deref(doc, rawItem, pointer("paths", path));
    for (const m of METHODS) {
      if (pathItem && pathItem[m]) {
        yield { path, method: m.toUpperCase(), op: pathItem[m], at: `${at}/${m}`, pathItem };
      }
    }
  }
}

// The parameters in force for an operation: the path item's, overridden by the
// operation's own with the same name and location.
export function parametersOf(doc, { op, pathItem }) {
  const byKey = new Map();
  for (const raw of [...(pathItem.parameters ?? []), ...(op.parameters ?? [])]) {
    const { value } = deref(doc, raw);
    byKey.set(`${value.in}:${value.name}`, value);
  }
  return [...byKey.values()];
}

export function isJsonMediaType(mediaType) {
  return mediaType === "application/json" || /^[a-z0-9.+-]+\/[a-z0-9.-]+\+json$/.test(mediaType);
}

// "Application/JSON; charset=utf-8" -> "application/json".
export function bareMediaType(contentType) {
  return String(contentType ?? "")
    .split(";")[0]
    .trim()
    .toLowerCase();
}

const BASE = "urn:webhookd:openapi";

// Rewrites "#/components/schemas/X" to the $defs of the one schema document Ajv holds.
function rewriteRefs(value, where) {
  if (Array.isArray(value)) return value.map((v, i) => rewriteRefs(v, `${where}/${i}`));
  if (value === null || typeof value !== "object") return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "$ref" && typeof v === "string") {
      const m = /^#\/components\/schemas\/([^/]+)$/.exec(v);
      if (!m) throw new Error(`${where}: a schema may only refer to #/components/schemas/…, not ${v}`);
      out[k] = `${BASE}#/$defs/${m[1]}`;
    } else {
      out[k] = rewriteRefs(v, `${where}/${escapePointer(k)}`);
    }
  }
  return out;
}

// Compiles the document's schemas with Ajv in strict mode, each once.
export class SchemaCompiler {
  constructor(doc) {
    this.doc = doc;
    this.cache = new Map();
    this.ajv = new Ajv2020({
      strict: true,
      strictTypes: false, // OpenAPI schemas may say `pattern` on a ["string", "null"]
      allErrors: true,
      allowUnionTypes: true,
    });
    addFormats(this.ajv);
    // OpenAPI's own schema keywords: annotations only.
    this.ajv.addVocabulary(["example", "xml", "externalDocs", "discriminator"]);
    const schemas = doc.components?.schemas ?? {};
    this.componentNames = Object.keys(schemas);
    this.ajv.addSchema({ $id: BASE, $defs: rewriteRefs(schemas, "#/components/schemas") });
  }

  // A validate function for the schema at `at` (a pointer into the document).
  validatorAt(at) {
    let validate = this.cache.get(at);
    if (validate) return validate;
    const schema = resolvePointer(this.doc, at);
    // A bare reference shares the component's validator: each schema compiles once.
    if (schema && typeof schema.$ref === "string" && Object.keys(schema).length === 1 && schema.$ref !== at) {
      validate = this.validatorAt(schema.$ref);
      this.cache.set(at, validate);
      return validate;
    }
    const m = /^#\/components\/schemas\/([^/]+)$/.exec(at);
    if (m) {
      validate = this.ajv.getSchema(`${BASE}#/$defs/${m[1]}`);
      if (!validate) throw new Error(`no schema at ${at}`);
    } else {
      validate = this.ajv.compile(rewriteRefs(schema, at));
    }
    this.cache.set(at, validate);
    return validate;
  }
}

// Ajv's errors as short lines: "/data/0/health: must have required property 'circuit'".
export function formatErrors(errors, max = 5) {
  const lines = (errors ?? []).map((e) => {
    let line = `${e.instancePath || "/"}: ${e.message}`;
    if (e.keyword === "additionalProperties" || e.keyword === "unevaluatedProperties") {
      line += ` (${JSON.stringify(e.params.additionalProperty ?? e.params.unevaluatedProperty)})`;
    } else if (e.keyword === "enum") {
      line += ` ${JSON.stringify(e.params.allowedValues)}`;
    }
    return line;
  });
  const unique = [...new Set(lines)];
  return unique.length > max
    ? [...unique.slice(0, max), `… and ${unique.length - max} more`]
    : unique;
}
