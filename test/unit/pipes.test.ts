// A CLI whose reader goes away (`agentrun inspect ID | head`) exits quietly instead of crashing on EPIPE.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PIPES = fileURLToPath(new URL('../../src/cli/pipes.ts', import.meta.url));

/** A process that writes to stdout after its reader has gone, then would exit 7; its exit code and stderr. */
function writeAfterReaderLeft(withHandler: boolean): Promise<{ code: number | null; stderr: string }> {
  const script = `
    const { exitQuietlyWhenReaderLeaves } = await import(${JSON.stringify(PIPES)});
    if (${withHandler}) exitQuietlyWhenReaderLeaves(0);
    setTimeout(() => {
      for (let i = 0; i < 100; i++) process.stdout.write('x'.repeat(100) + '\\n');
      setTimeout(() => process.exit(7), 500);
    }, 300);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy(); // the reader leaves before anything is written
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('a closed stdout pipe', () => {
  it('ends the command quietly with the given code', async () => {
    const r = await writeAfterReaderLeft(true);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('without the handler, the process dies of an unhandled EPIPE (the control)', async () => {
    const r = await writeAfterReaderLeft(false);
    expect(r.stderr).toMatch(/EPIPE/);
    expect(r.code).toBe(1);
  });
});
