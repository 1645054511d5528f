// defineTool: the zod schema gives the XML docs and the JSON Schema as for built-ins; clashes
// and bad names are refused clearly; a throwing run is an error result; XML strings are read.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { runInExtensionScope } from '../../src/extensions/scope.js';
import { checkCustomTools, defineTool, ToolDefinitionError } from '../../src/extensions/tools.js';
import { renderXmlToolDocs, runTool, toolJsonSchema, toolNames, validateToolArgs } from '../../src/tools/index.js';
import { WorkerExtensions } from '../../src/extensions/worker.js';
import { summarizeCall } from '../../src/turn/calls.js';
import { Store } from '../../src/store/index.js';

const ticket = defineTool({
  name: 'create_ticket',
  description: 'Open a ticket in the tracker.',
  schema: z.object({
    title: z.string().describe('One-line summary'),
    priority: z.number().int().min(1).max(5).describe('1 (highest) to 5'),
    labels: z.array(z.string()).optional().describe('Labels to add'),
    urgent: z.boolean().optional(),
  }),
  kind: 'network',
  run: ({ title, priority, labels, urgent }) => `ticket "${title}" p${priority} [${(labels ?? []).join(',')}]${urgent ? ' urgent' : ''}`,
});

const scope = <T>(fn: () => Promise<T>) => runInExtensionScope({ tools: [ticket], notes: [] }, fn);

describe('defineTool', () => {
  it('renders XML docs and a JSON Schema from the zod schema', async () => {
    const docs = await scope(async () => renderXmlToolDocs([ticket]));
    expect(docs).toBe(
      [
        '## create_ticket',
        'Description: Open a ticket in the tracker.',
        'Parameters:',
        '- title: (required) One-line summary',
        '- priority: (required) 1 (highest) to 5',
        '- labels: (optional) Labels to add',
        '- urgent: (optional)',
        'Usage:',
        '<create_ticket>',
        '<title>title here</title>',
        '<priority>number</priority>',
        '<labels>labels as a JSON array (optional)</labels>',
        '<urgent>true or false (optional)</urgent>',
        '</create_ticket>',
        'Example:',
        '<create_ticket>\n<title>title here</title>\n<priority>1</priority>\n</create_ticket>',
      ].join('\n'),
    );
    expect(toolJsonSchema(ticket)).toMatchObject({
      type: 'object',
      properties: {
        title: { type: 'string' },
        priority: { type: 'integer', minimum: 1, maximum: 5 },
        labels: { type: 'array', items: { type: 'string' } },
        urgent: { type: 'boolean' },
      },
      required: ['title', 'priority'],
      additionalProperties: false,
    });
    expect(ticket).toMatchObject({ kind: 'network', repeatable: false });
  });

  it('is known to the registry only inside a worker scope', async () => {
    expect(toolNames()).not.toContain('create_ticket');
    expect(await scope(async () => toolNames())).toContain('create_ticket');
  });

  it('reads XML strings as the schema types, and checks them', async () => {
    const r = await scope(() => runTool('create_ticket', { title: 'Crash', priority: ' 2 ', labels: '["bug","p2"]', urgent: 'yes' }, { workspace: '/tmp' }));
    expect(r).toEqual({ ok: true, output: 'ticket "Crash" p2 [bug,p2] urgent' });
    const bad = await scope(async () => validateToolArgs('create_ticket', { title: 'x', priority: '9', extra: '1' }));
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/Unknown parameter "extra"\. Parameter "priority": .*5/);
  });

  it('asks a person before an execute or network tool under the default policy, unless the tool says otherwise', async () => {
    const quiet = defineTool({ name: 'ping_service', description: 'Ping.', schema: z.object({}), kind: 'network', needsApproval: false, run: () => 'pong' });
    const edit = defineTool({ name: 'tidy_notes', description: 'Tidy.', schema: z.object({}), kind: 'edit', run: () => 'ok' });
    expect(ticket.approvalReason).toBe('create_ticket is a custom network tool: its effects reach beyond the workspace');
    expect(quiet.approvalReason).toBeUndefined();
    expect(edit.approvalReason).toBeUndefined();
    const summary = await runInExtensionScope({ tools: [ticket, quiet], notes: [] }, async () =>
      [ticket, quiet].map((t) => summarizeCall({ id: '1.0', name: t.name, args: t === ticket ? { title: 'x', priority: 1 } : {} }, '/tmp')),
    );
    expect(summary.map((c) => [c.name, c.dangerous, c.reasons])).toEqual([
      ['create_ticket', true, ['create_ticket is a custom network tool: its effects reach beyond the workspace']],
      ['ping_service', false, []],
    ]);
  });

  it('a throwing run gives the model an error result', async () => {
    const flaky = defineTool({
      name: 'flaky',
      description: 'Fails.',
      schema: z.object({}),
      kind: 'read',
      run: () => {
        throw new TypeError('boom');
      },
    });
    const r = await runInExtensionScope({ tools: [flaky], notes: [] }, () => runTool('flaky', {}, { workspace: '/tmp' }));
    expect(r).toMatchObject({ ok: false, output: 'Error: flaky failed: boom' });
  });

  it('refuses a clash with a built-in, a reserved or bad name, a bad kind, a duplicate', () => {
    const base = { description: 'x', schema: z.object({}), kind: 'read' as const, run: () => '' };
    expect(() => defineTool({ ...base, name: 'read_file' })).toThrow(
      new ToolDefinitionError('tool name "read_file" clashes with the built-in tool of that name; choose another name'),
    );
    expect(() => defineTool({ ...base, name: 'mcp__x__y' })).toThrow(/kept for MCP server tools/);
    expect(() => defineTool({ ...base, name: 'has space' })).toThrow(/is not usable/);
    expect(() => defineTool({ ...base, name: 'ok_name', kind: 'write' as never })).toThrow(/kind must be one of read, edit, execute, network, got "write"/);
    expect(() => defineTool({ ...base, name: 'ok_name', description: ' ' })).toThrow(/needs a description/);
    const one = defineTool({ ...base, name: 'twice' });
    expect(() => checkCustomTools([one, one])).toThrow(/registered twice/);
    expect(() => new WorkerExtensions({ tools: [one, one] })).toThrow(/registered twice/);
  });
});

