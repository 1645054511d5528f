// What the faces (the CLI, the page) and the client use of the `session` workflow beyond its
// messages (workflows/api.ts): the input a conversation starts with and the metadata the Temporal
// UI shows for it. Faces import a workflow's api files only (test/unit/layers.test.ts).
export type { SessionInput } from './types.js';
export { sessionStartMetadata } from '../summaries.js';
