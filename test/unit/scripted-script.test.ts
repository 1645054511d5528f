// Script files: loading, readable errors, expansion, the example fixtures, file serving.
import OpenAI from 'openai';
import { execFileSync } from 'node:child_process';
import { readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveScriptedFile } from '../../src/model/scripted/cli.js';
import { answerPieces, expandTurns, loadScript, MAX_SCRIPT_BYTES, parseScript, type ScriptTurn } from '../../src/model/scripted/script.js';
import { allowTestModels, testModelRefusal, testModelsFromEnv } from '../../src/model/scripted/allowed.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
let dir: string;
beforeAll(async () => {
  dir = await tempDir('agentrun-scripted-');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

/** The message a promise rejects with. */
async function message(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a failure');
}

describe('loadScript', () => {
  it('reads YAML and JSON, told apart by content', async () => {
    const yaml = await loadScript(await file('a.yaml', 'turns:\n  - say: hi\n    chunk: 4\n'));
    expect(yaml).toEqual({ turns: [{ say: 'hi', chunk: 4 }] });
    const json = await loadScript(await file('b.txt', '{"turns":[{"tool_calls":[{"name":"read_file","arguments":{"path":"a"}}]}],"repeat_last":true}'));
    expect(json.repeat_last).toBe(true);
  });

  it('names the file and the bad field in one readable line', async () => {
    const path = await file('bad.yaml', 'turns:\n  - say: hi\n    faults:\n      - { attempt: 1, http: "429" }\n');
    const msg = await message(loadScript(path));
    expect(msg).toContain(path);
    expect(msg).toMatch(/turns\[0\]\.faults\[0\]\.http: .*expected number/i);
    expect(msg).not.toContain('\n');
  });

  it('reports misspelt keys, faults with no or two kinds, and bad offsets', async () => {
    expect(await message(loadScript(await file('typo.yaml', 'turns:\n  - say: hi\n    delay: 5\n')))).toMatch(/turns\[0\].*delay/);
    expect(
      await message(loadScript(await file('two.yaml', 'turns:\n  - say: hi\n    faults: [{ attempt: 1, http: 500, disconnect_after_chars: 3 }]\n'))),
    ).toMatch(/turns\[0\]\.faults\[0\]: a fault needs exactly one of .* \(got http, disconnect_after_chars\)/);
    expect(await message(loadScript(await file('none.yaml', 'turns:\n  - say: hi\n    faults: [{ attempt: 2 }]\n')))).toMatch(/got none/);
    expect(await message(loadScript(await file('cut.yaml', 'turns:\n  - say: hello\n    truncate_at: [3, 9]\n')))).toMatch(
      /turns\[0\]\.truncate_at: offset 9 is not inside the answer \(5 characters\)/,
    );
    expect(await message(loadScript(await file('order.yaml', 'turns:\n  - say: hello\n    truncate_at: [3, 2]\n')))).toMatch(
      /truncate_at\[1\]: offsets must increase/,
    );
    expect(await message(loadScript(await file('empty-turn.yaml', 'turns:\n  - chunk: 3\n')))).toMatch(/turns\[0\]: a turn needs say, tool_calls or reasoning/);
    expect(await message(loadScript(await file('rep.yaml', 'turns:\n  - repeat: 0\n    turn: { say: x }\n')))).toMatch(/turns\[0\]\.repeat/);
    expect(await message(loadScript(await file('rep2.yaml', 'turns:\n  - repeat: 2\n    turn: { sey: x }\n')))).toMatch(/turns\[0\]\.turn/);
    expect(await message(loadScript(await file('noturns.yaml', 'model: x\n')))).toMatch(/is not a script: it has no `turns` list/);
  });

  it('reports unparsable YAML and JSON, and a missing file, with the file name', async () => {
    const y = await file('broken.yaml', 'turns:\n  - say: "unclosed\n');
    expect(await message(loadScript(y))).toMatch(new RegExp(`${y.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid YAML`));
    const j = await file('broken.json', '{"turns": [}');
    expect(await message(loadScript(j))).toMatch(/broken\.json is not valid JSON/);
    expect(await message(loadScript(join(dir, 'missing.yaml')))).toMatch(/cannot read .*missing\.yaml/);
  });

  it("reads only a regular file of at most 8 MiB, without blocking, and never quotes a file's content or keys", async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(await message(loadScript(fifo))).toMatch(/cannot read .*fifo: it is not a regular file/);
    expect(await message(loadScript('/dev/zero'))).toMatch(/cannot read \/dev\/zero: it is not a regular file/);
    const big = await file('big.yaml', `turns:\n  - say: "${'x'.repeat(MAX_SCRIPT_BYTES)}"\n`);
    expect(await message(loadScript(big))).toMatch(/it is larger than 8 MiB/);
    const secret = 'hunter2-secret-value';
    for (const [name, text] of [
      ['creds.json', `{"password": "${secret}", "token": 1}`],
      ['creds.env', `PASSWORD=${secret}\n`],
      ['bad.json', `{"password": "${secret}",`],
      ['bad.yaml', `password: "${secret}\n  - : [`],
    ]) {
      const m = await message(loadScript(await file(name, text)));
      expect(m, name).toMatch(/scripted model: /);
      expect(m, name).not.toContain(secret);
      expect(m, name).not.toContain('password');
    }
  });

  it('expands repeat items with {{n}} from 1 to N', () => {
    const script = parseScript(
      'turns:\n  - say: a\n  - repeat: 200\n    turn: { say: "step {{n}}", tool_calls: [{ name: t, arguments: { i: "{{n}}" } }] }\n  - say: z\n',
    );
    const turns = expandTurns(script);
    expect(turns).toHaveLength(202);
    expect(turns[1]).toEqual({ say: 'step 1', tool_calls: [{ name: 't', arguments: { i: '1' } }] });
    expect(turns[200]!.say).toBe('step 200');
    expect(expandTurns(script)).toBe(turns);
  });
});

describe('fixtures', () => {
  it('every example script loads', async () => {
    const names = (await readdir(FIXTURES)).filter((n) => n.endsWith('.yaml'));
    expect(names).toEqual(expect.arrayContaining(['edit-and-complete.yaml', 'native-tools.yaml', 'faults.yaml', 'question.yaml']));
    for (const name of names) await expect(loadScript(join(FIXTURES, name)), name).resolves.toBeTruthy();
  });

  it('continuation.yaml cuts inside the write_to_file block', async () => {
    const turn = expandTurns(await loadScript(join(FIXTURES, 'continuation.yaml')))[0] as ScriptTurn;
    const text = answerPieces(turn, 1)[0]!.text;
    const open = text.indexOf('<write_to_file>');
    const close = text.indexOf('</write_to_file>');
    for (const cut of turn.truncate_at!) expect(cut > open && cut < close).toBe(true);
  });

  it('native-continuation.yaml cuts inside the argument JSON', async () => {
    const turn = expandTurns(await loadScript(join(FIXTURES, 'native-continuation.yaml')))[0] as ScriptTurn;
    const [say, call] = answerPieces(turn, 1);
    for (const cut of turn.truncate_at!) expect(cut > say!.text.length && cut < say!.text.length + call!.text.length).toBe(true);
  });
});

describe('serveScriptedFile', () => {
  it('serves a file, reuses its server and reloads the file when it changes', async () => {
    const path = await file('live.yaml', 'turns:\n  - say: before\n');
    const server = await serveScriptedFile(path);
    try {
      expect(await serveScriptedFile(path)).toBe(server);
      const client = new OpenAI({ baseURL: server.url, apiKey: 'scripted', maxRetries: 0 });
      const ask = async () =>
        (await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'go' }] }, { headers: { 'x-agentrun-turn': '1' } })).choices[0]!
          .message.content;
      expect(await ask()).toBe('before');
      await writeFile(path, 'turns:\n  - say: after\n');
      // Make the change visible even on file systems with coarse mtimes.
      await utimes(path, new Date(), new Date(Date.now() + 5000));
      expect(await ask()).toBe('after');
      await writeFile(path, 'turns:\n  - sey: oops\n');
      await utimes(path, new Date(), new Date(Date.now() + 10_000));
      expect(await ask()).toMatch(/\[scripted model\] scripted model: .*live\.yaml: turns\[0\]/);
    } finally {
      await server.close();
    }
    // A closed server is forgotten: the next call starts a fresh one.
    await writeFile(path, 'turns:\n  - say: fresh\n');
    const again = await serveScriptedFile(path);
    expect(again).not.toBe(server);
    await again.close();
  });

  it('never keeps a process alive that answered its model calls and has nothing left to do', async () => {
    const path = await file('exits.yaml', 'turns:\n  - say: hi\n');
    const cli = join(import.meta.dirname, '..', '..', 'src', 'model', 'scripted', 'cli.ts');
    const program = [
      `import { serveScriptedFile } from ${JSON.stringify(cli)};`,
      `const server = await serveScriptedFile(${JSON.stringify(path)});`,
      `const r = await fetch(server.url + '/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', 'x-agentrun-turn': '1' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }] }) });`,
      `console.log(r.status);`,
    ].join('\n');
    // Left open, the server would hold the child until the timeout killed it (a thrown error here).
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { encoding: 'utf8', timeout: 30_000 });
    expect(out.trim()).toBe('200');
  });

  it('fails at start with the readable error of a bad file', async () => {
    const path = await file('bad-start.yaml', 'turns: []\n');
    expect(await message(serveScriptedFile(path))).toMatch(/bad-start\.yaml: turns: /);
  });

  it('serves the fixture session end to end', async () => {
    const server = await serveScriptedFile(join(FIXTURES, 'edit-and-complete.yaml'));
    try {
      const client = new OpenAI({ baseURL: server.url, apiKey: 'scripted', maxRetries: 0 });
      const answers: string[] = [];
      for (let turn = 1; turn <= 4; turn++) {
        const stream = await client.chat.completions.create(
          { model: 'm', messages: [{ role: 'user', content: 'write greet' }], stream: true },
          { headers: { 'x-agentrun-conversation': 'fx', 'x-agentrun-turn': String(turn) } },
        );
        let text = '';
        for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
        answers.push(text);
      }
      expect(answers[0]).toContain('<write_to_file>\n<path>src/greet.ts</path>');
      expect(answers[2]).toContain("<<<<<<< SEARCH\n  return 'Hello, ' + name;\n=======\n  return `Hello, ${name}!`;\n>>>>>>> REPLACE");
      expect(answers[3]).toContain('<attempt_completion>');
    } finally {
      await server.close();
    }
  });
});

