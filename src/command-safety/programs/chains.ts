// Blockchain nodes and the devices around the machine that a command drives over the network: a node
// joins the chain's peer-to-peer network, listens on every interface and holds the keys of the accounts
// it signs for; a cast sends a video to whatever TV answers on the local network. Asking a tool about
// itself and listing what it holds read.
import type { Word } from '../shell-lex.js';
import { checkWriteTarget, danger, namesThisMachine, onlyAsksAbout, operands, optionValue, type Rule, type RuleTable, word } from '../state.js';

/** The verbs that only read, per node program, read from the start of its words (`geth version`, `lighthouse account validator list`). */
const NODE_READS: Readonly<Record<string, RegExp>> = {
  geth: /^(version|version-check|help|license|dumpconfig|dumpgenesis|account list|wallet list)\b/,
  lighthouse: /^(account (validator|wallet) list\b|db$|db (version|inspect)\b|help\b)/,
  erigon: /^(version|help)\b/,
  reth: /^(help|config|dump-genesis)\b/,
  bitcoind: /(?!)/,
  // devp2p's offline tools: keys, ENR decoding and node-set filtering.
  devp2p: /^(key [\w-]+|enrdump|nodeset [\w-]+|rlpx decode|help)\b/,
};

/**
 * Google's Lighthouse shares its name with an Ethereum client: it audits a web page (`lighthouse
 * https://example.com --output json`), started bare or with only its own options; the client is run by
 * its subcommands (`lighthouse bn`, `lighthouse account …`).
 */
const isPageAuditor = (args: Word[]) =>
  args.length === 0 ||
  args.some((a) => /^https?:\/\//.test(a.text)) ||
  (operands(args, /^--(output|output-path|port|preset|form-factor|only-categories|chrome-flags)$/).length === 0 &&
    args.every(
      (a) =>
        /^(--(output|output-path|chrome-flags|port|preset|view|save-assets|form-factor|only-categories|quiet|throttling[\w.-]*|screenEmulation[\w.-]*)(=.*)?|-(G|A|GA)(=.*)?)$/.test(
          a.text,
        ) || !a.text.startsWith('-'),
    ));

/**
 * A node run (`geth`, `geth console`, `lighthouse vc`), attached to (`geth attach`, which signs with its
 * unlocked accounts) or given keys (`lighthouse account validator recover` turns a mnemonic into
 * signing keys in the home), or a peer-to-peer listener or crawler (`devp2p discv5 listen`).
 */
const node: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (onlyAsksAbout(args)) return;
  if (prog === 'lighthouse' && isPageAuditor(args)) {
    const k = args.findIndex((a) => /^--output-path(=|$)/.test(a.text));
    const report = k < 0 ? undefined : optionValue(args, k);
    if (report !== undefined) checkWriteTarget(word(report), st, `${prog} writes its report to`);
    return;
  }
  const ops = operands(args, /^(--datadir|--network|--testnet-dir|--config|-c)$/).map((a) => a.text);
  if (ops.length > 0 && NODE_READS[prog]!.test(ops.slice(0, 3).join(' '))) return;
  // A single-node development chain (`geth --dev`, `bitcoind -regtest`) has no peers and no value.
  if (args.some((a) => /^(--dev|-?-regtest)$/.test(a.text))) return;
  danger(st, `runs, attaches to or gives keys to a node of a blockchain's peer-to-peer network (${[prog, ...ops.slice(0, 3)].join(' ')})`);
};

/** catt casts to a Chromecast or TV on the local network and drives what it plays; `scan` finds them, `--help` asks. */
const cast: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const verb = operands(args, /^(-d|--device)$/)[0]?.text;
  if (!onlyAsksAbout(args) && verb !== undefined && verb !== 'scan') danger(st, `controls a Chromecast or TV on the local network (${prog} ${verb})`);
};

/**
 * Foundry's forge signs and sends a script's or a deployment's transactions to the chain its RPC URL
 * names (`forge script … --broadcast --rpc-url …`, `forge create …`), or to the one a Makefile's network
 * variable carries (`forge script x.s.sol ${NETWORK_ARGS}`); a local Anvil chain holds nothing of value,
 * and building, testing and simulating stay here.
 */
const forge: Rule = ({ prog, args, st }) => {
  const verb = operands(args)[0]?.text;
  if (verb !== 'script' && verb !== 'create') return;
  const rpc = args.findIndex((a) => /^--(rpc-url|fork-url|chain)(=|$)/.test(a.text) || /^-f$/.test(a.text));
  const rpcValue = rpc < 0 ? undefined : optionValue(args, rpc);
  // The RPC URL's own variable names where a simulation reads from; a variable of options may carry `--broadcast`.
  const networkVariable = args.find((a, k) => a.expands && k !== rpc + 1 && !/^--/.test(a.text) && /\$\{?\w*(NETWORK|RPC|BROADCAST|CHAIN)\w*\}?/i.test(a.text));
  const sends = verb === 'create' || args.some((a) => a.text === '--broadcast') || networkVariable !== undefined;
  if (sends && !(rpcValue !== undefined && namesThisMachine(rpcValue)))
    danger(st, `signs and sends transactions to a blockchain (${prog} ${verb}${networkVariable ? ` ${networkVariable.text}` : ''})`);
};

export const CHAIN_RULES: RuleTable = {
  programs: {
    ...Object.fromEntries(Object.keys(NODE_READS).map((p) => [p, node])),
    catt: cast,
    forge,
  },
};
