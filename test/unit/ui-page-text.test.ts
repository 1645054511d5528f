// The web page shows what a model, a task or a branch name holds as text, never as markup: its
// script builds the page with DOM calls and textContent, and this guard keeps every way of turning
// a string into HTML or code out of it (an answer holding `<img src=x onerror=…>` stays text).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const PAGE = readFileSync(new URL('../../src/ui/page.html', import.meta.url), 'utf8');
const script = [...PAGE.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]).join('\n');

describe('the web page and hostile text', () => {
  it('its script never parses a string as HTML or code: no innerHTML, outerHTML, insertAdjacentHTML, document.write, eval, Function, srcdoc or on* attributes set from strings', () => {
    expect(script.length).toBeGreaterThan(1000);
    for (const sink of [
      /\.innerHTML\b/,
      /\.outerHTML\b/,
      /insertAdjacentHTML/,
      /document\.write/,
      /\beval\s*\(/,
      /\bnew Function\b/,
      /srcdoc/,
      /setAttribute\(\s*['"]on/,
      /createContextualFragment/,
      /DOMParser/,
    ])
      expect(script, String(sink)).not.toMatch(sink);
  });

  it('it sets no link or source from a string (a URL in an answer stays text), and puts ids into its API paths only encoded', () => {
    expect([...script.matchAll(/\.(href|src|action)\s*=/g)].map((m) => m[0])).toEqual([]);
    expect(script).toMatch(/encodeURIComponent\(c\.id\)/);
    expect(script).not.toMatch(/['"`]\/[^'"`]*['"`]\s*\+\s*c\.id\b/);
  });
});
