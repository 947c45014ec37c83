#!/usr/bin/env node
// Checks that docs/openapi.json is a valid OpenAPI 3.1 document, and holds to the
// project's own rules for it. Exits 1 with one line per problem, 2 on bad usage.
//
//   node lint.mjs [path/to/openapi.json]     (default: ../../docs/openapi.json)
//
// Beyond the OpenAPI 3.1 JSON Schema (checked by @seriousme/openapi-schema-validator):
//   - no key appears twice in one object (JSON.parse would silently keep the last);
//   - every local $ref resolves;
//   - every operation has a unique camelCase operationId and a summary;
//   - every status is explicit: no "default" and no "4XX" ranges under paths;
//   - every 4xx/5xx answer is application/problem+json;
//   - every {name} of a path template is a required path parameter and vice versa;
//   - /v1/ routes need the bearer key, the others need none;
//   - every schema compiles with Ajv (draft 2020-12, strict), and every example
//     validates against its schema.

import { fileURLToPath } from "node:url";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import {
  loadJson,
  deref,
  operations,
  parametersOf,
  pointer,
  resolvePointer,
  SchemaCompiler,
  formatErrors,
} from "./spec.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

// Keys repeated within one object, found by scanning the text (JSON.parse hides them).
export function duplicateKeys(text) {
  const found = [];
  const stack = []; // {keys: Set, expectKey: bool} per open object; null per open array
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\n") line++;
    else if (c === "{") stack.push({ keys: new Set(), expectKey: true });
    else if (c === "[") stack.push(null);
    else if (c === "}" || c === "]") stack.pop();
    else if (c === ",") {
      const top = stack.at(-1);
      if (top) top.expectKey = true;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const top = stack.at(-1);
      if (top && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1));
        if (top.keys.has(key)) found.push(`line ${line}: key ${JSON.stringify(key)} appears twice`);
        top.keys.add(key);
        top.expectKey = false;
      }
      i = j;
    }
  }
  return found;
}

function* walk(value, at) {
  yield { value, at };
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) yield* walk(v, `${at}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`);
  }
}

// Pointers of every Schema Object the document holds outside components/schemas.
function* inlineSchemas(doc) {
  for (const { value, at } of walk(doc, "#")) {
    if (at.startsWith("#/components/schemas/")) continue;
    if (value && typeof value === "object" && !Array.isArray(value) && "schema" in value) {
      if (value.schema && typeof value.schema === "object") yield { schema: value.schema, at: `${at}/schema` };
    }
  }
}

