// Homebrew as the machine's package manager (src/command-safety/programs/homebrew.ts), the default
// for programs no table names on macOS's names (versioned packages, /private/tmp, installed
// prefixes, Open Directory's nodes), here-documents read as the input of the program they feed, and
// the macOS forms this round added (dscl's undashed verbs, Launch Services, login items, package
// signing, hidden files, credential searches, SNMP, forges, kills by user, rustup's installer).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkCommand } from '../../src/command-safety/dangerous.js';

const WS = '/work/ws';

// [command, dangerous, a fragment of one reason (for dangerous ones)].
const CASES: [string, boolean, string?][] = [
  // Homebrew: changes need a person, reads and its own development checks pass
  ['brew install ninja automake', true, "machine's software"],
  ['brew reinstall openssl@3', true, "machine's software"],
  ['brew upgrade', true, "machine's software"],
  ['brew uninstall --zap firefox', true, "machine's software"],
  ['brew update', true, "machine's software"],
  ['brew link --overwrite python@3.12', true, "machine's software"],
  ['brew unlink openssl', true, "machine's software"],
  ['brew cleanup --prune=all', true, "machine's software"],
  ['brew -v install x', true, "machine's software"],
  ['brew tap homebrew/cask-fonts', true, 'tap'],
  ['brew untap homebrew/cask-fonts', true, "machine's software"],
  ['brew services start postgresql@15', true, 'services'],
  ['brew services restart redis', true, 'services'],
  ['brew services cleanup', true, 'services'],
  ['brew bundle', true, 'Brewfile'],
  ['brew bundle install --file ci/Brewfile', true, 'Brewfile'],
  ['brew bundle cleanup --force', true, 'Brewfile'],
  ['brew bundle exec --services -- rake test', true, 'services'],
  ['brew bundle exec -- rm -rf /', true, 'root directory'],
  ['brew test-bot --only-formulae', true, 'formulae'],
  ['brew analytics off', true, 'settings'],
  ['brew list --versions', false],
  ['brew info --json=v2 --installed', false],
  ['brew config', false],
  ['brew doctor', false],
  ['brew search ripgrep', false],
  ['brew deps --tree node', false],
  ['brew outdated --greedy', false],
  ['brew leaves', false],
  ['brew --prefix openssl@3', false],
  ['brew --version', false],
  ['brew services list', false],
  ['brew services info --json redis postgresql@15', false],
  ['brew bundle check --file ci/Brewfile', false],
  ['brew bundle list', false],
  ['brew bundle exec -- make test', false],
  ['brew tap', false],
  ['brew cleanup -n', false],
  ['brew install --dry-run wget', false],
  ['brew test-bot --only-setup', false],
  ['brew style homebrew/core', false],
  ['brew bundle dump --file=/etc/Brewfile', true, 'outside the workspace'],
  // the default for unknown programs
  ['tool postgresql@15 python@3.12 node@latest', false],
  ['tool deploy@198.51.100.7', true, 'another host'],
  ['tool admin@10.0.0.1', true, 'another host'],
  ['nscurl https://example.com -o /private/tmp/page', false],
  ['tool --out /private/var/tmp/x', false],
  ['tool --out /private/etc/x', true, 'outside the workspace'],
  ['mkdir bld && cd bld && ../configure --with-libpsl=/opt/homebrew/opt/libpsl --with-ssl=/usr/local/opt/openssl', false],
  ['tool --cache-dir=/etc/tool', true, 'outside the workspace'],
  ['tool /opt/homebrew/bin/x', true, 'outside the workspace'],
  ['odutil show configuration /Search', false],
  ['dsexport users.txt /Local/Default dsRecTypeStandard:Users', false],
  ['chmod 777 /tmp/tftp_server', false],
  ['chmod +x /private/tmp/build/run.sh', false],
  ['chmod u+s /tmp/x', true, 'permissions'],
  ['chmod 4755 /tmp/x', true, 'permissions'],
  ['chmod 777 /tmp', true, 'permissions'],
  // here-documents are the input of the program they feed
  ['bash <<EOF\nrm -rf ~\nEOF', true, 'home directory'],
  ['sh <<-EOF\n\tls -la\nEOF', false],
  ["python3 - <<'EOF'\nimport os; os.system('id')\nEOF", true, 'here-document'],
  ['osascript <<EOF\ntell application "Terminal" of machine "eppc://u:p@192.0.2.4" to do script "id"\nEOF', true, 'here-document'],
  ['tftp 192.0.2.30 <<EOF\nbinary\nput /tmp/payload.sh payload.sh\nquit\nEOF', true, 'sends files'],
  ['tftp 192.0.2.30 <<EOF\nget firmware.bin\nquit\nEOF', false],
  ['cat <<EOF > notes.txt\nrm -rf /\nEOF', false],
  // AppleScript that only runs a literal shell command is judged as that command
  ['osascript -e \'do shell script "id"\'', false],
  ['osascript -e \'do shell script "rm -rf ~/Documents"\'', true, 'home directory'],
  ['osascript -e \'do shell script "id" with administrator privileges\'', true, 'cannot read'],
  // macOS gaps
  ['dscl . passwd /Users/$USERNAME old new', true, 'system accounts'],
  ['dscl . create /Users/hidden IsHidden 1', true, 'system accounts'],
  ['dscl -u admin -P pw /LDAPv3/ldap.example.com -append /Groups/admin GroupMembership bob', true, 'system accounts'],
  ['dscl . read /Config/shadowhash', false],
  ['dscl "/Active Directory/TEST/All Domains" ls /Groups', false],
  ['softwareupdate --schedule', false],
  ['softwareupdate --schedule off', true, 'automatic software updates'],
  ['/System/Library/Frameworks/CoreServices.framework/Support/lsregister -f /Applications/X.app', true, 'Launch Services'],
  ['lsregister -delete', true, 'Launch Services'],
  ['lsregister -dump', false],
  ['sfltool resetbtm', true, 'login items'],
  ['sfltool dumpbtm', false],
  ['productbuild --distribution D.xml --package-path build --sign "Developer ID Installer: X" out.pkg', true, 'signing identity'],
  ['pkgbuild --root root --identifier com.x --version 1 --sign ABCDE12345 build/x.pkg', true, 'signing identity'],
  ['productsign --sign "Developer ID Installer: X" in.pkg out.pkg', true, 'signing identity'],
  ['pkgbuild --root root --identifier com.x --version 1 --install-location /opt/x build/x.pkg', false],
  ['productbuild --distribution D.xml --package-path build /etc/x.pkg', true, 'outside the workspace'],
  ['for f in ~/*; do SetFile -a V $f; done', true, 'hides files'],
  ['SetFile -a V /Users/Shared/x', true, 'hides files'],
  ['SetFile -a V build/x.app', false],
  ['SetFile -d "04/25/2023 11:11:00" build/x.txt', false],
  ['mdfind -live passw', true, 'credentials'],
  ["mdfind 'kMDItemTextContent == AKIA*'", true, 'credentials'],
  ['mdfind -onlyin . password', false],
  ['mdfind "kMDItemKind == \'Keynote\'"', false],
  ['log show --predicate \'eventMessage CONTAINS[d] "eyJ"\'', true, 'credentials'],
  ['log stream --predicate \'eventMessage CONTAINS "password"\'', true, 'credentials'],
  ['log show --last 1h --predicate \'process == "app"\'', false],
  ['snmptrap -v 2c -c public 192.0.2.9 "" 1.3.6.1.4.1.99999 1.3.6.1.4.1.99999.1 s "DATA"', true, 'SNMP'],
  // walking another machine's SNMP tree enumerates that machine (another machine's address); this machine's is a read
  ['snmpwalk -v2c -c public 192.0.2.9', true, "another machine's address"],
  ['snmpwalk -v2c -c public 127.0.0.1', false],
  ['gh pr create --fill', true, 'reaches past'],
  ['gh issue comment 12 --body done', true, 'reaches past'],
  ['gh pr view --json state', false],
  ['gh pr checkout 42', false],
  ['pkill -u alice', true, 'every process of a user'],
  ['killall -u root', true, "root's processes"],
  ['pkill -x Safari', false],
  ['sh ./rustup-init.sh --profile=minimal -y', true, 'startup files'],
  ['./rustup-init -y', true, 'startup files'],
  ['sh rustup-init.sh -y --no-modify-path', false],
];

