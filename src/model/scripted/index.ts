export { startScriptedServer, type ScriptedServer, type RecordedRequest, type ScriptedServerOptions } from './server.js';
export { loadScript, parseScript, scriptSchema, type Script, type ScriptTurn, type ScriptFault, type ScriptToolCall } from './script.js';
export { serveScriptedFile } from './cli.js';
