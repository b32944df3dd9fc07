/**
 * Signals and host system state. A vault checkpoint cannot undo a killed process, a changed
 * clock or hostname, a network route or an unmounted file system, so these need a person
 * (`system`): kill of anything but this line's own jobs, date -s, hostname NAME, sysctl -w,
 * ip … add/set/del, systemctl start/stop … The same programs only reading state stay allowed.
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { display, literal, type Word } from '../words';

function changes(cmd: Cmd, what: string): void {
  cmd.add(['system'], `${what} changes the host, which a checkpoint cannot undo`);
}

function reads(cmd: Cmd, what = `${cmd.prog} only reads the host's state`): void {
  cmd.add(['read_only'], what);
  for (const arg of cmd.args) cmd.maybePath(arg, 'read');
}

/** The words that are not options (an option's value counts as an option here). */
function operands(cmd: Cmd, shortWithValue = '', longWithValue: string[] = []): Word[] {
  return parseOpts(cmd.args, shortWithValue, longWithValue).operands;
}

/**
 * kill [-s SIG | -n NUM | -SIG] [--] TARGET…: one signal option, then targets. A target is this
 * line's own job (%1, $!) or a host process: a pid, `0` (the whole process group, which holds
 * avfs itself), `-PGID` (a process group) or `-1` (every process the user may signal).
 */
const kill: Handler = (cmd) => {
  const first = cmd.vals[0];
  if (first === '-l' || first === '-L' || first === '--list' || first === '--table' || first?.startsWith('--list=')) {
    cmd.add(['read_only'], 'kill -l lists signals');
    return;
  }
  let at = 0;
  if (first === '-s' || first === '-n' || first === '--signal') at = 2;
  else if (first !== undefined && first !== null && first !== '--' && /^-./.test(first)) at = 1;
  if (cmd.vals[at] === '--') at++;
  const targets = cmd.args.slice(at);
  if (targets.length === 0) {
    cmd.add(['read_only'], 'kill without a target does nothing');
    return;
  }
  const own = (word: Word) => (literal(word) ?? '').startsWith('%') || word.raw === '$!' || word.raw === '"$!"' || word.raw === '${!}';
  const foreign = targets.filter((word) => !own(word));
  if (foreign.length === 0) {
    cmd.add(['mutating'], 'kill stops a job this command line started');
    return;
  }
  for (const word of foreign) {
    const target = literal(word);
    if (target === '-1') cmd.add(['system'], 'kill -1 signals every process the user may signal');
    else if (target === '0') cmd.add(['system'], 'kill 0 signals the whole process group, avfs included');
    else if (target !== null && /^-\d+$/.test(target)) cmd.add(['system'], `kill ${target} signals the process group ${target.slice(1)}`);
    else cmd.add(['system'], `kill signals the host process ${display(word)}`);
  }
};

const killByName: Handler = (cmd) => {
  if (cmd.vals.length === 1 && /^(-V|--version|-h|--help|-l|--list)$/.test(cmd.vals[0] ?? '')) {
    cmd.add(['read_only'], `${cmd.prog} ${cmd.vals[0]} only prints`);
    return;
  }
  cmd.add(['system'], `${cmd.prog} signals host processes by name or pattern, not only this line's own`);
};

/** date: printing is harmless; -s/--set or a MMDDhhmm operand sets the host clock. */
const date: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'dfrsI', ['date', 'file', 'reference', 'set', 'iso-8601', 'rfc-3339', 'resolution']);
  const setting = opts.values.has('s') || opts.values.has('set') || opts.operands.some((word) => !(literal(word) ?? '+').startsWith('+'));
  for (const key of ['f', 'file', 'r', 'reference']) for (const word of opts.values.get(key) ?? []) cmd.path(word, 'read');
  if (setting) changes(cmd, 'date -s (setting the clock)');
  else cmd.add(['read_only'], 'date only prints');
};

/** hostname: printing is harmless; an operand, -F FILE or -b sets the host name. */
const hostname: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'F', ['file']);
  if (opts.operands.length > 0 || opts.values.has('F') || opts.values.has('file') || opts.flags.has('b') || opts.flags.has('boot')) changes(cmd,
      'hostname NAME');
  else cmd.add(['read_only'], 'hostname only prints');
};

/**
 * `tool VERB …`: no verb or a `reading` verb reads; a `getSet` verb reads alone and sets with a
 * value (`hostnamectl hostname` vs `hostnamectl hostname NAME`); any other verb changes the host.
 */
function verbs(reading: RegExp, getSet?: RegExp): Handler {
  return (cmd) => {
    const rest = operands(cmd);
    const verb = rest[0] ? literal(rest[0]) : undefined;
    if (verb === null) {
      cmd.add(['unknown'], `${cmd.prog} with a computed command could change anything`);
      return;
    }
    const informational = cmd.vals.some((v) => v === '--version' || v === '--help' || v === '-h');
    if (verb === undefined || informational || reading.test(verb) || (getSet?.test(verb) && rest.length === 1)) reads(cmd);
    else changes(cmd, `${cmd.prog} ${verb}`);
  };
}

