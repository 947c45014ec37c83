// A JSON Schema (draft 7) as the rows of a field table: one row per property, nested
// ones named by their path ("customer.email", "items[].sku"), each with its type,
// whether it is required, its constraints and its description. Local references
// ("#/definitions/money") are followed once per path; anything this does not read is
// still in the schema itself, which the catalog page shows beside the table.

const MAX_ROWS = 500;
const MAX_DEPTH = 12;

// Keywords shown as constraints, in this order, each as "keyword value".
const CONSTRAINTS = [
  'format', 'pattern', 'minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum',
  'multipleOf', 'minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties',
  'maxProperties',
];

function isSchema(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function literal(value) {
  return JSON.stringify(value);
}

function pointer(root, ref) {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let at = root;
  for (const raw of ref.slice(2).split('/')) {
    let key;
    try {
      key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return undefined;
    }
    if (!isSchema(at) && !Array.isArray(at)) return undefined;
    if (!Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

function jsonType(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function unique(list) {
  return [...new Set(list)];
}

// A property name as a path step: .name, or ["odd name"] when it is not a plain word.
function step(prefix, name) {
  if (/^[A-Za-z_$][\w$-]*$/.test(name)) return prefix ? `${prefix}.${name}` : name;
  return `${prefix}[${literal(name)}]`;
}

export function schemaFields(schema) {
  const rows = [];
  let truncated = false;

  // The schema `s` stands for, with a local $ref followed; `seen` holds the refs
  // already followed on this path, so a recursive definition stops.
  const resolve = (s, seen) => {
    let current = s;
    let recursive = false;
    const refs = new Set(seen);
    while (isSchema(current) && typeof current.$ref === 'string') {
      if (refs.has(current.$ref)) {
        recursive = true;
        break;
      }
      refs.add(current.$ref);
      const target = pointer(schema, current.$ref);
      if (target === undefined) break;
      // Draft 7 ignores a $ref's siblings, but a description next to it is what the
      // author meant to show.
      const description = current.description;
      current = isSchema(target) && description !== undefined && target.description === undefined
        ? { ...target, description } : target;
    }
    return { s: current, seen: refs, recursive };
  };

  const typeOf = (s, seen) => {
    if (s === true || s === undefined) return 'any';
    if (s === false) return 'nothing';
    if (!isSchema(s)) return 'any';
    if (typeof s.$ref === 'string') {
      const r = resolve(s, seen);
      return r.recursive || isSchema(r.s) && typeof r.s.$ref === 'string'
        ? `see ${s.$ref}` : typeOf(r.s, r.seen);
    }
    let types = null;
    if (Array.isArray(s.type)) types = s.type.map(String);
    else if (typeof s.type === 'string') types = [s.type];
    if (types) {
      return types.map((t) => (t === 'array' ? arrayType(s, seen) : t)).join(' or ');
    }
    if (Object.hasOwn(s, 'const')) return jsonType(s.const);
    if (Array.isArray(s.enum)) return unique(s.enum.map(jsonType)).join(' or ');
    if (isSchema(s.properties) || Array.isArray(s.required)) return 'object';
    if (s.items !== undefined) return arrayType(s, seen);
    for (const key of ['oneOf', 'anyOf']) {
      if (Array.isArray(s[key]) && s[key].length) {
        return unique(s[key].map((alt) => typeOf(alt, seen))).join(' or ');
      }
    }
    if (Array.isArray(s.allOf) && s.allOf.length) {
      const parts = unique(s.allOf.map((alt) => typeOf(alt, seen)).filter((t) => t !== 'any'));
      return parts.length === 1 ? parts[0] : parts.length ? parts.join(' and ') : 'any';
    }
    return 'any';
  };

  const arrayType = (s, seen) => {
    if (Array.isArray(s.items)) return 'array (tuple)';
    if (s.items === undefined || s.items === true) return 'array';
    return `array of ${typeOf(s.items, seen)}`;
  };

  const constraintsOf = (s) => {
    if (!isSchema(s)) return [];
    const out = [];
    if (Array.isArray(s.enum)) out.push(`one of ${s.enum.map(literal).join(', ')}`);
    if (Object.hasOwn(s, 'const')) out.push(`always ${literal(s.const)}`);
    for (const key of CONSTRAINTS) {
      if (s[key] !== undefined && s[key] !== null && typeof s[key] !== 'object') {
        out.push(`${key} ${s[key]}`);
      }
    }
    if (s.uniqueItems === true) out.push('unique items');
    if (s.additionalProperties === false) out.push('no other properties');
    if (Object.hasOwn(s, 'default')) out.push(`default ${literal(s.default)}`);
    return out;
  };

  // The properties and required names of an object schema, its allOf parts included.
  const objectParts = (s, seen, depth = 0) => {
    const properties = [];
    const required = new Set();
    if (!isSchema(s) || depth > 4) return { properties, required, seen };
    if (isSchema(s.properties)) {
      for (const [name, sub] of Object.entries(s.properties)) properties.push([name, sub]);
    }
    if (Array.isArray(s.required)) for (const name of s.required) required.add(String(name));
    if (Array.isArray(s.allOf)) {
      for (const part of s.allOf) {
        const r = resolve(part, seen);
        if (r.recursive) continue;
        const inner = objectParts(r.s, r.seen, depth + 1);
        for (const p of inner.properties) {
          if (!properties.some(([name]) => name === p[0])) properties.push(p);
        }
        for (const name of inner.required) required.add(name);
      }
    }
    return { properties, required, seen };
  };

  const push = (row) => {
    if (rows.length >= MAX_ROWS) {
      truncated = true;
      return false;
    }
    rows.push(row);
    return true;
  };

  // The rows of the properties of object schema `s`, named under `prefix`.
  const walkObject = (s, prefix, seen, depth) => {
    const { properties, required } = objectParts(s, seen);
    for (const [name, sub] of properties) {
      if (!walkProperty(step(prefix, name), sub, required.has(name), seen, depth)) return false;
    }
    if (isSchema(s) && isSchema(s.additionalProperties)) {
      const r = resolve(s.additionalProperties, seen);
      if (!push({
        path: prefix ? `${prefix}.*` : '*',
        type: typeOf(r.s, r.seen),
        required: false,
        constraints: constraintsOf(r.s),
        description: isSchema(r.s) && typeof r.s.description === 'string' ? r.s.description : 'any other key',
      })) return false;
    }
    return true;
  };

  const walkProperty = (path, sub, required, seen, depth) => {
    const r = resolve(sub, seen);
    const s = r.s;
    const row = {
      path,
      type: r.recursive ? `see ${sub.$ref}` : typeOf(s, r.seen),
      required,
      constraints: constraintsOf(s),
      description: isSchema(s) && typeof s.description === 'string' ? s.description
        : isSchema(s) && typeof s.title === 'string' ? s.title : '',
    };
    if (!push(row)) return false;
    if (r.recursive || !isSchema(s) || depth >= MAX_DEPTH) return true;
    if (objectParts(s, r.seen).properties.length || isSchema(s.additionalProperties)) {
      return walkObject(s, path, r.seen, depth + 1);
    }
    if (isSchema(s.items)) {
      const item = resolve(s.items, r.seen);
      if (item.recursive) return true;
      if (objectParts(item.s, item.seen).properties.length || isSchema(item.s.additionalProperties)) {
        return walkObject(item.s, `${path}[]`, item.seen, depth + 1);
      }
      for (const c of constraintsOf(item.s)) row.constraints.push(`each: ${c}`);
    }
    return true;
  };

  if (isSchema(schema)) {
    const root = resolve(schema, new Set());
    if (!root.recursive && isSchema(root.s)) walkObject(root.s, '', root.seen, 0);
  }
  return { rows, truncated };
}