describe('test models on a worker', () => {
  it('a worker serves scripted files only from its scripts directories and recorded models only when allowed', () => {
    try {
      allowTestModels({ scriptsDirs: [], recorded: false });
      expect(testModelRefusal('gpt-4o')).toBeUndefined();
      expect(testModelRefusal('scripted:/tmp/x.yaml')).toMatch(/this worker runs no scripted models .*AGENTRUN_SCRIPTS_DIR/);
      expect(testModelRefusal('recorded:conv-1')).toMatch(/does not replay recorded conversations .*AGENTRUN_RECORDED_MODELS=on/);
      allowTestModels(testModelsFromEnv({ AGENTRUN_SCRIPTS_DIR: '/srv/scripts:relative', AGENTRUN_RECORDED_MODELS: 'on' }));
      expect(testModelRefusal('scripted:/srv/scripts/a.yaml')).toBeUndefined();
      expect(testModelRefusal('scripted:/srv/scripts/../../etc/passwd')).toMatch(/not beneath a directory of AGENTRUN_SCRIPTS_DIR/);
      expect(testModelRefusal('scripted:/etc/passwd')).not.toContain('passwd');
      expect(testModelRefusal('recorded:conv-1')).toBeUndefined();
    } finally {
      allowTestModels(testModelsFromEnv());
    }
  });
});
