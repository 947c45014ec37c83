// How the tests start Debian's Chromium (apt-get install chromium). playwright-core
// drives it; it never downloads a browser of its own.

import { chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM || '/usr/bin/chromium';

// Without the background-networking flags Chromium keeps calling home, which on a
// machine with no network only makes noise and delays.
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export function launchChromium() {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 30000 });
}
