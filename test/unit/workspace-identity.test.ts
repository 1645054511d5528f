// Placement by identity: a marker per conversation under the host's AGENTRUN_HOME matches only the
// directory it was written for, on that machine; another home, machine id or tree at the path does not.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkPlacement, machineId, markPlacement } from '../../src/workspace/identity.js';
import { tempDirSync } from '../helpers/temp.js';

afterEach(() => {
  delete process.env.AGENTRUN_MACHINE_ID;
});

describe('placement markers', () => {
  it('match the placed directory only: not from another home, another machine id, or a tree re-created at the path', async () => {
    const home = tempDirSync('agentrun-id-home-');
    const ws = join(tempDirSync('agentrun-id-'), 'ws');
    mkdirSync(ws);
    expect(await checkPlacement(home, ws, 'c1')).toEqual({ marked: false, why: `this host (AGENTRUN_HOME ${home}) did not place ${ws} for c1` });
    await markPlacement(home, ws, 'c1');
    expect(await checkPlacement(home, ws, 'c1')).toEqual({ marked: true });
    // One id per home, generated once and kept.
    expect(await machineId(home)).toBe(readFileSync(join(home, 'machine-id'), 'utf8').trim());
    expect((await checkPlacement(tempDirSync('agentrun-id-other-'), ws, 'c1')).marked).toBe(false);
    expect((await checkPlacement(home, ws, 'c2')).marked).toBe(false);
    process.env.AGENTRUN_MACHINE_ID = 'another-machine';
    expect((await checkPlacement(home, ws, 'c1')).why).toMatch(/^.* was placed by machine [0-9a-f]{32}, this is another-machine$/);
    delete process.env.AGENTRUN_MACHINE_ID;
    // Removed and made again at once: the inode often comes back, the birth time does not.
    rmSync(ws, { recursive: true });
    await new Promise((r) => setTimeout(r, 20));
    mkdirSync(ws);
    expect(await checkPlacement(home, ws, 'c1')).toEqual({ marked: true, why: `${ws} is another directory than the one placed there (replaced since)` });
    // Placed again: the new marker is read, not the one this process read before.
    await markPlacement(home, ws, 'c1');
    expect(await checkPlacement(home, ws, 'c1')).toEqual({ marked: true });
    rmSync(ws, { recursive: true });
    expect(await checkPlacement(home, ws, 'c1')).toEqual({ marked: true, why: `${ws} is gone` });
  });

  it('is one id for every worker that starts at once on a new home: none places against the others', async () => {
    const dir = tempDirSync('agentrun-id-race-');
    const identity = fileURLToPath(new URL('../../src/workspace/identity.ts', import.meta.url));
    // Each worker loads the module, says it is ready, and asks for the id the moment all are released.
    const child = `
      const fs = require('node:fs');
      import(${JSON.stringify(identity)}).then(async (m) => {
        fs.writeFileSync(process.argv[1] + '/ready-' + process.pid, '');
        while (!fs.existsSync(process.argv[1] + '/go')) await new Promise((r) => setTimeout(r, 1));
        process.stdout.write(await m.machineId(process.argv[1] + '/home'));
      });`;
    const workers = Array.from({ length: 8 }, () => spawn(process.execPath, ['--import', 'tsx', '-e', child, dir], { stdio: ['ignore', 'pipe', 'inherit'] }));
    const ids = workers.map(
      (w) =>
        new Promise<string>((resolve, reject) => {
          let out = '';
          w.stdout.on('data', (d) => (out += d));
          w.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`worker exited with ${code}`))));
        }),
    );
    while (readdirSync(dir).filter((f) => f.startsWith('ready-')).length < workers.length) await new Promise((r) => setTimeout(r, 20));
    writeFileSync(join(dir, 'go'), '');
    const seen = await Promise.all(ids);
    expect(new Set(seen).size).toBe(1);
    expect(seen[0]).toBe(readFileSync(join(dir, 'home', 'machine-id'), 'utf8').trim());
    // No temporary file is left beside it.
    expect(readdirSync(join(dir, 'home'))).toEqual(['machine-id']);
  });
});
