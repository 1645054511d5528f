import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSystemPrompt, type SystemPromptInput } from '../../src/context/prompt.js';
import { loadRules, parseRule, type Rule } from '../../src/context/rules.js';
import { tempDir } from '../helpers/temp.js';

const rulesDir = () => tempDir('agentrun-rules-');

describe('loadRules', () => {
  let ws: string;
  let outside: string;
  beforeAll(async () => {
    ws = await rulesDir();
    outside = await rulesDir();
    await writeFile(join(ws, 'AGENTS.md'), '# Conventions\n\nUse pnpm. Tests live next to the code.\n');
    await mkdir(join(ws, '.agentrun/rules'), { recursive: true });
    await writeFile(
      join(ws, '.agentrun/rules/b-typescript.md'),
      '---\ndescription: TypeScript style\nglobs: "src/**/*.ts, test/**/*.ts"\nalwaysApply: false\n---\n\nNo `any`. Prefer `unknown`.\n',
    );
    await writeFile(join(ws, '.agentrun/rules/a-security.md'), '---\ndescription: Security\nalwaysApply: true\n---\nNever log secrets.\n');
    await writeFile(join(ws, '.agentrun/rules/c-broken.md'), '---\ndescription: [unclosed\n---\nStill a rule.\n');
    await writeFile(join(ws, '.agentrun/rules/d-list.md'), '---\nglobs:\n  - "*.sql"\n  - migrations/**\n---\nMigrations are append-only.\n');
    await writeFile(join(ws, '.agentrun/rules/notes.txt'), 'not a rule');
    await writeFile(join(ws, '.agentrun/rules/empty.md'), '   \n');
    await writeFile(join(outside, 'secret.md'), 'outside the workspace');
    await symlink(join(outside, 'secret.md'), join(ws, '.agentrun/rules/e-escape.md'));
    await mkdir(join(ws, '.autocoderrules'), { recursive: true });
    await writeFile(join(ws, '.autocoderrules/legacy.md'), '---\ndescription: Legacy rule\nglobs: legacy/**\n---\nKeep the old API.\n');
  });

  it('reads AGENTS.md and both rule folders, sorted, with front matter', async () => {
    const rules = await loadRules(ws);
    expect(rules.map((r) => r.file)).toEqual([
      'AGENTS.md',
      '.agentrun/rules/a-security.md',
      '.agentrun/rules/b-typescript.md',
      '.agentrun/rules/c-broken.md',
      '.agentrun/rules/d-list.md',
      '.autocoderrules/legacy.md',
    ]);
    const byFile = Object.fromEntries(rules.map((r) => [r.file, r]));
    expect(byFile['AGENTS.md']).toMatchObject({ alwaysApply: true, body: '# Conventions\n\nUse pnpm. Tests live next to the code.' });
    expect(byFile['.agentrun/rules/a-security.md']).toMatchObject({ alwaysApply: true, description: 'Security', body: 'Never log secrets.' });
    expect(byFile['.agentrun/rules/b-typescript.md']).toMatchObject({
      alwaysApply: false,
      description: 'TypeScript style',
      globs: ['src/**/*.ts', 'test/**/*.ts'],
      body: 'No `any`. Prefer `unknown`.',
    });
    expect(byFile['.agentrun/rules/d-list.md']).toMatchObject({ alwaysApply: false, globs: ['*.sql', 'migrations/**'] });
    expect(byFile['.autocoderrules/legacy.md']).toMatchObject({ alwaysApply: false, globs: ['legacy/**'], description: 'Legacy rule' });
  });

  it('keeps a rule with broken front matter, applied always, with a warning', async () => {
    const broken = (await loadRules(ws)).find((r) => r.file.endsWith('c-broken.md'))!;
    expect(broken.alwaysApply).toBe(true);
    expect(broken.body).toBe('Still a rule.');
    expect(broken.warning).toMatch(/front matter/);
  });

  it('ignores symlinks that leave the workspace, other files and empty rules', async () => {
    const files = (await loadRules(ws)).map((r) => r.file).join(' ');
    expect(files).not.toMatch(/escape|notes|empty/);
  });

  it('returns nothing for a workspace without rules', async () => {
    expect(await loadRules(await rulesDir())).toEqual([]);
  });

  it('applies a rule with neither globs nor description always, and parses CRLF files', () => {
    expect(parseRule('x.md', 'Just text.')).toMatchObject({ alwaysApply: true, body: 'Just text.' });
    expect(parseRule('x.md', '---\r\ndescription: D\r\nglobs: "*.md"\r\n---\r\nBody\r\n')).toMatchObject({
      alwaysApply: false,
      description: 'D',
      globs: ['*.md'],
      body: 'Body',
    });
  });
});

