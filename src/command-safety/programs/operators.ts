// What an operator's tools do to the machine, its watchers and the user's setup, judged for any
// program by its name and words (as trust.ts' checks are): password cracking and login guessing,
// tunnels and proxies that carry traffic past the sandbox's network, the audit and kernel logs
// cleared, the screen recorded, the user's global package-manager setup and credentials changed, an
// image's signature published, a framework's own commands that print its secrets or drop a
// production database, and attack frameworks run to attack.
import type { Word } from '../shell-lex.js';
import { checkWriteTarget, classify, danger, hasFlag, onlyAsksAbout, operands, optionValue, THIS_MACHINE_ADDRESS, type State } from '../state.js';
import { addressGiven, aimedOnlyAtThisMachine, contractFuzzerRun, OTHER_HOST_URL } from './unknown.js';

/**
 * Crackers and login guessers (and John's unshadow, which joins the hashes it cracks to their accounts):
 * they try passwords against a hash or a service, which is an attack whatever the target; so does a tool named for brute forcing (`mcbrutal`, `rcon_bruteforcer`, `snmpbrute`),
 * for cracking (`ospf-md5-cracker`) or for decrypting stored passwords (`cisco_pwdecrypt`),
 * the wallet-key guessers that hunt funded addresses (Plutus, brainflayer, keyhunt and its BSGS server, CryptoDeepTools'
 * attacksafe) and a wallet vault's password cracker (metamask_decryptor), PDF and LEAP crackers (pdfrip, asleap), bkcrack's attack on a ZIP's
 * legacy encryption, cameradar's RTSP logins and
 * the MIFARE key recoverers (mfoc, mfcuk, nfc-staticnested, mfkey32 and mfkey64, miLazyCracker, libnfc_crypto1_crack, and a script's
 * steps named for their attacks, `mf_darkside`, `mf_hardnested`, `mf_autopwn`), and the JSON Web Token crackers
 * (jwt-cracker, jwtcrack), which guess a service's signing secret; `jtr` is John the Ripper's short name, and a
 * name that says it cracks passwords (`autopasscrack`) is one.
 */
const CRACKERS =
  /^([\w-]*brut(e|al|e[-_]?forcer?)|[\w-]*pass[\w-]*crack|[\w-]*[-_]cracker|crack(?!lib|mes?$)[a-z][\w-]*|crack|[\w-]*(pw|pass|password)[-_]?decrypt(er)?|plutus|brainflayer|cameradar|mfoc(-hardnested)?|mfcuk|(nfc-)?staticnested|mf[-_](darkside|nested|hardnested|staticnested|autopwn|nack)|mfkey(32|64)(v2)?(nested)?|mf_nonce_brute|hardnested|milazycracker|libnfc_crypto1_crack|bfkeepforce|keepass4brute|brutespray|hydra|medusa|ncrack|patator|john|jtr|unshadow|hashcat|crowbar|kerbrute|crackmapexec|netexec|nxc|thc-hydra|ophcrack|fcrackzip|pdfcrack|rarcrack|psk-crack|asleap|pdfrip|bkcrack|keyhunt|bsgsd|attacksafe|metamask_decryptor[\w.-]*|snmpwn|stegcracker|jwt-cracker|jwtcrack|sipcrack|gpp-decrypt|pyrit|cowpatty)$/;
/**
 * Web scanners, content fuzzers, injection tools, the screenshotters that visit every host of a list
 * (EyeWitness, aquatone), the crawlers that build a wordlist from a site's words (CeWL), XSS and
 * NoSQL-injection scanners (dalfox, nosqli, NoSQLMap), cache-poisoning, request-smuggling and 403-bypass
 * probes (wcvs, h2csmuggler, smuggler, byp4xx, nomore403), CRLF-injection fuzzers (crlfuzz), firewall fingerprinters (wafw00f) and exploiters of a
 * server's misconfiguration (nginxpwner, shortscan), a shop's scanner for its known holes (magescan) and
 * template-injection exploiters (SSTImap, tplmap), cross-site scripting, open-redirect and CORS scanners (XSStrike, xssforge, redirx, CORScanner), a forum's vulnerability scanner (discoursemap), a scanner and exploiter of known web vulnerabilities (vulmap), and the recon crawlers that map a target's every URL and script for them (gospider, hakrawler, subjs):
 * made to probe or attack a web server (its paths,
 * logins, plug-ins, parameters), so any run but help or the version is an attack on a host.
 */
const WEB_ATTACK_TOOLS =
  /^(wpscan|wfuzz|ffuf|gobuster|dirb|dirbuster|feroxbuster|dirsearch|sqlmap|nikto|nuclei|commix|joomscan|droopescan|xsstrike|xssforge|redirx|skipfish|wapiti|arachni|cewl|eyewitness|aquatone|gowitness|log4j-scan|dalfox|nosqli|nosqlmap|wcvs|wafw00f|byp4xx|shortscan|bypass-403(\.sh)?|h2csmuggler(\.py)?|smuggler(\.py)?|nginxpwner(\.py)?|magescan(\.phar)?|sstimap(\.py)?|tplmap(\.py)?|gospider|hakrawler|jaeles|nosqli-scan|airixss|nomore403|crlfuzz|discoursemap|crawlergo|loxs(\.py)?|katana|ssrfuzz|corscanner|subjs|vulmap)$/;
/**
 * GraphQL's and APIs' attack tools: they fingerprint an API's server, recover its schema with
 * introspection off, brute force its queries' arguments or logins, or guess its hidden parameters
 * (graphql-cop, graphw00f, GraphQLmap, clairvoyance, CrackQL, Arjun).
 */
const API_ATTACK_TOOLS = /^(graphql-cop|graphw00f|graphqlmap|clairvoyance|crackql|grapeql|graphqlnomad|arjun|offat|swaggerhole|apidetector)$/;
/**
 * Subdomain finders and DNS enumerators: they enumerate a domain's hosts (by brute force, by scraping
 * sources, by asking its name servers for every record they will give), reconnaissance of another's network,
 * and the takeover checkers and resolver validators that query each of them (subjack, subzy, SubOver, Sub-Snatch, dnsvalidator), and
 * the finders of a domain's hosts in the code a forge's search returns (github-subdomains) or in certificate transparency's logs (ctfr).
 */
const DOMAIN_ENUMERATORS =
  /^(amass|subfinder|assetfinder|sublist3r|findomain|knockpy|shuffledns|puredns|dnsenum|dnsrecon|fierce|dnsmap|dnswalk|theHarvester|subjack|subzy|subdotko|takeit|subtakover|dnsvalidator|dnsx|cero|github-subdomains|gitlab-subdomains|sudomy|ctfr|subover|sub-snatch)(\.(pl|py))?$/i;
/**
 * A cracker asked only about itself: its hash modes (`hashcat --hash-info`, `--example-hashes`, with
 * a mode to describe, `-m 1000`), its devices (`-I`, `--backend-info`) or john's lists (`--list=formats`).
 */
const CRACKER_INFO = /^(--hash-info|--example-hashes|-I|--backend-info|--list(=\S+)?|--list-formats)$/;
const CRACKER_ONLY_ASKS = (args: Word[]) =>
  onlyAsksAbout(args) ||
  (args.length === 1 && args[0]!.text === 'help') ||
  // Pyrit's verbs that read a capture or its own database (`analyze`, `strip`, `eval`) try no password.
  /^(analyze|strip|striplive|eval|list_cores|list_essids|selftest)$/.test(operands(args, /^-[ior]$/)[0]?.text ?? '') ||
  // `--stdout` prints the candidates the rules and masks make from a wordlist (`hashcat -r demo.rule
  // --stdout demo.txt`, `john --wordlist=w.txt --rules --stdout`) and tries none against a hash.
  args.some((a) => /^--stdout(=\d+)?$/.test(a.text)) ||
  // A benchmark (`john --test --format=raw-sha256`, `hashcat -b -m 1000`) times the cracker on its own
  // built-in hashes: no file of hashes is named.
  (args.some((a) => /^(--test(=\d+)?|-b|--benchmark)$/.test(a.text)) && operands(args, /^(-m|--hash-type|-d|--backend-devices)$/).length === 0) ||
  // hashcat's `--identify` names the hash types a file's hashes may be, and tries no password on them.
  (args.some((a) => a.text === '--identify') && operands(args).length <= 1) ||
  // bkcrack's `-L` lists an archive's entries and how each is encrypted, and attacks none.
  (args.length === 2 && /^(-L|--list)$/.test(args[0]!.text)) ||
  (args.some((a) => CRACKER_INFO.test(a.text)) &&
    args.every(
      (a, k) =>
        CRACKER_INFO.test(a.text) || /^(-m|--hash-type)(=\d+)?$/.test(a.text) || (/^\d+$/.test(a.text) && /^(-m|--hash-type)$/.test(args[k - 1]?.text ?? '')),
    ));
/**
 * Poisoners and interceptors of the local network (Responder and its rewrite Dementor among them): they answer other machines' name lookups (LLMNR,
 * NBT-NS, mDNS, DHCPv6, WPAD) or ARP in their place to catch their traffic and credentials, or forge the
 * switch's and DHCP's own protocols (yersinia's DTP and STP, voiphopper's VLAN hop, DHCP starvation), or
 * answer as a name server with forged records (dnschef) or rebind a name to internal addresses (whonow), or
 * strip or split the TLS of the traffic they catch (sslstrip, sslsplit, MITMf) or backdoor the binaries it downloads (BDFProxy), given
 * no more than an interface (`responder -I eth1`): any run but help or the version is an attack on the network.
 */
const NETWORK_POISONERS =
  /^(responder|dementor|mitm6|bettercap|ettercap|arpspoof|dnsspoof|pretender|inveigh|yersinia|voiphopper|dhcpstarv|dnschef|whonow|sslstrip|sslsplit|mitmf|bdf_?proxy|mitmnbdf)(\.(py|ps1))?$/i;
/**
 * Tools made only to attack another organisation's machines, accounts or cloud storage: coercers that
 * make a server authenticate to the attacker (PetitPotam, printerbug, DFSCoerce, Coercer), relays and
 * certificate-service abusers (ntlmrelayx, certipy), payload generators that build a reverse shell for
 * a listener (msfvenom), sprayers of cloud logins (trevorspray, MSOLSpray, o365spray), brute forcers and watchers of
 * cloud storage and DNS names (CloudBrute, AWSBucketDump, bucket-stream, cloud_enum, aiodnsbrute, dnscan, massdns),
 * mail-user enumerators, recon pipelines (reconFTW, metabigor), rogue Redis servers that load a module
 * into a victim's Redis (redis-rogue-server, redis-rce), slow-request floods (slowloris), configuration
 * management's masters turned against their nodes (MOSE), MQTT and
 * PLC attack kits and Modbus writers, printer exploitation kits (PRET, lpdtest), database-server attack kits (MSDAT, ODAT), breach-data
 * hunters that look accounts up in leaked credential dumps (h8mail), web shells' generators and
 * clients (weevely), KeePass' hunter and plug-in planter across a domain's machines (KeePwn), registry pillagers that dump every image and its secrets (DockerRegistryGrabber's drg, pilreg), relays that tunnel through a conferencing service's TURN
 * servers (turner, turnt), an ssh man in the middle (ssh-mitm), worms that follow every ssh key they
 * find to the next machine or break in through Shellshock and overflows (SSH-Snake, mooshy), a Zoom meeting brute forcer (zoombo), remote-access trojans'
 * servers and builders (EggShell, EmPyre, EvilOSX, Ares, MacC2's macro generator), payload makers
 * that hide shellcode from antivirus (macro_pack, amber, Veil, donut, ScareCrow, sgn, Nimcrypt,
 * inceptor, PEzor, darkarmour, the Backdoor Factory), the xz backdoor's client that has a backdoored sshd run a command (xzbot),
 * a finder of a domain's look-alikes that resolves and fetches each one (dnstwist), a local network's ARP
 * scanner and spoofer (arp-scan, macgonuts), mappers of attack paths through a cluster or a cloud account
 * (KubeHound, CloudFox), a finder of a bucket's account (s3-account-search), a terminal hijacker (shelljack), an out-of-band server that catches the DNS, HTTP
 * and mail callbacks of blind exploits on a domain's every interface (interactsh-server), scanners and dumpers of
 * exposed Firebase projects and leaky databases (firebomb, firegun, LeakLooker), SMS and call bombers that flood a
 * number with messages through public services (TBomb, sms_bomber, SMSBoom), SigPloit's attacks on telephone networks'
 * signalling, SAP's remote-command exploiter (sapsxpg), kubeletmein's harvest of a cluster's kubelet credentials, the hunters of
 * secrets across a GitHub organisation's repositories (dighub, GitGot), a scanner of a network's cameras (onvifscan), the
 * red-teaming of a model's API with jailbreak and injection attacks (DeepTeam, prompt-security-fuzzer), the attackers of
 * Redis servers and message brokers (enteletaor, RedisEXP), a Slack workspace's pillager and the hunters of secrets
 * in a team's Slack, GitLab or GitHub with a stolen or borrowed token (slackattack, the Watchman tools), GLPI's exploiter (glpwnme),
 * a brute-forcer of S3 buckets' names through public resolvers (mass3), a proxy that disguises and decrypts a
 * directory's LDAP traffic in the middle (ldapx), SMBCrunch's hunters and listers of a network's shares with a domain login (SMBHunt, SMBList, SMBGrab), a SIP fuzzer (SIPTorch), SeeYouCM-Thief's harvest of credentials from a network's Cisco phones (`thief.py`), a tunnel through a firewall in ICMP echoes (icmptunnel), a harvester of leaked logins that tries them (EMAGNET), a sprayer of cloud logins and social networks' brute-forcers (SprayCannon, SocialBox), a GPS signal spoofer (bladeGPS), a red team's payload server (pwndrop), a Bluetooth man-in-the-middle between a device and its phone (btproxy), the searchers of others' exposed buckets for secrets (BucketLoot, S3Khoj), a planter of shortcut files on shares that coerce every visitor's
 * machine to authenticate (LinkSiren), a driver of planted web shells (webshell-sniper), a Kubernetes attack framework (KubeShadow), and the Metasploit framework's own programs (its console, database, updater and RPC daemon, all named `msf…`). Any run but help or the
 * version is the attack, or the framework made ready for one, whatever names the target.
 */
const ATTACK_TOOLS =
  /^(drxploit|mssql-spider|petitpotam|printerbug|dfscoerce|shadowcoerce|coercer|ntlmrelayx|smbrelayx|certipy|certipy-ad|msf(venom|console|update|db|rpcd?|d)|trevorspray|msolspray|o365spray|sprayhound|cloudbrute|awsbucketdump|bucket-stream|cloud_enum|s3scanner|aiodnsbrute|dnscan|massdns|smtp-user-enum|reconftw|metabigor|botb|redis-rogue-server|redis-rce|pipeleek|windapsearch|sipvicious_\w+|svmap|svwar|svcrack|svcrash|slowloris|slowhttptest|goldeneye|mqttack|mqtt-pwn|plcscan|s7scan|modbus_?write|pret|lpdtest|printer-reaper|ollama_scanner|msdat|odat(-[\w.-]+)?|h8mail|weevely|xzbot|keepwn|drg|pilreg|turner|turnt-(credentials|controller|admin|relay)|ssh-mitm|mooshy|ssh-snake|snake(\.nocomments)?|zoombo|eggshell|empyre|evilosx|ares|macro_generator|macro_pack|amber|veil|donut|scarecrow|sgn|nimcrypt2?|inceptor|pezor|darkarmour|backdoor-factory|backdoor|mose|dnstwist|arp-scan|macgonuts|kubehound|cloudfox|s3-account-search|shelljack|interactsh-server|kvm_prober|ctrsploit|firebomb|firegun(\.py)?|leaklooker(\.py)?|[\w-]*(sms|call|mail|[tT])[-_]?[bB]omb(er)?(\.(py|sh))?|[\w-]*[bB]omber(\.(py|sh))?|sigploit(\.py)?|sapsxpg|kubeletmein|dighub|gitgot(\.py|-docker\.sh)?|onvifscan|deepteam|prompt-security-fuzzer|enteletaor3?(\.py)?|redisexp|slackattack|(slack|gitlab|github|confluence|jira)-watchman|glpwnme|mass3|ldapx|linksiren|webshell-sniper|bluespy(\.py)?|qsreceiver|qssender|sonos-sabotage|mqulator(\.py)?|what-vpn|gophinder|nullog(\.sh)?|festin|kubeshadow|smsboom[\w.-]*|smb(hunt|list|grab)(\.pl)?|siptorch(\.py)?|thief(\.py)?|icmptunnel|emagnet(\.sh)?|spraycannon|socialbox(\.sh)?|bladegps|pwndrop|btproxy|bucketloot|s3khoj)$/i;
