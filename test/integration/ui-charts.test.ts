// The web page's charts, timeline and list sorting/filtering in a real headless Chromium:
// against a real conversation that prunes its context (the drops must be drawn), and with fixed
// data for screenshots compared against committed ones (pixel-diff ratio, tolerant).
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUiServer, type UiServer } from '../../src/ui/server.js';
import type { ChartData } from '../../src/ui/charts.js';
import { createHarness, scriptModel, tempRepo, uid, type Harness } from '../helpers/harness.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';
import { prose } from '../helpers/prose.js';

// Screenshots compare pixels: fixed font hinting and colour profile.
const ARGS = [...CHROMIUM_ARGS, '--font-render-hinting=none', '--force-color-profile=srgb'];
const SHOTS = join(import.meta.dirname, '__screenshots__');
/** Share of pixels that may differ (fonts and anti-aliasing move a little between machines). */
const MAX_DIFF_RATIO = 0.02;

const TOKEN = 'charts-token-' + Math.random().toString(36).slice(2);

let h: Harness;
let ui: UiServer;
let browser: Browser;

beforeAll(async () => {
  h = await createHarness();
  ui = await startUiServer({ store: h.store, client: h.client, port: 0, token: { token: TOKEN, name: 'charts', source: 'env' } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});
afterAll(async () => {
  await browser?.close();
  await ui?.close();
  await h?.close();
});

/** Compare a screenshot with the committed one; write it when there is none yet (or UPDATE_SCREENSHOTS=1). */
async function matchesScreenshot(png: Buffer, name: string): Promise<void> {
  const file = join(SHOTS, name);
  if (!existsSync(file) || process.env.UPDATE_SCREENSHOTS === '1') {
    await writeFile(file, png);
    return;
  }
  const want = PNG.sync.read(await readFile(file));
  const got = PNG.sync.read(png);
  expect({ width: got.width, height: got.height }, name).toEqual({ width: want.width, height: want.height });
  const diff = new PNG({ width: want.width, height: want.height });
  const changed = pixelmatch(want.data, got.data, diff.data, want.width, want.height, { threshold: 0.1 });
  const ratio = changed / (want.width * want.height);
  if (ratio > MAX_DIFF_RATIO) await writeFile(file.replace(/\.png$/, '.actual.png'), png);
  expect(ratio, `${name}: ${changed} pixels differ`).toBeLessThanOrEqual(MAX_DIFF_RATIO);
}

describe('charts of a real conversation', () => {
  it('draws context per turn against the safe zone with the prunes as drops, usage per turn and the timeline', async () => {
    const files: Record<string, string> = {};
    const turns = [];
    for (let n = 1; n <= 6; n++) {
      files[`data/${n}.txt`] = prose(n, 12 * 1024);
      turns.push({ say: `Reading part ${n}.\n<read_file>\n<path>data/${n}.txt</path>\n</read_file>` });
    }
    turns.push({ say: '<attempt_completion>\n<result>read everything</result>\n</attempt_completion>' });
    const workspace = await tempRepo(files);
    const id = uid('charts');
    const model = await scriptModel({ default_chunk: 4096, turns });
    const handle = await h.start({
      id,
      task: 'Read the data files',
      workspace,
      config: { model, contextWindow: 16_000, safeZone: 12_000, keepRecentTurns: 1 },
    });
    await handle.result();

    const data = (await (await fetch(`${ui.url}api/conversations/${id}/charts`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as ChartData;
    expect(data.safeZone).toBe(12_000);
    expect(data.turns.map((t) => t.turn)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const t of data.turns) expect(t.contextAfter!).toBeLessThanOrEqual(12_000);
    const pruned = data.turns.filter((t) => t.pruned.length && t.contextBefore! > t.contextAfter!);
    expect(pruned.length).toBeGreaterThan(0);
    expect(data.activities.filter((a) => a.type === 'modelTurn')).toHaveLength(7);

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${ui.url}?token=${TOKEN}`); // the login cookie
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${ui.url}c/${encodeURIComponent(id)}`);
    await page.locator('#contextChart').waitFor({ timeout: 30_000 });
    expect(await page.locator('#contextChart circle.pt').count()).toBe(7);
    expect(await page.locator('#contextChart line.drop').count()).toBe(pruned.length);
    expect(await page.locator('#contextChart line.safe').count()).toBe(1);
    expect(await page.locator('#usageChart rect.bar').count()).toBe(7);
    expect(await page.locator('#timeline rect.act').count()).toBe(data.activities.filter((a) => a.startedAt).length);
    // The safe zone line sits above every point: the context never crossed it.
    const safeY = Number(await page.locator('#contextChart line.safe').getAttribute('y1'));
    for (const cy of await page.locator('#contextChart circle.pt').evaluateAll((cs) => cs.map((c) => Number(c.getAttribute('cy')))))
      expect(cy).toBeGreaterThan(safeY);
    expect(errors).toEqual([]);
    await page.close();
  });
});

/** The legacy workflow's step names: a session's page never shows them. */
const RETIRED_STEPS = ['prepareContext', 'callModel', 'parseResponse', 'runTool', 'endTurn'];

describe('a 6-turn session on the page', () => {
  it("shows the prose without tool markup (each call once, as its card) and a timeline lane per turn with the session's step names", async () => {
    const turns = [];
    for (let n = 1; n <= 5; n++)
      turns.push({
        say: `Writing part ${n} of the notes.\n<write_to_file>\n<path>notes/${n}.md</path>\n<content>\n# Part ${n}\n\nline ${n}\n</content>\n</write_to_file>`,
      });
    turns.push({ say: 'All five parts are written.\n<attempt_completion>\n<result>wrote notes/1.md to notes/5.md</result>\n</attempt_completion>' });
    const workspace = await tempRepo();
    const id = uid('six');
    const model = await scriptModel({ default_chunk: 24, turns });
    await (await h.start({ id, task: 'Write the notes in five parts', workspace, config: { model } })).result();

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 1 });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${ui.url}?token=${TOKEN}`); // the login cookie
    await page.goto(`${ui.url}c/${encodeURIComponent(id)}`);
    await page.locator('#final').waitFor({ timeout: 30_000 });
    await page.locator('#timeline rect.act').first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(200); // the prose is drawn at most every 50 ms

    // The transcript: prose without the XML, each tool call once, as its card.
    const transcript = (await page.locator('#transcript').textContent()) ?? '';
    expect(transcript).not.toMatch(/<\/?(write_to_file|attempt_completion|path|content|result)>/);
    const prose = await page.locator('.msg .text').allTextContents();
    expect(prose).toEqual([1, 2, 3, 4, 5].map((n) => `Writing part ${n} of the notes.`).concat('All five parts are written.'));
    expect(await page.locator('.tool', { hasText: 'write_to_file' }).count()).toBe(5);

    // The timeline: a lane per turn (and the setup), the session's steps in it, its legend.
    expect(await page.locator('#timeline text.lane').allTextContents()).toEqual(['setup', 'turn 1', 'turn 2', 'turn 3', 'turn 4', 'turn 5', 'turn 6']);
    const bars = await page
      .locator('#timeline rect.act')
      .evaluateAll((rs) => rs.map((r) => [r.getAttribute('data-type'), Number(r.getAttribute('data-lane'))] as const));
    for (let turn = 1; turn <= 6; turn++)
      expect(
        bars.filter(([type, lane]) => type === 'modelTurn' && lane === turn),
        `turn ${turn}`,
      ).toHaveLength(1);
    for (let turn = 1; turn <= 5; turn++)
      expect(
        bars.filter(([type, lane]) => type === 'toolCall' && lane === turn),
        `turn ${turn}`,
      ).toHaveLength(1);
    expect(bars.filter(([, lane]) => lane === 0).map(([type]) => type)).toContain('initConversation');
    expect(bars.find(([type]) => type === 'finishSession')?.[1]).toBe(6);
    const legend = await page.locator('#charts .legend .step').allTextContents();
    expect(legend.map((l) => l.replace('■ ', ''))).toEqual(
      expect.arrayContaining(['modelTurn', 'toolCall', 'endTurnRecord', 'finishSession', 'initConversation']),
    );
    expect(legend.map((l) => l.replace('■ ', '')).filter((n) => RETIRED_STEPS.includes(n))).toEqual([]);
    expect(errors).toEqual([]);

    // Screenshots to look at (a real run's timings differ each time: written, not compared).
    if (!existsSync(join(SHOTS, 'session-timeline.png')) || process.env.UPDATE_SCREENSHOTS === '1') {
      await page
        .locator('#charts figure')
        .nth(2)
        .screenshot({ path: join(SHOTS, 'session-timeline.png'), animations: 'disabled' });
      await page.locator('#transcript').screenshot({ path: join(SHOTS, 'session-transcript.png'), animations: 'disabled' });
    }
    await page.close();
  });
});

// ── fixed data: screenshots and the list's sorting and filtering ─────────────────────────────

const DAY = '2026-01-0';
const fixedCharts: ChartData = {
  window: 16_000,
  safeZone: 12_000,
  turns: [
    [1, 4100, 4100, 0, 4100, 60, 0.0042],
    [2, 7300, 7300, 0, 7300, 55, 0.0074],
    [3, 10_400, 10_400, 0, 10_400, 50, 0.0105],
    [4, 13_600, 8200, 1, 8200, 48, 0.0083],
    [5, 11_300, 11_300, 0, 11_300, 52, 0.0114],
    [6, 14_500, 6900, 2, 6900, 40, 0.007],
    [7, 7100, 7100, 0, 7100, 20, 0.0072],
  ].map(([turn, before, after, prune, prompt, completion, cost]) => ({
    turn: turn!,
    contextBefore: before!,
    contextAfter: after!,
    pruned: prune === 1 ? ['cleared 2 tool outputs'] : prune === 2 ? ['summary of seqs 1–8'] : [],
    promptTokens: prompt!,
    completionTokens: completion!,
    costUsd: cost!,
    requests: prune === 2 ? 2 : 1,
  })),
  activities: [] as ChartData['activities'],
  events: [{ run: 1, at: `${DAY}1T10:00:09.000Z`, kind: 'update', detail: 'decideApproval' }],
};
{
  let t = Date.parse(`${DAY}1T10:00:00.000Z`);
  const act = (type: string, ms: number, attempts = 1, turn?: number, local?: true) => {
    fixedCharts.activities.push({
      run: 1,
      activityId: String(fixedCharts.activities.length + 1),
      type,
      attempts,
      ...(turn !== undefined ? { turn } : {}),
      ...(local ? { local } : {}),
      startedAt: new Date(t).toISOString(),
      durationMs: ms,
      outcome: 'completed',
    });
    t += ms + 50;
  };
  // The session's steps: setup, then per turn the model step, its tool call, the turn's record
  // (riding on the next model step but the last, written by its own local activity), the end.
  act('initConversation', 100);
  act('placeLocalWorkspace', 60);
  for (let turn = 1; turn <= 7; turn++) {
    act('modelTurn', turn === 3 ? 1400 : 600, turn === 3 ? 2 : 1, turn);
    if (turn === 2) t += 1500; // waiting for an approval
    if (turn < 7) act('toolCall', 200, 1, turn);
    else act('recordToolResult', 20, 1, undefined, true);
  }
  act('endTurnRecord', 20, 1, undefined, true);
  act('finishSession', 40, 1, undefined, true);
}
const conv = (id: string, status: string, model: string, workspace: string, costUsd: number, turns: number, day: number) => ({
  id,
  status,
  model,
  workspace,
  where: workspace,
  host: null,
  hostWorkspace: null,
  diskBytes: null,
  costUsd,
  turns,
  reason: null,
  usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
  scheduleId: null,
  task: 'task of ' + id,
  createdAt: `${DAY}${day}T09:00:00.000Z`,
  updatedAt: `${DAY}${day}T10:00:00.000Z`,
  finishedAt: null,
});
const fixedList = [
  conv('conv-a', 'completed', 'gpt-4o', '/work/repos/alpha', 0.0612, 7, 1),
  conv('conv-b', 'failed', 'deepseek-chat', '/work/repos/beta', 0.0031, 2, 2),
  conv('conv-c', 'completed', 'gpt-4o', '/work/repos/beta', 0.2044, 19, 3),
  conv('conv-d', 'budget_exhausted', 'deepseek-chat', '/work/repos/alpha', 1.5, 40, 4),
];

async function fixedPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(`${ui.url}?token=${TOKEN}`); // the login cookie
  await page.route(/\/api\/conversations(\?.*)?$/, (r) => r.fulfill({ json: { conversations: fixedList } }));
  await page.route(/\/api\/conversations\/conv-a$/, (r) => r.fulfill({ json: { conversation: fixedList[0], state: null, checkpoints: [], usageByTurn: [] } }));
  await page.route(/\/api\/conversations\/conv-a\/charts$/, (r) => r.fulfill({ json: fixedCharts }));
  await page.route(/\/api\/conversations\/conv-a\/events/, (r) =>
    r.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: 'event: end\ndata: {}\n\n' }),
  );
  return page;
}

const order = (page: Page) => page.locator('#convs tbody tr:not([hidden])').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.id));

describe('charts and list with fixed data', () => {
  it('look as committed (screenshots)', async () => {
    const page = await fixedPage();
    await page.goto(`${ui.url}c/conv-a`);
    await page.locator('#timeline rect.act').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('#contextChart line.drop').count()).toBe(2);
    expect(await page.locator('#timeline rect.retried').count()).toBe(1);
    expect(await page.locator('#timeline line.ev').count()).toBe(1);
    expect(await page.locator('#timeline text.lane').allTextContents()).toEqual(['setup', ...[1, 2, 3, 4, 5, 6, 7].map((n) => `turn ${n}`)]);
    expect(await page.locator('#timeline rect.act[data-type=finishSession]').getAttribute('data-lane')).toBe('7');
    await matchesScreenshot(await page.locator('#charts').screenshot({ animations: 'disabled' }), 'charts.png');
    await page.close();
  });

  it('sorts the list by a column and filters it by model, repository and cost', async () => {
    const page = await fixedPage();
    await page.goto(ui.url);
    await page.locator('#convs tbody tr').first().waitFor();
    expect(await order(page)).toEqual(['conv-d', 'conv-c', 'conv-b', 'conv-a']); // newest first
    await page.click('#convs th[data-sort="cost"]');
    expect(await order(page)).toEqual(['conv-d', 'conv-c', 'conv-a', 'conv-b']);
    await page.click('#convs th[data-sort="cost"]');
    expect(await order(page)).toEqual(['conv-b', 'conv-a', 'conv-c', 'conv-d']);
    expect(await page.getAttribute('#convs th[data-sort="cost"]', 'aria-sort')).toBe('ascending');
    await page.click('#convs th[data-sort="turns"]');
    expect(await order(page)).toEqual(['conv-d', 'conv-c', 'conv-a', 'conv-b']);
    await page.selectOption('#modelFilter', 'gpt-4o');
    expect(await order(page)).toEqual(['conv-c', 'conv-a']);
    await page.selectOption('#modelFilter', '');
    await page.fill('#repoFilter', 'alpha');
    expect(await order(page)).toEqual(['conv-d', 'conv-a']);
    await page.fill('#costFilter', '0.1');
    expect(await order(page)).toEqual(['conv-d']);
    await page.fill('#repoFilter', '');
    expect(await order(page)).toEqual(['conv-d', 'conv-c']);
    // The list refreshes every 3 s: the sort and the filters hold across a refresh.
    await page.waitForTimeout(3500);
    expect(await order(page)).toEqual(['conv-d', 'conv-c']);
    await matchesScreenshot(await page.locator('aside#list').screenshot({ animations: 'disabled', mask: [page.locator('#listInfo')] }), 'list-filtered.png');
    await page.close();
  });

  it("shows each job's task and outcome, a batch's jobs under its heading", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
    await page.goto(`${ui.url}?token=${TOKEN}`);
    const batch = 'batch-20261123020000-a1b2c3';
    const jobs = [
      { ...conv(`${batch}-1`, 'completed', 'gpt-4o', '/r/one', 0.01, 3, 5), outcomeText: 'agentrun/one@abcdef0 pushed verified' },
      conv('conv-x', 'completed', 'gpt-4o', '/r/x', 0.02, 2, 6),
      { ...conv(`${batch}-2`, 'completed', 'gpt-4o', '/r/two', 0.03, 4, 4), outcomeText: 'no change' },
    ];
    await page.route(/\/api\/conversations(\?.*)?$/, (r) => r.fulfill({ json: { conversations: jobs } }));
    await page.goto(ui.url);
    await page.locator(`#convs tr.group[data-group="${batch}"]`).waitFor();
    expect(await page.locator(`#convs tr.group[data-group="${batch}"]`).textContent()).toBe(`batch ${batch} · 2 jobs`);
    // Newest first, the batch's heading where its newest job sorts and its jobs right under it.
    const rows = await page
      .locator('#convs tbody tr')
      .evaluateAll((rs) => rs.map((r) => (r as HTMLElement).dataset.id ?? `group:${(r as HTMLElement).dataset.group}`));
    expect(rows).toEqual(['conv-x', `group:${batch}`, `${batch}-1`, `${batch}-2`]);
    expect(await page.locator(`#convs tr[data-id="${batch}-1"] .tasktext`).textContent()).toBe(`task of ${batch}-1`);
    expect(await page.locator(`#convs tr[data-id="${batch}-1"] .outcome`).textContent()).toBe('agentrun/one@abcdef0 pushed verified');
    expect(await page.locator(`#convs tr[data-id="${batch}-2"] .outcome`).textContent()).toBe('no change');
    expect(await page.locator('#convs tr[data-id="conv-x"] .outcome').count()).toBe(0);
    await page.close();
  });
});
