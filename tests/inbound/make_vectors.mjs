// Signs fixed requests the way each provider does, with the provider's own SDK where it
// ships a signer, and writes them with what webhookd must make of them (vectors.json).
// Everything is fixed (secrets, times, bodies), so the output is the same on every run:
// tests/inbound/check_vectors.sh regenerates it and compares with the committed file.
//
//   node tests/inbound/make_vectors.mjs [out.json]   (default: vectors.json beside this)
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods';
import '@shopify/shopify-api/adapters/node';
import { shopifyApi, ApiVersion, LogSeverity } from '@shopify/shopify-api';
import { verifySlackRequest } from '@slack/bolt';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import twilio from 'twilio';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] ?? path.join(here, 'vectors.json');

// The time every vector is verified at, and the one its signature was made at. VECTORS_NOW
// signs them at another time: inbound_sdk_e2e_test signs them now, to send them to a
// running webhookd.
const NOW = Number(process.env.VECTORS_NOW) || 1765100000;
const SIGNED_AT = NOW - 42;

function check(ok, what) {
  if (!ok) throw new Error(`the SDK's own verifier refuses ${what}`);
}

const vectors = [];
function add(vector) {
  vectors.push({ query: '', ...vector, now: NOW });
}

// ---- Stripe: webhooks.generateTestHeaderString.
{
  const stripe = new Stripe('sk_test_vectors');
  const secret = 'whsec_test_StripeVectorSecret0123456789';
  const body = JSON.stringify(
    {
      id: 'evt_1QvectorsStripe',
      object: 'event',
      type: 'payment_intent.succeeded',
      data: { object: { id: 'pi_1', amount: 2000, currency: 'eur', note: 'café ✓' } },
    },
    null,
    2,
  );
  const header = stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret,
    timestamp: SIGNED_AT,
  });
  check(
    stripe.webhooks.constructEvent(body, header, secret, 300, undefined, SIGNED_AT + 60),
    'stripe',
  );
  add({
    name: 'stripe',
    settings: { provider: 'stripe' },
    secrets: [secret],
    headers: [['Stripe-Signature', header]],
    body,
    expect: { event_type: 'stripe.payment_intent.succeeded', dedupe_key: 'evt_1QvectorsStripe' },
  });
}

// ---- GitHub: @octokit/webhooks-methods' sign.
{
  const secret = 'github vector secret';
  const body = JSON.stringify({
    action: 'opened',
    number: 7,
    pull_request: { title: 'Add inbound sources' },
    repository: { full_name: 'acme/shop' },
  });
  const header = await githubSign(secret, body);
  check(await githubVerify(secret, body, header), 'github');
  add({
    name: 'github',
    settings: { provider: 'github', type_prefix: 'gh' },
    secrets: ['the previous github secret', secret],
    headers: [
      ['X-GitHub-Event', 'pull_request'],
      ['X-GitHub-Delivery', '72d3162e-cc78-11e3-81ab-4c9367dc0958'],
      ['X-Hub-Signature-256', header],
      ['Content-Type', 'application/json'],
    ],
    body,
    expect: {
      event_type: 'gh.pull_request.opened',
      dedupe_key: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      secret_index: 1,
    },
  });
}