/** `tool …` changes the host when any operand is one of `changing` (nmcli con up, tc qdisc add). */
function anyVerb(changing: RegExp): Handler {
  return (cmd) => {
    const rest = operands(cmd).map((word) => literal(word));
    if (rest.some((word) => word === null)) cmd.add(['unknown'], `${cmd.prog} with a computed argument could change anything`);
    else if (rest.some((word) => changing.test(word!))) changes(cmd, `${cmd.prog} ${rest.join(' ')}`);
    else reads(cmd);
  };
}

/** sysctl: reading keys is harmless; -w, -p/--load, --system or `key=value` writes kernel settings. */
const sysctl: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, '', ['pattern']);
  const loads = cmd.vals.some((value) => value !== null && /^(-[a-zA-Z]*[wpf]|--write|--load(=.*)?|--system)$/.test(value));
  if (loads || opts.operands.some((word) => (literal(word) ?? '=').includes('='))) changes(cmd, 'sysctl -w (kernel settings)');
  else cmd.add(['read_only'], 'sysctl only reads kernel settings');
};

const IP_CHANGES = new RegExp(
  [
    String.raw`^(add|del|delete|change|chg|replace|set|flush|append|prepend|exec|attach|detach|save|restore|up|down|identify`,
    String.raw`|lnksetup|update|move|get-rules?)$`,
  ].join(''),
);

/** ip OBJECT [COMMAND]: show/list reads; add, set, del, route changes … change the host's network. */
const ip: Handler = (cmd) => {
  // ip's options are single-dash words (-br, -json, -netns NAME, -batch FILE).
  const positional: Word[] = [];
  for (let at = 0; at < cmd.args.length; at++) {
    const option = cmd.vals[at];
    if (option === null || option === undefined || !option.startsWith('-')) {
      positional.push(...cmd.args.slice(at));
      break;
    }
    if (/^-(b|batch|force)$/.test(option)) {
      changes(cmd, 'ip -batch');
      return;
    }
    if (/^-(n|netns|f|family|rc|rcvbuf|l|loops)$/.test(option)) at++;
  }
  const words = positional.map((word) => literal(word));
  if (words.some((word) => word === null)) {
    cmd.add(['unknown'], 'ip with a computed argument could change anything');
    return;
  }
  if (words[0] === 'netns' && words[1] === 'exec') {
    cmd.add(['privilege'], 'ip netns exec runs a command in another network namespace');
    if (positional.length > 3) cmd.nested(positional.slice(3));
    return;
  }
  const verb = words.slice(1).find((word) => IP_CHANGES.test(word!));
  if (verb) changes(cmd, `ip ${words[0]} ${verb}`);
  else cmd.add(['read_only'], `ip ${words[0] ?? ''} only shows the network`);
};

/** ifconfig [-a] [IFACE] reads; anything more configures an interface. */
const ifconfig: Handler = (cmd) => {
  const rest = operands(cmd);
  if (rest.length <= 1) cmd.add(['read_only'], 'ifconfig only shows interfaces');
  else changes(cmd, 'ifconfig IFACE …');
};

/** route and arp: listing is harmless, add/del/-s/-d change the host's tables. */
const routeLike: Handler = (cmd) => {
  const changing = cmd.vals.some((v) => v !== null && /^(add|del|delete|flush|replace|change|-s|-d|--set|--delete|-f|--file)$/.test(v));
  if (changing) changes(cmd, `${cmd.prog} add/del`);
  else reads(cmd);
};

/** ethtool IFACE reads; -s/-K/… change the device. */
const ethtool: Handler = (cmd) => {
  const changing = cmd.vals.some((v) =>
      v !== null && /^(-[sKAGCLEfpu]|--change|--features|--offload|--pause|--set-\w+|--flash|--change-eeprom|--reset|--identify)$/.test(v));
  if (changing) changes(cmd, 'ethtool -s');
  else cmd.add(['read_only'], 'ethtool only shows a device');
};

/** hwclock: -r/--show reads; -w/-s/--set/--systohc/--hctosys/--adjust set clocks. */
const hwclock: Handler = (cmd) => {
  if (cmd.vals.some((v) => v !== null && /^(-w|-s|-a|--set|--systohc|--hctosys|--adjust|--systz|--predict|--update-drift)$/.test(v))) changes(cmd,
      'hwclock --set');
  else cmd.add(['read_only'], 'hwclock only reads the clock');
};

/** fusermount -u / -z unmounts a FUSE file system, the workspace's own mount included. */
const fusermount: Handler = (cmd) => {
  if (cmd.vals.length === 1 && /^(-V|--version|-h|--help)$/.test(cmd.vals[0] ?? '')) {
    cmd.add(['read_only'], `${cmd.prog} ${cmd.vals[0]} only prints`);
    return;
  }
  cmd.add(['system'], `${cmd.prog} mounts or unmounts a file system (the workspace mount too), which a checkpoint cannot undo`);
  for (const word of operands(cmd, 'o')) cmd.path(word, 'read', 'unmounts');
};