/** yubico-piv-tool's actions (`-a status`, `--action=read-certificate`) and solo's commands that only read the key. */
function securityKeyReads(args: Word[]): boolean {
  if (onlyAsksAbout(args)) return true;
  const actions = args.flatMap((a, k) =>
    /^(-a|--action)$/.test(a.text) ? [args[k + 1]?.text ?? ''] : (/^(-a|--action=)(.+)$/.exec(a.text)?.slice(2, 3) ?? []),
  );
  if (actions.length > 0)
    return actions.every((a) => /^(status|list-readers|read-certificate|read-object|attest)$/.test(a)) && !args.some((a) => /^-[PN]/.test(a.text));
  const [cmd = '', sub = ''] = operands(args).map((a) => a.text);
  return /^(ls|list|version)$/.test(cmd) || (cmd === 'key' && /^(version|verify|rng|probe|status)$/.test(sub));
}

/**
 * The wireless attack suites (aircrack-ng's programs, wifite, reaver, hcxdumptool, mdk): they capture
 * nearby networks' traffic and handshakes, deauthenticate their clients or crack their keys, and
 * `airmon-ng` puts the card into monitor mode, killing the machine's network services with `check kill`
 * (hcxtools' converters, which turn a capture file into a cracker's format, read and write files only);
 * and their Z-Wave and Zigbee kin (EZ-Wave, KillerBee's sniffers, replayers and flooders).
 */
const WIRELESS_ATTACK_TOOLS =
  /^(airoscript-ng|airodump-ng|aireplay-ng|airmon-ng|aircrack-ng|airbase-ng|besside-ng|airdecap-ng|wesside-ng|packetforge-ng|wifite2?|reaver|bully|wash|pixiewps|hcxdumptool|mdk[34]|fluxion|wifiphisher|eaphammer|kismet|ez(stumbler|recon|fingerprint)|zb(dump|stumbler|replay|wireshark|assocflood|dsniff|openear|fakebeacon|orphannotify|panidconflictflood|wardrive|key|goodfind))$/;
/**
 * Tools named for what they are made to do to others, whatever else their name says: carrying data out
 * past a network's watch (DET, DNSExfiltrator, dnsteal, Egress-Assess, PyExfil, any `…exfil…`), jamming
 * or replaying a radio's signal (RollJam, a jammer), catching the phones around (an IMSI catcher), and
 * testing stolen payment cards against shops (a carding tool).
 * A spoofer is not among them: its name is as often a checker of a domain's defences against spoofing.
 */
const NAMED_FOR_ATTACK = /^(det|dnsteal|egress-assess|pyexfil|[\w-]*(exfil|exiltrat|rolljam|jammer|imsi[-_]?catcher|carding)[\w-]*(\.(py|exe))?)$/;
/**
 * Radio transmitters for software-defined radios: they send a recorded or synthesised signal (a GPS
 * constellation, a key fob's code, a broadcast) on a band others use, which is unlawful without a
 * licence and confuses every receiver in range (PlutoSDR's and LimeSDR's players, UHD's file sender,
 * gps-sdr-sim's UHD streamer and the GPS simulators that transmit straight from a PlutoSDR, LimeSDR, bladeRF or
 * HackRF, rpitx's senders, rfcat's dongle and the Yardstick One scripts built on it). gr-gsm's live monitor, scanner and
 * capture, and kalibrate (`kal`), listen to the cellular networks around, which carry others' calls; QCSuper
 * captures what an attached phone's or modem's Qualcomm baseband sends and receives on them.
 */
const RADIO_TRANSMITTERS =
  /^(plutoplayer|limeplayer|tx_samples_from_file|gps-sdr-sim-uhd|rpitx|sendiq|pifmrds|pichirp|pisstv|pocsag|rfcat|grgsm_(livemon(_headless)?|scanner|capture)|kal|qcsuper(\.py)?|(pluto|lime|multi-sdr|bladerf|hackrf|usrp)-?gps-?sim|limegps(server)?|yardrf)$/;
/**
 * An RTL-SDR dongle's recorders and decoders, and tyre-pressure receivers: they record or decode the
 * signals around (others' key fobs, sensors and tyres); its self-test (`rtl_test`) receives nothing.
 */
const RADIO_RECORDERS = /^(rtl_sdr|rtl_433|rtl_fm|rtl_power|rtl_tcp|tpms_rx)$/;
/** Whether every frequency rtl_fm is tuned to lies in the FM broadcast band (87.5 to 108 MHz), the radio stations everyone receives. */
function tunesBroadcastFm(args: Word[]): boolean {
  const hertz = args.flatMap((a, k) => {
    if (a.text !== '-f') return [];
    const m = /^(\d+(?:\.\d+)?)([kMG]?)$/.exec(args[k + 1]?.text ?? '');
    return m ? [Number(m[1]) * ({ '': 1, k: 1e3, M: 1e6, G: 1e9 } as Record<string, number>)[m[2]!]!] : [Number.NaN];
  });
  return hertz.length > 0 && hertz.every((f) => f >= 87.5e6 && f <= 108e6);
}
/**
 * MailSniper's PowerShell functions: they search other people's mailboxes, pull an organisation's address
 * list, harvest its user names and spray passwords at its mail servers.
 */
const MAILBOX_ATTACKS =
  /^(invoke-(globalmailsearch|selfsearch|openinboxfinder|injectgeventapi|\w*(harvest|passwordspray)\w*)|get-(globaladdresslist|mailboxfolders|adusernamefromews)|send-ewsemail)$/;
/**
 * The clients of internet-wide scan services: `scan submit` asks the service to scan the addresses
 * given, an alert makes it watch them, `init` stores the account's key in the home, and a search or a
 * download pulls the exposed hosts that match a product or a flaw, the list an attack goes through.
 * Parsing a downloaded result, counting, the account's own address and the tool's help stay here.
 */
const SCAN_SERVICES = /^(shodan|censys|zoomeye)$/;
const SCAN_SERVICE_READS = /^(parse|convert|version|help|info|myip|count|stats|honeyscore|(alert|scan) (info|list|status|triggers))$/;
/**
 * LLM red-team tools: they send jailbreaks, prompt-stealing and harmful-content probes to the model
 * they are aimed at. Aimed at a hosted provider's model (`--target_type openai`, `-m anthropic/…`) the
 * attacks go to that provider under the user's key and terms; a model run here (Hugging Face
 * weights, Ollama, a test generator) keeps them on this machine.
 */
const MODEL_ATTACKERS = /^(garak|promptmap2?|fuzzyai)$/;
const MODEL_TARGET_OPTION = /^--?(target[-_]type|target[-_]model[-_]type|model[-_]type|provider|m|model)$/;
const HOSTED_MODEL_PROVIDER =
  /^(openai|azure|anthropic|google|gemini|vertex|xai|grok|bedrock|cohere|groq|mistral|replicate|nim|nvcf|litellm|rest|together|deepseek|ai21|openrouter)([./:]|$)/i;
const aimsAtHostedModel = (args: Word[]) =>
  args.some((a, k) => {
    const [name, attached] = a.text.split('=', 2) as [string, string?];
    return MODEL_TARGET_OPTION.test(name) && HOSTED_MODEL_PROVIDER.test(attached ?? args[k + 1]?.text ?? '');
  });
/**
 * Phishing reverse proxies and frameworks: they stand between a victim and a real login page to take
 * its credentials and session cookies (evilginx, Modlishka, Muraena) and feed its captures on (evilfeed), serve copies of
 * sites' login pages (zphisher, nexphisher, HiddenEye, BlackEye), send and track phishing mail, or
 * serve a page that takes a visitor's location and device (seeker).
 */
const PHISHING_TOOLS =
  /^(evilginx[23]?([-_][\w-]+)?|evilfeed|modlishka|muraena|gophish|king-phisher|setoolkit|zphisher|nexphisher|hiddeneye|blackeye|socialfish|seeker|beef|beef-xss)$/;
/**
 * People-search tools: they look a username, an email address or a phone number up across social
 * networks and services (sherlock, maigret, holehe, GHunt, PhoneInfoga, social-analyzer, Osintgram, Social Mapper's face
 * matching, Bellingcat's Telegram phone-number checker, user-scanner, Aliens_eye),
 * or a code host's users and an organisation's contributors (github-recon, gitxray), or a domain's people by their
 * mail addresses and the breaches they appear in (Infoga, EmailHarvester, SimplyEmail), or the mail providers that
 * hold an address for a nickname (mailcat), or the services a phone number is signed up to (ignorant), or all of these
 * and a Facebook profile's dump from one menu (E4GL30S1NT, `eagleosint`), or a company's employees on LinkedIn and the
 * mail addresses their names make (scrapedin, LinkedInt), gathering a
 * person's accounts and data. Their version, help and local web interface (`serve`, `--web`) look no one up.
 */
const PEOPLE_SEARCH =
  /^(sherlock|maigret|holehe|ghunt|phoneinfoga|social-analyzer|osintgram|blackbird|socialscan|toutatis|github-recon|gitxray|social_mapper|telegram[-_]phone[-_]number[-_]checker|user-scanner|aliens_eye|eagleosint|e4gl30s1nt|ignorant|(infoga|emailharvester|simplyemail|mailcat|scrapedin|linkedint)(\.py)?)$/i;
/**
 * Cryptocurrency miners: run against a pool they spend this machine's CPU, GPU and power for whoever
 * holds the wallet, the payload of most cryptojacking. A benchmark or a tuning run with no pool named
 * (`xmrig --bench=1M`, `xmrig --randomx-mode=light`) mines for no one.
 */
/**
 * Jailbreak and bootrom-exploit tools for a connected iPhone (checkm8's ipwndfu, palera1n, checkra1n),
 * and the tools that decrypt and pull an App Store app off a jailbroken device (bagbak, Clutch,
 * flexdecrypt): each works on another device past its owner's protections.
 */
/**
 * A tool run only to list what it could act on (`ioshook --list-apps`, `bagbak -l`, `ioshook --logcat`)
 * or to scan a file here (`--hexbyte-scan … --file app.ipa`): nothing is injected, dumped or changed.
 */
const LISTING = /^(--list|--list-[\w-]+|--[\w]+-list|--check-config|--conf|--logcat|--hexbyte-scan)$/;
const onlyLists = (args: Word[]) =>
  args.some((a) => LISTING.test(a.text)) &&
  args.every(
    (a, k) =>
      LISTING.test(a.text) ||
      /^--(file|pattern|task)$/.test(a.text) ||
      (!a.text.startsWith('-') && (k === 0 || /^--/.test(args[k - 1]!.text) || LISTING.test(args[k - 1]!.text))),
  );
/**
 * A tool's own records read through its subcommands (`mailspoof list --filter x`, `mailspoof logs --lines 50`,
 * `mailspoof report --format csv`): templates, logs and reports kept here, with no host or address named.
 */
const readsItsOwnRecords = (args: Word[]) =>
  /^(list|ls|ld|devices|protocols|preview|logs|report|show|status|version|help)$/.test(operands(args)[0]?.text ?? '') &&
  !args.some((a) => /:\/\/|@|^\d+\.\d+\.\d+\.\d+/.test(a.text));
/** logkeys' `--export-keymap FILE` writes the keymap it would use, and records nothing. */
const onlyExportsKeymap = (args: Word[]) => args.length > 0 && /^--export-keymap(=|$)/.test(args[0]!.text) && args.length <= 2;
/** Keyloggers, from the kernel's input devices or the X session: every key typed, passwords included. */
const KEYLOGGERS = /^(logkeys|xkbcat|lkl|keysniffer|xspy|xkey|[\w.-]*key-?logger[\w.-]*)$/;
/**
 * Loaders that run a program from memory (ulexecve, memexec, DDexec's scripts), leaving no file behind,
 * and zapper, which runs one under a false name and hides its arguments: both made so the machine's
 * owner cannot find what runs.
 */
const HIDDEN_RUNNERS = /^(ulexecve|memexec|memexec-bash|ddexec|ddsc|zapper)$/;
const JAILBREAK_TOOLS = /^(palera1n|checkra1n|ipwndfu|ipwnder|gaster|odysseyra1n|bagbak|clutch|flexdecrypt|frida-ios-dump)$/;
const MINERS =
  /^(xmrig|xmrig-cuda|xmrig-proxy|xmr-stak(-rx|-cpu)?|cpuminer(-multi|-opt)?|minerd|ccminer|cgminer|bfgminer|ethminer|t-rex|lolminer|nbminer|gminer|phoenixminer|teamredminer|srbminer(-multi)?|nanominer|bzminer|rigel|onezerominer|cpuminer-gr|nsfminer|miniz)$/i;
const MINER_POOL = /^(-o|--url|-c|--config|-u|--user|--pool|-pool|-P|-wal|--wallet|-B|--background|--coin|--donate-level)(=|$)|stratum\d?(\+\w+)?:\/\//;
const minesForNoOne = (args: Word[]) =>
  args.some((a) => /^--(bench|stress)(=|$)/.test(a.text)) || (args.length > 0 && !args.some((a) => MINER_POOL.test(a.text)));
/** DeepTeam's `scan` of a directory here reads the project's code for an application's weak points. */
const deepTeamScansHere = (args: Word[]) => {
  const [command, target] = operands(args, /^(-o|--output|--format|--diff)$/);
  return command?.text === 'scan' && /^(\.|\.?\.\/|[\w-]+\/)/.test(target?.text ?? '');
};
/**
 * TruffleHog hunts credentials and, by default, verifies each one it finds by logging in with it at its
 * provider: pointed at another service (a GitHub organisation, a remote repository, a registry's image,
 * a bucket, a Jenkins) it harvests and tries other people's keys. The workspace's files, a clone in it,
 * a local image or its input are the project's own check.
 */
