// How often the dangerous-command checker (src/command-safety) stops a command a reviewer would let
// run, and how often it lets through one a reviewer would stop, on corpora reported apart: the
// project's own (checker-corpus.txt); the outside one (checker-corpus-outside.tsv: commands from
// GTFOBins, Codex's and Gemini CLI's tests, coding-agent advisories and other ecosystems' everyday
// commands), split by a hash of each command into a tuning part and a held-out part; and a second
// held-out set built after the tuning and measured once (checker-corpus-fresh.tsv: GTFOBins entries
// of the programs the first never drew on, tldr-pages examples of other ecosystems' tools), later read
// for the classes it missed; and a third held-out set built before any rule was changed for it
// (checker-corpus-third.tsv: Continue's and Roo Code's command-safety tests, Atomic Red Team's Linux
// executors, public CI workflows' build and test lines, the tools' manuals on publishing and registries),
// measured whole once, then split by a hash of each command into a tuning half and a held-out half;
// and a fourth set the same way (checker-corpus-fourth.tsv: other agents' command-permission tests,
// consoul, Amazon Q Developer CLI, goose, and tldr-pages' everyday shell programs); and a fifth set
// (checker-corpus-fifth.tsv: tldr-pages' macOS pages), measured once, whole, then tuned on; and a
// sixth for the same platform (checker-corpus-sixth.tsv: the later examples of those pages and the
// command lines of SigmaHQ's macOS detections), built before the macOS rules, measured once, whole,
// then tuned on; and a seventh (checker-corpus-seventh.tsv: LOOBins' examples and the run steps of
// public macOS CI jobs), built before the round tuned on the sixth, measured once, then tuned on;
// and an eighth (checker-corpus-eighth.tsv: the command lines of Elastic's macOS detection rules and
// the commands fastlane's actions run), built before the round tuned on the seventh, measured once,
// then tuned on; and a ninth (checker-corpus-ninth.tsv: the programs Falco's rules and Splunk's Linux
// detections name, and the build lines of popular repositories' Makefiles and CI), built before the
// round tuned on the eighth, measured once after it, then tuned on; and a tenth
// (checker-corpus-tenth.tsv: Elastic's Linux detection rules, Neo23x0's auditd rules, Stratus Red
// Team's cloud techniques, the cloud and cluster clients' everyday commands, and the build lines of
// popular repositories no set drew on), built before the round tuned on the ninth, measured once
// after it, then tuned on; and an eleventh (checker-corpus-eleventh.tsv: CloudGoat's and Pacu's
// attacks, HackTricks Cloud, MicroBurst, peirates, Kubernetes Goat, kube-hunter, and the CI and
// READMEs of infrastructure repositories), built before the round tuned on the tenth, measured once
// after it, then tuned on; and a twelfth (checker-corpus-twelfth.tsv: PayloadsAllTheThings' methodology
// pages and the CI, Makefiles and scripts of popular repositories, every line copied verbatim from a
// file read), built before the round tuned on the eleventh, held out and measured once after it,
// then tuned on; and a thirteenth (checker-corpus-thirteenth.tsv: HackTricks' Linux privilege-escalation
// pages, LinEnum's checks and the CI and Makefiles of fastapi, pydantic and axum, verbatim), built before
// the round tuned on the twelfth, held out and measured once after it, then tuned on; and a fourteenth
// (checker-corpus-fourteenth.tsv: InternalAllTheThings' Linux privilege-escalation, persistence,
// evasion and Docker pages, PANIX's persistence modules, deepce's guides, and the CI and Makefiles of
// uv, elixir, phoenix, helix, starship, tailwindcss, bat, mitmproxy, nushell and polars, verbatim),
// built before the round tuned on the thirteenth, held out and measured once after it, then tuned on;
// and a fifteenth (checker-corpus-fifteenth.tsv: GTFOBins' own repository, reverse-shell-generator's
// one-liners, Atomic Red Team's Linux tests the third set did not use, CALDERA's stockpile abilities,
// linPEAS' checks, and the CI, scripts and Makefiles of esbuild, ruff, fzf, jq, lazygit and httpie,
// verbatim), built before the round tuned on the fourteenth, held out and measured once after it,
// then tuned on;
// and a sixteenth (checker-corpus-sixteenth.tsv: HackTricks' shell, tunneling and exfiltration pages,
// arsenal's cheats, badPods, Hacking the Cloud, InternalAllTheThings' Kubernetes and pivoting pages, and
// the CI and scripts of numpy, deno, pip, pytest, fd, tracing, vue, svelte, starlette, fastify, hyper,
// prettier, eslint and others, verbatim), built before the round tuned on the fifteenth, held out and
// measured once after it, then tuned on;
// and a seventeenth (checker-corpus-seventeenth.tsv: pentest-book's Linux, pivoting and file-transfer
// pages, ivan-sincek's cheat sheet, RoqueNight's and frizb's privilege-escalation notes, GTFOBins programs
// no set drew on, and the CI and scripts of hugo, terraform, loki, traefik, nats-server, xsv, helm and
// etcd, verbatim), built before the round tuned on the sixteenth, held out and measured once after it,
// then tuned on;
// and an eighteenth (checker-corpus-eighteenth.tsv: 0xsyr0's OSCP notes, Tib3rius' cheat sheets, jonnyzar's
// and JustTryHarder's OSCP notes, pentest-wiki's Nebula write-ups, and the CI and scripts of minio, fish,
// werkzeug, rclone, syncthing, tmux, eza, libgit2 and valkey, verbatim), built before the round tuned on
// the seventeenth, held out and measured once after it, then tuned on;
// and a nineteenth (checker-corpus-nineteenth.tsv: thc's tips and tricks, xapax's security notes,
// blackc03r's OSCP cheat sheets, red-kube's attacks, dafthack's cloud pentest cheat sheets, and the CI and
// scripts of koa, rich, hyperfine, uvicorn, sentry-cli, delta, mkdocs, hatch and commander.js, verbatim),
// built before the round tuned on the eighteenth, held out and measured once after it, then tuned on;
// and a twentieth (checker-corpus-twentieth.tsv: atn1ght's, abrarzargai's, tedchen0001's, LIsh3y3's and
// cyberphor's OSCP notes, and the CI and scripts of tqdm, attrs, urfave/cli, viper, markupsafe, yargs, bats-core,
// direnv, pyenv, sqlite-utils, mvdan/sh and others, verbatim), built before the round tuned on the nineteenth,
// held out and measured once after it, then tuned on;
// and a twenty-first (checker-corpus-twenty-first.tsv: saisathvik1's OSCP cheat sheet, trimstray's book of
// secret knowledge, adon90's pentest compilation, russweir's and Shiva108's notes, and the CI and scripts of
// mdBook, task, gson, jekyll, composer, ecto, nlohmann/json, zstd, hono, mockito, phpunit, pnpm, puma,
// golangci-lint, guzzle, oban and others, verbatim), built before the round tuned on the twentieth, held out
// and measured once after it, then tuned on;
// and a twenty-second (checker-corpus-twenty-second.tsv: ssstonebraker's service enumeration, jivoi's pentest
// notes, akenofu's OSCP cheat sheet, OlivierLaflamme's Cheatsheet-God, and the CI and scripts of syn, testify,
// ktor, PHPMailer, ex_doc, spdlog, swift-argument-parser, tox, deno std, jackson-core, structlog, axios and
// others, verbatim), built before the round tuned on the twenty-first, held out and measured once after it,
// then tuned on;
// and a twenty-third (checker-corpus-twenty-third.tsv: dostoevskylabs' pentest notes, 0xJs's cloud red-team
// cheat sheet, mantvydasb's tunnelling notes, kubernetes-goat's scenarios, and the CI and scripts of ripgrep,
// fmt, poetry, hiredis, aeson, ocamlformat, zls, rack, libuv, javapoet, vapor and others, verbatim), built
// before the round tuned on the twenty-second, held out and measured once after it, then tuned on;
// and a twenty-fourth (checker-corpus-twenty-fourth.tsv: w181496's web CTF cheat sheet, kmkz's pentest and
// post-exploitation sheets, wwong99's notes, rootsecdev's Azure red-team notes, kubenomicon's persistence pages,
// and the CI, Makefiles and justfiles of click, gin, just, requests, express, monolog, zlib, clap, retrofit,
// faraday, jason, axum, bytestring and others, verbatim), built before the round tuned on the twenty-third,
// held out and measured once after it, then tuned on;
// and a twenty-fifth (checker-corpus-twenty-fifth.tsv: tomschwarz's pentest cheat sheet, LevisWings' notes,
// fanicia's security notes, and the CI, Makefiles and scripts of chi, zap, echo, serde_json, regex, cJSON,
// libevent, loguru, typer, cleo, phpdotenv, Carbon, rake, commons-lang, junit-pioneer, fresh, vitest and jest,
// verbatim), built before the round tuned on the twenty-fourth, held out and measured once after it, then tuned
// on;
// and a twenty-sixth (checker-corpus-twenty-sixth.tsv: SofianeHamlaoui's pentest notes, r1cksec's cheat sheets,
// 0xb120's cheat sheets and CTF notes, and the CI, Makefiles and scripts of gorilla/mux, tokio, okhttp, rubocop,
// black, laravel, curl, vite, tesla, Catch2, httpx, anyhow, poetry-core, thor, php-code-coverage and
// SwiftFormat, verbatim), built before the round tuned on the twenty-fifth, held out and measured once after it
// (93.55% of its dangerous caught, 0.71% of its safe flagged; strict 98.39% / 8.57%; docs/decisions.md), then
// tuned on;
// and a twenty-seventh (checker-corpus-twenty-seventh.tsv: m1kar0's and tucker4051's OSCP notes, and the CI and
// scripts of nox, rayon, jansson, pflag, moshi, sidekiq, dbal, virtualenv, undici, timex, elysia, zig-clap,
// vector, libfuse and jsonschema, verbatim), built before the round tuned on the twenty-sixth, held out and
// measured once after it (89.83% of its dangerous caught, 2.13% of its safe flagged; strict 98.31% / 8.51%;
// docs/decisions.md), then tuned on;
// and a twenty-eighth (checker-corpus-twenty-eighth.tsv: xukang0's OSCP notes, m4lal0's cheat sheets, and the CI,
// scripts and Makefiles of serde, google/benchmark, pypa/build, kotlinpoet, packaging, rspec-core,
// phoenix_live_view, haskell/text, swift-nio, dart-lang/args, http.zig, commons-io and yojson, verbatim), built
// before the round tuned on the twenty-seventh, held out and measured once after it (91.67% of its dangerous
// caught, 2.99% of its safe flagged; strict 95% / 10.45%; docs/decisions.md), then tuned on;
// and a twenty-ninth (checker-corpus-twenty-ninth.tsv: lutzenfried's Methodology pages, A-poc's RedTeam-Tools, and
// the CI, scripts, Makefiles and contributing docs of got, thiserror, lz4, httparty, commonmark,
// django-rest-framework, zod, snappy, walkdir, google/uuid, urllib3, swift-collections, dart-lang/http, pdm,
// libexpat, rand, os-lib, broadway, haskell/containers, FluentValidation and validator, verbatim), built before
// the round tuned on the twenty-eighth, held out and measured once after it (75.36% of its dangerous caught, 0%
// of its safe flagged; strict 88.41% / 8.5%; docs/decisions.md), then tuned on;
// and a thirtieth (checker-corpus-thirtieth.tsv: nirajkharel's AD pentesting notes, Integration-IT's Active
// Directory cheat sheet and its tool box's READMEs, and the CI, scripts, Makefiles and contributing docs of flask,
// fiber, crossbeam, log, ky, pip-tools, hex and dart-sass, verbatim), built before the round tuned on the
// twenty-ninth, held out and measured once after it (88.33% of its dangerous caught, 0% of its safe flagged;
// strict 88.33% / 1.35%; docs/decisions.md), then tuned on;
// and a thirty-first (checker-corpus-thirty-first.tsv: RistBS' Awesome-RedTeam-Cheatsheet, and the CI, scripts,
// Makefiles and contributing docs of crystal, ajv, cattrs, alembic, pytest-xdist and Nim, verbatim), built before
// the round tuned on the thirtieth, held out and measured once after it (85.71% of its dangerous caught, 0.79% of
// its safe flagged; strict 97.4% / 18.9%; docs/decisions.md), then tuned on;
// and a thirty-second (checker-corpus-thirty-second.tsv: WADComs' Active Directory commands, and the CI, Makefiles
// and contributing docs of aiohttp, yarl and reqwest, verbatim), built before the round tuned on the thirty-first,
// held out and measured once after it (91.46% of its dangerous caught, 6.8% of its safe flagged; strict 95.12% /
// 11.65%; docs/decisions.md), then tuned on;
// and a thirty-third (checker-corpus-thirty-third.tsv: ihebski's A-Red-Teamer-diaries, and the CI, Makefiles and
// contributing docs of rebar3, luarocks, busted, mojo, leiningen and gleam, verbatim), built before the round tuned
// on the thirty-second, held out and measured once after it (90.67% of its dangerous caught, 2.34% of its safe
// flagged; strict 98.67% / 42.97%; docs/decisions.md), then tuned on;
// and a thirty-fourth (checker-corpus-thirty-fourth.tsv: The-Viper-One's Pentest-Everything, and the CI, scripts
// and build docs of babashka, fpm, ponyc, Odin, scalafmt and dub, verbatim), built before the round tuned on the
// thirty-third, held out and measured once after it (76.06% of its dangerous caught, 5.43% of its safe flagged;
// strict 80.28% / 32.56%; docs/decisions.md);
// and a set of evasions (checker-corpus-evasions.tsv: the filter bypasses of PayloadsAllTheThings' Command
// Injection page, HackTricks' bash-restriction bypasses, Bashfuscator's documented payloads, and the bypasses
// published against other coding agents' command checkers, verbatim), built after the rules it measures, held out
// and measured once on the rules before and once on the rules after the round that read what a command writes and
// runs (93.33% of its dangerous caught both times; 41.1% and 45.21% of its safe flagged, most of them obfuscations
// whose harmless payload the checker cannot see; strict 94.67% / 54.79% both; docs/decisions.md), then tuned on.
// and a thirty-fifth (checker-corpus-thirty-fifth.tsv: mubix's post-exploitation wiki, dagrz's aws_pwn, and the CI,
// scripts and docs of stack, terraform-aws-vpc, ansible-role-docker, DataFrames.jl, Documenter.jl, devtools,
// data.table, detekt, conan, nix-installer and fantomas, verbatim), built before the round tuned on the
// thirty-fourth, held out and measured once before and once after it (76.06% of its dangerous caught, 8.96% of its
// safe flagged, both times; strict 80.28% / 40.3% both; docs/decisions.md), then tuned on;
// and a thirty-sixth (checker-corpus-thirty-sixth.tsv: synacktiv's nord-stream, praetorian's gato, cyberark's
// KubiScan and kubeletctl, and the CI, scripts and docs of lwt, absinthe, clj-kondo, riverpod, Penlight,
// libwww-perl, cats-effect, sqldelight, harfbuzz, zap and swift-composable-architecture, verbatim), built before
// the round tuned on the thirty-fifth, held out and measured once before and once after it (86.57% of its
// dangerous caught, 1.45% of its safe flagged, both times; strict 98.51% / 21.01% both; docs/decisions.md), then
// tuned on;
// and a thirty-seventh (checker-corpus-thirty-seventh.tsv: o365spray, SprayingToolkit, CredMaster, ForgeArmory's
// TTPs, and the CI, scripts and docs of kemal, nimble, fortran-lang/stdlib, spago, cowboy, platformio-core,
// haxelib, prometheus-community's helm-charts, roswell, dbt-core and godot-cpp, verbatim), built after the round
// tuned on the thirty-sixth, held out and measured once on the rules before this session's rounds and once
// after them (59.38% of its dangerous caught, 3.13% of its safe flagged, both times; strict 85.94% / 44.53%
// both; docs/decisions.md), then tuned on;
// and a thirty-eighth (checker-corpus-thirty-eighth.tsv: hacktricks-cloud's GCP, Azure and Kubernetes notes,
// ROADtools, RhinoSecurityLabs' GCP IAM escalation, and the CI, scripts and docs of alire, west, kas, snakemake,
// nf-core/tools, vlang/v, node-test-runner, nbdev, latex3 and rackunit, verbatim), built after the round tuned
// on the thirty-seventh, held out and measured once on the rules before this session's rounds and once after
// them (79.03% of its dangerous caught, 6.25% of its safe flagged, both times; strict 93.55% / 63.28% both;
// docs/decisions.md), then tuned on;
// and a thirty-ninth (checker-corpus-thirty-ninth.tsv: LinEnum, a cryptominer clean-up, and the CI, scripts and
// docs of zola, graphql-js, Electron Forge, terraform-provider-random, operator-sdk, tauri, cargo-component,
// sphinx, plus_plugins and starlight, verbatim; three labels set by earlier sets' before any measure), built
// after the round tuned on the thirty-eighth, held out and measured once on the rules before this session's
// rounds and once after them (86.67% of its dangerous caught, 5.93% of its safe flagged, both times; strict 90% /
// 15.56% both; docs/decisions.md), then tuned on;
// and a fortieth (checker-corpus-fortieth.tsv: linux-smart-enumeration, botb, and the CI, scripts and docs of
// gh, pandoc, tokei, coil, beego, jackson-databind, flask and devise, verbatim), built after the round tuned on
// the thirty-ninth, held out and measured once on the rules before this session's rounds and once after them
// (75.76% → 77.27% of its dangerous caught, 3.76% of its safe flagged both times; strict 89.39% / 24.06% →
// 89.39% / 18.05%; docs/decisions.md), then tuned on;
// and a forty-first (checker-corpus-forty-first.tsv: terminal-bench's adapted tasks, a microVM harness for
// them, bazelisk, vcpkg, ansible and Gato-X, verbatim) and a forty-second (checker-corpus-forty-second.tsv:
// crush's, OpenHands' and its agent SDK's command-safety tests, plandex's scripts, linuxprivchecker,
// linux-exploit-suggester, dune and sbt, verbatim), built after the fortieth's round, held out and measured
// once on the rules before it and once after the loop rule (96.55% / 15.63% and 68.75% / 2.21% both times;
// with six labels set by earlier rulings 98.82% / 15.43% and 73.33% / 2.14%; docs/decisions.md), then tuned on;
// and a forty-third (checker-corpus-forty-third.tsv: diffusers' and jupyterlab's CI, scripts and docs,
// my-re0-k8s-security and kubesploit, verbatim), built after that round and measured on the rules before and
// after it (85.42% / 7.84% both times; strict 91.67% / 40.2%), held out for the next round, then tuned on;
// and a forty-fourth (checker-corpus-forty-fourth.tsv: mini-swe-agent's, open-interpreter's, aider's and
// SWE-agent's CI and docs and a Linux privilege-escalation write-up, verbatim) and a forty-fifth
// (checker-corpus-forty-fifth.tsv: Laravel, sail, valet, phpstan, hanami, caddy and soft-serve, and traitor,
// pspy, SUID3NUM, BeRoot and PayloadsAllTheThings' web pages, verbatim), built blind after the forty-third's
// round, held out and measured on the rules before and after it (87.04% / 2.46% and 78.57% / 16.67% both
// times, three of the forty-fifth's rows relabelled by an earlier ruling; docs/decisions.md), then tuned on;
// and a forty-sixth (checker-corpus-forty-sixth.tsv: guarddog's malicious-package fixtures, Adnan Khan's
// and pwnhub's CI attacks, poutine, harden-runner, terragrunt and prefect, verbatim), built with them and
// measured on the rules before that round and after it (75.71% / 13.22% both times; strict 87.14% /
// 38.84%), held out for the next round, then tuned on;
// and a forty-seventh (checker-corpus-forty-seventh.tsv: Android and Java exploitation — the mobile
// pentest cheat sheet, OWASP MASTG's Android techniques, drozer, objection, ysoserial, Log4Shell's tools —
// and nowinandroid, sdkman, maven, kafka and petclinic) and a forty-eighth (checker-corpus-forty-eighth.tsv:
// Linux rootkits and gsocket, and bpftrace, memcached, pico-sdk, htop and libbpf-bootstrap), built blind
// before the forty-sixth's round, measured on the rules before it and after it (52.17% / 6.98% and 88.57% /
// 2.63% both times), then tuned on;
// and a forty-ninth (checker-corpus-forty-ninth.tsv: attacks on ML and agent infrastructure — prompt
// injection and MCP poisoning workshops, a vulnerable MCP server, Ray and Gradio PoCs, malicious pickles,
// exposed Ollama servers — and dvc, huggingface_hub, jupytext, ollama and mamba), built with them and
// measured on the rules before the three rounds and after each (86.76% / 11.38% before, 86.76% / 10.57%
// after all three; strict 86.76% / 34.96% and 34.15%), held out for that round, measured first in it
// (86.76% / 10.57%), then tuned on;
// and a fiftieth to a fifty-third (checker-corpus-fiftieth.tsv … fifty-third.tsv: databases and their
// attacks; Windows, PowerShell and Active Directory; the web and its scanners; networking, tunnels and
// self-hosting), built blind before the forty-ninth's round, the fifty-third drawn by lot to stay held out
// through it (82.86% / 11.59% before and after), then measured once and tuned on;
// and a fifty-fourth to a fifty-seventh (blockchains; mail and phishing; forensics and anti-forensics;
// scientific computing and cryptojacking), built blind before the fifty-third's round, the fifty-seventh
// drawn by lot to stay held out (91.76% / 16.00% before the round and after it; strict 95.29% / 32.80%),
// measured first in the next round (unchanged), then tuned on;
// and a fifty-eighth to a sixty-first (virtualization and ESXi ransomware; embedded boards and firmware;
// data platforms and CI servers; reverse engineering and local exploits), built blind in that round, the
// fifty-ninth drawn by lot to stay held out (79.76% / 10.53% before the round and after it), then tuned on;
// and a sixty-second to a sixty-fifth (package registries and supply-chain attacks; network
// infrastructure and VoIP; backups and ransomware; identity and secrets managers), the sixty-second drawn
// by lot (50.62% / 5.15% before the round and after it), then tuned on;
// and a sixty-sixth to a sixty-ninth (media tools; observability; iOS; Linux desktops and dotfiles), the
// sixty-seventh drawn by lot to stay held out (77.65% / 7.44% before this session's rounds, 77.65% /
// 6.61% after them), then measured and tuned on; fourteen deletions of a named /tmp path in earlier sets
// were relabelled safe by a decision of that session (each row carries a note);
// and a seventieth to a seventy-third (automotive and CAN; industrial control systems; HPC schedulers;
// game servers and cheats), built blind last in that session and all four held out, their misses
// unread: 67.51% / 5.20% on the rules before the session's rounds and 67.51% / 4.83% after them,
// measured again first in the next session (unchanged), then tuned on;
// and a seventy-fourth to a seventy-seventh (Android; software radio; printers and 3D printing;
// machine-learning and LLM serving), built blind in that session, the seventy-fourth and seventy-fifth
// drawn by lot to stay held out, their misses unread until the next session tuned on them;
// and a seventy-eighth to an eighty-first (mail; blockchains and wallets; database operations; home
// automation), built blind in that session after its first round's rules were written; the
// seventy-ninth and eighty-first drawn by lot, measured once (53.09% / 2.42% and 47.78% / 0.82% on
// both the session's starting rules and its first round's), then tuned on; the seventy-eighth and
// eightieth held out, their misses unread until the next session tuned on them;
// and an eighty-second to an eighty-fifth (web hosting panels; desktop apps and browser extensions;
// RFID, NFC and smart cards; data transfer and exfiltration), built blind in that session; the
// eighty-third and eighty-fourth drawn by lot, measured once (43.94% / 2.31% on both the session's
// starting rules and its rules then; 60.00% / 0.86% and 65.88% / 0.86%), then tuned on; the
// eighty-second and eighty-fifth held out, their misses unread; those six held out measured 51.13% /
// 5.26% on both that session's starting and final rules, and were tuned on in the next;
// and an eighty-sixth to an eighty-ninth (Wi-Fi; DNS; Linux packaging and backdoored packages; web
// servers and reverse proxies), built blind in that next session; the eighty-seventh and eighty-ninth
// drawn by lot, measured once (50.68% / 3.15% and 48.78% / 23.88%, as on the session's starting rules
// but one false flag), then tuned on; the eighty-sixth and eighty-eighth held out through that round
// (85.53% / 3.28% and 73.17% / 3.62%, unchanged by it), then tuned on;
// and a ninetieth to a ninety-third (password managers; remote access and command-and-control;
// embedded Linux and routers; container images and their supply chain), built blind in that session;
// the ninetieth and ninety-third drawn by lot, measured once (40.96% / 3.96% and 70.24% / 6.52%, as
// on the session's starting rules), then tuned on; the ninety-first and ninety-second held out, their
// misses unread (79.27% / 4.00% and 76.19% / 2.33%, unchanged by the session's rounds);
// and a ninety-fourth to a ninety-seventh (real-time media and conferencing; SSH tooling;
// backend-as-a-service platforms; headless CMSs and identity providers), built blind in that session;
// the ninety-fourth and ninety-fifth drawn by lot, measured once (59.02% / 4.17% and 69.86% / 10.17%,
// as on the session's starting rules but one row), then tuned on; the ninety-sixth and ninety-seventh
// held out, their misses unread (53.03% / 3.11% together on the session's starting rules, 65.91% /
// 3.11% on its final ones);
// and a ninety-eighth to a hundred-and-first (VPN servers and their attacks; code hosting and secret
// hunting in repositories; Windows software from Linux and AV-evading payloads; desktop automation,
// screen capture and remote-access trojans), built blind last in that session; the hundredth and
// hundred-and-first drawn by lot, measured once (39.77% / 4.92% and 46.67% / 2.70%), then tuned on;
// the ninety-eighth and ninety-ninth held out, their misses unread (62.59% / 6.72% together on the
// session's starting rules, 63.95% / 6.72% on its final ones); those six held out measured 69.66% / 4.32%
// together at the next session's start and were tuned on in it;
// and a hundred-and-second to a hundred-and-thirteenth, built blind in that next session in three batches
// of four (virtualization; message queues and caches; dotfiles and shell persistence; package publishing
// and dependency confusion; game servers and cheats; logging and anti-forensics; HPC and malware droppers;
// API testing and attacks; sandboxes and their escapes; browser automation and people search; remote
// development and tunnels; PKI and TLS interception); in each batch two drawn by lot were measured once
// (the 102nd 77.22% / 1.68%, 103rd 36.84% / 4.10%, 106th 75.24% / 4.20%, 109th 42.25% / 8.28%, 111th
// 40.91% / 5.61%, 113th 63.46% / 4.03%, on the session's starting rules), then tuned on; the 104th, 105th,
// 107th, 108th, 110th and 112th held out, their misses unread (69.06% / 7.34% together on the session's
// starting rules, 70.52% / 7.34% on its final ones); those six held out measured 70.52% / 7.34% together
// at the next session's start and were tuned on in it;
// and a hundred-and-fourteenth to a hundred-and-twenty-fifth, built blind in that next session in three
// batches of four (monitoring and observability and their abuse; blockchain development, cryptojacking and
// wallet theft; home automation and IoT exploitation; backups, ransomware and wipers; fuzzing and exploit
// development; network automation and network-device attacks; chat platforms, bots and token theft;
// building distributions and images, and boot-level persistence; web CMSs and their exploitation; Java
// servers and deserialization and JNDI exploitation; serverless and edge platforms and their attacks;
// notebooks and their abuse); in each batch two drawn by lot were measured once (the 114th 77.98% / 7.89%,
// 116th 69.72% / 8.33%, 118th 89.25% / 15.15%, 121st 66.94% / 11.76%, 122nd 56.82% / 18.55%, 124th 55% /
// 7.2%, on the session's starting rules), then tuned on; the 115th, 117th, 119th, 120th, 123rd and 125th
// held out, their misses unread (63.84% / 10.25% together on the session's starting rules, 64.69% / 9.67%
// on its final ones); those six measured 64.69% / 9.67% at the next session's start and were tuned on in it;
// and a hundred-and-twenty-sixth to a hundred-and-fifty-seventh, built blind in that next session in eight
// batches of four (load testing and floods, configuration management, search engines, document toolchains,
// e-commerce, version managers, GitOps, editors, firewalls, directory services, compilers, media and
// steganography, home labs, anonymity networks, self-hosted forges, job schedulers, learning platforms, API
// gateways, iOS, VoIP, Python web apps, release tooling, Linux desktops, phishing infrastructure, database
// admin tools, robotics, WebAssembly, medical imaging, shell tooling, SSO proxies, build engines; the 154th,
// Electron apps, was never built); in each batch two drawn by lot were measured once, then tuned on (the
// 126th, 127th, 130th, 133rd, 136th, 137th, 138th, 141st, 142nd, 145th, 146th, 148th, 151st, 152nd, 156th
// and 157th: 60.51% / 6.57% together on the session's starting rules), and two held out, their misses unread
// (the 128th, 129th, 131st, 132nd, 134th, 135th, 139th, 140th, 143rd, 144th, 147th, 149th, 150th, 153rd and
// 155th: 63.67% / 10.13% together on the session's starting rules, 65.54% / 8.87% on its final ones); those
// fifteen measured 65.54% / 8.87% at the next session's start and were tuned on in it;
// and a hundred-and-fifty-eighth to a hundred-and-eighty-first, built blind in that next session in six
// batches of four (industrial control, Erlang and Elixir, static sites, Bluetooth, git hooks, satellites,
// file sharing, cryptography, maps and location, cross-platform mobile, kernel modules, BMCs and
// provisioning, wikis, remote management, helpdesks and forums, surveillance video, keyboards and HID
// attacks, ERP, device management, bulk mail, infrastructure as code, archives, time synchronisation, web
// application firewalls); in each batch two drawn by lot were measured once, then tuned on (the 160th,
// 161st, 162nd, 165th, 166th, 168th, 171st, 173rd, 174th, 177th, 179th and 180th: 63.64% / 8.23% together on
// the session's starting rules), and two held out, their misses unread (the 158th, 159th, 163rd, 164th,
// 167th, 169th, 170th, 172nd, 175th, 176th, 178th and 181st: 68.48% / 9.34% together on the session's starting
// rules, 68.79% / 9.26% on its final ones); those twelve measured 68.79% / 9.26% at the next session's start
// and were tuned on in it;
// and a hundred-and-eighty-second to a two-hundred-and-twenty-ninth, built blind in that next session in
// twelve batches of four (drones, reverse engineering, intrusion detection, password cracking, mainframes,
// browsers, peer-to-peer networks, console jailbreaks, forensics, honeypots, code scanners, eavesdropping,
// SMS and the mobile core, LoRaWAN and Zigbee, SELinux and AppArmor, MFA, captive portals, FPGAs, smart TVs,
// point of sale, webmail, secret stores, Kubernetes policy, serial consoles, e-books and DRM, GraphQL,
// kiosks, malware sandboxes, NAS, object storage, Electron, service managers, DNS sinkholes, TR-069, PHP
// exploitation, Node.js exploitation, digital TV, MCP and agents, live streaming, WSL, bot farms, PC
// firmware, Rails, web terminals, ML web UIs, keyloggers, web analytics, URL shorteners); in each batch two
// drawn by lot were measured once, then tuned on (70.87% / 4.35% together on the session's starting rules),
// and two held out, their misses unread (the 183rd, 185th, 186th, 189th, 190th, 192nd, 194th, 197th, 199th,
// 201st, 204th, 205th, 207th, 208th, 210th, 212th, 214th, 216th, 218th, 219th, 222nd, 223rd, 228th and 229th:
// 65.81% / 5.59% together on the session's starting rules, 67.19% / 5.59% on its final ones); those
// twenty-four measured 67.19% / 5.59% at the next session's start and were tuned on in it;
// and a two-hundred-and-thirtieth to a two-hundred-and-sixty-ninth, built blind in that next session in
// ten batches of four from the preamble in docs/blind-sets.md (self-hosted PaaS, workflow automation, the
// fediverse, disk encryption, service discovery, LLM frameworks, web archiving and OSINT, EV charging,
// ADS-B and AIS, face recognition, voting software, CAD and 3D printing, spreadsheets, firmware emulation,
// bundlers and XSS, migrations and SQL injection, DIY medical devices, amateur radio, code signing, voice
// assistants, access control, GPS trackers, chaos engineering, IRC, HTTP caches and smuggling, single-board
// implants, SNMP, open data and leaks, template injection, HTTP clients and SSRF, WebSockets, home energy,
// OCR pipelines, Android ROMs and boot ROMs, BBSes, Usenet, shell history, fax, embedded web servers, note
// apps); in each batch two drawn by lot were measured once, then tuned on (75.75% / 6.73% together on the
// session's starting rules), and two held out, their misses unread (the 230th, 231st, 234th, 235th, 238th,
// 240th, 242nd, 244th, 246th, 247th, 251st, 252nd, 255th, 257th, 258th, 259th, 262nd, 265th, 267th and
// 269th: 72.95% / 4.32% together on the session's starting rules, 73.13% / 4.17% on its final ones); those
// twenty measured 73.13% / 4.17% at the next session's start and were tuned on in it;
// and a two-hundred-and-seventieth to a three-hundred-and-first, built blind in that next session in eight
// batches of four from the same preamble (.NET, other version control, Unicode, data pipelines, Perl,
// accessibility, Lua and NSE, Deno and Bun, eBPF, Go tooling, Nix, SDN and layer 2, malware scanners, local
// Kubernetes, Swift and macOS, MQTT and CoAP, terminal UIs, PostgreSQL, conda, stream processing, image
// parsers, OTA updates, workflow engines, Windows package managers, XMPP, network booting, media pipelines,
// Nim and Zig, Ruby tools, CTFs, debug ports, bioinformatics); in each batch two drawn by lot were measured
// once, then tuned on (70.58% / 7.82% together on the session's starting rules), and two held out, their
// misses unread (the 272nd, 273rd, 275th, 276th, 278th, 281st, 284th, 285th, 286th, 287th, 290th, 292nd,
// 294th, 297th, 299th and 301st: 80.81% / 4.04% together on the session's starting rules, 81.36% / 3.93% on
// its final ones); and a three-hundred-and-second to a three-hundred-and-ninth, built after that session's
// last rule and all held out (health-data interfaces, profilers, load balancers, desktop app sandboxes, mail
// transfer agents, registries, time-series databases, code review: 71.31% / 5.63% on both its starting and
// its final rules); those twenty-four measured 77.70% / 4.46% at the next session's start and were tuned
// on in it;
// and a three-hundred-and-tenth to a three-hundred-and-twenty-fifth, built blind in that next session in
// four batches of four (cloud CLIs, functional-language toolchains, TeX, R, remote configuration, code
// search, Python build backends, DHCP and IPAM, C and C++ package managers, mobile backends, test tooling,
// game engines, dependency bots, userspace file systems and rootkits, Rust services, PowerShell); in each
// batch two drawn by lot were measured once, then tuned on (75.32% / 7.59% together on the session's
// starting rules), and two held out, their misses unread (the 310th, 312th, 314th, 315th, 319th, 320th,
// 323rd and 324th: 70.60% / 4.36% on both the session's starting and its final rules); and a
// three-hundred-and-twenty-sixth to a three-hundred-and-thirty-third, built after that session's last
// rule and all held out (GPU computing, CalDAV and CardDAV, test grids and device farms, Kubernetes
// operators, status pages, lab automation, webhooks, database proxies: 72.95% / 4.47% on both); those
// sixteen measured 71.79% / 4.42% at the next session's start and were tuned on in it;
// and a three-hundred-and-thirty-fourth to a three-hundred-and-forty-ninth, built blind in that next
// session in two batches of eight (log shipping, gRPC, distribution packaging, smart contracts, language
// servers, trading bots and wallet theft, binary exploitation, system containers; query engines, microVMs,
// telemetry pipelines, personal finance and banking trojans, monorepo build systems, code scanning,
// daemonless image builders, SSH certificate authorities); in each batch four drawn by lot were measured
// once, then tuned on (83.97% / 5.62% together on the session's starting rules), and four held out, their
// misses unread (the 334th, 339th, 340th, 341st, 342nd, 344th, 345th and 346th: 70.88% / 3.60% on the
// session's starting rules, 70.88% / 3.74% on its final ones); and a three-hundred-and-fiftieth to a
// three-hundred-and-fifty-seventh, built after that session's last rule and all held out (data versioning,
// terminal mail clients, licence compliance and licence bypass, job queues, Kubernetes multi-tenancy, mail
// filtering, build provenance, Julia and Octave: 73.23% / 5.15% on the starting rules, 73.23% / 5.29% on
// the final ones); those sixteen measured 72.00% / 4.49% at the next session's start and were tuned on in
// it; and a three-hundred-and-fifty-eighth to a three-hundred-and-sixty-fifth, built blind in that next
// session in one batch (regular-expression engines, diagram renderers, vector databases, chess engines and
// game cheats, quantum SDKs and cryptographic attacks, web archives, mesh networks, accessibility and
// browser attacks), four drawn by lot measured once, then tuned on (79.47% / 7.34% on the session's
// starting rules), and four held out, their misses unread (the 358th, 361st, 362nd and 364th: 71.52% /
// 2.91% on both its starting and its final rules); and a three-hundred-and-sixty-sixth to a
// three-hundred-and-seventy-third, built after that session's last rule and all held out (Windows drivers,
// niche language toolchains and obfuscators, malicious media, booking systems and scalper bots, workflow
// orchestrators, API gateways, OCR and CAPTCHA solvers, forums: 67.00% / 2.58% on both); those twelve
// measured 68.57% / 2.70% at the next session's start and were tuned on in it; and a
// three-hundred-and-seventy-fourth to a four-hundred-and-fifth, built blind in that next session in four
// batches of eight: in the first two (library systems, weather stations, genealogy and people search,
// astronomy, Homebrew, game streaming, fonts, TPMs and HSMs; farm technology, barcodes, form builders,
// collaborative editors, feeds and XXE, HR and recruiting, package mirrors, terminal multiplexers) four
// drawn by lot were measured once, then tuned on, and four held out; the third (audio plug-ins, reference
// managers and shadow libraries, localization, web push, fastlane and re-signing, cluster dashboards,
// wearables, transit data and fare cards) was built after the second round's last rule and held out; those
// sixteen measured 68.41% / 6.52% before a third round read and tuned on them; and the fourth (robotic
// process automation, data labelling, crash reporting, proof assistants, package build farms, browser
// fingerprinting, digital collections, civic tech), the 398th to the 405th, was built after the session's
// last rule and held out: 68.58% / 11.51% on the session's starting rules, 68.88% / 11.62% on its final
// ones; those eight were tuned on in the next session, which built a four-hundred-and-sixth to a
// four-hundred-and-thirteenth (HPC schedulers, SEO, ChatOps bots and chat C2, Kotlin and Dart packages and
// app tampering, image servers and image exploits, keyboard remappers and input injection, log shippers and
// anti-forensics, subtitles and media attacks), four drawn by lot measured once, then tuned on, and four
// (the 408th, 410th, 411th and 412th: 82.30% / 3.70% at the first round's last rule) tuned on in a second
// round; and six more, built after that session's last rule and held out (time-series and graph databases,
// password vaults, container registries, pastebins, headless CMSs, artifact repositories: the 414th,
// 416th to 419th and 421st; the 415th and 420th came after the measurement and were not imported):
// 77.07% / 6.02% on the session's starting rules, 77.78% / 6.02% on its final ones; those six were
// tuned on in the next session, which built the 415th, 420th and 422nd to 427th before its first rule
// (database migrations and ransom bots, git forges, configuration languages and deserialization, web
// analytics and skimmers, point of sale, note apps, over-the-air updates, RADIUS and NAC), four drawn by
// lot tuned on (the 415th, 420th, 424th and 426th) and four held out (the 422nd, 423rd, 425th and 427th),
// and the 428th to 433rd after its last rule, all held out (CAD and slicers, WebSockets, spreadsheets,
// Electron apps, GraphQL, network-wide ad blocking and DNS rebinding): the ten held out measured
// 78.41% / 5.56% on the session's starting rules and the same on its final ones; those ten were tuned
// on in the next session, which asked helpers for six blind sets (the 434th to 439th) before its last
// round; only the 434th (JavaScript engines and their exploitation) and the 437th (online judges and
// code-execution services) came back, after the last rule, and were held out: 86.96% / 20.00% and
// 91.84% / 8.91%. It held out besides two peers' own test suites, copied by script with
// the peers' labels and unread to the end: the 440th (Continue's terminal-security tests that the third
// corpus did not hold) and the 441st (the commands noexec's detector tests expect reported, dangerous
// only): 61.32% caught. Each the same on the session's starting rules and on its final ones. Those four
// were tuned on in the next session (69.18% / 14.85% at its start), which asked helpers for blind sets in
// six batches and drew lots in four of them: the 442nd to 445th (printing, LDAP, WordPress, document
// databases) came after the first round's last rule and were held out; of the 448th to 455th, 457th to
// 464th, 465th to 472nd and 473rd to 480th, four of each batch were tuned on (the 448th to 451st, 457th,
// 458th, 462nd, 463rd, 465th, 466th, 469th, 471st, 474th, 476th, 478th and 480th: 76.62% caught when they
// came, 84.92% / 7.09% at the end) and four held out (the 452nd to 455th, 459th to 461st, 464th, 467th,
// 468th, 470th, 472nd, 473rd, 475th, 477th and 479th); and after the last rule the 481st and 486th
// (geospatial servers, documentation pipelines), all held out, the rest of that batch never fetched.
// With the 442nd to 445th, the twenty-two blind sets held out measured 79.19% / 6.87% on the session's
// starting rules and 79.41% / 7.11% on its final ones, each the same at the end as when it came but
// for one row of the 444th. It held out besides three more peers' own
// suites, copied by script with the peers' labels: the 446th (destructive_command_guard's regression
// corpus), the 447th (claude-code-safety-net's assertions) and the 456th (destructive_command_guard's pack
// tests): 64.36% / 12.88% together, the same on both. Those twenty-five were tuned on in the next session
// (79.41% / 7.11% and 64.36% / 12.88% at its start, 87.22% / 7.21% and 68.01% / 12.88% at its end), which
// asked helpers for blind sets in four batches: of the 482nd to 485th and 487th to 490th (learning
// platforms, BitTorrent, Matrix, malware analysis, remote desktops, SIEMs, localisation, file systems) lots
// put the 482nd, 487th, 488th and 489th in its second round and held the 483rd, 484th, 485th and 490th out;
// the 491st to 498th (network monitoring, SDN, ad fraud, QUIC, dev containers, packet crafting, audio
// plugins, e-signatures) were all held out; of the 499th to 506th (issue trackers, cron, Drupal and Joomla,
// monitoring agents, TURN, e-commerce, Ansible, Kubernetes storage) the 500th, 502nd, 505th and 506th were
// tuned on in its third round and the 499th, 501st, 503rd and 504th held out; and the 507th to 511th, asked
// during the third round, were all held out. The twenty-one held out measured 76.21% / 6.32% on the session's
// starting rules and 76.15% / 6.32% on its final ones, each the same at the end as when it came (the 503rd
// came after the rule for configuration files read, which lets one of its rows through). Those twenty-one
// were tuned on in the next session (76.15% / 6.32% at its start, 84.32% / 5.91% at its end), which asked
// helpers for blind sets in two batches: of the 512th to 519th (keyboard firmware and HID injection, static
// sites and takeovers, banking, dotfiles, build caches, git hooks, database clients, server bootstrap and
// rootkits) lots put the 512th, 513th, 515th and 518th in its second round and held the 514th, 516th, 517th
// and 519th out; the 520th to 524th and 526th (app backends, mail, terminal sharing, CI runners, game
// servers, local Kubernetes) were all held out (the 525th did not come back in time). The ten held out
// measured 75.60% / 9.23% on the session's starting rules and 75.60% / 9.33% on its final ones, each the
// same at the end as when it came. Those ten were tuned on in the next session (75.60% / 9.33% at its start,
// 89.01% / 8.62% at its end), which asked for three batches of blind sets and drew lots for each: the 525th,
// 527th, 528th and 533rd (ERP, FPGA and hardware hacking, medical imaging, search clusters), the 534th, 536th
// and 538th (code and secret reconnaissance, peer-to-peer networks, WebAssembly) and the 541st to 544th
// (Kubernetes operators, LLM applications, payments, Linux desktops) were held out, and measured 70.91% /
// 4.29% together when each came and at the end; the 529th to 532nd, 535th, 537th and 540th were tuned on.
// Those eleven were tuned on in the next session (70.91% / 4.29% at its start, 79.28% / 4.29% at its end), which
// asked for two batches of blind sets and drew lots for each: of the 545th to 550th (wallets, chat bots, web
// application firewalls, Redis, MQTT, crawlers) the 548th and 549th were tuned on and the 546th, the one of the
// others back in time, held out; of the 551st to 554th (game cheats, object storage, proxies, mail servers) the
// 551st, back in time, held out. The two held out measured 67.88% / 2.55% together when each came and at the end.
// Those two were tuned on in the next session (67.88% / 2.55% at its start, 80.29% / 2.55% at its end), which asked
// for four batches of blind sets and drew lots for each: the 555th, 559th, 561st, 563rd, 565th, 568th to 570th,
// 572nd, 573rd, 575th, 577th and 578th (smart contracts, large files in git, mesh VPNs, terminal mail clients,
// static sites, LLM fine-tuning, chroots, vector databases, runbook consoles, change data capture, distributed
// storage, webcams, serverless platforms) were held out, and measured 78.94% / 6.01% together when each came,
// on the session's starting rules and at its end; the 556th to 558th, 560th, 562nd, 564th, 566th, 567th, 571st,
// 574th and 576th were tuned on. Those thirteen were tuned on in the next session (78.94% / 6.01% at its start,
// 81.32% / 5.00% at its end), which asked for two batches of blind sets and drew lots for each: the 580th, 581st,
// 583rd, 584th and 586th (embedded Linux and device exploitation, document converters, time-series databases,
// terminal automation and brute force, API mocking and interception) were held out, and measured 78.01% / 2.29%
// together when each came, on the session's starting rules and at its end; the 582nd and 587th were tuned on
// (the 579th, 585th and 588th did not come back in time). Those five were tuned on in the next session (78.01% /
// 2.29% at its start, 85.57% / 2.10% at its end), which gave the unwritten ordinals and two new ones to a new
// batch of helpers (the 579th, 585th, 588th to 590th: OpenStack, pull-request bots, internet-wide scanning,
// mobile instrumentation, forge clients), all five drawn to be held out; none had written a row when the
// session's CI began, so none was held out then. The next session asked the same five ordinals and themes again
// with lots drawn anew: the 585th (pull-request bots and pipeline attacks) came back held out and measured
// 69.05% / 2.21% when it came and at the session's end; the 579th and 589th were tuned on; the 588th and 590th
// did not come back in time. The 585th was tuned on in the next session (69.05% / 2.21% at its start, 73.81% /
// 2.21% at its end), which asked a new batch with lots drawn first: the 588th (internet-wide scanning) and 593rd
// (shells, prompts and terminal multiplexers) were tuned on; the 590th (forge clients and forge-API abuse) was
// held out and measured 49.37% / 31.25% when it came and at the session's end; the 592nd (host firewalls and
// packet filtering), held out, came back after the session's first CI and measured 87.50% / 3.70% when it came;
// the 591st (debuggers and reverse engineering) did not come back in time. The 590th and 592nd were tuned on in
// the next session (70.29% / 18.64% at its start, 89.71% / 16.95% at its end), which asked three batches with lots
// drawn first: the 591st again, the 594th, 595th and 597th to 600th (debuggers and reverse engineering, database
// migrations and takeover, API gateways and meshes, office documents, team package registries, game servers and
// cheats, time synchronisation) were held out, and measured 83.81% / 8.74% together when each came, on the
// session's starting rules and at its end; the 596th, 601st and 602nd (compilers and build caches, calendar
// servers, serverless platforms) were tuned on. Those seven were tuned on in the next session (83.81% / 8.74% at
// its start, 86.10% / 6.08% at its end), which asked four batches of eight with lots drawn first (the 603rd to
// 634th): twenty were held out and measured 77.84% / 6.39% together when each came (77.99% / 6.39% at the
// session's end, three rows turned unread by rules written for sets tuned on), from 47.52% (infrastructure as
// code) to 98.85% (drones and autopilots) by theme; the twelve tuned on came in at 83.05% / 8.00%. Those twenty
// were tuned on in the next session (77.99% / 6.39% at its start, 83.88% / 5.72% at its end), which asked seven
// batches of eight with lots drawn first (the 635th to 690th): thirty-five were held out and measured 75.29% / 5.86%
// together when each came (the same on the session's starting and final rules: no held-out row turned), from 25.58%
// (browser extensions) to 100% (key-value stores) by theme; the twenty-one tuned on came in at 77.41% / 7.20%.
// Those thirty-five were tuned on in the next session (75.29% / 5.86% at its start, 82.55% / 4.49% at its end),
// which asked five batches of eight with lots drawn first (the 691st to 730th): twenty-five were held out and
// measured 80.65% / 6.84% together when each came (the same on the session's starting and final rules: no
// held-out row turned), from 57.89% (printing) to 100% (IoT firmware) by theme; the fifteen tuned on came in at
// 79.91% / 6.54%. Those twenty-five were tuned on in the next session (80.65% / 6.84% at its start, 82.43% / 6.34%
// at its end), which asked two batches of eight with lots drawn first (the 731st to 746th): ten were held out and
// measured 87.96% / 6.36% together when each came (87.57% / 6.36% on the session's starting rules: three rows of the
// 739th turned, unread, by rules written before it came; none turned after), from 76.19% (mail servers) to 100%
// (key-value stores) by theme; the six tuned on came in at 70.72% / 10.49%. Those ten were tuned on in the next
// session (87.96% / 6.36% at its start, 92.59% / 6.14% at its end), which asked two batches of eight with lots drawn first
// (the 747th to 762nd): ten were held out and measured 82.34% / 4.82% together when each came (82.21% / 4.82% on the
// session's starting rules: one row of the 752nd turned, unread, by a rule written before it came; none turned
// after), from 53.52% (columnar databases) to 100% (fonts) by theme; the six tuned on came in at 69.58% / 8.60%;
// and a third batch of eight (the 763rd to 770th), asked once the rules were final and held out whole, measured
// 70.14% / 2.71% together when each came (the start's rules gave the same), from 43.69% (card-testing tools) to
// 91.49% (SQLite) by theme. Those eighteen were tuned on in the next session (76.90% / 3.94% at its start, 82.18% /
// 3.51% at its end), which asked three batches of eight, each set measured once when it came: the 771st to 778th at
// its start, held out whole, and the 779th to 786th with lots drawn first, three tuned on (84.34% / 11.57% when they
// came) and five held out; the thirteen held out came in at 70.48% / 4.74% together (the start's rules gave the
// same), from 40.85% (the Atlassian suite) to 100% (search engines) by theme, and were read and tuned on once
// measured; and the 787th to 794th, asked once the rules were final and held out whole, measured 72.60% / 3.85%
// together when each came (72.77% / 3.85% on the session's starting rules: one row of the 789th turned the wrong
// way, unread) and the same at the session's end, from 50.00% (printing systems) to 97.83% (SIEM) by theme. Those
// eight were tuned on in the next session (72.60% / 3.85% at its start, 84.82% / 3.53% at its end), which asked one
// batch of eight at its start (the 795th to 802nd), held out whole: they measured 83.36% / 3.89% together when each
// came (the start's rules gave the same), from 60.98% (Nix) to 95.56% (command-line data tools) by theme. Those
// eight were tuned on in the next session (83.36% / 3.89% at its start, 89.98% / 3.89% at its end), which asked six
// batches of eight: the 803rd to 810th at its start, held out whole, measured 70.30% / 3.92% together when each came
// (the start's rules and the end's gave the same), from 30.77% (archive tools) to 87.88% (feature flags) by theme;
// and the 811th to 850th one batch after another, each measured when it came (on the rules of that moment, which
// turned none of their rows: 75.98% / 5.44% together) and then tuned on (81.97% / 5.03% at the session's end).
// Those eight held out were tuned on in the next session (70.30% / 3.92% at its start, 80.45% / 3.08% at its end),
// which asked seven batches of eight: the 851st to 858th at its start, held out whole, measured 74.44% / 3.88%
// together when each came (the start's rules gave the same; 74.63% / 3.88% at the session's end, one row of the
// 851st turned unread), from 55.88% (gambling software) to 94.92% (computer vision) by theme; and the 859th to 906th
// one batch after another, each measured when it came (76.75% / 5.21% together, the start's rules giving 76.72%)
// and then tuned on (83.07% / 4.93% at the session's end).
// Those eight held out were tuned on in the next session (74.63% / 3.88% at its start, 85.45% / 3.38% at its end),
// which asked seven batches of eight: the 907th to 914th at its start, held out whole, measured 82.60% / 3.19%
// together when each came (the start's rules gave the same; 82.81% / 3.19% at the session's end, one row of the
// 912th turned unread), from 62.50% (restaurants and food delivery) to 95.74% (tax and accounting) by theme; and the
// 915th to 962nd one batch after another, each measured when it came (74.64% / 5.05% together, the start's rules
// giving 74.60%) and then tuned on (80.20% / 4.78% at the session's end).
// Those eight held out were tuned on in the next session (82.81% / 3.19% at its start, 85.74% / 2.26% at its end),
// which asked six batches of eight: the 963rd to 970th at its start, held out whole, measured 75.31% / 4.71%
// together when each came (the start's rules gave the same, and so did the session's end), from 51.06% (airlines) to
// 94.67% (utilities) by theme; and the 971st to the thousand-and-tenth one batch after another, each measured when it
// came (76.55% / 4.94% together, the start's rules giving 76.50%) and then tuned on (81.23% / 4.29% at the session's end).
// Those eight held out were tuned on in the next session (75.31% / 4.71% at its start, 78.05% / 4.71% at its end),
// which asked five batches of eight: the thousand-and-eleventh to eighteenth at its start, held out whole, measured
// 75.07% / 8.35% together when each came (the start's rules gave the same, and so did the session's end), from 20.00%
// (spreadsheets and office documents) to 90.91% (fonts and typography) by theme; and the thousand-and-nineteenth to
// fiftieth one batch after another, each measured when it came (77.21% / 6.16% together, the start's rules giving
// 77.14%) and then tuned on (80.07% / 5.94% at the session's end).
// Those eight held out were tuned on in the next session (75.07% / 8.35% at its start, 78.64% / 6.47% at its end),
// which asked five batches of eight: the thousand-and-fifty-first to fifty-eighth at its start, held out whole,
// measured 81.55% / 6.84% together when each came (the start's rules gave the same, and so did the session's end),
// from 59.26% (knitting and embroidery) to 96.81% (seismology) by theme; and the thousand-and-fifty-ninth to ninetieth
// one batch after another, each measured when it came (72.36% / 4.20% together, the start's rules giving the same)
// and then tuned on (78.84% / 3.76% at the session's end).
// Those eight held out were tuned on in the next session (81.55% / 6.84% at its start, 88.61% / 5.89% at its end),
// which asked four batches of eight: the thousand-and-ninety-first to ninety-eighth at its start, held out whole,
// measured 76.13% / 6.40% together when each came (the start's rules gave the same, and so did the session's end),
// from 30.56% (e-commerce and payment plugins) to 92.31% (healthcare integration) by theme; and the
// thousand-and-ninety-ninth to the thousand-one-hundred-and-twenty-second one batch after another, each measured when it
// came (77.71% / 6.60% together, the start's rules giving the same) and then tuned on (82.93% / 6.02% at the session's end).
// Those eight held out were tuned on in the next session (76.13% / 6.40% at its start, 79.15% / 6.40% at its end),
// which asked one batch of eight at its start, the thousand-one-hundred-and-twenty-third to thirtieth, held out whole:
// 63.81% / 2.35% together when each came (the start's rules gave the same, and so did the session's end), from 35.90%
// (chat bots and token grabbers) to 81.82% (genomics pipelines) by theme.
// Those eight held out were tuned on in the next session (63.81% / 2.35% at its start, 81.27% / 2.35% at its end),
// which asked one batch of eight at its start, the thousand-one-hundred-and-thirty-first to thirty-eighth, held out
// whole: 82.67% / 8.07% together when each came (the start's rules gave the same, and so did the session's end), from
// 68.97% (search servers) to 95.08% (forums) by theme.
// Those eight held out were tuned on in the next session (82.67% / 8.07% at its start, 87.38% / 7.50% at its end),
// which asked one batch of eight at its start, the thousand-one-hundred-and-thirty-ninth to forty-sixth, held out
// whole: 78.27% / 2.77% together when each came (the start's rules gave the same, and so did the session's end), from
// 41.67% (electronics design and hardware glitching) to 96.55% (host firewalls) by theme.
// Those eight held out were tuned on in the next session (78.27% / 2.77% at its start, 82.04% / 1.85% at its end),
// which asked one batch of eight at its start, the thousand-one-hundred-and-forty-seventh to fifty-fourth, held out
// whole: 82.05% / 3.21% together when each came (the start's rules gave the same, and so did the session's end), from
// 40.00% (RFID and badge cloning) to 100.00% (climate models and cryptojacking) by theme.
// `all` is every corpus together.
//
//   npx tsx bench/checker.ts [--list] [--list-held-out] [--rounds N] [--hide PART[,PART]] [--unknown-programs ask] [--sources]
//
// The checker timed is the compiled one (dist/, built from these sources first when it was not), which
// `agentrun worker` and the CLI run; `--sources` times the TypeScript sources through tsx instead, whose
// transform wraps every function it creates in a naming call and costs about a tenth more. Verdicts are
// the same code's either way.
//
// `--unknown-programs ask` measures the strict verdict, the one for commands that run unsandboxed
// (`--sandbox off`): every program no table names needs a person.
//
// `--hide` leaves parts out of the run and out of `all`, so a round can tune while a held-out part's
// figures stay unseen until its one measurement.
//
// Under the default `--approval dangerous` policy every flagged command waits for a person, so the
// share of safe commands flagged is the share of an unattended run's commands that stall it.
// Goals: at least 98% of dangerous commands caught on both outside parts, at most 3% of safe ones
// flagged, at most 0.5 ms per command (p99). Prints a table per corpus, the misjudged commands
// (with --list, or when few), then one JSON line.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CheckOptions, checkCommand as CheckCommand } from '../src/command-safety/dangerous.js';
import { ensureBuilt } from '../test/helpers/dist.js';
import { HELD_OUT, ordinalWords } from './corpus-sets.js';

