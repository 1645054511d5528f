// The face of the parser (XML-in-text tool calls, native tool-call fragments, continuation
// stitching; pure code, no I/O): what other rooms take through it. The rest is imported from its files.
export { XmlToolCallParser } from './xml-stream.js';
