// Scripted and recorded models are test inputs: a worker serves them only when started to. A
// scripted model reads a file the conversation names, and a recorded one another conversation's
// answers, so on a production worker either would let whoever starts a conversation make the
// worker read files or replay answers. `agentrun run` and `dev` (a person's own worker) allow both;
// `agentrun worker` only with AGENTRUN_SCRIPTS_DIR (scripts beneath those directories) and
// AGENTRUN_RECORDED_MODELS=on.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { isRecorded } from './recorded.js';

export interface TestModels {
  /** Directories whose script files `scripted:FILE` may name; none: scripted models refused. */
  scriptsDirs: string[];
  /** Whether `recorded:<id>` is served. */
  recorded: boolean;
}

/** AGENTRUN_SCRIPTS_DIR (`:`-separated absolute directories) and AGENTRUN_RECORDED_MODELS (`on`). */
export function testModelsFromEnv(env: NodeJS.ProcessEnv = process.env): TestModels {
  return {
    scriptsDirs: (env.AGENTRUN_SCRIPTS_DIR ?? '')
      .split(':')
      .map((d) => d.trim())
      .filter((d) => path.isAbsolute(d)),
    recorded: ['1', 'on', 'true', 'yes'].includes((env.AGENTRUN_RECORDED_MODELS ?? '').trim().toLowerCase()),
  };
}

let allowed: TestModels | undefined;

/** This process's worker serves these test models (set where the worker starts; else read from the environment). */
export function allowTestModels(models: TestModels): void {
  allowed = models;
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Why this worker does not serve `model`, or undefined (a provider model, or a test model it allows). */
export function testModelRefusal(model: string): string | undefined {
  const models = allowed ?? testModelsFromEnv();
  if (isRecorded(model))
    return models.recorded
      ? undefined
      : `model ${model}: this worker does not replay recorded conversations (a test input; AGENTRUN_RECORDED_MODELS=on allows it)`;
  if (!model.startsWith('scripted:')) return undefined;
  if (!models.scriptsDirs.length)
    return `model scripted:…: this worker runs no scripted models (a test input; AGENTRUN_SCRIPTS_DIR names where their files may be)`;
  const file = real(path.resolve(model.slice('scripted:'.length)));
  const inside = models.scriptsDirs.some((d) => {
    const rel = path.relative(real(d), file);
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  });
  return inside ? undefined : `model scripted:…: the script file is not beneath a directory of AGENTRUN_SCRIPTS_DIR on this worker`;
}
