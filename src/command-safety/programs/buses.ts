// A vehicle's CAN bus, the Bluetooth radios around the machine and the cards in an NFC reader's
// field: listening records what every controller or device says, and sending forges frames the
// controllers act on (unlock, brake, a diagnostic session, a firmware read) or rewrites a badge. A virtual bus (`vcan0`) is how such tools are practised, but
// the same command on `can0` drives a car, so the interface does not make it safe. Decoding a saved
// log or a database file, and asking a tool about itself, touch no bus. A robot's middleware (ROS 2's graph)
// is a bus of the same kind, and a radio transmitter (HackRF, osmocom's generators) sends on a band others use.
import type { Word } from '../shell-lex.js';
import { danger, dangerUnlessOnlyAsked, onlyAsksAbout, operands, type Rule, type RuleTable } from '../state.js';
import { judgeUnknownProgram } from './unknown.js';

/** can-utils' and ISO-TP's listeners; asked only about themselves (`-h`) they listen to nothing. */
const CAN_LISTENERS = ['candump', 'cansniffer', 'isotpdump', 'isotpsniffer', 'isotprecv', 'j1939spy', 'canbusload', 'canlogserver'];
/** Programs that put frames on a bus, or bind a serial adapter or gateway route to one. */
const CAN_SENDERS = [
  'cansend',
  'cangen',
  'canplayer',
  'cansequence',
  'isotpsend',
  'isotpreq',
  'isotpperf',
  'isotptun',
  'j1939cat',
  'j1939sr',
  'canfdtest',
  'cangw',
  'slcand',
  'bcmserver',
];

const canListener = dangerUnlessOnlyAsked((prog) => `records the traffic of a CAN bus (${prog})`);
const canSender = dangerUnlessOnlyAsked(
  (prog, args) => `sends frames onto a CAN bus, which its controllers act on (${[prog, ...args.map((a) => a.text)].join(' ')})`,
);
/** Caring Caribou's every module listens on or sends to the bus: dump, listener, send, fuzzer, uds, xcp, doip. */
const caringCaribou = dangerUnlessOnlyAsked(
  (prog, args) =>
    `listens on or sends to a vehicle's bus (${[
      prog,
      ...operands(args)
        .slice(0, 1)
        .map((a) => a.text),
    ].join(' ')})`,
);

/** cantools decodes files and generates code; `monitor` listens on a bus. */
const cantools: Rule = ({ prog, args, st }) => {
  if (operands(args)[0]?.text === 'monitor') {
    st.repeatable = false;
    danger(st, `records the traffic of a CAN bus (${prog} monitor)`);
  }
};

/**
 * BlueZ: hcidump and btmon capture the radio's traffic (unless reading a saved file), hcitool's scans
 * and connections and l2ping reach the devices around, gatttool reads and writes a device's
 * attributes, sdptool offers this machine's services to them or asks theirs; `hcitool dev`, `hcitool con` and
 * `hciconfig` without a verb only list this machine's adapters and connections.
 */
const BLUETOOTH_REACHES: Readonly<Record<string, (args: Word[]) => boolean>> = {
  hcidump: (args) => !args.some((a) => /^(-r|--read-dump)(=|$)/.test(a.text)),
  btmon: (args) => !args.some((a) => /^(-r|--read)(=|$)/.test(a.text)),
  hcitool: (args) => operands(args, /^-i$/).some((a) => !/^(dev|con)$/.test(a.text)),
  hciconfig: (args) => operands(args).some((a) => !/^(hci\d+|-a|--all)$/.test(a.text)),
  l2ping: () => true,
  gatttool: () => true,
  bluetoothctl: (args) =>
    operands(args).some((a) => /^(scan|pair|connect|disconnect|trust|untrust|remove|block|power|discoverable|pairable|advertise|gatt|agent)$/.test(a.text)),
  // sdptool's records offered (`add SP`, `setattr`) let the devices around connect to a service here; `browse` and `search` ask the devices around.
  sdptool: (args) => operands(args).some((a) => /^(add|del|setattr|setseq|browse|search|records)$/.test(a.text)),
};
const bluetooth: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (!onlyAsksAbout(args) && BLUETOOTH_REACHES[prog]!(args))
    danger(st, `listens to, scans or connects to the Bluetooth devices around the machine (${[prog, ...args.map((a) => a.text)].join(' ')})`);
};

