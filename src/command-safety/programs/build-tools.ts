// Builders, test runners, linters and formatters: repeatable when they only build, test or check
// (`cargo test`, `make`, `vitest run`, `prettier --check`), not when they fix, install or deploy.
// cargo's publishing commands are dangerous, as every registry's are (packages.ts).
import { danger, hasFlag, operands, type Rule, type RuleTable } from '../state.js';
import { dryRun } from './packages.js';

const CARGO_READ = ['test', 'build', 'check', 'clippy', 'doc', 'fmt', 'tree', 'metadata', 'bench', 'version', 'nextest', 'verify-project'];
const GO_READ = ['test', 'build', 'vet', 'list', 'version', 'doc', 'fmt'];
const MAKE_UNSAFE = new Set(['install', 'uninstall', 'deploy', 'publish', 'release', 'push', 'upload', 'dist', 'distclean']);
const JVM_GOAL = /^(test|compile|verify|package|build|check|clean|assemble|validate|dependencies|tasks|lint)$/;
const CHECK_FLAGS = ['--check', '-c', '--diff', '--check-only', '--list-different', '-l'];

const cargo: Rule = ({ args, st }) => {
  const sub = operands(args)[0]?.text;
  if ((sub === 'publish' && !dryRun(args) && !hasFlag(args, 'n')) || sub === 'yank' || sub === 'owner' || sub === 'login')
    return danger(st, `publishes to a package registry or logs in to one (cargo ${sub})`);
  if (!CARGO_READ.includes(sub ?? '') || args.some((a) => a.text === '--fix')) st.repeatable = false;
};

const go: Rule = ({ args, st }) => {
  const sub = operands(args)[0]?.text;
  if (!GO_READ.includes(sub ?? '') && !(sub === 'env' && !hasFlag(args, 'w'))) st.repeatable = false;
};

const make: Rule = ({ args, st }) => {
  const targets = operands(args, /^-(C|f|j|l|o|W|I)$/).filter((a) => !a.text.includes('='));
  if (targets.some((t) => MAKE_UNSAFE.has(t.text))) st.repeatable = false;
};

/** Maven's and Gradle's goals and tasks that upload artifacts (`deploy`, `publish`, `:lib:publishToSonatype`, `release:perform`). */
const JVM_PUBLISH =
  /^(.*:)?(deploy(:.*)?|publish\w*|upload\w*|release:(perform|stage)|closeAndReleaseRepository|closeAndReleaseSonatypeStagingRepository|jib|jib:build)$/;
/**
 * Gradle's tasks that upload, read by the words of their camel-cased name (a project path before
 * `:` aside), whose first word is the verb by Gradle's habit: publish, upload, deploy, release or
 * push first (`publishToSonatype`, `uploadArchives`, `deployToS3`, `releaseToCentral`, `pushImage`;
 * not `releaseNotes` or `releaseCheck`, which write or check); a plugin's name before its verb,
 * which is then last (`gitPublishPush`, `dockerPush`, `appengineDeploy`, `herokuPublish`); a forge's
 * or a publisher's release (`githubRelease`, `jreleaserFullRelease`). A variant's build
 * (`assembleRelease`, `bundleRelease`) or a step before an upload (`prepareDocsForUploadToGhPages`)
 * sends nothing; `publishToMavenLocal` and its kind write the local Maven repository only.
 */
function gradlePublishes(task: string): boolean {
  const name = task.replace(/^.*:/, '');
  if (/ToMavenLocal$/.test(name)) return false;
  const words = name.split(/(?=[A-Z])/).map((w) => w.toLowerCase());
  const [first, last] = [words[0]!, words.at(-1)!];
  if (/^(publish|upload|deploy|release|push)$/.test(first)) return !/^(notes|changelog|check|verify|info|version)$/.test(last);
  return (
    JVM_PUBLISH.test(name) ||
    /^(push|publish|upload|deploy)$/.test(last) ||
    (last === 'release' && /^(github|gitlab|gitea|jreleaser|bintray|sonatype|nexus)$/.test(first))
  );
}
/** Options whose value is the next word: a task excluded (`-x publish`), a file, a directory, a project list. */
const GRADLE_VALUED = /^(-x|--exclude-task|-p|--project-dir|-b|--build-file|-c|--settings-file|-I|--init-script|-g|--gradle-user-home)$/;
const MAVEN_VALUED =
  /^(-f|--file|-s|--settings|-gs|--global-settings|-pl|--projects|-rf|--resume-from|-T|--threads|-P|--activate-profiles|-t|--toolchains|-l|--log-file)$/;

const jvm: Rule = ({ prog, args, st }) => {
  const gradle = /^gradlew?$/.test(prog);
  const goals = operands(args, gradle ? GRADLE_VALUED : MAVEN_VALUED);
  const publish = goals.find((g) => (gradle ? gradlePublishes(g.text) : JVM_PUBLISH.test(g.text) && !/^publishToMavenLocal$/.test(g.text.replace(/^.*:/, ''))));
  if (publish) danger(st, `publishes to a package registry (${prog} ${publish.text})`);
  // Spring Boot's image build pushes the image it built when told to publish.
  const pushes = args.find((a) => /^-Dspring-boot\.build-image\.publish=true$|^--publishImage$/.test(a.text));
  if (pushes) danger(st, `pushes an image to a registry (${prog} ${pushes.text})`);
  if (!goals.length || goals.some((g) => !JVM_GOAL.test(g.text.replace(/^:/, '')))) st.repeatable = false;
};

const formatter: Rule = ({ args, st }) => {
  if (!args.some((a) => CHECK_FLAGS.includes(a.text))) st.repeatable = false;
};

/** Repeatable only with this first operand (`ruff check`, `playwright test`). */
const onlyWith =
  (sub: string, alsoFlag?: string): Rule =>
  ({ args, st }) => {
    if (operands(args)[0]?.text !== sub && !(alsoFlag && args.some((a) => a.text === alsoFlag))) st.repeatable = false;
  };

export const BUILD_TOOL_RULES: RuleTable = {
  programs: {
    cargo,
    go,
    make,
    gmake: make,
    ninja: make,
    mvn: jvm,
    mvnw: jvm,
    gradle: jvm,
    gradlew: jvm,
    dotnet: ({ args, st }) => {
      const ops = operands(args).map((a) => a.text);
      if (ops[0] === 'nuget' && ops[1] === 'push') danger(st, 'publishes to a package registry (dotnet nuget push)');
      if (!['build', 'test', '--version', '--info'].includes(operands(args)[0]?.text ?? args[0]?.text ?? '')) st.repeatable = false;
    },
    cmake: ({ args, st }) => {
      if (!args.some((a) => a.text === '--build')) st.repeatable = false;
    },
    ruff: ({ args, st }) => {
      if (operands(args)[0]?.text !== 'check' || args.some((a) => a.text === '--fix')) st.repeatable = false;
    },
    black: formatter,
    isort: formatter,
    prettier: formatter,
    eslint: ({ args, st }) => {
      if (args.some((a) => a.text.startsWith('--fix'))) st.repeatable = false;
    },
    vitest: onlyWith('run', '--run'),
    playwright: onlyWith('test'),
  },
};
