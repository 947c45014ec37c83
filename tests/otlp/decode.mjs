// Prints the spans of one OTLP/HTTP trace export body, one JSON object a line, as
// receiver.mjs records them (without headers: there was no request).
//
//   node decode.mjs FILE CONTENT_TYPE
//
// Exits 1, saying why on stderr, when the body does not decode.
import { readFileSync } from 'node:fs';

import { decodeRequest, mediaType, normalize } from './otlp.mjs';

const [file, contentType] = process.argv.slice(2);
if (!file || !contentType) {
  process.stderr.write('usage: node decode.mjs FILE CONTENT_TYPE\n');
  process.exit(2);
}
try {
  const message = decodeRequest(readFileSync(file), contentType);
  for (const line of normalize(message, { contentType: mediaType(contentType) })) {
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
} catch (e) {
  process.stderr.write(`decode.mjs: ${e.message}\n`);
  process.exit(1);
}