/** libnfc's tools poll, read, write, relay or emulate the contactless cards in the reader's field. */
const NFC_TOOLS = [
  'nfc-list',
  'nfc-scan-device',
  'nfc-poll',
  'nfc-relay',
  'nfc-relay-picc',
  'nfc-mfclassic',
  'nfc-mfultralight',
  'nfc-mfsetuid',
  'nfc-emulate-forum-tag4',
  'nfc-emulate-tag',
  'nfc-emulate-uid',
  'nfc-read-forum-tag3',
  'nfc-jewel',
  'nfc-anticol',
  'nfc-dep-initiator',
  'nfc-dep-target',
];
const nfcTool = dangerUnlessOnlyAsked((prog) => `reads, writes or emulates the contactless cards near the machine's reader (${prog})`);
/** libnfc_mitm's relay stands between a card and a reader (`nfc_mitm.py`), logging and replaying what passes; `--list-devs` lists the readers. */
const nfcRelay: Rule = (call) => {
  if (!call.args.some((a) => a.text === '--list-devs')) nfcTool(call);
};

/**
 * HackRF's transfer tool transmits a file (`-t`) or a carrier (`-c`) on the frequency it is given, on a
 * band others use; receiving into a file (`-r`) records what is on the air there.
 */
const hackrfTransfer: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const transmits = args.find((a) => /^-[tc]/.test(a.text));
  if (transmits) danger(st, `transmits on a radio band others use (${prog} ${transmits.text})`);
};

/** Tesla's vehicle-command client sends a car its commands (lock, unlock, climate, charging, key pairing) over Bluetooth or the maker's API. */
const vehicleCommand = dangerUnlessOnlyAsked((prog) => `sends commands to a vehicle, over Bluetooth or its maker's API (${prog})`);
/**
 * A rooted car's own tools change its settings: a data value set (`sdv GUI_backlightUserRequest 255`), the gateway's
 * configuration written (`access-internal-dat.pl steeringheat 1`), the gateway rebooted; given one name, `sdv` and the
 * gateway's tool only read it.
 */
const carSetting: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  if (prog === 'emit-reboot-gateway' || operands(args).length >= 2) danger(st, `changes a car's settings or restarts its gateway (${prog})`);
};
/** OpenXC's vehicle interface: `openxc-control set` and `write` send its settings and CAN messages onto the car's bus; the scanner sends diagnostic requests to its modules. */
const openxcControl: Rule = ({ prog, args, st }) => {
  st.repeatable = false;
  const verb = operands(args)[0]?.text ?? '';
  if (prog === 'openxc-scanner' ? !onlyAsksAbout(args) : /^(set|write|writeraw|diag)$/.test(verb))
    danger(st, `sends messages or diagnostic requests onto a vehicle's bus (${prog}${verb ? ` ${verb}` : ''})`);
};

/** osmocom's signal generators transmit a tone, a sweep or noise through the radio they are given, on a band others use. */
const signalGenerator = dangerUnlessOnlyAsked((prog) => `transmits on a radio band others use (${prog})`);

/** ROS 2's and Gazebo's commands on the running graph, whose names (`/cmd_vel`, `/map_server/load_map`) are topics, nodes, services and parameters, not files. */
const GRAPH_VERB = /^(topic|node|param|service|action|lifecycle|component|interface|security)$/;
const GRAPH_NAME = /^\/[\w/~]*$/;
/**
 * A robot's middleware is its bus: publishing a message or sending an action goal moves whatever robot
 * listens, as a frame sent on a CAN bus does; echoing, listing and asking read. Other words are judged
 * as any program's.
 */
const robotGraph: Rule = ({ prog, args, st }) => {
  const [verb = '', sub = ''] = operands(args).map((w) => w.text);
  if (!GRAPH_VERB.test(verb)) return judgeUnknownProgram(prog, args, st);
  if ((verb === 'topic' && sub === 'pub') || (verb === 'action' && sub === 'send_goal'))
    return danger(st, `drives the robots listening on the ROS graph (${prog} ${verb} ${sub})`);
  judgeUnknownProgram(
    prog,
    args.filter((a) => !GRAPH_NAME.test(a.text)),
    st,
  );
};

export const BUS_RULES: RuleTable = {
  programs: {
    ...Object.fromEntries(CAN_LISTENERS.map((p) => [p, canListener])),
    ...Object.fromEntries(CAN_SENDERS.map((p) => [p, canSender])),
    caringcaribou: caringCaribou,
    'cc.py': caringCaribou,
    cantools,
    ...Object.fromEntries(Object.keys(BLUETOOTH_REACHES).map((p) => [p, bluetooth])),
    ...Object.fromEntries(NFC_TOOLS.map((p) => [p, nfcTool])),
    'nfc_mitm.py': nfcRelay,
    nfc_mitm: nfcRelay,
    hackrf_transfer: hackrfTransfer,
    'tesla-control': vehicleCommand,
    ...Object.fromEntries(['sdv', 'access-internal-dat.pl', 'emit-reboot-gateway'].map((p) => [p, carSetting])),
    'openxc-control': openxcControl,
    'openxc-scanner': openxcControl,
    osmocom_siggen: signalGenerator,
    osmocom_siggen_nogui: signalGenerator,
    ros2: robotGraph,
    gz: robotGraph,
  },
};