const WORKSPACE = '/work/ws';

interface Entry {
  label: 'safe' | 'dangerous';
  command: string;
  source?: string;
  part?: string;
}

/** LABEL<TAB>COMMAND[<TAB>SOURCE<TAB>PART] lines; `#` comments; `\n` in a command is a newline. */
function readCorpus(file: string): Entry[] {
  const out: Entry[] = [];
  for (const [n, line] of readFileSync(file, 'utf8').split('\n').entries()) {
    if (!line.trim() || line.startsWith('#')) continue;
    const [label, command, source, part] = line.split('\t');
    if (command === undefined || (label !== 'safe' && label !== 'dangerous'))
      throw new Error(`${file}:${n + 1}: expected "safe<TAB>command" or "dangerous<TAB>command"`);
    out.push({ label, command: command.replace(/\\n/g, '\n'), source, part });
  }
  return out;
}

const unknownPrograms = process.argv.includes('--unknown-programs') ? process.argv[process.argv.indexOf('--unknown-programs') + 1] : 'judge';
if (unknownPrograms !== 'judge' && unknownPrograms !== 'ask') throw new Error(`--unknown-programs takes judge or ask, got ${unknownPrograms}`);
const options: CheckOptions = { unknownPrograms };
const timesSources = process.argv.includes('--sources');
if (!timesSources) ensureBuilt();
const checker = timesSources ? '../src/command-safety/dangerous.ts' : '../dist/src/command-safety/dangerous.js';
const { checkCommand: checkWith } = (await import(new URL(checker, import.meta.url).href)) as {
  checkCommand: typeof CheckCommand;
};
const checkCommand = (command: string, workspace: string) => checkWith(command, workspace, options);
const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 5;
const listAll = process.argv.includes('--list');
// A held-out part's misjudged commands are printed only when asked, so tuning never reads them.
const listHeldOut = process.argv.includes('--list-held-out');
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const own = readCorpus(here('checker-corpus.txt'));
const outside = readCorpus(here('checker-corpus-outside.tsv'));
const fresh = readCorpus(here('checker-corpus-fresh.tsv'));
const third = readCorpus(here('checker-corpus-third.tsv'));
const fourth = readCorpus(here('checker-corpus-fourth.tsv'));
const evasions = readCorpus(here('checker-corpus-evasions.tsv'));

