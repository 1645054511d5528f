// Inside a sandbox with a network, commands reach the egress proxy through 127.0.0.1:PROXY_PORT
// of the sandbox's own network namespace (it has nothing else): a few lines of node, started by
// the command's shell before the command, pipe each connection to the proxy's Unix socket that
// bwrap binds in. The shell waits for its "ready" line so the first request finds it listening.

/** Where the proxy's Unix socket appears inside the sandbox. */
export const SANDBOX_PROXY_SOCKET = '/run/agentrun/egress.sock';
/** The port the forwarder listens on, on the sandbox's own loopback. */
export const SANDBOX_PROXY_PORT = 3128;
/** The proxy URL commands get in HTTP_PROXY and the like. */
export const SANDBOX_PROXY_URL = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;

const FORWARDER_JS = [
  'const net=require("net");',
  'net.createServer((c)=>{const u=net.connect(process.argv[1]);c.pipe(u);u.pipe(c);',
  'c.on("error",()=>u.destroy());u.on("error",()=>c.destroy());c.on("close",()=>u.destroy());u.on("close",()=>c.destroy());})',
  `.listen(${SANDBOX_PROXY_PORT},"127.0.0.1",()=>process.stdout.write("ready\\n"));`,
].join('');

/** The shell lines that start the forwarder in the background and wait (at most 10 s) until it listens. */
export function forwarderPrologue(node = '/usr/bin/node'): string {
  return (
    `read -r -t 10 _ < <(exec ${node} -e '${FORWARDER_JS}' ${SANDBOX_PROXY_SOCKET} 2>/dev/null) || ` +
    `echo "agentrun: the network forwarder did not start (${node} missing in the sandbox?); requests through the proxy will fail" >&2`
  );
}