// ---- Shopify: no signer in its SDK, so its documented formula, the base64 HMAC-SHA256
// of the body with the app's client secret, checked with @shopify/shopify-api's
// webhooks.validate: with X-Shopify-* headers, and with the unprefixed shopify-* ones of
// its newer event deliveries.
{
  const secret = 'shpss_vector_client_secret';
  const shopify = shopifyApi({
    apiKey: 'vectors',
    apiSecretKey: secret,
    scopes: [],
    hostName: 'hooks.example.com',
    apiVersion: ApiVersion.July26,
    isEmbeddedApp: false,
    logger: { level: LogSeverity.Error },
  });
  const body = '{"id":820982911946154508,"email":"jon@example.com","total_price":"10.00"}';
  const hmac = crypto.createHmac('sha256', secret).update(body, 'utf8').digest('base64');
  for (const [name, prefix] of [
    ['shopify', 'X-Shopify-'],
    ['shopify events', 'shopify-'],
  ]) {
    const headers = [
      [`${prefix}Topic`, 'orders/create'],
      [`${prefix}Hmac-Sha256`, hmac],
      [`${prefix}Shop-Domain`, 'vectors.myshopify.com'],
      [`${prefix}API-Version`, ApiVersion.July26],
      [`${prefix}Webhook-Id`, 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043'],
      [`${prefix}Event-Id`, '98880550-7158-44d4-b7cd-2c97c8a091b5'],
      [`${prefix}Triggered-At`, '2025-12-07T09:32:38.000Z'],
    ];
    if (prefix === 'shopify-') {
      headers.push(['shopify-handle', 'vectors'], ['shopify-action', 'create'],
        ['shopify-resource-id', '820982911946154508']);
    }
    const lower = Object.fromEntries(headers.map(([k, v]) => [k.toLowerCase(), v]));
    const result = await shopify.webhooks.validate({
      rawBody: body,
      rawRequest: { headers: lower, method: 'POST', url: '/in/src_shopify' },
    });
    check(result.valid, name);
    add({
      name,
      settings: { provider: 'shopify' },
      secrets: [secret],
      headers,
      body,
      expect: {
        event_type: 'shopify.orders.create',
        dedupe_key: '98880550-7158-44d4-b7cd-2c97c8a091b5',
      },
    });
  }
}

// ---- Slack: no signer in its SDK either; its documented formula, v0= and the hex
// HMAC-SHA256 of "v0:<timestamp>:<body>" with the app's signing secret, checked with
// @slack/bolt's verifySlackRequest.
function slackSignature(secret, timestamp, body) {
  const signature =
    'v0=' + crypto.createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex');
  verifySlackRequest({
    signingSecret: secret,
    body,
    headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
    nowMilliseconds: NOW * 1000,
  });
  return signature;
}
{
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const body = JSON.stringify({
    token: 'XXYYZZ',
    team_id: 'T123ABC456',
    event: { type: 'app_mention', user: 'U123ABC456', text: '<@U0LAN0Z89> is it everything?' },
    type: 'event_callback',
    event_id: 'Ev08MFMKH6',
    event_time: 1234567890,
  });
  add({
    name: 'slack event',
    settings: { provider: 'slack' },
    secrets: [secret],
    headers: [
      ['X-Slack-Request-Timestamp', String(SIGNED_AT)],
      ['X-Slack-Signature', slackSignature(secret, SIGNED_AT, body)],
    ],
    body,
    expect: { event_type: 'slack.app_mention', dedupe_key: 'Ev08MFMKH6' },
  });
  const challenge = JSON.stringify({
    token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
    challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
    type: 'url_verification',
  });
  add({
    name: 'slack url_verification',
    settings: { provider: 'slack' },
    secrets: [secret],
    headers: [
      ['X-Slack-Request-Timestamp', String(SIGNED_AT)],
      ['X-Slack-Signature', slackSignature(secret, SIGNED_AT, challenge)],
    ],
    body: challenge,
    expect: {
      event_type: 'slack.url_verification',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      payload: '',
    },
  });
}

// ---- Twilio: getExpectedTwilioSignature, over a form body and over a JSON body's
// bodySHA256.
{
  const token = '12345678901234567890123456789012';
  const url = 'https://hooks.example.com/in/src_twilio';
  const params = {
    MessageSid: 'SM1234567890abcdef1234567890abcdef',
    AccountSid: 'AC1234567890abcdef1234567890abcdef',
    From: '+14158141829',
    To: '+14155551212',
    Body: 'Hello & welcome, café ✓ 100%',
    MessageStatus: 'delivered',
    EventType: 'message.delivered',
  };
  const body = new URLSearchParams(params).toString();
  const signature = twilio.getExpectedTwilioSignature(token, url, params);
  check(twilio.validateRequest(token, signature, url, params), 'twilio form');
  add({
    name: 'twilio form',
    settings: { provider: 'twilio', url },
    secrets: [token],
    headers: [
      ['X-Twilio-Signature', signature],
      ['I-Twilio-Idempotency-Token', 'c5d1b0e5-8c4f-4b5f-9e2a-6f1f6a1b2c3d'],
      ['Content-Type', 'application/x-www-form-urlencoded'],
    ],
    body,
    expect: {
      event_type: 'twilio.message.delivered',
      dedupe_key: 'c5d1b0e5-8c4f-4b5f-9e2a-6f1f6a1b2c3d',
      payload: JSON.stringify(params),
    },
  });

  // Twilio signs the URL as it called it; with the default port in it, webhookd's copy
  // without one still verifies (as Twilio's own validator does).
  const statusParams = { CallSid: 'CA1234567890abcdef', CallStatus: 'completed' };
  const statusBody = new URLSearchParams(statusParams).toString();
  const withPort = 'https://hooks.example.com:443/in/src_twilio';
  const statusSignature = twilio.getExpectedTwilioSignature(token, withPort, statusParams);
  check(twilio.validateRequest(token, statusSignature, url, statusParams), 'twilio with port');
  add({
    name: 'twilio signed with the default port',
    settings: { provider: 'twilio', url },
    secrets: [token],
    headers: [['X-Twilio-Signature', statusSignature]],
    body: statusBody,
    expect: {
      event_type: 'twilio.request',
      dedupe_key: statusSignature,
      payload: JSON.stringify(statusParams),
    },
  });

  const json = JSON.stringify({ ParentAccountSid: 'AC1234', Level: 'ERROR', Payload: '{"x":1}' });
  const hash = twilio.getExpectedBodyHash(json);
  const signedUrl = `${url}?bodySHA256=${hash}`;
  const jsonSignature = twilio.getExpectedTwilioSignature(token, signedUrl, {});
  check(twilio.validateRequestWithBody(token, jsonSignature, signedUrl, json), 'twilio json');
  add({
    name: 'twilio json bodySHA256',
    settings: { provider: 'twilio', url },
    secrets: [token],
    headers: [['X-Twilio-Signature', jsonSignature]],
    query: `bodySHA256=${hash}`,
    body: json,
    expect: { event_type: 'twilio.request', dedupe_key: jsonSignature },
  });
}

// ---- Standard Webhooks: standardwebhooks' Webhook.sign, webhook-* headers.
{
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = JSON.stringify({ type: 'invoice.paid', data: { id: 'in_1', amount: 12 } });
  const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
  const webhook = new StandardWebhook(secret);
  const signature = webhook.sign(id, new Date(SIGNED_AT * 1000), body);
  const headers = {
    'webhook-id': id,
    'webhook-timestamp': String(SIGNED_AT),
    'webhook-signature': signature,
  };
  add({
    name: 'standard-webhooks',
    settings: { provider: 'standard-webhooks' },
    secrets: [secret],
    headers: Object.entries(headers),
    body,
    expect: { event_type: 'standard-webhooks.invoice.paid', dedupe_key: id },
  });
}

// ---- Svix: svix's Webhook.sign, svix-* headers.
{
  const secret = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
  const body = JSON.stringify({ type: 'user.created', data: { id: 'usr_1', email: 'a@example.com' } });
  const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
  const webhook = new SvixWebhook(secret);
  const signature = webhook.sign(id, new Date(SIGNED_AT * 1000), body);
  add({
    name: 'svix',
    settings: { provider: 'standard-webhooks', type_prefix: 'clerk' },
    secrets: [secret],
    headers: [
      ['svix-id', id],
      ['svix-timestamp', String(SIGNED_AT)],
      ['svix-signature', signature],
    ],
    body,
    expect: { event_type: 'clerk.user.created', dedupe_key: id },
  });
}

// ---- Any HMAC signer: no SDK; node's own HMAC, in each algorithm and encoding.
for (const [algorithm, encoding, prefix] of [
  ['sha256', 'hex', 'sha256='],
  ['sha1', 'base64', ''],
  ['sha512', 'hex', ''],
]) {
  const secret = `hmac ${algorithm} secret`;
  const body = JSON.stringify({ partner: 'acme', change: 'price', algorithm });
  const header = prefix + crypto.createHmac(algorithm, secret).update(body).digest(encoding);
  add({
    name: `hmac ${algorithm} ${encoding}`,
    settings: {
      provider: 'hmac',
      hmac: { header: 'X-Partner-Signature', algorithm, encoding, prefix },
      event_type: 'partner.update',
      dedupe_header: 'X-Delivery',
    },
    secrets: [secret],
    headers: [
      ['X-Partner-Signature', header],
      ['X-Delivery', `delivery-${algorithm}`],
    ],
    body,
    expect: { event_type: 'hmac.partner.update', dedupe_key: `delivery-${algorithm}` },
  });
}

fs.writeFileSync(out, JSON.stringify(vectors, null, 2) + '\n');