describe('buildSystemPrompt', () => {
  const rules: Rule[] = [
    { file: 'AGENTS.md', alwaysApply: true, body: 'Use pnpm, never npm.' },
    { file: '.agentrun/rules/sql.md', description: 'SQL migrations', globs: ['migrations/**'], alwaysApply: false, body: 'Append-only.' },
  ];
  const base: SystemPromptInput = {
    toolDocs: '## read_file\nDescription: Read a file.\nParameters:\n- path: (required) the file',
    toolFormat: 'xml',
    rules,
    workspace: '/work/repo',
    osInfo: 'Linux 6.8 (x64)',
    shell: '/bin/bash',
    date: '2025-06-01',
  };

  it('has the sections in order, the tool docs and the rules', () => {
    const p = buildSystemPrompt(base);
    const order = [
      'TOOL USE',
      '# Tool Use Formatting',
      '# Tools',
      'CONTEXT MANAGEMENT',
      'CAPABILITIES',
      'RULES',
      '# Project rules',
      'SYSTEM INFORMATION',
      'OBJECTIVE',
    ];
    let at = -1;
    for (const s of order) {
      const i = p.indexOf(s, at + 1);
      expect(i, s).toBeGreaterThan(at);
      at = i;
    }
    expect(p.startsWith('You are agentrun')).toBe(true);
    expect(p).toContain('## read_file\nDescription: Read a file.');
    expect(p).toContain('Use pnpm, never npm.');
    expect(p).toContain('.agentrun/rules/sql.md: SQL migrations; files: migrations/**');
    expect(p).not.toContain('Append-only.'); // on-demand rules are listed, not inlined
    expect(p).toContain('Current Working Directory: /work/repo');
    expect(p).toContain('Operating System: Linux 6.8 (x64)');
    expect(p).toContain('Default Shell: /bin/bash');
    expect(p).toContain('Conversation Started: 2025-06-01');
    expect(p).toContain('[message_id: 1a2b3c4d]');
    expect(p).toContain('conversation_message_ids_write');
    expect(p).toContain('attempt_completion');
    expect(p).toContain('<tool_name>');
  });

  it('is deterministic', () => {
    expect(buildSystemPrompt(base)).toBe(buildSystemPrompt({ ...base, rules: [...rules] }));
  });

  it('keeps the tool docs out of the native prompt', () => {
    const p = buildSystemPrompt({ ...base, toolFormat: 'native' });
    expect(p).toContain('function-calling interface');
    expect(p).not.toContain('## read_file');
    expect(p).not.toContain('<tool_name>');
  });

  it('adds plan mode and extra instructions', () => {
    const p = buildSystemPrompt({ ...base, planMode: true, instructions: 'Write the plan in French.' });
    expect(p).toContain('PLAN MODE');
    expect(p).toMatch(/ADDITIONAL INSTRUCTIONS\n\nWrite the plan in French\.$/);
    expect(buildSystemPrompt(base)).not.toContain('PLAN MODE');
  });

  it('reaches the prompt from rules files on disk', async () => {
    const ws = await rulesDir();
    await writeFile(join(ws, 'AGENTS.md'), 'Run `make check` before finishing.');
    const p = buildSystemPrompt({ ...base, rules: await loadRules(ws), workspace: ws });
    expect(p).toContain('## AGENTS.md\n\nRun `make check` before finishing.');
  });
});

describe('systemPromptTokens', () => {
  it('counts a real system prompt by paragraph: never fewer tokens than counting it whole, at most one more per paragraph break', async () => {
    const { renderXmlToolDocs } = await import('../../src/tools/index.js');
    const { systemPromptTokens } = await import('../../src/turn/prepare.js');
    const { countTokens } = await import('../../src/model/tokens.js');
    const prompt = (workspace: string) =>
      buildSystemPrompt({
        toolDocs: renderXmlToolDocs(),
        toolFormat: 'xml',
        rules: [parseRule('a.md', '---\nalwaysApply: true\n---\nNever log secrets.\n\nUse pnpm.\n')],
        workspace,
        osInfo: 'Linux 6.1 (x64)',
        shell: '/bin/bash',
        date: '2026-11-25',
        instructions: 'Keep the diff small.',
      });
    for (const model of ['gpt-4o', 'llama-3']) {
      for (const ws of ['/work/a', '/srv/agentrun/workspaces/conv-2']) {
        const text = prompt(ws);
        const whole = countTokens(text, model);
        const breaks = text.split('\n\n').length - 1;
        expect(whole).toBeGreaterThan(1000);
        const byParagraph = systemPromptTokens(text, model);
        expect(byParagraph).toBeGreaterThanOrEqual(whole);
        expect(byParagraph).toBeLessThanOrEqual(whole + breaks);
        expect(systemPromptTokens(text, model)).toBe(byParagraph);
      }
    }
  });
});
