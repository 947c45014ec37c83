// Verifies one received webhook with the Standard Webhooks reference library, so the
// tests check webhookd's signatures against an implementation that is not webhookd's own.
//
//   VERIFY_SECRET=whsec_... node verify.mjs BODY_FILE WEBHOOK_ID WEBHOOK_TIMESTAMP WEBHOOK_SIGNATURE
//
// The secret comes from the environment so that it never shows in a process list.
// Exit 0: some signature of the header verifies; 1: none does (the reason on stderr);
// 2: bad usage.
import { readFileSync } from "node:fs";
import { Webhook } from "standardwebhooks";

const [bodyFile, id, timestamp, signature] = process.argv.slice(2);
const secret = process.env.VERIFY_SECRET;
if (!bodyFile || !id || !timestamp || signature === undefined || !secret) {
  console.error("usage: VERIFY_SECRET=whsec_... node verify.mjs BODY_FILE ID TIMESTAMP SIGNATURE");
  process.exit(2);
}
const body = readFileSync(bodyFile);
try {
  new Webhook(secret).verify(body, {
    "webhook-id": id,
    "webhook-timestamp": timestamp,
    "webhook-signature": signature,
  });
  console.log("verified");
} catch (error) {
  console.error(`not verified: ${error.message}`);
  process.exit(1);
}
