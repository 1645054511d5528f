export { startScriptedServer } from './server.js';
export { parseScript } from './script.js';
export { serveScriptedFile } from './cli.js';