/** mount with no arguments and findmnt only list mounts; mounting needs privilege. */
const mount: Handler = (cmd) => {
  if (cmd.args.length === 0 || (cmd.args.length === 1 && /^(-l|--show-labels|-V|--version|-h|--help)$/.test(cmd.vals[0] ?? ''))) {
    cmd.add(['read_only'], 'mount lists mounted file systems');
    return;
  }
  cmd.add(['privilege'], `${cmd.prog} changes the host's mounts`);
};

/**
 * avfs itself, from inside a run: it approves and denies runs, sets rules, quotas, mounts and
 * hosts, and reads every vault. A run that drove it would judge itself, so only its version and
 * help are allowed.
 */
const avfs: Handler = (cmd) => {
  if (cmd.args.length === 1 && ['--version', '-V', '--help', '-h', 'help'].includes(cmd.vals[0] ?? '')) {
    cmd.add(['read_only'], 'avfs prints its version or help');
    return;
  }
  cmd.add(['privilege'], 'avfs controls the policy, approvals, rules and vaults from outside the run: a run may not drive it');
};

export const HOST_TOOLS: Record<string, Handler> = {
  avfs,
  kill,
  pkill: killByName,
  killall: killByName,
  killall5: killByName,
  skill: killByName,
  snice: killByName,
  date,
  hostname,
  hostnamectl: verbs(/^(status)$/, /^(hostname|icon-name|chassis|deployment|location)$/),
  timedatectl: verbs(/^(status|show|list-timezones|timesync-status|show-timesync)$/),
  localectl: verbs(/^(status|list-locales|list-keymaps|list-x11-keymap-\w+)$/),
  systemctl: verbs(/^(status|show|cat|help|list-\w+|is-active|is-enabled|is-failed|is-system-running|get-default|show-environment)$/),
  service: (cmd) => (cmd.vals.includes('--status-all') || cmd.vals[1] === 'status' ? reads(cmd) : changes(cmd,
      `service ${display(cmd.args[0] ?? { raw: '', segs: [] })}`)),
  loginctl: verbs(/^(list-\w+|show-\w+|session-status|user-status|seat-status)$/),
  resolvectl: verbs(/^(status|statistics|monitor|show-cache|show-server-state|query|service|openpgp|tlsa)$/,
      /^(dns|domain|default-route|llmnr|mdns|dnssec|dnsovertls|nta|log-level)$/),
  nmcli: anyVerb(/^(up|down|add|modify|mod|delete|del|reload|load|import|connect|disconnect|set|reapply|on|off|hotspot|edit|clone|set-hostname)$/),
  sysctl,
  ip,
  ifconfig,
  route: routeLike,
  arp: routeLike,
  tc: anyVerb(/^(add|del|delete|change|replace|link|flush)$/),
  ethtool,
  hwclock,
  fusermount,
  fusermount3: fusermount,
  mount,
  findmnt: (cmd) => reads(cmd),
  gsettings: verbs(/^(get|list-\w+|range|describe|writable|monitor|help)$/),
  dconf: verbs(/^(read|list|dump|watch|help)$/),
  defaults: verbs(/^(read|read-type|domains|find|help)$/),
  chronyc: verbs(/^(tracking|sources|sourcestats|activity|ntpdata|clients|serverstats|rtcdata|smoothing|waitsync|help)$/),
  ntpdate: (cmd) => {
    cmd.add(['networked'], 'ntpdate asks a time server');
    if (!cmd.vals.includes('-q')) changes(cmd, 'ntpdate (setting the clock)');
  },
  rtcwake: (cmd) => changes(cmd, 'rtcwake'),
  rfkill: verbs(/^(list|event|help)$/),
  xrandr: (cmd) => (cmd.args.length === 0 || cmd.vals.every(
      (value) => value !== null && /^(-q|--query|--current|--listmonitors|--listactivemonitors|--verbose|--version|-h|--help)$/.test(value)) ? reads(
          cmd) : changes(cmd, 'xrandr')),
  iw: anyVerb(/^(set|del|add|connect|disconnect|join|leave|switch|reg)$/),
  brctl: anyVerb(/^(add\w*|del\w*|set\w*|stp|hairpin)$/),
  wg: verbs(/^(show|showconf|genkey|genpsk|pubkey|help)$/),
  'wg-quick': verbs(/^(strip)$/),
  domainname: (cmd) => (cmd.args.length === 0 ? reads(cmd) : changes(cmd, 'domainname NAME')),
  nisdomainname: (cmd) => (cmd.args.length === 0 ? reads(cmd) : changes(cmd, 'nisdomainname NAME')),
  loadkeys: (cmd) => changes(cmd, 'loadkeys'),
  setxkbmap: (cmd) => (cmd.vals.some((value) => value === '-query' || value === '-print') ? reads(cmd) : changes(cmd, 'setxkbmap')),
  xdotool: (cmd) => cmd.add(['system'], 'xdotool types and clicks into other programs on the host'),
  ydotool: (cmd) => cmd.add(['system'], 'ydotool types and clicks into other programs on the host'),
  swapon: (cmd) => (cmd.args.length === 0 || cmd.vals.some((v) => v === '--show' || v === '-s') ? reads(cmd) : cmd.add(['privilege'],
      'swapon changes the host\'s swap')),
};