export async function lint(specPath) {
  const errors = [];
  const warnings = [];
  const { text, doc } = loadJson(specPath);

  errors.push(...duplicateKeys(text));

  const validator = new Validator({ strict: false });
  const result = await validator.validate(structuredClone(doc));
  if (!result.valid) {
    for (const e of [].concat(result.errors ?? [])) {
      errors.push(`not valid OpenAPI: ${e.instancePath || "/"} ${e.message ?? JSON.stringify(e)}${e.params ? " " + JSON.stringify(e.params) : ""}`);
    }
  }
  if (!/^3\.1\.\d+$/.test(String(doc.openapi))) errors.push(`openapi is ${JSON.stringify(doc.openapi)}, not 3.1.x`);

  // Every local reference resolves; no other kind is used.
  for (const { value, at } of walk(doc, "#")) {
    if (value && typeof value === "object" && typeof value.$ref === "string") {
      try {
        resolvePointer(doc, value.$ref);
      } catch (e) {
        errors.push(`${at}: ${e.message}`);
      }
    }
  }
  if (errors.length) return { errors, warnings }; // the rest assumes a sound document

  const ids = new Map();
  for (const o of operations(doc)) {
    const name = `${o.method} ${o.path}`;
    const { op } = o;
    if (typeof op.operationId !== "string" || !/^[a-z][a-zA-Z0-9]*$/.test(op.operationId)) {
      errors.push(`${name}: operationId ${JSON.stringify(op.operationId)} is missing or not camelCase`);
    } else if (ids.has(op.operationId)) {
      errors.push(`${name}: operationId ${op.operationId} is also used by ${ids.get(op.operationId)}`);
    } else {
      ids.set(op.operationId, name);
    }
    if (typeof op.summary !== "string" || !op.summary.trim()) errors.push(`${name}: no summary`);

    // Explicit statuses only, errors as problem details.
    for (const [status, raw] of Object.entries(op.responses ?? {})) {
      if (!/^[1-5][0-9][0-9]$/.test(status)) {
        errors.push(`${name}: response "${status}": every status must be explicit (no default, no ranges)`);
        continue;
      }
      const { value: response } = deref(doc, raw);
      if (Number(status) >= 400) {
        const types = Object.keys(response.content ?? {});
        if (types.length !== 1 || types[0] !== "application/problem+json") {
          errors.push(`${name}: ${status} must be application/problem+json, not ${JSON.stringify(types)}`);
        }
      }
    }
    if (!Object.keys(op.responses ?? {}).some((s) => /^[23]/.test(s))) errors.push(`${name}: no success response`);

    // Path template parameters.
    const templated = [...o.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    const params = parametersOf(doc, o);
    for (const t of templated) {
      const p = params.find((p) => p.in === "path" && p.name === t);
      if (!p) errors.push(`${name}: {${t}} has no path parameter`);
      else if (p.required !== true) errors.push(`${name}: path parameter ${t} must be required`);
    }
    for (const p of params) {
      if (p.in === "path" && !templated.includes(p.name)) errors.push(`${name}: path parameter ${p.name} is not in the path`);
    }

    // Who needs a key.
    const security = op.security ?? doc.security ?? [];
    const needsKey = security.length > 0 && !security.some((s) => Object.keys(s).length === 0);
    if (o.path.startsWith("/v1/") && !needsKey) errors.push(`${name}: a /v1/ route must require the bearer key`);
    if (!o.path.startsWith("/v1/") && needsKey) errors.push(`${name}: an operations route must need no key (security: [])`);
  }

  // Schemas compile, strictly; examples match them.
  let compiler;
  try {
    compiler = new SchemaCompiler(doc);
  } catch (e) {
    errors.push(`components/schemas: ${e.message}`);
    return { errors, warnings };
  }
  const tryCompile = (at) => {
    try {
      return compiler.validatorAt(at);
    } catch (e) {
      errors.push(`${at}: schema does not compile: ${e.message}`);
      return null;
    }
  };
  for (const name of compiler.componentNames) {
    const at = pointer("components", "schemas", name);
    const validate = tryCompile(at);
    const examples = doc.components.schemas[name].examples ?? [];
    for (const [i, ex] of examples.entries()) {
      if (validate && !validate(ex)) errors.push(`${at}/examples/${i}: ${formatErrors(validate.errors).join("; ")}`);
    }
  }
  for (const { at } of inlineSchemas(doc)) {
    const validate = tryCompile(at);
    const holder = resolvePointer(doc, at.slice(0, -"/schema".length));
    const examples = [];
    if ("example" in holder) examples.push({ ex: holder.example, where: "example" });
    for (const [k, v] of Object.entries(holder.examples ?? {})) {
      const { value } = deref(doc, v);
      if ("value" in value) examples.push({ ex: value.value, where: `examples/${k}` });
    }
    for (const { ex, where } of examples) {
      if (validate && !validate(ex)) {
        errors.push(`${at.slice(0, -"/schema".length)}/${where}: ${formatErrors(validate.errors).join("; ")}`);
      }
    }
  }

  // Components nothing refers to are probably a mistake; not fatal.
  const refs = new Set();
  for (const { value } of walk(doc, "#")) if (value && typeof value === "object" && typeof value.$ref === "string") refs.add(value.$ref);
  for (const kind of ["schemas", "responses", "parameters", "headers"]) {
    for (const name of Object.keys(doc.components?.[kind] ?? {})) {
      if (!refs.has(pointer("components", kind, name))) warnings.push(`components/${kind}/${name} is never referred to`);
    }
  }
  return { errors, warnings, operations: ids.size };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.length > 1 || args.includes("--help")) {
    console.error("usage: node lint.mjs [openapi.json]");
    process.exit(2);
  }
  const specPath = args[0] ?? path.join(here, "..", "..", "docs", "openapi.json");
  let report;
  try {
    report = await lint(specPath);
  } catch (e) {
    console.error(`error: ${e.message}`);
    process.exit(2);
  }
  for (const w of report.warnings) console.error(`warning: ${w}`);
  for (const e of report.errors) console.error(`error: ${e}`);
  if (report.errors.length) {
    console.error(`${specPath}: ${report.errors.length} error(s)`);
    process.exit(1);
  }
  console.log(`${specPath}: valid OpenAPI 3.1, ${report.operations} operations`);
}
