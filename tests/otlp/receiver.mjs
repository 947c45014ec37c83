// An OTLP/HTTP trace receiver for tests: takes POST /v1/traces in protobuf or JSON and
// appends one JSON line per span to a file, with the request's content type and headers.
//
//   node receiver.mjs --out FILE [--port N] [--fail N] [--retry-after SECONDS]
//
// --port 0 (the default) takes any free port; the port is printed on stdout as
// "listening on 127.0.0.1:PORT". --fail N answers 503 to the first N requests (with
// Retry-After when --retry-after is given) without recording them.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import { decodeRequest, mediaType, normalize, successBody } from './otlp.mjs';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    out: { type: 'string' },
    fail: { type: 'string', default: '0' },
    'retry-after': { type: 'string' },
  },
});
if (!args.out) {
  process.stderr.write('usage: node receiver.mjs --out FILE [--port N] [--fail N]\n');
  process.exit(2);
}
let failuresLeft = Number.parseInt(args.fail, 10);

function answer(res, status, contentType, body) {
  res.writeHead(status, { 'content-type': contentType, 'content-length': body.length });
  res.end(body);
}

function plain(res, status, text, headers = {}) {
  const body = Buffer.from(text);
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': body.length, ...headers });
  res.end(body);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    if (req.url !== '/v1/traces') return plain(res, 404, 'not found\n');
    if (req.method !== 'POST') return plain(res, 405, 'method not allowed\n');
    if (failuresLeft > 0) {
      failuresLeft -= 1;
      const headers = args['retry-after'] ? { 'retry-after': args['retry-after'] } : {};
      return plain(res, 503, 'failing on purpose\n', headers);
    }
    const contentType = req.headers['content-type'];
    let lines;
    try {
      if (req.headers['content-encoding']) throw new Error('compressed bodies are not read');
      const message = decodeRequest(Buffer.concat(chunks), contentType);
      lines = normalize(message, { contentType: mediaType(contentType), headers: req.headers });
    } catch (e) {
      process.stderr.write(`receiver.mjs: ${e.message}\n`);
      return plain(res, 400, `${e.message}\n`);
    }
    if (lines.length > 0) {
      appendFileSync(args.out, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    }
    return answer(res, 200, mediaType(contentType), successBody(contentType));
  });
});

server.listen(Number.parseInt(args.port, 10), '127.0.0.1', () => {
  process.stdout.write(`listening on 127.0.0.1:${server.address().port}\n`);
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections(); // a keep-alive client would hold close() open
  });
}