describe('custom tools and the ledger', () => {
  it('a call with effects interrupted by a crash is reported as interrupted, not run again; a read is run again', async () => {
    const { runToolOnce, ledgerArgsHash } = await import('../../src/tools/ledger-runner.js');
    let runs = 0;
    const send = defineTool({
      name: 'send_mail',
      description: 'Send a mail.',
      schema: z.object({ to: z.string() }),
      kind: 'network',
      run: () => `sent ${++runs}`,
    });
    const look = defineTool({ name: 'look_up', description: 'Look up.', schema: z.object({ key: z.string() }), kind: 'read', run: () => `found ${++runs}` });
    const store = await Store.connect(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', {
      schema: `t_ext_${randomUUID().replace(/-/g, '').slice(0, 12)}`,
      max: 2,
    });
    onTestFinished(async () => {
      await store.pool.query(`DROP SCHEMA ${store.schema} CASCADE`);
      await store.close();
    });
    const ledger = store.ledger(`c-${randomUUID()}`);
    // An earlier attempt started both calls and died before recording a result.
    await ledger.start({ callId: '1.0', tool: 'send_mail', argsHash: ledgerArgsHash('send_mail', { to: 'a@b' }), state: 'started' });
    await ledger.start({ callId: '1.1', tool: 'look_up', argsHash: ledgerArgsHash('look_up', { key: 'k' }), state: 'started' });
    const inScope = <T>(fn: () => Promise<T>) => runInExtensionScope({ tools: [send, look], notes: [] }, fn);
    const mail = await inScope(() => runToolOnce({ id: '1.0', name: 'send_mail', args: { to: 'a@b' } }, { workspace: '/tmp' }, ledger));
    expect(mail).toMatchObject({ ok: false, interrupted: true });
    const read = await inScope(() => runToolOnce({ id: '1.1', name: 'look_up', args: { key: 'k' } }, { workspace: '/tmp' }, ledger));
    expect(read).toMatchObject({ ok: true, output: 'found 1' });
    expect(runs).toBe(1);
    // A finished call is answered from the ledger.
    expect(await inScope(() => runToolOnce({ id: '1.1', name: 'look_up', args: { key: 'k' } }, { workspace: '/tmp' }, ledger))).toMatchObject({
      output: 'found 1',
      replayed: true,
    });
  });
});