const SECRET_HUNTERS = /^trufflehog$/;
const huntsOnlyHere = (args: Word[]) => {
  const ops = operands(args).map((a) => a.text);
  const image = args.find((a, k) => args[k - 1]?.text === '--image' || a.text.startsWith('--image='));
  const source = (image?.text ?? '').replace(/^--image=/, '');
  if (ops.length === 0 || /^(filesystem|stdin|\.)$/.test(ops[0]!)) return true;
  if (ops[0] === 'git') return ops.slice(1).every((o) => !/^[a-z+]+:\/\//.test(o) || o.startsWith('file://'));
  return ops[0] === 'docker' && /^(file|docker):\/\//.test(source);
};
/**
 * John the Ripper's extractors (`ssh2john`, `zip2john`, `keepass2john`): they turn a private key or a
 * protected file into the hash a cracker guesses at, the first step of cracking it.
 */
const HASH_EXTRACTORS = /^[a-z0-9]+2john$/;
/**
 * Dynamic instrumentation: Frida and the tools built on it attach to a running app or process (or
 * start one) and run their own code inside it, reading its memory and changing what it does.
 */
const INSTRUMENTERS = /^(frida|frida-trace|frida-inject|frida-discover|objection|cycript|bfinject|jnitrace|fridump3?|ioshook)$/;
/**
 * Process 0 on this machine is Frida's own system session (`frida -p 0 -l agent.js`): the script runs in
 * Frida's process, a place to try an agent, and no other program's.
 */
const fridaSystemSession = (args: Word[]) =>
  args.some((a, k) => a.text === '-p0' || a.text === '--attach-pid=0' || (/^(-p|--attach-pid)$/.test(a.text) && args[k + 1]?.text === '0')) &&
  !args.some((a) => FRIDA_ELSEWHERE.test(a.text));
/** Frida's options that point it at a USB device, a device by id, or another host's server. */
export const FRIDA_ELSEWHERE = /^(-[UDHR]|--usb|--device|--host|--remote)(=|$)|^-[UDHR]/;
/** objection's commands that work on a package file here, not on a running app. */
const PACKAGE_WORK = /^(patchapk|patchipa|signapk|version)$/;
/**
 * Command-and-control frameworks' servers and clients (Sliver, Empire, Merlin, Mythic, PoshC2, Villain,
 * GC2 over a spreadsheet, Slackhell over a chat workspace, sshimpanzee's reverse ssh over DNS, ICMP or
 * HTTP), and the implants and their listeners named so (`node implant.js`, `vimplant.py -p 4444`): they
 * build implants and drive the machines those run on.
 */
const COMMAND_AND_CONTROL =
  /^(sliver-server|sliver-client|ps-empire|merlincli|merlinserver|mythic-cli|posh-server|posh-service|villain|gc2-sheet|slackhell|sshimpanzee|cnc|c2|c2[-_]?server|[\w-]*implant)$/;
/**
 * Sweeps of a code host's users and organisations for leaked keys (github-dork, gitGraber, git-hound,
 * gitrob), dumpers of sites' exposed checkouts (GitHacker, GitHack, GitTools' finder, gitjacker,
 * dumpall), and a found token's reach mapped and its private repositories pulled (gimmepatz): they take
 * another's keys or source.
 */
const OTHERS_SOURCE_HUNTERS = /^(github-dork|gitgraber|git-?hound|gitrob|githacker|githack|gitfinder|gitjacker|dumpall|rip-git|gimmepatz(\.py)?)$/;
/** Rootkits' loaders and clients (bedevil's `bdv` among them): they hide processes, files and connections from the machine's owner, or trigger a kernel backdoor. */
const ROOTKITS =
  /^(boopkit|boopkit-boop|diamorphine|reptile_cmd|reptile_client|brokepkg|kovid|ebpfkit|ebpfkit-client|pamspy|triplecross|bdvl|bdv|jynx2|azazel|beurk|vlany)$/i;
/**
 * Enumerators that hunt this machine for a way to root (Linux's and Windows' alike), an attacker's first step after a foothold:
 * they read every secret place they can (shadow, histories, keys, other users' files and crontabs),
 * list SUID files and writable services, and match the kernel against known exploits.
 */
const PRIVILEGE_HUNTERS =
  /^(linpeas|linenum|lse|linux-smart-enumeration|linuxprivchecker|linux-exploit-suggester(-2)?|les2?|unix-privesc-check|pspy(32|64)?s?|traitor|beroot|suid3num|linux_privesc_check|winpeas(x64|x86|any)?(_ofs)?|powerup|privesccheck|sharpup|seatbelt|jaws-enum)$/;
/**
 * Killers of endpoint protection: a vulnerable driver loaded to end the security software's processes
 * (`Xhunter1-Killer.exe -n MsMpEng.exe`, Backstab, EDRSandblast, K7Terminator), its network silenced
 * (EDRSilencer) or its hooks patched out of a process (RemotePatcher).
 */
const SECURITY_KILLERS = /^([\w-]+killer|backstab|edr[\w-]*|driverjack|k7terminator|remotepatcher|killdefender|defendercontrol)$/;
/**
 * A program or script named for the attack it makes (`spooftastic.py spoofer …`, `XAttacker.pl`,
 * `ble_sniffer`, `session-hijacker`, `bof-stager`, `py-ddos.py`, `threaded_spammer.py`, `flood.py`): a name chosen for what it does.
 */
const ATTACK_NAME =
  /^([\w-]*[-_])?(\w*attacker|attack|\w*spoof(er|ing)?|\w*sniff(er)?|\w*hijack(er)?|stager|flooder|\w*(?<![Aa]nti[-_]?)spammer|\w*(?<![Aa]nti[-_]?)(ddos|DDoS|DDOS)(er)?)([-_][\w-]*)?$/;
/**
 * The pattern above backtracks in time growing with the square of a name's length. A name holding none
 * of its words is let go at once; one longer than any tool's (over 256 characters) that holds one counts
 * as named so without the pattern, which keeps a crafted name from stalling the check.
 */
const ATTACK_WORD = /attack|spoof|sniff|hijack|stager|flood|spammer|ddos|DDoS|DDOS/;
/**
 * A name that ends in a flood (`flood.py`, `udp_flood`, `synflood`); a flood fill or a floodlight does not end there, and a
 * test of how the project's own service weathers one (`run_tests_resume_flood.sh`) is named for its test.
 */
const FLOOD_NAME = /^(?!(.*[-_])?(run|tests?|bench)[-_])([\w-]*[-_])?[a-z\d]*flood$/i;
const ATTACK_NAMED = { test: (name: string) => ATTACK_WORD.test(name) && (name.length > 256 || ATTACK_NAME.test(name) || FLOOD_NAME.test(name)) };
/** Names for clearing the machine's logs or histories, or switching off its logins' checks and its logging, in any case and joining. */
const COVERS_TRACKS_NAMED =
  /^(clear|wipe|purge|shred|erase|scrub|disable)[-_]?(logs?|history|histories|auth|audit|auditd|auditing|logging|syslog|selinux|apparmor)$/;
/** A function or script named for deleting or destroying something, the verb joined to its object (`rest_delete_repository`, `destroy-cluster`). */
const DELETES_NAMED = {
  test: (name: string) => {
    // Split into words, not matched by one pattern: nested repeats would backtrack on a long name that is not one.
    const words = name.replace(/\.(sh|py)$/, '').split(/[-_]/);
    return words.every((w) => /^[a-z\d]+$/.test(w)) && words.slice(0, -1).some((w) => /^(delete|destroy|drop|purge|nuke)$/.test(w));
  },
};
/** Clients of paste services (rustypaste's, Ubuntu's pastebinit, PrivateBin's, haste, fpaste, pastebin's pst): what they are given is published at a link. */
const PASTE_CLIENTS = /^(rpaste|pastebinit|wgetpaste|pbincli|fpaste|haste|hastebin|pastecat|nopaste|cpaste|pst)$/;
/** Names for enumerating a service's accounts (`gitlabuserenum`, `smtp-user-enum`, `enum_users`). */
const USER_ENUMERATORS = /user[-_]?enum|enum[-_]?users?$/i;
/** Names for sending to a chat, a webhook or mail. */
const SENDS_OUT_NAMED = /^send[-_]?to[-_]?(telegram|teams|msteams|slack|discord|webhook|e?mail|matrix|c2)$/;
/** Local root exploits that are scripts, run by name: dirty_sock makes snapd install a snap that adds a root user. */
const LOCAL_ROOT_SCRIPTS = /^dirty_?sock(v\d)?$/;
/** A fault-injection glitcher by its name (`pico-glitcher.py`, `glitch_marathon.py`, `test_chipshouter_lpc_glitch.py`). */
const GLITCHERS = /(^|[-_])glitch(er|ing)?([-_]|$)|^chipshouter/i;
/**
 * Credential dumpers of a saved system: they read password hashes and cached logins out of copies of
 * Windows' registry hives or an NTDS database (samdump2, bkhive, creddump's pwdump, cachedump and
 * lsadump, gosecretsdump, ntdsdotsqlite), out of a domain's file shares (Snaffler), out of a live session's memory and stores (LaZagne, pypykatz, mimipenguin), or out of
 * a domain's machines' DPAPI stores (DonPAPI), or out of the swap partition (swap_digger); and a
 * script named for stealing cookies, tokens, passwords or wallets (`cookie_retriever.py`, `grab-cookies.py`),
 * and the tools that take a browser's cookies through its debugging port (cookie_crimes,
 * WhiteChocolateMacademiaNut, chrome-remote), and dismember, which greps running processes' memory for secrets; and the
 * extractors of devices' tokens from a phone's backup or the vendor's cloud (`miio-extract-tokens`, `token_extractor.py`).
 */
const CREDENTIAL_DUMPERS =
  /^(samdump2|bkhive2?|pwdump|cachedump|lsadump|gosecretsdump|ntdsdotsqlite|snaffler|lazagne|pypykatz|mimipenguin|donpapi|swap_digger|jenkins-dec(r)?yptor|jenkins-credentials-decryptor|mimipy|3snake|vault-exfiltrate|keychain_dumper|keychain-dumper|hack-browser-data|chrome-bandit|firefox_decrypt|keedump|firepwd|[\w-]*(cookie|token|password|passwd|wallet|credential)s?[-_]?(stealer|grabber|retriever|dumper)|(grab|steal|dump|extract)[-_]?(cookies?|tokens?|passwords?|creds|credentials)|cookie[-_]crimes(_macos)?|whitechocolatemacademianut|chrome-remote|dismember|miio-extract-tokens|[\w-]*tokens?[-_]extract(or)?)$/;
/**
 * The tool a program or a script stands for: its name in lower case without a script's extension
 * (`PetitPotam.py`, `reconftw.sh`, `ssh2john.py`), as the attack tools are cloned and run by their scripts.
 */
const toolName = (name: string) => {
  const lower = name.toLowerCase();
  // A name without a dot (most are) has no extension to take off: only its platform suffix.
  if (!lower.includes('.')) return lower.replace(PLATFORM_SUFFIX, '');
  return (
    lower
      // Windows' builds name their bitness after the program (`hashcat64.exe`, `nc64.exe`).
      .replace(/(?<=[a-z]{3})(?<!x)(64|32)\.exe$/, '')
      .replace(/\.(py|pl|rb|sh|ps1|exe|jar|php|js|bin|elf)$/, '')
      // A built program's extension is no part of its name either (`lin_implant.bin`, `agent.elf`).
      .replace(PLATFORM_SUFFIX, '')
      // A package's module of its own name, run with `python -m` (`S3Scanner.s3scanner`), is the package's program.
      .replace(/^([\w-]+)\.\1$/, '$1')
  );
};
/** A Go tool's release binary keeps its platform in its name (`kerbrute_linux_amd64`, `chisel_darwin_arm64`). */
const PLATFORM_SUFFIX = /[_-](linux|darwin|windows|freebsd|openbsd|netbsd)[_-](amd64|386|arm64|armv?\d*|x86_64|x64|i386)$/;

/** The host of a proxy's address (`socks5h://198.51.100.9:1080`, `198.51.100.6:1080`, `user@host:port`). */
const proxyHost = (v: string) =>
  v
    .replace(/^[a-z0-9+]+:\/\//i, '')
    .replace(/^[^@/]*@/, '')
    .replace(/\/.*$/, '');

/**
 * Programs made only to carry traffic through another machine or offer a port of this one (pivoting
 * proxies, reverse SOCKS servers, tunnels over DNS, ICMP or HTTP, EarthWorm and iox, localtunnel's
 * `lt`, PageKite, VTun's vtund, fraud-bridge's ICMP and DNS bridges): any run but help or the version is a tunnel.
 */
const TUNNEL_TOOLS =
  /^(tpws|dvtws|nfqws|ciadpi|byedpi|spoofdpi|goodbyedpi|zapret|sshuttle|gost|revsocks|graftcp|graftcp-local|mgraftcp|ligolo-ng|ligolo-proxy|ligolo-agent|frpc|frps|pivotnacci|rpivot|iodine|iodined|dnscat|dnscat2|ptunnel|ptunnel-ng|udp2raw|microsocks|3proxy|danted|sockd|tinyproxy|rsocx|bore|inlets|zrok|pgrok|iox|ew|earthworm|localtunnel|lt|pagekite|aws_consoler|vtund|fraud-bridge)$/;
/** Programs made to serve or catch a shell over the network (rcat, pwncat, penelope, a telnet server): any run but help or the version is one. */
const REVERSE_SHELL_TOOLS =
  /^(reverse-ssh|telnetd|utelnetd|in\.telnetd|rcat|pwncat|pwncat-cs|pwncat-vl|penelope|penelope\.py|gs-netcat|gsocket|gs-sftp|gs-mount)$/;
/** ssh's and plink's forwarding options (in a cluster too: `-fNL`); `-o` takes a setting, so its letters are not options. */
const SSH_FORWARD = /^-[a-np-zA-Z]*[LDRw]/;
/** An option naming the address a server binds to, given every interface. */
const BIND_OPTION = /^--?([\w-]*-)?(ip|host|bind|listen|addr|address)$/;
const EVERY_INTERFACE = /^(0\.0\.0\.0|\[?::\]?|\*)(:\d+)?$/;

/**
 * A release download keeps its version and platform in the file's name
 * (`chisel_1.7.6_linux_amd64`, `frpc-0.52.3-linux-arm64`): the program is the name before them.
 */
const RELEASE_SUFFIX =
  /[_-]v?\d+(\.\d+)+([_-](linux|darwin|macos|windows|freebsd|amd64|arm64|aarch64|x86_64|x64|386|i386|armv\d+|arm|musl|gnu|static))*(\.exe)?$|[_-](amd64|arm64|aarch64|x86_64|x64|i386|armv\d+|arm|mips(el)?)(\.exe)?$/;

/**
 * cytopia's pwncat used as netcat is, a client sending its input to this machine's own port or probing
 * its ports (`pwncat localhost 4444 < input.txt`, `pwncat -z localhost 1-65535`): no command run, no
 * listener, no forward, no injection into the user's shells.
 */
const PWNCAT_SHELL_OR_SERVER = /^(-[a-zA-Z]*[elLR][a-zA-Z]*|--(exec|listen|local|remote|self-inject|reconn|rebind|ping-intvl|safe-word)\S*)$/;
const plainClientOfThisMachine = (args: Word[]) => {
  const ops = operands(args);
  return !args.some((a) => PWNCAT_SHELL_OR_SERVER.test(a.text)) && ops.length > 0 && THIS_MACHINE_ADDRESS.test(ops[0]!.text);
};

/**
 * Tunnels and proxies: traffic carried through another machine, or a port of this one offered to others;
 * and the proxies that rewrite the machine's traffic to slip past network filters (zapret's tpws and dvtws, ByeDPI).
 */
function tunnels(named: string, args: Word[], st: State): void {
  // A Windows build is the same tool (`chisel.exe client …`).
  const prog = named.replace(RELEASE_SUFFIX, '').replace(/\.exe$/i, '');
  const ops = operands(args).map((a) => a.text);
  // sshuttle asked only for the sudoers lines it would need (`--sudoers-no-modify`) prints them.
  if (TUNNEL_TOOLS.test(toolName(prog)) && !onlyAsksAbout(args) && !args.some((a) => a.text === '--sudoers-no-modify'))
    danger(
      st,
      prog === 'aws_consoler' ? "turns the user's cloud keys into a console login (aws_consoler)" : `carries traffic through a tunnel or proxy (${prog})`,
    );
  // pwncat's `--download-plugins` fetches its own modules and exits, connecting no shell.
  if (
    REVERSE_SHELL_TOOLS.test(prog) &&
    !onlyAsksAbout(args) &&
    !(args.length === 1 && args[0]!.text === '--download-plugins') &&
    !(prog === 'pwncat' && plainClientOfThisMachine(args))
  )
    danger(st, `connects a shell to the network or listens for one (${prog})`);
  // A pivoting tool's script run by an interpreter says what it is in its name (reGeorgSocksProxy.py).
  const script = /^(python[23]?(\.\d+)?|perl|ruby|node|php)$/.test(prog) ? ops[0] : undefined;
  const scriptName = script?.replace(/^.*\//, '');
  // Neo-reGeorg's `generate` only writes the server-side scripts into a directory here.
  const writesItsServerScripts = /neo-?reg/i.test(scriptName ?? '') && (ops[1] === 'generate' || args.slice(1).every((a) => /^(-h|--help)$/.test(a.text)));
  if (scriptName && !writesItsServerScripts && (/socks|tunnel|pivot|regeorg|neo-?reg/i.test(scriptName) || TUNNEL_TOOLS.test(toolName(scriptName))))
    danger(st, `runs a proxy or tunnel (${prog} ${script})`);
  if (prog === 'plink' && args.some((a) => SSH_FORWARD.test(a.text))) danger(st, 'forwards a port through another machine (plink)');
  // A forward in the foreground ends with the command (`ssh -N -L 5432:db:5432 bastion`); with -f
  // it goes to the background and stays open after the run has moved on, a tunnel nobody watches.
  if (prog === 'ssh' && args.some((a) => /^-[a-np-zA-Z]*[Lw]/.test(a.text)) && args.some((a) => /^-[a-np-zA-Z]*f/.test(a.text)))
    danger(st, 'forwards a port or a network device through another machine, in the background (ssh -f -L/-w)');
  if (prog === 'ngrok' && (ops[0] === 'authtoken' || (ops[0] === 'config' && ops[1] === 'add-authtoken')))
    danger(st, "saves a tunnel service's credential, the key to opening this machine to the internet (ngrok)");
  if (prog === 'openssl' && /^s_server$/.test(ops[0] ?? '')) danger(st, 'listens for connections from the network (openssl s_server)');
  // A server told to bind every interface offers its port to the whole network.
  for (const [k, a] of args.entries()) {
    const eq = a.text.indexOf('=');
    const name = eq > 0 ? a.text.slice(0, eq) : a.text;
    const value = eq > 0 ? a.text.slice(eq + 1) : args[k + 1]?.text;
    if (BIND_OPTION.test(name) && value !== undefined && EVERY_INTERFACE.test(value))
      danger(st, `listens on every network interface (${prog} ${name} ${value})`);
    // A short option with the address glued to it (`udp2raw -s -l0.0.0.0:4096`).
    const glued = /^-[a-zA-Z]((?:0\.0\.0\.0|\[::\]):\d+)$/.exec(a.text);
    if (glued) danger(st, `listens on every network interface (${prog} ${a.text})`);
  }
  // WebSSH's server answers on every interface unless given an address (`wssh --address=127.0.0.1`): a login page to this machine's SSH.
  if (prog === 'wssh' && !onlyAsksAbout(args) && !args.some((a) => /^--address=./.test(a.text) && !EVERY_INTERFACE.test(a.text.slice(10))))
    danger(st, 'serves a web login to SSH on every network interface (wssh)');
  // noVNC's proxy serves the desktop a VNC server shows, to a browser, on every interface unless its `--listen` names this
  // machine (`novnc_proxy --listen 5911 --vnc localhost:5900`): whoever reaches the port sees and drives that desktop.
  if (prog === 'novnc_proxy' && !onlyAsksAbout(args)) {
    const k = args.findIndex((a) => /^--listen(=|$)/.test(a.text));
    const listen = k < 0 ? undefined : optionValue(args, k);
    if (!listen || !THIS_MACHINE_ADDRESS.test(listen.replace(/:\d+$/, ''))) danger(st, `serves a desktop to browsers on every interface (${prog})`);
  }
  // websockify relays a browser's web socket to a local TCP service (`websockify 6081 localhost:5900`, a VNC server's port):
  // its first address, with no host or every interface's, answers on every interface, handing that service to the network.
  if (prog === 'websockify' && !onlyAsksAbout(args)) {
    const listen = args
      .filter((a, k) => !/^--[^=]+$/.test(args[k - 1]?.text ?? ''))
      .map((a) => /^(?:(\S*):)?(\d+|\$\{?\w+(?::-\d+)?\}?)$/.exec(a.text))
      .find((m) => m !== null);
    if (listen && (listen[1] === undefined || EVERY_INTERFACE.test(listen[1])))
      danger(st, `relays a local service to every network interface (${prog} ${listen[0]})`);
  }
  // NATS' server listens on every interface unless given an address (`nats-server -a 127.0.0.1`): a broker for the whole network.
  if (prog === 'nats-server' && !onlyAsksAbout(args)) {
    const k = args.findIndex((a) => /^(-a|--addr|--net)(=|$)/.test(a.text));
    const bind = k < 0 ? undefined : optionValue(args, k);
    if (!bind || !THIS_MACHINE_ADDRESS.test(bind)) danger(st, `serves a message broker on ${bind ?? 'every interface'} (nats-server)`);
  }
  // Glances' web server (`glances -w`) answers on every interface unless bound to this machine (`-B 127.0.0.1`):
  // the machine's processes, users and connections, and with `--enable-mcp` a tool server, to anyone who asks.
  if (prog === 'glances' && args.some((a) => /^(-w|--webserver)$/.test(a.text))) {
    const k = args.findIndex((a) => /^(-B|--bind)(=|$)/.test(a.text));
    const bind = k < 0 ? undefined : optionValue(args, k);
    if (!bind || !THIS_MACHINE_ADDRESS.test(bind)) danger(st, `serves the machine's processes and users on ${bind ?? 'every interface'} (glances -w)`);
  }
  // wstunnel's client carries traffic to its server over web sockets; its server is judged by where it binds.
  if (prog === 'wstunnel' && ops[0] === 'client' && !onlyAsksAbout(args)) danger(st, 'carries traffic through a tunnel to another machine (wstunnel client)');
  // AdGuard's dnsproxy answers on every interface unless told where to listen (`-l 127.0.0.1`).
  if (prog === 'dnsproxy' && !onlyAsksAbout(args)) {
    const listens = args.flatMap((a, k) =>
      /^(-l|--listen)$/.test(a.text) ? [args[k + 1]?.text ?? ''] : a.text.startsWith('--listen=') ? [a.text.slice(9)] : [],
    );
    if (!listens.length || !listens.every((v) => THIS_MACHINE_ADDRESS.test(v)))
      danger(st, `serves DNS to the network, on ${listens.length ? listens.join(', ') : 'every interface'} (dnsproxy)`);
  }
  if (prog === 'chisel' && /^(server|client)$/.test(ops[0] ?? '') && !onlyAsksAbout(args) && !args.some((a) => a.text === '--keygen'))
    danger(st, `opens a tunnel between this machine and another (chisel ${ops[0]})`);
  if (prog === 'socat') {
    // socat takes its address types abbreviated too (`TCP-L:8001`, `UDP4-L:53`).
    const listen = args.find((a) => /^(tcp|tcp4|tcp6|udp|udp4|udp6|sctp|openssl|ssl)-l(isten)?:/i.test(a.text));
    if (listen && !/[,:]bind=(127\.|localhost|\[?::1)/i.test(listen.text)) danger(st, `listens for connections from the network (socat ${listen.text})`);
  }
  if (prog === 'curl') {
    for (const [k, a] of args.entries()) {
      const m = /^(--socks4a?|--socks5(-hostname)?|--proxy|-x|--preproxy)(=(.*))?$/.exec(a.text);
      const value = m ? (m[4] ?? args[k + 1]?.text ?? '') : undefined;
      if (value !== undefined && !THIS_MACHINE_ADDRESS.test(proxyHost(value)))
        danger(st, `sends its traffic through a proxy on another machine (curl ${m![1]} ${value})`);
    }
  }
  // ssh -D makes this machine a SOCKS proxy into the other one's network (-R is trust.ts' tunnel).
  if (prog === 'ssh' && args.some((a) => /^-[a-np-zA-Z]*D/.test(a.text))) danger(st, "opens a proxy into another machine's network (ssh -D)");
}

/** The kernel's and the audit system's records cleared or switched off: it blinds whoever reads them. */
function watchers(prog: string, args: Word[], st: State): void {
  if (prog === 'auditctl') {
    const reads = args.length > 0 && args.every((a) => /^(-l|-s|-v|-h|--help|-m|--version)$/.test(a.text) || !a.text.startsWith('-'));
    if (!reads) danger(st, `changes or turns off the audit rules (auditctl ${args.map((a) => a.text).join(' ')})`);
  }
  if (prog === 'dmesg' && args.some((a) => /^(-[a-zA-Z]*[cCDEn]|--clear|--read-clear|--console-off|--console-on|--console-level)(=|$)/.test(a.text)))
    danger(st, "clears or changes the kernel's message buffer (dmesg)");
}

/** Sound recorders of ALSA, PulseAudio and PipeWire, and SoX's. */
const MICROPHONE_RECORDERS = /^(arecord|parecord|parec|pw-record|rec)$/;
const SCREENSHOTTERS = /^(grim|flameshot|scrot|maim|gnome-screenshot|spectacle|screencapture|wf-recorder|wl-screenrec)$/;
/** xdotool's commands that send input or act on windows; searching and reading the active window do neither. */
const XDOTOOL_DRIVES =
  /^(type|key|keydown|keyup|click|mousedown|mouseup|mousemove|mousemove_relative|windowactivate|windowfocus|windowclose|windowkill|windowsize|windowmove|windowminimize|windowmap|windowunmap|windowraise|selectwindow|set_desktop|exec)$/;
/** The screen recorded or captured: what every other program shows ends up in a file. */
function screenCapture(prog: string, args: Word[], st: State): void {
  // Listing the capture devices (`-list_devices true`) opens none of them.
  const listsDevices = args.some((a, k) => /^-list_(devices|options)$/.test(a.text) && /^(true|1)$/.test(args[k + 1]?.text ?? ''));
  if (
    prog === 'ffmpeg' &&
    !listsDevices &&
    args.some((a, k) => a.text === '-f' && /^(x11grab|kmsgrab|fbdev|gdigrab|avfoundation)$/.test(args[k + 1]?.text ?? ''))
  )
    danger(st, 'records the screen (ffmpeg)');
  // The microphone or the camera recorded (`arecord audio.raw`, `ffmpeg -f alsa -i default`, `-f v4l2 -i /dev/video0`):
  // what is said or shown in the room ends up in a file; listing the devices (`arecord -l`) records nothing.
  if (
    (prog === 'ffmpeg' && args.some((a, k) => a.text === '-f' && /^(alsa|pulse|oss|jack|v4l2|video4linux2|dshow)$/.test(args[k + 1]?.text ?? ''))) ||
    (MICROPHONE_RECORDERS.test(prog) && !onlyAsksAbout(args) && !args.some((a) => /^(-l|-L|--list-devices|--list-pcms)$/.test(a.text)))
  )
    danger(st, `records the microphone or the camera (${prog})`);
  if (prog === 'import' && args.some((a, k) => a.text === '-window' && args[k + 1]?.text === 'root')) danger(st, 'captures the screen (import -window root)');
  if (prog === 'xwd' && args.some((a) => a.text === '-root')) danger(st, 'captures the screen (xwd -root)');
  // Screenshot tools capture the screen, or a part of it, whenever they run but to answer about themselves.
  if (SCREENSHOTTERS.test(prog) && !onlyAsksAbout(args) && operands(args)[0]?.text !== 'config') danger(st, `captures the screen (${prog})`);
  // Synthetic input types, clicks and moves in whatever window has the focus, and closes or moves others.
  const drives = prog === 'xdotool' ? operands(args).find((a) => XDOTOOL_DRIVES.test(a.text)) : undefined;
  if (drives || (prog === 'ydotool' && operands(args).some((a) => /^(key|type|click|mousemove|stdin)$/.test(a.text))))
    danger(st, `types, clicks or moves windows in the user's session with synthetic input (${prog} ${drives?.text ?? operands(args)[0]!.text})`);
  // xinput's test modes print every key and button event of the session, a keylogger built in.
  const test = prog === 'xinput' ? args.find((a) => /^(--)?test(-xi2)?$/.test(a.text)) : undefined;
  if (test) danger(st, `records every key pressed in the session (xinput ${test.text})`);
}

/** Package managers' global setup and their own installation: they change every later project's commands. */
function userSetup(prog: string, args: Word[], st: State): void {
  const ops = operands(args).map((a) => a.text);
  if (prog === 'composer' && ops[0] === 'global' && !/^(show|info|outdated|depends|why|why-not|licenses|config|audit)$/.test(ops[1] ?? ''))
    danger(st, `changes the user's global Composer packages (composer global ${ops[1] ?? ''})`);
  if (prog === 'poetry' && ops[0] === 'self' && !/^(show|--version)$/.test(ops[1] ?? ''))
    danger(st, `changes Poetry's own installation (poetry self ${ops[1] ?? ''})`);
  if (prog === 'poetry' && ops[0] === 'config' && ops.length >= 3) {
    if (/^(pypi-token|http-basic|certificates)\./.test(ops[1]!)) danger(st, `stores a credential in Poetry's settings (poetry config ${ops[1]})`);
    else if (!args.some((a) => a.text === '--local')) danger(st, `changes Poetry's settings for every project (poetry config ${ops[1]})`);
  }
  // cosign signs with the user's key or identity and uploads the signature (and the transparency log's entry).
  if (prog === 'cosign' && /^(sign|attest|sign-blob|attest-blob|upload|copy|clean|login)$/.test(ops[0] ?? ''))
    danger(st, `signs or publishes with the user's identity to a registry (cosign ${ops[0]})`);
}

const RAILS_SECRETS = /^credentials:(show|edit|diff|fetch)$/;
const DATABASE_DROP = /^db:(drop|reset|purge|schema:load|setup|seed:replant|migrate:reset|truncate_all)(:\w+)?$/;
/** The tasks that change a database's schema or rows without dropping it (`db:migrate`, `db:rollback`, `db:seed`). */
const DATABASE_CHANGE = /^db:(migrate|rollback|create|seed|prepare|fixtures:load|encryption:init)(:(?!status$)\w+)?$/;
const PRODUCTION = /^(RAILS_ENV|RACK_ENV|APP_ENV)=prod(uction)?$/;

/**
 * A framework's own commands: Rails' credentials decrypted with the master key, a production
 * database dropped, reloaded or migrated, Symfony's vault decrypted into local files or printed, its CLI's CA trusted.
 */
function frameworks(prog: string, args: Word[], st: State, env: readonly string[]): void {
  const ops = operands(args).map((a) => a.text);
  const console = prog === 'symfony' ? ops[0] === 'console' : prog === 'php' && /(^|\/)console$/.test(ops[0] ?? '');
  if (console && /^secrets:(decrypt-to-local|reveal)$/.test(ops[1] ?? '')) danger(st, `decrypts the application's secrets (${ops[1]})`);
  if (console && ops[1] === 'secrets:list' && args.some((a) => a.text === '--reveal')) danger(st, "prints the application's secrets (secrets:list --reveal)");
  // The Symfony CLI's own certificate authority added to (or taken from) the ones the machine and its browsers trust.
  if (prog === 'symfony' && /^server:ca:(install|uninstall)$/.test(ops[0] ?? ''))
    danger(st, `changes the certificate authorities the whole machine trusts (symfony ${ops[0]})`);
  // Bundler's exec runs the task in the bundle's environment, with the same variables (`RAILS_ENV=production bundle exec rake …`).
  if (prog === 'bundle' && ops[0] === 'exec' && /^((bin\/)?(rails|rake))$/.test(ops[1] ?? ''))
    return frameworks(ops[1]!.replace(/^bin\//, ''), args.slice(args.findIndex((a) => a.text === ops[1]) + 1), st, env);
  if (!/^(rails|rake)$/.test(prog)) return;
  // Code a Rails runner evaluates that calls the application's mailers (`rails runner 'RequestMailer.alert_overdue_requests'`,
  // `….deliver_now`) sends mail to the application's users.
  const runnerCode = prog === 'rails' && ops[0] === 'runner' ? ops[1] : undefined;
  if (runnerCode !== undefined && /\w*Mailer(\.|::)\w|\.deliver(_now|_later)?\b/.test(runnerCode))
    danger(st, `sends mail through the application's mailers (rails runner ${runnerCode})`);
  const task = ops.find((o) => RAILS_SECRETS.test(o) || DATABASE_DROP.test(o) || DATABASE_CHANGE.test(o));
  if (task && RAILS_SECRETS.test(task)) danger(st, `decrypts the application's credentials (${prog} ${task})`);
  const production =
    [...env, ...ops].some((o) => PRODUCTION.test(o)) || args.some((a, k) => /^(-e|--environment)$/.test(a.text) && /^prod/.test(args[k + 1]?.text ?? ''));
  if (task && DATABASE_DROP.test(task) && production) danger(st, `drops or reloads the production database (${prog} ${task})`);
  else if (task && DATABASE_CHANGE.test(task) && production) danger(st, `changes the production database's schema or rows (${prog} ${task})`);
}

/**
 * Attack frameworks run in their attacking mode: kube-hunter's active hunters exploit what they find,
 * Pacu's modules run against the cloud account with the user's keys.
 */
function attacks(prog: string, args: Word[], st: State): void {
  if (prog === 'kube-hunter' && args.some((a) => a.text === '--active')) danger(st, 'runs active attacks against a cluster (kube-hunter --active)');
  // Its enumeration modules (`iam__enum_permissions`) only list, as `aws … list-*` does.
  const module =
    args.find((a, k) => k > 0 && args[k - 1]!.text === '--module-name')?.text ?? args.find((a) => a.text.startsWith('--module-name='))?.text.slice(14);
  if (prog === 'pacu' && args.some((a) => /^--(exec|module-name)(=|$)/.test(a.text)) && !/__enum/.test(module ?? ''))
    danger(st, "runs Pacu's attack modules against the cloud account with the user's keys (pacu)");
  // TTPForge runs an adversary technique on this machine; its path names the technique's tactic
  // (MITRE ATT&CK's): one that persists, takes credentials, moves, exfiltrates, escalates, evades or
  // harms does so here. Discovery, collection and a plain execution (listing processes) only look.
  const ttp = prog === 'ttpforge' && operands(args)[0]?.text === 'run' ? operands(args)[1]?.text : undefined;
  if (ttp && (ATTACK_TACTIC.test(ttp) || /reverse-shell|bind-shell|c2/.test(ttp)))
    danger(st, `runs an adversary technique on this machine (ttpforge run ${ttp})`);
}
const ATTACK_TACTIC =
  /(^|\/)(persistence|credential-access|exfiltration|lateral-movement|privilege-escalation|defense-evasion|impact|command-and-control|initial-access)\//;

/**
 * LXD's client asks a daemon that runs as root: a container made privileged, the host's root given
 * to it as a disk, an image imported and started, are all the host changed. Its reads, by command path.
 */
const LXC_READS =
  /^(list|ls|info|version|monitor|(image|remote|profile|storage|network|cluster|project|operation|alias|config trust|config device|storage volume) (list|ls|show|info|get)|config (show|get)|image (list|ls|info|show))$/;

function containerHosts(prog: string, args: Word[], st: State): void {
  if (onlyAsksAbout(args) || args.length === 0) return;
  const ops = operands(args).map((a) => a.text);
  if (prog === 'lxd') return danger(st, 'sets up or changes the LXD daemon, which runs as root (lxd)');
  // distrobox's and toolbox's containers share the user's home, devices and host processes by design:
  // one made or entered runs with the user's files, keys and rc files in reach.
  if ((prog === 'distrobox' || prog === 'toolbox') && ops[0] && !/^(list|ls|version)$/.test(ops[0]))
    return danger(st, `makes or enters a container that shares the user's home and devices (${prog} ${ops[0]})`);
  if (/^distrobox-(create|enter|ephemeral|assemble|upgrade)$/.test(prog))
    return danger(st, `makes or enters a container that shares the user's home and devices (${prog})`);
  if (prog !== 'lxc' || ops.length === 0) return;
  const path = [1, 2, 3].map((n) => ops.slice(0, n).join(' '));
  if (!path.some((p) => LXC_READS.test(p))) danger(st, `changes containers through the LXD daemon, which runs as root (lxc ${path[1]})`);
}

/**
 * A search through every home (`grep -R "current-context" /home/`) reads what each user keeps there,
 * kubeconfigs, keys and histories among it, whatever the pattern; listing /home only names them.
 */
function homesSearched(prog: string, args: Word[], st: State): void {
  const searches =
    /^(rg|ag|ack)$/.test(prog) || (/^(grep|egrep|fgrep)$/.test(prog) && (hasFlag(args, 'r', ['--recursive', '--dereference-recursive']) || hasFlag(args, 'R')));
  const homes = searches ? operands(args).find((a) => /^(\/home|\/Users|\/root)\/?\*?$/.test(a.text)) : undefined;
  if (homes) danger(st, `searches every file of the users' home directories (${prog} ${homes.text})`);
}

/**
 * What belongs to other users of the machine: the shadow database read through the name service
 * (`getent shadow`, the hashes `/etc/shadow` holds), an LDAP server's whole database dumped (`slapcat`)
 * or searched as the machine's root through its local socket (`ldapsearch -H ldapi:/// -Y EXTERNAL`), with
 * the accounts' hashes and the server's own configuration, and a tmux server's socket outside the workspace
 * (`tmux -S /tmp/tmux-0/default`), which may be another user's session: attaching types into it as them.
 */
function otherUsers(prog: string, args: Word[], st: State): void {
  const database = operands(args)[0]?.text ?? '';
  if (prog === 'getent' && /^g?shadow$/.test(database)) danger(st, `reads the password hashes (getent ${database})`);
  if (prog === 'slapcat' && !onlyAsksAbout(args)) danger(st, "dumps the directory server's database, its accounts' password hashes with it (slapcat)");
  if (
    /^ldap(search|modify|add|delete)$/.test(prog) &&
    args.some((a) => /^ldapi:/.test(a.text)) &&
    args.some((a, k) => /^-Y$/.test(args[k - 1]?.text ?? '') && a.text === 'EXTERNAL')
  )
    danger(st, `acts on the directory server as the machine's root, through its local socket (${prog} -Y EXTERNAL)`);
  const socket = args.findIndex((a) => a.text === '-S');
  if (prog === 'tmux' && socket >= 0 && args[socket + 1] && classify(args[socket + 1]!, st).cls !== 'inside')
    danger(st, `uses a tmux server's socket outside the workspace, which may be another user's session (tmux -S ${args[socket + 1]!.text})`);
}

/** The shell's history cleared or switched off: what the run did leaves no record. */
function record(prog: string, args: Word[], st: State): void {
  const texts = args.map((a) => a.text);
  const histVar = (t: string) => /^HIST(FILE|SIZE|FILESIZE)$/.test(t);
  if (prog === 'history' && texts.some((t) => /^-[a-z]*c/.test(t))) danger(st, 'clears the shell history (history -c)');
  // `-w` writes this shell's history over the history file: a shell run for one command has none, so the file is emptied.
  if (prog === 'history' && texts.some((t) => /^-[a-z]*w/.test(t))) danger(st, "overwrites the shell's history file (history -w)");
  // `-d N` (or a range, or a negative offset) deletes entries: the record of chosen commands erased; a
  // bare `-d` names none and fails.
  if (prog === 'history' && texts.some((t, k) => /^-[a-z]*d./.test(t) || (/^-[a-z]*d$/.test(t) && texts[k + 1] !== undefined)))
    danger(st, 'deletes entries of the shell history (history -d)');
  if (prog === 'unset' && texts.some(histVar)) danger(st, `removes the shell history's file or size (unset ${texts.find(histVar)})`);
  if (prog === 'set' && texts.some((t, k) => t === '+o' && texts[k + 1] === 'history')) danger(st, 'switches the shell history off (set +o history)');
}

/**
 * A web attack tool's own tests and help (sqlmap's `--doc-test`, `--payload-lint`, `--api-test`,
 * `--vuln-test` against the test server it starts on this machine, `-hh`, its longer help, and `--list-tampers`).
 */
const testsItself = (args: Word[]) =>
  args.length > 0 &&
  // wfuzz's listings of its plugins by category (`-e printers`) and its help on scripts and filters.
  (args.every((a) => /^(-hh|--(doc|api|vuln|smoke)-test|--payload-lint|--purge|--wizard-help|--list-tampers|--(script|filter)-help(=\S*)?)$/.test(a.text)) ||
    (args.length === 2 && args[0]!.text === '-e' && /^(payloads|encoders|iterators|printers|scripts)$/.test(args[1]!.text)));

/** A tool whose first operand is its verb: harmless when that verb is one of `reads` (or, with `bare`, when none is given). */
const verbReads =
  (reads: RegExp, opts: { bare?: boolean } = {}) =>
  (args: Word[]) => {
    const verb = operands(args)[0]?.text;
    return verb === undefined ? opts.bare === true : reads.test(verb);
  };

/** mirobo's verbs that move or change the vacuum, its sounds, firmware, schedule or settings. */
const MIROBO_ACTS =
  /^(start|home|spot|pause|stop|fanspeed|manual|install-sound|update-firmware|carpet-mode|raw-command|find|reset-consumable|zoned-clean|goto|set-volume|timezone|configure-wifi)$/;
const miioReads = (args: Word[], tool: string) => {
  if (onlyAsksAbout(args) || args.some((a) => THIS_MACHINE_ADDRESS.test(a.text))) return true;
  const ops = operands(args, /^(--ip|--host|--token|--model|--file|-f)$/).map((a) => a.text);
  if (tool === 'mirobo') return ops.length === 1 && !MIROBO_ACTS.test(ops[0]!);
  if (ops[0] === 'devtools') return /-simulator$/.test(ops[1] ?? '');
  return !/^(cloud|discover)$/.test(ops[0] ?? '') && /^(status|info|actions)$/.test(ops.at(-1) ?? '');
};

/**
 * The tool families judged by their name: what a run of one does, when a run is only a question about
 * the tool, and the words that make a run of it harmless. `asWritten` families are recognised by the
 * name as given, their patterns spelling the script extensions themselves.
 */
interface NamedFamily {
  tools: { test(name: string): boolean };
  does: string;
  onlyAsks?: (args: Word[]) => boolean;
  harmless?: (args: Word[], tool: string) => boolean;
  asWritten?: boolean;
}
const NAMED_FAMILIES: readonly NamedFamily[] = [
  { tools: CRACKERS, does: 'guesses or cracks passwords', onlyAsks: CRACKER_ONLY_ASKS, harmless: (args) => contractFuzzerRun(args) },
  // A program named for spraying (`TheSprayer.exe`, `http-spray`, `Invoke-DomainPasswordSpray`) tries a few passwords
  // against every account of a directory or a service, and asks the directory for its accounts and lockout policy first.
  { tools: /^[\w.-]*spray(er|ing)?([-_.][\w.-]*)?$/i, does: "sprays passwords at a directory's or a service's accounts, as its name says" },
  // shlima's fortune shares the name of the quote printer; its brute-force verbs hunt funded wallets.
  {
    tools: /^fortune$/,
    does: 'guesses wallet keys to take funded addresses',
    harmless: (args) => !args.some((a) => /^(bruteforce|brainforce|brain)$/.test(a.text)),
  },
  // jwt_tool tampers with, forges or verifies a token held here; told to crack one (`-C`) it guesses the service's secret.
  // A Kerberos ticket asked for in an account's name: every service of the realm then takes this machine as that account.
  { tools: /^kinit$/, does: 'signs in to a Kerberos realm as an account, whose ticket every service of the realm then accepts', harmless: onlyAsksAbout },
  // A security key's PIV applet or firmware written: keys generated or imported, certificates replaced, PINs
  // changed or tried, the applet reset, the bootloader entered or a firmware flashed. Its status, attestation and certificates read.
  {
    tools: /^(yubico-piv-tool|solo1?)$/,
    does: "changes an attached security key's keys, PINs or firmware",
    harmless: (args) => securityKeyReads(args),
  },
  { tools: /^jwt_tool$/, does: "guesses a token's signing secret", harmless: (args) => !args.some((a) => /^(-C|--crack)$/.test(a.text)) },
  // flask-unsign decodes or signs a cookie held here; told to unsign one (`-u`) it guesses the app's secret key.
  { tools: /^flask-unsign$/, does: "guesses a web app's session-signing secret", harmless: (args) => !args.some((a) => /^(-u|--unsign)$/.test(a.text)) },
  { tools: HASH_EXTRACTORS, does: 'turns a key or a protected file into a hash to crack' },
  // The hardware wallets' ssh agents (trezor-agent, ledger-agent, onlykey-agent) log in to the host they are given with
  // `-c` or `-s`; without them they print the key. Their GnuPG front ends' `init` makes an identity in the user's GnuPG home.
  {
    tools: /^(trezor|keepkey|ledger|jade|onlykey)-agent$/,
    does: "logs in to another host with a hardware wallet's ssh key",
    harmless: (args) => !args.some((a) => /^(-c|--connect|-s|--shell)$/.test(a.text)),
  },
  {
    tools: /^(trezor|keepkey|ledger|jade|onlykey)-gpg$/,
    does: "makes a GnuPG identity in the user's GnuPG home",
    harmless: (args) => operands(args)[0]?.text !== 'init',
  },
  // python-miio's command lines drive the vacuums, lamps and plugs on the network (start, firmware updates, raw
  // commands), probe them or sign in to the vendor's cloud; a device's status read, a simulator here, or one at this
  // machine's address (a simulator's) changes nothing.
  { tools: /^(miiocli|mirobo)$/, does: 'drives a device on the network or signs in to its vendor cloud', harmless: miioReads },
  // xodbox's server catches the callbacks of blind exploits on every interface; its configuration, users and sinks are its own files.
  { tools: /^xodbox$/, does: 'serves the callbacks of blind exploits to the network', harmless: (args) => operands(args)[0]?.text !== 'serve' },
  // utmpdump's `-r` turns edited text back into the login records (utmp, wtmp) that say who logged in when.
  { tools: /^utmpdump$/, does: "forges the machine's login records", harmless: (args) => !args.some((a) => /^(-r|--reverse)$/.test(a.text)) },
  // Facedancer's and umap2's applets pose as USB devices to the host they plug into, to fuzz its drivers,
  // type as a keyboard or proxy a real device's traffic.
  { tools: /^(facedancer[\w-]*|umap2\w*)$/, does: 'poses as USB devices to fuzz, type into or intercept the host they plug into' },
  // RemoteKeyStrokes types commands and files into another machine's remote desktop window; `-a info` only describes a module.
  {
    tools: /^rks$/,
    does: "types commands into another machine's remote desktop session",
    harmless: (args) => onlyAsksAbout(args) || args.some((a, k) => a.text === 'info' && args[k - 1]?.text === '-a'),
  },
  // calibre-customize adding DeDRM's or Obok's plug-in makes every later import strip the protection.
  {
    tools: /^calibre-customize$/,
    does: "installs a plug-in that removes e-books' copy protection",
    harmless: (args) => !args.some((a) => /dedrm|obok/i.test(a.text)),
  },
  // DeDRM's tools and plug-ins take an e-book's copy protection off with the reader's account keys, which
  // its key finders (kindlekey, adobekey, ignoblekey) pull out of the user's reading apps.
  {
    tools: /^(dedrm|dedrm_?plugin|dedrm_tools|kindlekey|adobekey|ignoblekey|kobokey|obok|ineptepub|ineptpdf|kfxdedrm|k4mobidedrm|mobidedrm|erdr2pml)$/i,
    does: "removes an e-book's copy protection with the reader's account keys",
    harmless: onlyAsksAbout,
  },
  // KeyDive hooks the attached phone's Widevine service and pulls out its device keys, which decrypt protected streams.
  { tools: /^keydive$/, does: "pulls an attached phone's DRM device keys out of its Widevine service" },
  { tools: CREDENTIAL_DUMPERS, does: 'dumps password hashes or stored logins', harmless: (args) => /^(version|help|list)$/.test(args[0]?.text ?? '') },
  // Asked for its protocols, a protocol's attacks or the interfaces (`yersinia -l`, `yersinia -L cdp`,
  // `yersinia interfaces`), a poisoner lists them and sends nothing.
  {
    tools: NETWORK_POISONERS,
    does: "poisons or intercepts the local network's name lookups and traffic, or floods its switches and servers",
    asWritten: true,
    harmless: (args) =>
      (args.length === 1 && /^(-l|--list-protocols|interfaces|protocols)$/.test(args[0]!.text)) ||
      (args.length === 2 && /^(-L|--list-attacks|protocols)$/.test(args[0]!.text)),
  },
  { tools: WEB_ATTACK_TOOLS, does: 'scans, fuzzes or attacks a web server', asWritten: true, harmless: testsItself },
  // GraphQL's and APIs' attack tools; started with nothing to aim at, they print their usage.
  { tools: API_ATTACK_TOOLS, does: "scans, fuzzes or attacks a web server's API", harmless: (args) => args.length === 0 },
  // Schemathesis fuzzes the API its schema's URL or `--url` names: another host's, or an app here.
  {
    tools: /^schemathesis$/,
    does: "fuzzes another host's API with generated requests",
    harmless: (args) => !args.some((a) => OTHER_HOST_URL.test(a.text.replace(/^--?[\w-]+=/, ''))),
  },
  // Denial-of-service floods (DRipper, db1000n, MHDDoS, Tor's Hammer, XerXes, UFONet) attack whatever they
  // are aimed at, or the targets their operators publish; aimed only at this machine they test its own server.
  {
    tools: /^(dripper|db1000n|mhddos|torshammer|xerxes|ufonet|macof|impulse|bombarder)$/,
    does: 'floods other hosts with traffic to take them down',
    harmless: aimedOnlyAtThisMachine,
  },
  // A load generator aimed at another host's URL (`bombardier -c 200 -d 10s http://ya.ru`, `locust
  // --headless -H http://your-server.com`, `ali --rate=500 http://host.xz`) floods it; aimed at a server here, it measures the project's own.
  {
    tools: /^(bombardier|hey|oha|wrk2?|ab|siege|h2load|autocannon|locust|fortio|plow|cassowary|ali|loadtest)$/,
    does: "floods another host's server with a load test's requests",
    harmless: (args) => !args.some((a) => OTHER_HOST_URL.test(a.text.replace(/^--?[\w-]+=/, ''))),
  },
  // slackdump exports a Slack workspace's messages, files, channels and members with the user's token or
  // cookie, and imports those credentials; its version and help, a new configuration file and its tools
  // over an export already here (`slackdump tools unzip x.zip`) stay here.
  {
    tools: /^slackdump$/,
    does: "exports a chat workspace's messages, files and members with the user's token",
    harmless: verbReads(/^(version|help|config|tools)$/),
  },
  // get-cookie reads a site's cookies out of the user's browsers' stores, the logins they carry; its
  // listing of the browsers' profiles and its own debugging facts read none.
  {
    tools: /^get-cookie$/,
    does: "reads a site's login cookies out of the user's browsers",
    harmless: (args) => onlyAsksAbout(args) || args.some((a) => /^(--list-profiles|--debug-info)$/.test(a.text)),
  },
  // dsnap downloads a cloud volume's snapshot, another machine's whole disk; its listing and setup read.
  {
    tools: /^dsnap$/,
    does: "downloads a cloud volume's snapshot, another machine's whole disk",
    harmless: verbReads(/^(list|init)$/, { bare: true }),
  },
  // fingerprintx probes the services of the hosts it is given, by `-t` or in a list; aimed only at this machine it reaches no one.
  {
    tools: /^fingerprintx$/,
    does: "probes other hosts' services",
    harmless: (args) => onlyAsksAbout(args) || (args.some((a) => /^(-t|--targets)$/.test(a.text)) && aimedOnlyAtThisMachine(args)),
  },
  // Nomad Pack's run, stop and destroy change the jobs of the cluster the user is logged in to; its
  // registries, renderings, plans and listings stay here or only read.
  {
    tools: /^nomad-pack$/,
    does: 'runs, stops or destroys jobs on a Nomad cluster',
    harmless: verbReads(/^(list|info|plan|status|render|registry|version|help|generate|deps)$/, { bare: true }),
  },
  // A service mesh's controls (istioctl, kmeshctl) install, upgrade or remove the mesh, apply or delete its
  // waypoints and tags, set a proxy's log level, or serve its dashboards on every interface; their
  // analyses, checks and proxies' configurations read.
  {
    tools: /^(istioctl|kmeshctl)$/,
    does: 'installs, changes or removes a service mesh on the cluster',
    harmless: (args) => {
      const ops = operands(args).map((a) => a.text);
      if (ops.some((o) => /^(install|uninstall|upgrade|apply|delete|remove|set|kube-uninject)$/.test(o))) return false;
      if (ops.includes('log') && args.some((a) => /^--(level|reset)(=|$)/.test(a.text))) return false;
      return !(
        ops[0] === 'dashboard' &&
        args.some((a, k) => EVERY_INTERFACE.test(a.text.replace(/^--address=/, '')) && (a.text.startsWith('--address=') || args[k - 1]?.text === '--address'))
      );
    },
  },
  // The desktop's sound server: modules loaded or unloaded, defaults, volumes and routes set change every
  // program's sound (a file piped in as the microphone); its listings read.
  {
    tools: /^pactl$/,
    does: "changes the machine's sound server (its modules, devices or defaults)",
    harmless: verbReads(/^(list|info|stat|subscribe|help|get-[\w-]+)$/, { bare: true }),
  },
  // The sound card's mixer (amixer's controls set), PipeWire's ports linked or unlinked and WirePlumber's
  // defaults and volumes: every program's sound, as pactl's; their listings and readings read.
  {
    tools: /^amixer$/,
    does: "changes the sound card's mixer controls for every program",
    harmless: verbReads(/^(scontrols|scontents|controls|contents|get|sget|cget|info)$/, { bare: true }),
  },
  {
    tools: /^pw-link$/,
    does: "links or unlinks the sound server's ports, rerouting every program's sound",
    harmless: (args) => onlyAsksAbout(args) || args.some((a) => /^-[a-zA-Z]*[oilI]|^--(output|input|links|id)$/.test(a.text)),
  },
  {
    tools: /^wpctl$/,
    does: "changes the sound server's default devices, volumes or settings",
    harmless: verbReads(/^(status|inspect|get-volume|help)$/, { bare: true }),
  },
  // WHAD's radio tools transmit through an attached dongle: they inject frames, connect to, scan or impersonate
  // the wireless devices around the machine (Bluetooth LE, Logitech Unifying, Zigbee); its replays and analyses
  // of a capture file (wplay, wanalyze, wshark) read. winstall installs udev rules into the system or flashes a dongle.
  {
    tools: /^(winject|wble-(central|periph|proxy|connect|spawn)|wuni-(keyboard|mouse)|wzb-[\w-]+|wesb-[\w-]+)$/,
    does: 'transmits on a radio through an attached dongle, to the wireless devices around the machine',
  },
  {
    tools: /^winstall$/,
    does: 'installs device rules into the system or flashes firmware onto an attached dongle',
    harmless: (args) => !args.some((a) => /^(--rules|--flash)$/.test(a.text)),
  },
  // The Home Assistant CLI's calls, edits, assignments and updates act on the home's devices and its server;
  // its listings, readings and templates only read.
  {
    tools: /^hass-cli$/,
    does: "changes the home's devices, areas or Home Assistant server (a service called, a state edited, an update)",
    harmless: (args) =>
      !operands(args).some((a) =>
        /^(call|edit|create|delete|remove|rename|assign|update|upgrade|restart|stop|start|toggle|post|put|set|reload|fire)$/.test(a.text),
      ),
  },
  // An ecobee thermostat's command line sets the home's temperature, mode and holds through the maker's cloud, and
  // stores the login it automates; its status, readings and listings only read.
  {
    tools: /^ecobee$/,
    does: "changes the home's thermostat (its temperature, mode or schedule) or stores its login",
    harmless: (args) =>
      onlyAsksAbout(args) || /^(status|show|list|info|sensors|weather|history|thermostats|help|version)$/.test(operands(args)[0]?.text ?? 'status'),
  },
  // argcomplete's global activation installs its completion hook into the shell's startup, the user's
  // (`--user`) or the machine's bash completion directory, which every later shell loads.
  {
    tools: /^activate-global-python-argcomplete3?$/,
    does: "installs a completion hook every later shell loads (the user's or the machine's bash completion)",
  },
  // electron-builder told to publish (`-p always`, `--publish onTag`, or a value a variable holds) uploads the
  // built app to its release channel (GitHub releases, S3, a store); `never`, or no such option, builds only.
  {
    tools: /^electron-builder$/,
    does: 'publishes the built app to its release channel (GitHub releases, S3, an app store)',
    harmless: (args) => {
      const k = args.findIndex((a) => /^(-p|--publish)(=|$)/.test(a.text));
      return k < 0 || optionValue(args, k) === 'never';
    },
  },
  // beets imports into, moves within and deletes from the user's music library, which lies outside the
  // workspace (`~/Music` by default), and edits its configuration; its listings, statistics and searches read.
  {
    tools: /^beet$/,
    does: "changes the user's music library (imports, moves, tags or deletes its files) or its configuration",
    harmless: (args) => {
      const verb = operands(args)[0]?.text;
      if (verb === 'config') return !args.some((a) => /^(-e|--edit)$/.test(a.text));
      return verb === undefined || /^(ls|list|stats|fields|help|version|info|chromasearch|missing|duplicates|dup|bad|random|lyrics)$/.test(verb);
    },
  },
  // perlbrew's switch sets the perl every later shell starts with, and its clean and uninstall remove from
  // its store in the home; its installs keep each perl beside the others, and `use` sets this shell's only.
  {
    tools: /^perlbrew$/,
    does: "switches the user's default perl for every later shell, or removes from perlbrew's store",
    harmless: (args) => !/^(switch|switch-off|clean|uninstall|self-upgrade)$/.test(operands(args)[0]?.text ?? ''),
  },
  // pyperf's `system tune` and `system reset` set the machine's CPU frequency, isolation and interrupts, with root; its `show` reads them.
  {
    tools: /^pyperf$/,
    does: "tunes the machine's CPUs for benchmarks (frequency, isolation, interrupts)",
    harmless: (args) => {
      const ops = operands(args).map((a) => a.text);
      return !(ops[0] === 'system' && /^(tune|reset)$/.test(ops[1] ?? ''));
    },
  },
  // rig installs R versions for the whole machine (under /opt/R, through sudo), removes them, and sets the
  // default every later R runs; its listings, and R run through it, do not.
  {
    tools: /^rig$/,
    does: "installs, removes or switches the machine's R versions",
    harmless: verbReads(/^(list|ls|available|avail|resolve|run|rstudio|sysreqs|help)$/, { bare: true }),
  },
  // Colmena deploys a hive's NixOS configurations to its machines (`apply`, `apply-local` to this one),
  // runs commands on them (`exec`) and uploads their secrets (`upload-keys`); its builds and evaluations stay here.
  {
    tools: /^colmena$/,
    does: "deploys NixOS configurations to a hive's machines, or runs commands on them",
    harmless: verbReads(/^(build|eval|repl|nix-info|introspect|help|gen-completions)$/, { bare: true }),
  },
  // Termux's API commands read the phone's contacts, calls, messages, location, camera and microphone, or
  // act as the phone (a call placed, a message sent, storage and radios granted or switched).
  {
    tools:
      /^termux-(contact-list|telephony-(call|call-log|deviceinfo|cellinfo)|call-log|sms-(list|send|inbox)|location|camera-(photo|info)|microphone-record|clipboard-get|fingerprint|wifi-(connectioninfo|scaninfo|enable)|setup-storage|bluetooth-[\w-]+|notification-list|infrared-transmit|keystore)$/,
    does: "reads the phone's private data (contacts, calls, messages, location, camera, microphone) or acts as the phone",
  },
  // sitespeed's throttle shapes the machine's network (bandwidth and latency) for every program, with root.
  { tools: /^throttle$/, does: "changes the machine's network speed for every program", harmless: onlyAsksAbout },
  // cross-util's remove-all and prune remove every container or volume cross left on the machine, for every project.
  {
    tools: /^cross-util$/,
    does: "removes every container or volume cross made on the machine, every project's",
    harmless: (args) => !args.some((a) => /^(remove-all|prune)$/.test(a.text)),
  },
  // step's CA commands that change the authority: provisioners and admins added, removed or updated, a certificate revoked.
  {
    tools: /^step$/,
    does: "changes a certificate authority's provisioners or admins, or revokes a certificate",
    harmless: (args) => {
      const ops = operands(args).map((a) => a.text);
      return !(ops[0] === 'ca' && (ops[1] === 'revoke' || (/^(provisioner|admin)$/.test(ops[1] ?? '') && /^(add|remove|update)$/.test(ops[2] ?? ''))));
    },
  },
  // ProjectDiscovery's httpx (Kali's `httpx-toolkit`) probes every host of a list (`-l subs.txt`) or a port range for live web
  // servers; encode's httpx of the same name sends one request, as curl does, and takes none of these.
  {
    tools: /^httpx(-toolkit)?$/,
    does: 'probes the hosts of a list for live web servers',
    harmless: (args) =>
      !args.some((a) =>
        /^-(l|list|ports?|probe|sc|status-code|title|td|tech-detect|web-server|cdn|ip|cname|asn|silent|ct|content-type|nc|no-color|mc|fc|ml|fl|jsonl?|threads|rl|fr|follow-redirects|favicon|jarm|location|lc|wc|vhost|tls-probe|csp-probe)$/.test(
          a.text,
        ),
      ),
  },
  // Jenkins' jcli creates, launches, builds or changes what runs on the Jenkins server it is logged in to;
  // its own configuration and plugins, listings and searches stay here or read.
  {
    tools: /^jcli$/,
    does: 'creates, runs or changes jobs, agents or plugins on a Jenkins server',
    harmless: (args) => {
      const ops = operands(args).map((a) => a.text);
      return (
        ops.length === 0 ||
        /^(config|version|help|completion|doc|search)$/.test(ops[0]!) ||
        /^(list|get|search|log|history|param|artifact|status|check)$/.test(ops[1] ?? 'list')
      );
    },
  },
  // nbstripout's filter written to the user's or the machine's git configuration (`--install --global`)
  // runs in every repository; installed in this one's (no scope) it stays here.
  {
    tools: /^nbstripout$/,
    does: "installs or removes a git filter in the user's or the machine's git configuration",
    harmless: (args) => !(args.some((a) => /^--(install|uninstall)$/.test(a.text)) && args.some((a) => /^--(global|system)$/.test(a.text))),
  },
  // asdf's global default (`asdf global`, the newer `asdf set --home`) is the tool every later shell starts with.
  {
    tools: /^asdf$/,
    does: "changes the user's default tool versions for every later shell",
    harmless: (args) => {
      const ops = operands(args).map((a) => a.text);
      return !(ops[0] === 'global' || (ops[0] === 'set' && args.some((a) => /^(-u|--home)$/.test(a.text))));
    },
  },
  // A disk's encryption: formatted, erased (its key slots gone, the data with them), opened, closed, its
  // keys added or removed, its header restored or re-encrypted. Its status and header's dump read.
  {
    tools: /^cryptsetup$/,
    does: "changes or destroys an encrypted disk's keys or mapping",
    harmless: (args) =>
      /^(status|luksDump|isLuks|luksUUID|benchmark)$/.test(operands(args)[0]?.text ?? 'status') &&
      !args.some((a) => /^--dump-(master|volume)-key$/.test(a.text)),
  },
  // wpprobe scans WordPress sites for vulnerable plugins; its database of them is updated, searched and listed here.
  { tools: /^wpprobe$/, does: 'scans WordPress sites for vulnerable plugins', harmless: (args) => operands(args)[0]?.text !== 'scan' },
  // aws-enumerator calls every service a cloud key reaches to see what it may do; its `dump` prints what an
  // earlier run found, kept here, and `cred` writes the key into the project's .env.
  {
    tools: /^aws-enumerator$/,
    does: 'calls every service a cloud key reaches to map what it may do',
    harmless: verbReads(/^(dump|cred)$/, { bare: true }),
  },
  // Samba's AD tool: users, groups, the domain itself (joined, demoted, provisioned, its roles seized) changed; its listings read.
  {
    tools: /^samba-tool$/,
    does: "changes a Samba Active Directory domain's accounts, settings or controllers",
    harmless: (args) => {
      const ops = operands(args).map((a) => a.text);
      return ops.length < 2 || /^(list|show|view|listmembers|showrepl|info|level|query|fetch|testparm)$/.test(ops[1]!) || ops[0] === 'testparm';
    },
  },
  // FreeIPA's and Kanidm's clients: a domain's users, groups, host and sudo rules, passwords and
  // accounts' validity added, changed or removed on its server (`ipa user-add`, `ipa hbacrule-mod`,
  // `ipa passwd`, `kanidm person create`); their finds, shows and listings read.
  {
    tools: /^ipa$/,
    does: "changes an identity domain's accounts, groups, policies or passwords",
    harmless: (args) =>
      !/(^|-)(add|mod|del|remove|enable|disable|set|passwd|install|uninstall|unlock|archive|restore|undel|stage|activate|preserve)(-|$)/.test(
        operands(args)[0]?.text ?? '',
      ),
  },
  {
    tools: /^kanidm$/,
    does: "changes an identity server's accounts, groups or credentials",
    harmless: (args) => {
      const ops = operands(args).map((a) => a.text);
      return (
        ops.some((o) => /^(show|get|list|search|status)$/.test(o)) ||
        !ops.some((o) =>
          /^(create|update|delete|add-members|remove-members|set-members|purge-members|validity|credential|set|purge|reset|reset-token|ssh-add-publickey|ssh-delete-publickey)$/.test(
            o,
          ),
        )
      );
    },
  },
  // Zigbee and Z-Wave radio tools (KillerBee's zb* programs, ZigDiggity, Z-Attack): they capture, replay,
  // flood or forge the frames of the smart-home devices around the machine.
  {
    tools: /^(zbdump|zbreplay|zbscan|zbstumbler|zbassocflood|zbfakebeacon|zbopenear|zbwireshark|zbcat|zigdiggity|zattack(ng)?)$/,
    does: 'captures, replays or forges the Zigbee or Z-Wave radio frames of the devices around the machine',
    // zbcat given a capture file (`zbcat -f capture.pcapng`) prints frames already recorded.
    harmless: (args, tool) => tool === 'zbcat' && args.some((a) => /^-[fr]$/.test(a.text)) && !args.some((a) => a.text === '-i'),
  },
  // ldap2pg makes a PostgreSQL cluster's roles and grants match a directory; without `--real` it only shows what it would change.
  { tools: /^ldap2pg$/, does: "changes a PostgreSQL cluster's roles and privileges", harmless: (args) => !args.some((a) => /^(-R|--real)$/.test(a.text)) },
  // RHEL's CodeReady Builder repository switched on or off for every later install; SNMP's v3 users
  // written into the agent's configuration.
  { tools: /^crb$/, does: "changes the machine's package repositories", harmless: (args) => onlyAsksAbout(args) || operands(args)[0]?.text === 'status' },
  { tools: /^net-snmp-(create-v3-user|config)$/, does: "adds an account to the machine's SNMP agent", harmless: onlyAsksAbout },
  // BBOT's scans enumerate and probe a target's subdomains, hosts and services; its listings of modules,
  // flags and presets, and the preset it would run, reach no one.
  {
    tools: /^bbot$/,
    does: "enumerates and scans a target's hosts and services",
    harmless: (args) => args.length === 0 || args.some((a) => /^(-l|-lp|-lmo|-lf|--list-\w+|--current-preset|-h|--help|--version)$/.test(a.text)),
  },
  // kiterunner's scans and brute force hit a host; its wordlist conversions (`kr kb …`) work on files here.
  { tools: /^kr$/, does: "scans, fuzzes or attacks a web server's API", harmless: (args) => !/^(scan|brute)$/.test(args[0]?.text ?? '') },
  // Started with nothing to enumerate, they print their usage.
  // Their fingerprint databases updated (`takeit -update-db`) enumerate nothing.
  {
    tools: DOMAIN_ENUMERATORS,
    does: "enumerates a domain's hosts",
    asWritten: true,
    harmless: (args) => args.length === 0 || args.every((a) => /^-+update(-db)?$/.test(a.text)),
  },
  // A HID implant's control tool: payloads set, Wi-Fi joined, the exfiltration volume and the pivot tunnels driven; its status, lists and diagnostics read.
  {
    tools: /^ghostctl$/,
    does: 'drives a HID implant: its keystroke payloads, exfiltration volume and pivot tunnels',
    harmless: (args) => {
      const [area = '', verb = ''] = operands(args).map((a) => a.text);
      return !area || /^(menu|diag)$/.test(area) || /^(status|list|show|info|services)$/.test(verb);
    },
  },
  // Asked for its shell completion, or given an image saved here (`pilreg --local alpine.tar`), it reaches no one.
  {
    tools: ATTACK_TOOLS,
    does: 'runs an attack tool against other machines, accounts or storage',
    harmless: (args, tool) =>
      onlyLists(args) ||
      operands(args)[0]?.text === 'help' ||
      // Certipy's `cert` takes the certificate out of a PFX held here (`certipy cert -pfx a.pfx -nokey -out a.crt`);
      // without `-nokey` it writes the private key out too.
      (/^certipy(-ad)?$/.test(tool) && operands(args)[0]?.text === 'cert' && args.some((a) => a.text === '-nokey')) ||
      args.some((a) => /^--(autocomplete|completion|local)(=|$)/.test(a.text)) ||
      (tool === 'deepteam' && deepTeamScansHere(args)) ||
      // Its lists of formats and templates, its examples, or its longer help (`--listformats`, `--examples`, `-hh`).
      (args.length > 0 && args.every((a) => /^(--list\w*|--examples|-hh)$/.test(a.text))) ||
      // msfvenom's options of one payload (`msfvenom -p linux/x86/adduser --list-options`).
      (tool === 'msfvenom' && args.some((a) => a.text === '--list-options')) ||
      // SMSBoom started bare prints its usage, and `update` fetches its list of services.
      (/^smsboom/i.test(tool) && (args.length === 0 || operands(args)[0]?.text === 'update')),
  },
  { tools: PRIVILEGE_HUNTERS, does: 'hunts this machine for secrets and a way to root' },
  // Endgame rewrites the resource policies of an AWS account to open its buckets, keys, secrets and
  // snapshots to another account or to everyone; its listing and its dry runs change nothing.
  {
    tools: /^endgame$/,
    does: "opens an AWS account's resources to another account or to everyone",
    harmless: (args) => operands(args)[0]?.text === 'list-resources' || args.some((a) => a.text === '--dry-run'),
  },
  // A phone's boot ROM and emergency download mode (MediaTek's, Qualcomm's EDL): mtkclient and edl read,
  // write, erase and unlock its flash and its secure config past its own protections; their lists of loaders and devices read.
  {
    tools: /^(mtk|mtkclient|edl|bypass_utility|amonet)$/,
    does: "reads, writes, erases or unlocks an attached phone's flash through its boot ROM",
    harmless: (args) => args.some((a) => /^(--list|-l|--listloaders)$/.test(a.text)) || operands(args)[0]?.text === 'devices',
  },
  { tools: LOCAL_ROOT_SCRIPTS, does: 'runs a local exploit, made to take root' },
  // Fault-injection glitchers (ChipSHOUTER's scripts, pico-glitcher, ice-glitcher, a glitch campaign's runner) drive a
  // voltage, clock or electromagnetic glitch into an attached chip to skip its checks; what reads their results back
  // (`analyze_glitch_results.py`) and their version and help reach no chip.
  {
    tools: GLITCHERS,
    does: 'drives a fault-injection glitch into an attached chip to skip its checks',
    harmless: (args, tool) =>
      /analy[sz]|plot|report|results?([-_]|$)|view|parse/i.test(tool) || /^(check-version|version|help)$/.test(operands(args)[0]?.text ?? ''),
  },
  // pik's exploit modules run or checked against a target; its lab runs them against a container of its own,
  // and its lists, module details and standalone builds reach no one.
  { tools: /^pik$/, does: 'runs or checks an exploit against a target', harmless: (args) => !/^(run|check|exploit)$/.test(operands(args)[0]?.text ?? '') },
  // cloud-nuke deletes every resource of an AWS or GCP account it can find; its inspections list them (its dry runs
  // are every family's). aws-nuke and its kin run dry unless told `--no-dry-run`.
  {
    tools: /^cloud-nuke$/,
    does: 'deletes every resource of a cloud account it can reach',
    harmless: (args) => args.length === 0 || /^inspect-/.test(operands(args)[0]?.text ?? ''),
  },
  {
    tools: /^(aws|azure|gcp)-nuke$/,
    does: 'deletes every resource of a cloud account it can reach',
    harmless: (args) => !args.some((a) => a.text === '--no-dry-run'),
  },
  // A casino's betting bot run live (`duckdice run --strategy martingale`) stakes the account's money; its simulations,
  // lists, balance and history place no bet.
  {
    tools: /^duckdice(_cli(\.py)?)?$/,
    does: "places bets with the account's money at an online casino",
    harmless: (args) =>
      operands(args)[0]?.text !== 'run' ||
      args.length === 1 ||
      args.some((a, k) => a.text === '--simulate' || (/^(-m|--mode)$/.test(a.text) && args[k + 1]?.text === 'simulation')),
  },
  // Exploits named as their vulnerabilities are (PrintNightmare, IngressNightmare): run, they attack what they are aimed at.
  { tools: /^[a-z]+nightmare$/, does: 'runs an exploit named for the vulnerability it attacks' },
  // Log and history wipers (covermyass, moonwalk): they clear or restore the machine's logs to hide a session.
  {
    tools: /^(covermyass|moonwalk)$/,
    does: "wipes the machine's logs and histories to hide what ran",
    harmless: (args) => args.length === 0 || onlyAsksAbout(args),
  },
  // urlinsane's `typo` looks up every lookalike of a domain, package or account it makes; its reports and lists read what it kept.
  {
    tools: /^urlinsane$/,
    does: "looks up every lookalike of another's domain, package or account",
    harmless: (args) => operands(args)[0]?.text !== 'typo' || args.some((a) => a.text === '--list'),
  },
  // A script's functions named for covering tracks (`clearLogs`, `clear_history`, `disableAuth`) or for sending
  // what it gathered to a chat or mail service (`sendToTelegram`, `send_to_teams`), run by their names.
  { tools: COVERS_TRACKS_NAMED, does: "covers the machine's tracks or turns off its checks, as its name says" },
  { tools: SENDS_OUT_NAMED, does: 'sends what it gathered to a chat or mail service, as its name says' },
  // ProjectDiscovery's notify posts whatever is piped to it to the Slack, Discord, Telegram or mail providers it is configured with.
  { tools: /^notify$/, does: 'sends what it is given to the chat and mail services it is configured with' },
  { tools: DELETES_NAMED, does: 'deletes or destroys what it names, as its name says' },
  { tools: USER_ENUMERATORS, does: "enumerates a service's accounts, as its name says", harmless: (args) => args.length === 0 || aimedOnlyAtThisMachine(args) },
  { tools: PASTE_CLIENTS, does: 'uploads what it is given to a paste service, where anyone with the link reads it', harmless: aimedOnlyAtThisMachine },
  { tools: SECURITY_KILLERS, does: "kills or blinds the machine's security software through a driver or its own process" },
  // Aimed only at this machine, a spoofer or an attacker script tests the project's own service; `-l` alone lists its attacks.
  {
    tools: ATTACK_NAMED,
    does: 'runs a program named for spoofing, sniffing, hijacking, spamming or attacking',
    harmless: (args) => aimedOnlyAtThisMachine(args) || onlyLists(args) || (args.length === 1 && args[0]!.text === '-l') || readsItsOwnRecords(args),
  },
  // ssh-auditor tries its credentials against every host it has discovered; adding credentials to its
  // database and listing duplicate keys stay here.
  {
    tools: /^ssh-auditor$/,
    does: 'probes, enumerates or logs in to other machines',
    harmless: (args) => !/^(scan|rescan|vuln|discover)$/.test(operands(args)[0]?.text ?? ''),
  },
  {
    tools: INSTRUMENTERS,
    does: 'injects code into a running app or process',
    harmless: (args) => args.some((a) => PACKAGE_WORK.test(a.text)) || onlyLists(args) || fridaSystemSession(args),
  },
  // hcxdumptool asked only to compile a packet filter (`--bpfc="…" > attack.bpf`) captures nothing.
  {
    tools: WIRELESS_ATTACK_TOOLS,
    does: 'captures or attacks nearby wireless networks',
    // airmon-ng given nothing lists the wireless cards and their drivers.
    harmless: (args, tool) => (tool === 'airmon-ng' ? args.length === 0 : args.length > 0 && args.every((a) => /^--bpfc=/.test(a.text))),
  },
  { tools: NAMED_FOR_ATTACK, does: 'carries data out, jams a radio, catches the phones around or tests stolen payment cards, as its name says' },
  { tools: RADIO_TRANSMITTERS, does: 'transmits on, or listens to the cellular networks of, radio bands others use' },
  // Ubertooth's sniffers, scanners and firmware flasher; its utility, debugger and spectrum view only ask the dongle.
  {
    tools: /^ubertooth-(btle|rx|scan|ego|follow|afh|dump|dfu)$/,
    does: 'captures or attacks nearby wireless networks',
    harmless: (args) => args.every((a) => /^(-v\d?|-t|none|-h)$/.test(a.text)),
  },
  // Btlejack sniffs Bluetooth LE connections through micro:bit dongles, jams them and takes them over.
  { tools: /^btlejack$/, does: 'sniffs, jams or takes over the Bluetooth LE connections around (Btlejack)', harmless: onlyAsksAbout },
  // KNX Unlocker recovers or resets the keys that lock a building's KNX devices (`knxunlocker -c Type=KnxIpTunneling;… -t 1.1.62`).
  { tools: /^knxunlocker$/, does: "unlocks a building's KNX devices by recovering or resetting their keys", harmless: onlyAsksAbout },
  // Origin finders look behind a site's CDN and firewall for the server that answers it, to reach it around its protection
  // (`origindive -d example.com --skip-waf`, CloudFail, hakoriginfinder).
  {
    tools: /^(origindive|originfind|cloudfail|hakoriginfinder|cloudunflare|cloudmare|cloudpeler|bypass-firewalls-by-dns-history)$/,
    does: "searches for the server behind another site's CDN and firewall, to reach it around them",
    // Its list of the firewalls it knows (`origindive waf list`, `info`, `update`) reaches no site.
    harmless: (args) => onlyAsksAbout(args) || operands(args)[0]?.text === 'waf',
  },
  // Telegram session tools run the accounts whose sessions a Telegram Desktop data folder holds: they log in as each,
  // export and import the sessions, set their passwords, scrape groups and invite their members (`tgdata-rs --path … --export`).
  { tools: /^tgdata(-rs)?$/, does: 'logs in as the Telegram accounts whose sessions it is given and acts as them', harmless: onlyAsksAbout },
  {
    tools: RADIO_RECORDERS,
    does: "records or decodes the radio signals around, others' among them",
    harmless: (args, tool) =>
      onlyAsksAbout(args) ||
      (tool === 'rtl_fm' && tunesBroadcastFm(args)) ||
      // rtl_433 decoding a recording saved here (`rtl_433 -r simu_tpms.cu8`) listens to no radio.
      (tool === 'rtl_433' && args.some((a) => a.text === '-r')),
  },
  { tools: MAILBOX_ATTACKS, does: "searches others' mailboxes, harvests an organisation's accounts or sprays passwords at its mail servers" },
  {
    tools: SCAN_SERVICES,
    does: "asks an internet-wide scan service to scan, watch or list exposed machines, or stores the account's key",
    harmless: (args) => {
      const [verb, sub] = operands(args).map((a) => a.text);
      return SCAN_SERVICE_READS.test(verb ?? '') || SCAN_SERVICE_READS.test(`${verb} ${sub}`);
    },
  },
  { tools: MODEL_ATTACKERS, does: "sends jailbreak and prompt-injection attacks to a hosted model's provider", harmless: (args) => !aimsAtHostedModel(args) },
  { tools: PHISHING_TOOLS, does: "runs a phishing proxy or framework that takes others' logins" },
  // Metadata harvesters search the web for a domain's public documents, download them and pull the names, e-mail
  // addresses, user names and software in their metadata: an organisation's people mapped for phishing. Told to read
  // documents already here (`--local`) they reach no one.
  {
    tools: /^(metagoofil|metaextract|pymeta)(\.py)?$/i,
    does: "harvests a domain's public documents for the names, e-mail addresses and software in their metadata",
    harmless: (args) => onlyAsksAbout(args) || args.some((a) => a.text === '--local'),
  },
  // Instaloader signed in with the user's Instagram account (`--login`) downloads what that account may see, its feed and
  // the private profiles it follows, as the user; without a login it fetches public profiles as any visitor would.
  {
    tools: /^instaloader$/,
    does: "signs in to Instagram with the user's account and downloads what it may see",
    harmless: (args) => !args.some((a) => /^(-l|--login)(=|$)|^--load-cookies(=|$)/.test(a.text)),
  },
  // mssqlclient-ng, an attack client for SQL Server (linked servers walked, logins impersonated, commands run through
  // xp_cmdshell), against another host; a local server of the project's own is a database client's test.
  {
    tools: /^mssqlclient-ng$/,
    does: "logs in to another host's SQL Server with an attack client (linked servers, impersonation, commands)",
    harmless: aimedOnlyAtThisMachine,
  },
  // vncdo types keys and clicks into the desktop of the VNC server it is given; this machine's own is a test's.
  { tools: /^vncdo(tool)?$/, does: "types keys and clicks into another machine's desktop over VNC", harmless: aimedOnlyAtThisMachine },
  // gitxpose (once gitrepoenum) clones every repository of the users or organisations it is fed and hunts them for leaked credentials.
  { tools: /^(gitxpose|gitrepoenum)$/, does: "clones a user's or an organisation's repositories and hunts them for leaked credentials" },
  // PrintJack's kit: a USB gadget posing as a printer, capturing the jobs sent to it, serving them out and typing
  // keystrokes to install its driver; printjacker hijacks a Windows print queue.
  { tools: /^((start|capture)-)?printjack(er)?(-[\w-]+)?$/, does: 'hijacks printers and captures the jobs sent to them (PrintJack)' },
  // RanSim encrypts files as ransomware would, to test whether the machine's defences notice.
  { tools: /^ransim$/, does: 'encrypts files as ransomware does (RanSim)', harmless: onlyAsksAbout },
  // NanoDEP's scripts for Apple's device-enrolment service: defining, assigning or removing a profile and locking a
  // device change how an organisation's Macs and iPhones enrol; its account's and devices' details only read.
  {
    tools: /^dep-(define|assign|remove|disown|activation-lock|delete|update)([-_][\w-]*)?$/,
    does: "changes how an organisation's devices enrol with Apple (NanoDEP)",
  },
  // wabarc's wayback sends every page it is given to the Internet Archive, archive.today and IPFS, or runs a bot that does.
  { tools: /^wayback$/, does: 'publishes the pages it is given to the Internet Archive, archive.today and IPFS, or runs a bot that does' },
  // A Tinder client over the app's private API signs up, swipes, matches and scrapes profiles as an account of the user's,
  // against the service's terms; its help alone reads.
  { tools: /^tinder$/, does: "acts on a Tinder account through the app's private API (sign-up, matching, scraping profiles)", harmless: onlyAsksAbout },
  // PCredz and net-creds pick the logins, hashes and card numbers out of live traffic or a capture.
  { tools: /^(pcredz|net-creds)(\.py)?$/i, does: 'picks logins and password hashes out of network traffic or a capture', harmless: onlyAsksAbout },
  {
    tools: PEOPLE_SEARCH,
    does: 'looks a person up across social networks and services, gathering their accounts and data',
    harmless: (args, tool) =>
      /^(version|serve)$/.test(operands(args)[0]?.text ?? '') ||
      args.some((a) => a.text === '--web') ||
      // user-scanner's lists of its username and e-mail modules.
      (tool === 'user-scanner' && args.every((a) => /^-l[ue]$/.test(a.text))) ||
      // Aliens_eye's work on its saved results and its model, here: a report read (`-r`), compared, labelled, trained on.
      (tool === 'aliens_eye' && (/^(diff|label|train)$/.test(operands(args)[0]?.text ?? '') || /^(-r|--read)$/.test(args[0]?.text ?? ''))) ||
      // The e-mail harvesters started bare print their usage.
      (/^(infoga|emailharvester|simplyemail)/i.test(tool) && args.length === 0),
  },
  // spraycharles' wordlist maker and its results' analysis (`gen`, `analyze`) work on files here.
  { tools: /^spraycharles$/, does: "sprays passwords at an organisation's logins", harmless: (args) => /^(gen|analyze)$/.test(args[0]?.text ?? '') },
  // Its own test suite (`ps-empire test`) runs here.
  {
    tools: COMMAND_AND_CONTROL,
    does: 'runs a command-and-control server or client, which drives implants on other machines',
    harmless: (args) => args[0]?.text === 'test',
  },
  { tools: OTHERS_SOURCE_HUNTERS, does: "hunts another's leaked keys on a code host, or dumps a site's exposed checkout" },
  { tools: ROOTKITS, does: "runs a rootkit, which hides what it does from the machine's owner" },
  { tools: HIDDEN_RUNNERS, does: "runs a program from memory or under a false name, hidden from the machine's owner" },
  {
    tools: SECRET_HUNTERS,
    does: 'hunts credentials in another service and tries each one found at its provider',
    harmless: huntsOnlyHere,
  },
  { tools: KEYLOGGERS, does: 'records the keys typed on this machine, passwords included', harmless: onlyExportsKeymap },
  {
    tools: JAILBREAK_TOOLS,
    does: "jailbreaks a connected device or decrypts and pulls its apps past the owner's protections",
    harmless: (args) => onlyLists(args) || (args.length === 1 && args[0]!.text === '-l'),
  },
  { tools: MINERS, does: "mines cryptocurrency for a pool, spending this machine's processors for whoever holds the wallet", harmless: minesForNoOne },
];

/**
 * The families a name may belong to. Most programs (git, npm, make) belong to none, and a loop would put each
 * through every family's test, over a hundred; their patterns joined into one, per set of flags, are tried once
 * first. A family named by a test of its own, or by the name as written, is tried on its own.
 */
const familiesOf: (tool: string, prog: string) => readonly NamedFamily[] = (() => {
  const joinable = (f: NamedFamily) => f.tools instanceof RegExp && !f.asWritten && !/\\\d|\(\?</.test(f.tools.source) && !f.tools.flags.replace('i', '');
  const apart = NAMED_FAMILIES.filter((f) => !joinable(f));
  const joined = ['', 'i'].flatMap((flags) => {
    const members = NAMED_FAMILIES.filter((f) => joinable(f) && (f.tools as RegExp).flags === flags);
    return members.length ? [new RegExp(members.map((f) => `(?:${(f.tools as RegExp).source})`).join('|'), flags)] : [];
  });
  return (tool, prog) => {
    if (!joined.some((any) => any.test(tool))) return apart.filter((f) => f.tools.test(f.asWritten ? prog : tool));
    return NAMED_FAMILIES.filter((f) => f.tools.test(f.asWritten ? prog : tool));
  };
})();

/**
 * Whether a rule here knows the program by its name (a cracker, a poisoner, a web attack tool, a
 * domain enumerator): it is judged by that rule, which only lets it pass when it is asked about itself.
 */
export const knownByName = (prog: string) => familiesOf(toolName(prog), prog).length > 0;

/** Volatility's plugins that pull password hashes and cached logins out of a memory image. */
const MEMORY_FORENSICS = /^(vol|vol3|volatility3?)$/;
const CREDENTIAL_PLUGIN = /(^|\.)(hashdump|lsadump|cachedump|mimikatz|lsass)$/i;

/**
 * A script named for owning a target (`wallbox-pwn-v2.py`, `auth_pwn.py`, `pwn-ret2sys.py`, `zktecopwn.py`); pwntools' own `pwn`
 * command and a CTF's compiled challenge (`00-hello-pwn`, no script) are not one.
 */
const PWN_SCRIPT = /^(\w+[-_])+pwn([-_][\w.-]+)?\.(py|sh|rb|pl)$|^pwn[-_][\w.-]+\.(py|sh|rb|pl)$|^[a-z\d]+pwn\.(py|sh|rb|pl)$/i;

const COMBO_LIST_OPTION = /^--?(combos?|combo[-_]?list|combolist|combo[-_]?file)(=|$)/i;

/** The name-judged attack tools' checks, for a program or for a script an interpreter runs (`python3 PetitPotam.py …`). */
export function attackToolChecks(name: string, args: Word[], st: State): void {
  const tool = toolName(name);
  // A dry run prints what the tool would do, and a health check tests its own installation: neither reaches a target.
  const rehearses = args.some((a) => /^--(dry-run|health-check)$/.test(a.text));
  for (const f of familiesOf(tool, tool))
    if (!(f.onlyAsks ?? onlyAsksAbout)(args) && !f.harmless?.(args, tool) && !rehearses) danger(st, `${f.does} (${name})`);
  // A framework's own listing of its modules (`sdnpwn.py mods`, `info mods`) reaches no target.
  const listsModules = /^(mods|modules|list|info|help)$/.test(args.find((a) => !a.text.startsWith('-'))?.text ?? '');
  if (PWN_SCRIPT.test(name.replace(/^.*\//, '')) && !onlyAsksAbout(args) && !rehearses && !listsModules) danger(st, `runs an exploit script (${name})`);
  const plugin = MEMORY_FORENSICS.test(tool) ? args.find((a) => CREDENTIAL_PLUGIN.test(a.text)) : undefined;
  if (plugin) danger(st, `extracts password hashes or logins from a memory image (${name} ${plugin.text})`);
  // A vulnerability named by its CVE number and aimed at a server (`-v CVE-2019-17558 -t http://solr:8983/`) is its exploit or
  // its probe, run there; a number given to be left out of a report (`--ignore CVE-…`) names nothing run. Targets drawn from
  // an internet-wide scan's search engine (`--fofa app=Apache-Shiro`, `--shodan`) are whoever runs what it found. Told to
  // clean the traces forensics reads (`clean --eventlog`, `--prefetch`, `--shellbags`), or to look out for forensic tools,
  // a run hides what ran. One pass over the words finds all three; most runs have none.
  let cve: Word | undefined;
  let engine: Word | undefined;
  let trace: Word | undefined;
  for (const [k, a] of args.entries()) {
    const t = a.text;
    if (t.includes('CVE-')) {
      if (CVE_ID.test(t.replace(/^--?[\w-]+=/, '')) && !/ignore|exclude|skip|allow|suppress|accept/i.test(t.startsWith('-') ? t : (args[k - 1]?.text ?? '')))
        cve ??= a;
    } else if (t.startsWith('-')) {
      if (TARGET_SEARCH_ENGINE.test(t)) engine ??= a;
      else if (/^--[\w-]*forensic/.test(t) || (FORENSIC_TRACE.test(t) && TRACE_ERASING_VERB.test(operands(args)[0]?.text ?? ''))) trace ??= a;
    }
  }
  // Printed (`echo CVE-… http://…`), rehearsed or asked about, they run nothing.
  if ((!cve && !engine && !trace) || rehearses || onlyAsksAbout(args) || /^(echo|printf)$/.test(tool)) return;
  const target = cve && (addressGiven(args) ?? args.find((a) => SCHEMED_SERVER_URL.test(a.text.replace(/^--?[\w-]+=/, '')))?.text);
  if (target) danger(st, `aims a named vulnerability's exploit or check at a server (${name} ${cve!.text} ${target})`);
  if (engine) danger(st, `aims at every machine an internet-wide scan's search engine finds (${name} ${engine.text})`);
  if (trace) danger(st, `erases the traces forensics reads, or hides from forensic tools (${name} ${trace.text})`);
}

/** A vulnerability's number as advisories write it; a directory named for one (`git clone … cve-2023-46604`) is a name. */
const CVE_ID = /^CVE-\d{4}-\d{4,}$/;
/** A server's address with its scheme, on this machine or any other (`http://target-solr:8983/`). */
const SCHEMED_SERVER_URL = /^(https?|wss?|tcp|udp|ldap|rmi):\/\/[\w.-]+/i;
/** The search engines of internet-wide scans, given as where a tool's targets come from (FOFA, Shodan, ZoomEye, Censys, Hunter, Quake). */
const TARGET_SEARCH_ENGINE = /^--?(fofa|shodan|zoomeye|censys|hunter|quake)(-query|-search)?(=|$)/i;
const TRACE_ERASING_VERB = /^(clean|clear|wipe|purge|scrub|erase|shred|remove)$/;
/** What forensics reads of a machine's past: event logs, Windows' execution records, file-system journals, login records, recent files. */
const FORENSIC_TRACE =
  /^--(event-?logs?|prefetch|shellbags|shimcache|amcache|usn(-?journal)?|sysmon|timestamps|thumbnails|jump-?lists|recent|wtmp|utmp|btmp|lastlog|(bash|shell)-history)$/;

const CONTAINER_CLIENTS = /^(docker|podman|nerdctl|finch)$/;
/**
 * Containers' named volumes hold what their services keep (a database's rows, a cache, uploads),
 * outside the workspace and outside any build: removing them by name or all unused ones loses that
 * data for good, as pruning loses what stopped containers wrote and images built here. A compose
 * project's own volumes taken down with it (`docker compose down -v`) are the project's stack, which
 * its CI and tests tear down so; the corpora label that safe six times to two.
 */
function containerDataRemoved(prog: string, args: Word[], st: State): void {
  const ops = operands(args).map((a) => a.text);
  if (!CONTAINER_CLIENTS.test(prog)) return;
  if (ops[0] === 'volume' && /^(rm|remove|prune)$/.test(ops[1] ?? ''))
    danger(st, `removes container volumes and the data they hold (${prog} volume ${ops[1]})`);
  if (ops[0] === 'system' && ops[1] === 'prune' && args.some((a) => a.text === '--volumes'))
    return danger(st, `removes container volumes and the data they hold (${prog} system prune --volumes)`);
  // podman's `system reset` removes every container, image, volume and network the user has, and its settings.
  if (ops[0] === 'system' && ops[1] === 'reset') return danger(st, `removes every container, image and volume the user has (${prog} system reset)`);
  // A stopped container's file system holds what it wrote; pruning removes every stopped container on
  // the machine, every untagged image (other projects' builds among them), and with `--all` every image
  // no container runs, the ones built here and never pushed too.
  const all = args.some((a) => a.text === '--all' || /^-[a-z]*a[a-z]*$/.test(a.text));
  if ((ops[0] === 'system' || ops[0] === 'container') && ops[1] === 'prune')
    danger(st, `removes every stopped container on the machine and what it wrote (${prog} ${ops[0]} prune)`);
  else if (ops[0] === 'image' && ops[1] === 'prune')
    danger(
      st,
      all
        ? `removes every image no container runs, built here or not (${prog} image prune --all)`
        : `removes every untagged image on the machine, other projects' too (${prog} image prune)`,
    );
  // Every container or image the machine has, listed by the client itself (`docker rm $(docker ps -aq)`,
  // `docker rmi $(docker images -q)`), other projects' among them, removed as a prune removes them.
  else if (
    /^(rm|rmi|kill|stop)$/.test(ops[0] ?? '') &&
    args.some(
      (a) =>
        // The images listed whole (`$(docker images)`) name them too, a header aside.
        (/^\$\((docker|podman|nerdctl)\s+(ps|images|container\s+ls|image\s+ls)\s+-[a-z]*[aq][a-z]*(\s+-[a-z]+)*\)$/.test(a.text) ||
          /^\$\((docker|podman|nerdctl)\s+(images|image\s+ls)\)$/.test(a.text)) &&
        !/--filter|-f\s/.test(a.text),
    )
  )
    danger(st, `acts on every container or image of the machine, other projects' too (${prog} ${ops[0]} ${args.find((a) => a.text.startsWith('$('))!.text})`);
  // Networks no container uses are every project's on the machine, the ones a stopped stack comes back
  // to; a filter (`--filter label=…`) keeps to the project's own.
  else if (ops[0] === 'network' && ops[1] === 'prune' && !args.some((a) => /^--filter(=|$)/.test(a.text)))
    danger(st, `removes every network no container uses, other projects' too (${prog} network prune)`);
  // An image saved to a file is written where `-o` says (`docker save app -o /caches/app.tar`).
  if (ops[0] === 'save' || (ops[0] === 'image' && ops[1] === 'save'))
    for (const [k, a] of args.entries()) {
      const file = /^(-o|--output)$/.test(a.text) ? args[k + 1] : /^--output=/.test(a.text) ? { ...a, text: a.text.slice(9) } : undefined;
      if (file) checkWriteTarget(file, st, `saves an image (${prog} save) to`);
    }
}

/** radare2 and others attach to a running app through Frida by its URI (`r2 frida://usb//com.example.app`). */
function attachesThroughFrida(prog: string, args: Word[], st: State): void {
  const attach = args.find((a) => /^frida:\/\//.test(a.text));
  if (attach) danger(st, `injects code into a running app or process (${prog} ${attach.text})`);
}

/**
 * A compiled program named for the vulnerability it exploits (`./cve-2021-4034`, `./dirtyc0w`,
 * `./exploit`, `./exp`, `./exp_io`, `./pwned`), or one of the well-known Linux and Android roots by name (`./mempodipper`,
 * `./full-nelson`, `./zergrush`): run on this machine, a local exploit's work is to become root or escape
 * its confinement. A script of that name run by its interpreter is often a CTF solution aimed at a
 * challenge, judged by what it is given.
 */
const LOCAL_EXPLOIT =
  /^(([\w]*[-_])?cve[-_]\d{4}[-_]\d{4,}[\w-]*|exploit|exp|exp[-_]\w+|pwn|pwned|pwnkit|dirtyc[o0]w|dirty_?pipe|dirtycred|mempodipper|(full|half)[-_]nelson|towelroot|psneuter|zergrush|rageagainstthecage|gingerbreak|exploid|levitator)$/i;
/** pwntools' command line, installed as `pwn`: its subcommands inspect binaries and make or read shellcode and patterns here. */
const PWNTOOLS_COMMAND = /^(checksec|cyclic|asm|disasm|hex|unhex|phd|shellcraft|constgrep|elfdiff|elfpatch|errno|template|version)$/;
function localExploit(prog: string, args: Word[], st: State): void {
  if (prog === 'pwn' && PWNTOOLS_COMMAND.test(operands(args)[0]?.text ?? '')) return;
  if (LOCAL_EXPLOIT.test(toolName(prog)) && !onlyAsksAbout(args)) danger(st, `runs a local exploit, made to take root or escape confinement (${prog})`);
}

/**
 * A browser started with its guards off: its same-origin checks (below), or its debugging port open,
 * which hands its sessions to whatever connects: any page when every origin is allowed
 * (`--remote-allow-origins=*`), and the user's logins and cookies when it runs on the user's own
 * profile (no `--user-data-dir`, or the real one). A headless browser on a throwaway profile, as test
 * runners start it, holds nothing of the user's.
 */
const BROWSER = /^(chrome|google-chrome(-stable|-beta|-unstable)?|chromium(-browser)?|msedge|microsoft-edge(-stable)?|brave(-browser)?)(\.exe)?$/i;
const REAL_PROFILE = /User Data|\.config\/(google-chrome|chromium|microsoft-edge|BraveSoftware)|Application Support\/(Google|Chromium|Microsoft Edge)/i;
function browserGuardsOff(prog: string, args: Word[], st: State): void {
  const name = prog.split(/[\\/]/).pop()!;
  if (!BROWSER.test(name)) return;
  // With its same-origin checks off, a page it opens reads any site the user is logged in to and any
  // local file, and sends them where it likes.
  const unguarded = args.find((a) => /^--(disable-web-security|allow-file-access-from-files)$/.test(a.text));
  if (unguarded) danger(st, `starts a browser whose pages may read any site and any local file (${name} ${unguarded.text})`);
  if (!args.some((a) => /^--remote-debugging-(port|pipe)/.test(a.text))) return;
  const profile = args.find((a) => a.text.startsWith('--user-data-dir'));
  const everyOrigin = args.some((a) => a.text === '--remote-allow-origins=*');
  const usersOwn = profile ? REAL_PROFILE.test(profile.text) : !args.some((a) => /^--headless/.test(a.text));
  if (everyOrigin || usersOwn)
    danger(
      st,
      `opens a browser's debugging port to ${everyOrigin ? 'every origin' : "the user's own profile"}, handing over its sessions and cookies (${name})`,
    );
}

/** Every check of this file, for one program run; `env` holds the command's leading assignments. */
export function operatorChecks(prog: string, args: Word[], st: State, env: readonly string[] = []): void {
  attackToolChecks(prog, args, st);
  // A combo list (`--combos combos.txt`: leaked user-and-password pairs) is what a credential stuffer tries against a
  // service's logins, whatever the tool or the script an interpreter runs is called (OpenBullet and its ports).
  const combos = args.find((a) => COMBO_LIST_OPTION.test(a.text));
  if (combos && !args.some((a) => /^(--dry-run|-h|--help)$/.test(a.text)))
    danger(st, `tries a list of leaked logins against a service, credential stuffing (${prog} ${combos.text.replace(/=.*/s, '')})`);
  otherUsers(prog, args, st);
  tunnels(prog, args, st);
  homesSearched(prog, args, st);
  watchers(prog, args, st);
  screenCapture(prog, args, st);
  userSetup(prog, args, st);
  frameworks(prog, args, st, env);
  attacks(prog, args, st);
  containerHosts(prog, args, st);
  containerDataRemoved(prog, args, st);
  attachesThroughFrida(prog, args, st);
  localExploit(prog, args, st);
  browserGuardsOff(prog, args, st);
  record(prog, args, st);
}
