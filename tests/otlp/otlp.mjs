// Decoding of OTLP/HTTP trace exports for receiver.mjs and decode.mjs. The protobuf
// classes are the ones @opentelemetry/otlp-transformer generated with protobufjs from the
// opentelemetry-proto repository's .proto files, so a body is read by OpenTelemetry's
// own definitions, not by a second reading of them.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// The package's public API no longer decodes requests (it only serializes them); its
// build still ships the generated classes, which is what this pins the version for.
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');

const { ExportTraceServiceRequest, ExportTraceServiceResponse } =
  root.opentelemetry.proto.collector.trace.v1;

export const PROTOBUF = 'application/x-protobuf';
export const JSON_TYPE = 'application/json';

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

// The media type without parameters, lower case.
export function mediaType(contentType) {
  return String(contentType ?? '').split(';')[0].trim().toLowerCase();
}

// The request as plain data in OTLP/JSON's own shape (ids base64 as protobufjs writes
// bytes), the common ground both encodings are compared on.
function toPlain(message) {
  return ExportTraceServiceRequest.toObject(message, {
    longs: String,
    enums: Number,
    bytes: String,
    json: true,
  });
}

// OTLP/JSON writes the ids as hex, where protobuf's JSON mapping would use base64.
function mapIds(value, convert) {
  if (Array.isArray(value)) return value.map((v) => mapIds(v, convert));
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = ID_FIELDS.has(k) ? convert(k, v) : mapIds(v, convert);
  }
  return out;
}

function hexToBytes(field, text) {
  if (typeof text !== 'string' || !/^([0-9a-f]{2})*$/.test(text)) {
    throw new Error(`${field}: expected lower-case hex, got ${JSON.stringify(text)}`);
  }
  return Buffer.from(text, 'hex');
}

// Where `actual` differs from `expected`, as a path; null when they are the same.
function difference(expected, actual, path = '$') {
  if (typeof expected !== typeof actual || Array.isArray(expected) !== Array.isArray(actual)) {
    return `${path}: ${JSON.stringify(actual)} where ${JSON.stringify(expected)} was expected`;
  }
  if (expected === null || typeof expected !== 'object') {
    return Object.is(expected, actual)
      ? null
      : `${path}: ${JSON.stringify(actual)} where ${JSON.stringify(expected)} was expected`;
  }
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  for (const k of keys) {
    if (!(k in actual)) return `${path}.${k}: missing`;
    // An empty repeated field may be written or left out; read back it is left out.
    if (!(k in expected) && Array.isArray(actual[k]) && actual[k].length === 0) continue;
    if (!(k in expected)) return `${path}.${k}: not a field of the message or not of its type`;
    const d = difference(expected[k], actual[k], `${path}.${k}`);
    if (d) return d;
  }
  return null;
}

// A protobuf body as an ExportTraceServiceRequest. Strict: the official encoder must
// write the decoded message back byte for byte, so an unknown field (a wrong field
// number) or a field out of order fails here even when decoding let it pass.
function decodeProtobuf(body) {
  const message = ExportTraceServiceRequest.decode(body);
  const again = Buffer.from(ExportTraceServiceRequest.encode(message).finish());
  if (!again.equals(body)) {
    throw new Error(
      'protobuf body is not what the official encoder writes for what it decodes to ' +
        `(${body.length} bytes in, ${again.length} bytes re-encoded): ` +
        'an unknown field number, a wrong wire type or fields out of order',
    );
  }
  return message;
}

// An OTLP/JSON body as an ExportTraceServiceRequest. Strict: read back, the message must
// give the same document, so a misspelled field, an enum by name or an int64 as a
// number fails.
function decodeJson(body) {
  const document = JSON.parse(body.toString('utf8'));
  const message = ExportTraceServiceRequest.fromObject(
    mapIds(document, (k, v) => hexToBytes(k, v)),
  );
  const again = mapIds(toPlain(message), (k, v) => Buffer.from(v, 'base64').toString('hex'));
  const d = difference(again, document);
  if (d) throw new Error(`not OTLP/JSON as the specification writes it: ${d}`);
  return message;
}

export function decodeRequest(body, contentType) {
  switch (mediaType(contentType)) {
    case PROTOBUF:
      return decodeProtobuf(body);
    case JSON_TYPE:
      return decodeJson(body);
    default:
      throw new Error(`unsupported content type ${JSON.stringify(contentType)}`);
  }
}

function hex(bytes) {
  return bytes ? Buffer.from(bytes).toString('hex') : '';
}

// AnyValue as a flat value and its OTLP type; int64 as a decimal string, as OTLP/JSON
// writes it, so no precision is lost.
function flatValue(any) {
  if (!any) return [null, 'empty'];
  if (any.stringValue != null) return [any.stringValue, 'string'];
  if (any.boolValue != null) return [any.boolValue, 'bool'];
  if (any.intValue != null) return [any.intValue.toString(), 'int'];
  if (any.doubleValue != null) return [any.doubleValue, 'double'];
  return [null, 'other'];
}

function flatAttributes(keyValues) {
  const values = {};
  const types = {};
  for (const kv of keyValues ?? []) {
    [values[kv.key], types[kv.key]] = flatValue(kv.value);
  }
  return [values, types];
}

// One flat object per span of the request, each carrying its resource and scope.
export function normalize(message, extra = {}) {
  const lines = [];
  for (const rs of message.resourceSpans ?? []) {
    const [resource, resourceTypes] = flatAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        const [attributes, attributeTypes] = flatAttributes(span.attributes);
        lines.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          traceState: span.traceState ?? '',
          flags: span.flags ?? 0,
          name: span.name ?? '',
          kind: span.kind ?? 0,
          startTimeUnixNano: (span.startTimeUnixNano ?? 0).toString(),
          endTimeUnixNano: (span.endTimeUnixNano ?? 0).toString(),
          attributes,
          attributeTypes,
          status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
          resource,
          resourceTypes,
          scope: { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '' },
          ...extra,
        });
      }
    }
  }
  return lines;
}

// The empty ExportTraceServiceResponse, in the request's encoding.
export function successBody(contentType) {
  return mediaType(contentType) === PROTOBUF
    ? Buffer.from(ExportTraceServiceResponse.encode({}).finish())
    : Buffer.from('{}');
}