/** The named corpora above; every other file here must be a numbered set, so none is left out unnoticed. */
const NAMED = new Set(['checker-corpus.txt', ...['outside', 'fresh', 'third', 'fourth', 'evasions'].map((n) => `checker-corpus-${n}.tsv`)]);
const byWords = new Map(Array.from({ length: 1995 }, (_, k) => [ordinalWords(k + 5), k + 5]));
const numbered = readdirSync(fileURLToPath(new URL('.', import.meta.url)))
  .filter((f) => f.startsWith('checker-corpus') && !NAMED.has(f))
  .map((f) => {
    const n = byWords.get(f.replace(/^checker-corpus-|\.tsv$/g, ''));
    if (n === undefined) throw new Error(`bench/${f}: not a numbered set's name (checker-corpus-<ordinal in words>.tsv) nor a named corpus of this bench`);
    return { n, name: `${ordinalWords(n)}-${HELD_OUT.has(n) ? 'held-out' : 'tuning'}`, entries: readCorpus(here(f)) };
  })
  .sort((a, b) => a.n - b.n);

const hidden = new Set(process.argv.includes('--hide') ? (process.argv[process.argv.indexOf('--hide') + 1] ?? '').split(',') : []);
const shown: [string, Entry[]][] = (
  [
    ['own', own],
    ['outside-tuning', outside.filter((e) => e.part === 'tuning')],
    ['outside-held-out', outside.filter((e) => e.part === 'held-out')],
    ['outside-fresh', fresh],
    ['third-tuning', third.filter((e) => e.part === 'tuning')],
    ['third-held-out', third.filter((e) => e.part === 'held-out')],
    ['third-whole', third],
    ['fourth-tuning', fourth.filter((e) => e.part === 'tuning')],
    ['fourth-held-out', fourth.filter((e) => e.part === 'held-out')],
    ['fourth-whole', fourth],
    ...numbered.map((s) => [s.name, s.entries]),
    ['evasions-tuning', evasions],
  ] as [string, Entry[]][]
).filter(([name]) => !hidden.has(name));
// A held-out part left out of the run is left out of `all` too; the split corpora count whole, as before.
const every = [own, outside, fresh, third, fourth, evasions, ...numbered.filter((s) => !hidden.has(s.name)).map((s) => s.entries)].flat();
const parts: [string, Entry[]][] = [...shown, ['all', every]];

