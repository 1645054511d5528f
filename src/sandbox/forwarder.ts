// Inside a sandbox with a network, commands reach the egress proxy through 127.0.0.1:PROXY_PORT
// of the sandbox's own network namespace (it has nothing else). The worker cannot open a socket in
// that namespace itself, so the command's shell first runs a few lines of node there that listen
// on it and hand the listening socket to the worker over the IPC channel the sandbox was started
// with (fd 3; the worker's launcher process passes it on), then exit; the shell closes fd 3 before the command, and the worker closes
// its end on the first message. The worker's proxy then accepts the command's connections itself:
// no process in the sandbox copies the bytes (a node relay there cost half the throughput).

/** The port the proxy listens on, on the sandbox's own loopback. */
const SANDBOX_PROXY_PORT = 3128;
/** The proxy URL commands get in HTTP_PROXY and the like. */
export const SANDBOX_PROXY_URL = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
/** The descriptor of the IPC channel in the sandbox (the fourth stdio entry of the spawn). */
const PROXY_CHANNEL_FD = 3;
/** The message the listening socket comes with. */
export const PROXY_LISTENER_MESSAGE = 'agentrun-proxy-listener';

const FORWARDER_JS = [
  'const net=require("net");',
  `const s=net.createServer().listen(${SANDBOX_PROXY_PORT},"127.0.0.1",()=>`,
  // The raw handle, not the net.Server: a process it passes through (the worker's launcher) does not listen on it.
  `process.send("${PROXY_LISTENER_MESSAGE}",s._handle,()=>{s.close();process.disconnect();}));`,
].join('');

/**
 * The shell lines that hand the sandbox's listening socket to the worker, then close the channel
 * and drop node's variables for it (a node program of the command would take fd 3 for its own).
 * Node runs with an empty environment: nothing of the command's (NODE_OPTIONS) reaches the channel.
 */
export function forwarderPrologue(node = '/usr/bin/node'): string {
  return (
    `/usr/bin/env -i NODE_CHANNEL_FD=${PROXY_CHANNEL_FD} ${node} -e '${FORWARDER_JS}' 2>/dev/null || ` +
    `echo "agentrun: the network forwarder did not start (${node} missing in the sandbox?); requests through the proxy will fail" >&2; ` +
    `exec ${PROXY_CHANNEL_FD}>&-; unset NODE_CHANNEL_FD NODE_CHANNEL_SERIALIZATION_MODE`
  );
}
