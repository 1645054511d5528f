// Logging in to the web page as a browser does, for the page's tests.
import { expect } from 'vitest';
import type { UiServer } from '../../src/ui/server.js';

/** Log in through the form POST; the session cookie as the browser would send it back. */
export async function login(server: UiServer, token: string): Promise<{ cookie: string; setCookie: string }> {
  const r = await fetch(new URL('/login', server.url), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  expect(r.status).toBe(303);
  const setCookie = r.headers.get('set-cookie')!;
  return { cookie: setCookie.split(';')[0]!, setCookie };
}

/** The page's CSRF token for this session, as the page itself carries it. */
export async function csrfOf(server: UiServer, cookie: string): Promise<string> {
  const html = await (await fetch(server.url, { headers: { cookie } })).text();
  return /name="csrf-token" content="([^"]+)"/.exec(html)![1]!;
}