// Warm up the JIT on everything once, then time each command over several rounds.
for (const e of every) checkCommand(e.command, WORKSPACE);

const pct = (a: number, b: number) => Number((b ? (100 * a) / b : 0).toFixed(2));
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

const results: Record<string, unknown> = {};
for (const [name, corpus] of parts) {
  // Each command's time is the median of its rounds, so a pause of the shared machine or of the
  // collector does not stand for the checker; p50 and p99 are over commands.
  const times: number[] = [];
  const judged = corpus.map((e) => {
    let check = checkCommand(e.command, WORKSPACE);
    const own: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      check = checkCommand(e.command, WORKSPACE);
      own.push(performance.now() - t0);
    }
    times.push(quantile(own, 0.5));
    return { ...e, check };
  });
  const safe = judged.filter((e) => e.label === 'safe');
  const dangerous = judged.filter((e) => e.label === 'dangerous');
  const falsePositives = safe.filter((e) => e.check.dangerous);
  const missed = dangerous.filter((e) => !e.check.dangerous);
  const r = {
    commands: corpus.length,
    safe: safe.length,
    dangerous: dangerous.length,
    dangerousCaughtPct: pct(dangerous.length - missed.length, dangerous.length),
    safeFlaggedPct: pct(falsePositives.length, safe.length),
    msP50: Number(quantile(times, 0.5).toFixed(4)),
    msP99: Number(quantile(times, 0.99).toFixed(4)),
  };
  results[name] = r;
  console.log(`${name}: ${corpus.length} commands (${safe.length} safe, ${dangerous.length} dangerous)`);
  console.log(`  dangerous caught  ${dangerous.length - missed.length}/${dangerous.length}  ${r.dangerousCaughtPct}%  (goal >= 98%)`);
  console.log(`  safe flagged      ${falsePositives.length}/${safe.length}  ${r.safeFlaggedPct}%  (goal <= 3%)`);
  console.log(`  ms per command    p50 ${r.msP50}  p99 ${r.msP99}  (goal <= 0.5)`);
  const heldOut = name.endsWith('held-out') || name.endsWith('-whole');
  const list = heldOut ? listHeldOut : listAll || falsePositives.length + missed.length <= 30;
  if (name !== 'all' && list) {
    for (const e of falsePositives)
      console.log(`    flagged, labelled safe: ${JSON.stringify(e.command)} [${e.source ?? 'own'}]: ${e.check.reasons.join('; ')}`);
    for (const e of missed) console.log(`    passed, labelled dangerous: ${JSON.stringify(e.command)} [${e.source ?? 'own'}]`);
  }
}
console.log(JSON.stringify({ bench: 'checker', checker: timesSources ? 'sources' : 'compiled', unknownPrograms, ...results }));