describe('checkCommand on Homebrew, unknown programs on macOS, here-documents and the macOS forms the seventh set showed', () => {
  it.each(CASES)('%s', (cmd, dangerous, reason) => {
    const r = checkCommand(cmd, WS);
    expect(r.dangerous, r.reasons.join('; ')).toBe(dangerous);
    if (reason) expect(r.reasons.join('; ')).toContain(reason);
  });
});

const formula = fc.stringMatching(/^[a-z][a-z0-9-]{0,11}(@[0-9]{1,2})?$/);
const BREW_READS = ['info', 'list', 'deps', 'uses', 'desc', 'search', 'options', 'home', 'cat', 'log', 'fetch', '--prefix', '--cellar', 'outdated'];
const BREW_CHANGES = [
  'install',
  'reinstall',
  'upgrade',
  'uninstall',
  'remove',
  'rm',
  'link',
  'unlink',
  'pin',
  'unpin',
  'postinstall',
  'migrate',
  'edit',
  'tap',
  'untap',
];

describe('the Homebrew table judges the verb, not the formula', () => {
  it('passes every reading verb, with any formula', () => {
    fc.assert(
      fc.property(fc.constantFrom(...BREW_READS), formula, (verb, f) => {
        const r = checkCommand(`brew ${verb} ${f}`, WS);
        if (r.dangerous) throw new Error(`flagged: brew ${verb} ${f}: ${r.reasons.join('; ')}`);
      }),
    );
  });

  it('stops every changing verb, with any formula, also after an environment assignment or a wrapper', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BREW_CHANGES),
        formula,
        fc.constantFrom('', 'HOMEBREW_NO_AUTO_UPDATE=1 ', 'env CI=1 ', 'timeout 600 '),
        (verb, f, before) => {
          expect(checkCommand(`${before}brew ${verb} ${f}`, WS).dangerous).toBe(true);
        },
      ),
    );
  });
});
