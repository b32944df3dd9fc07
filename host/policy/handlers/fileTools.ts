/** Files and text: readers, writers, deleters, find, sed, awk, archives, dd, chmod. */
import { posix } from 'node:path';
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { dropPrefix, literal, literalPrefix, litWord, type Word } from '../words';

/**
 * Judges option values: those named in `writes` are files written (`-o out`, `--output=out`),
 * any other value that looks like a path (absolute, ~, ..) is read.
 */
function optionPaths(cmd: Cmd, values: Map<string, Word[]>, writes: string[] = []): void {
  for (const [key, words] of values) {
    for (const word of words) {
      if (writes.includes(key)) cmd.path(word, 'write');
      else cmd.maybePath(word, 'read');
    }
  }
}

/** Every operand is read; `skip` leading operands are not paths (a pattern, a mode); `writes` name output options. */
function reader(shortWithValue = '', longWithValue: string[] = [], skip = 0, writes: string[] = []): Handler {
  return (cmd) => {
    const opts = parseOpts(cmd.args, shortWithValue, longWithValue);
    cmd.add(['read_only'], `${cmd.prog} only reads`);
    optionPaths(cmd, opts.values, writes);
    opts.operands.slice(skip).forEach((word) => cmd.path(word, 'read'));
    if (opts.operands.length === 0) cmd.passesInput();
  };
}

/** Reads stdin or files; output carries input taint (sort, head, tr …). */
function filter(shortWithValue = '', longWithValue: string[] = [], skip = 0, writes: string[] = []): Handler {
  const base = reader(shortWithValue, longWithValue, skip, writes);
  return (cmd) => {
    base(cmd);
    cmd.passesInput();
  };
}

function writer(categories: ('mutating' | 'destructive')[], verb: string, shortWithValue = '', longWithValue: string[] = [], skip = 0): Handler {
  return (cmd) => {
    const opts = parseOpts(cmd.args, shortWithValue, longWithValue);
    optionPaths(cmd, opts.values);
    cmd.add(categories, `${verb} files`);
    opts.operands.slice(skip).forEach((word) => cmd.path(word, 'write', verb));
  };
}

/** Patterns (grep, rg): the first operand is the pattern unless -e/-f gave it. */
function searcher(shortWithValue: string, longWithValue: string[]): Handler {
  return (cmd) => {
    const opts = parseOpts(cmd.args, shortWithValue, longWithValue);
    cmd.add(['read_only'], `${cmd.prog} only reads`);
    for (const [key, ws] of opts.values) if (['f', 'file', 'exclude-from', 'ignore-file'].includes(key)) ws.forEach((word) => cmd.path(word, 'read'));
    if (cmd.prog === 'rg' && (opts.flags.has('pre') || opts.values.has('pre') || opts.values.has('hostname-bin'))) {
      cmd.add(['code_execution', 'unknown'], 'rg --pre runs another program on every file');
    }
    const patternGiven = opts.values.has('e') || opts.values.has('f') || opts.values.has('regexp') || opts.values.has('file');
    const files = patternGiven || cmd.prog === 'fd' ? opts.operands : opts.operands.slice(1);
    files.forEach((word) => cmd.path(word, 'read'));
    if (files.length === 0 && cmd.prog !== 'rg' && cmd.prog !== 'ag' && cmd.prog !== 'ack' && cmd.prog !== 'fd') cmd.passesInput();
    if (cmd.prog === 'fd' && (opts.values.has('x') || opts.values.has('exec') || opts.values.has('X') || opts.values.has('exec-batch'))) {
      cmd.add(['code_execution', 'unknown'], 'fd --exec runs another program');
    }
    if (opts.flags.has('l') || opts.flags.has('files-with-matches') || cmd.prog === 'fd' || opts.flags.has('files')) cmd.outputsWorkspacePaths = true;
  };
}

const echo: Handler = (cmd) => {
  cmd.add(['read_only'], `${cmd.prog} only prints`);
  let args = cmd.args;
  // printf -v NAME sets a variable instead of printing.
  if (cmd.prog === 'printf' && cmd.vals[0] === '-v' && args[1]) {
    cmd.assignsUnknown([args[1]], 'printf -v');
    return;
  }
  let escapes = false;
  while (args.length > 0 && /^-[neE]+$/.test(literal(args[0]!) ?? '')) {
    if (literal(args[0]!)!.includes('e')) escapes = true;
    args = args.slice(1);
  }
  const vals = args.map((word) => literal(word));
  if (cmd.prog === 'printf') {
    const fmt = vals[0];
    if (fmt === null || fmt === undefined || /\\(x|[0-7]|u)|%b/.test(fmt)) {
      cmd.outputTaint = ['decoded'];
      return;
    }
    if (vals.every((value) => value !== null)) {
      cmd.outputText = (fmt.includes('%') ? vals.join(' ') : fmt).replace(/\\([ntr\\])/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r', '\\': '\\' })[c]!);
    }
    return;
  }
  if (escapes && vals.some((value) => value !== null && /\\(x|0|u)/.test(value))) {
    cmd.outputTaint = ['decoded'];
    return;
  }
  if (vals.every((value) => value !== null)) cmd.outputText = vals.join(' ') + '\n';
  else {
    const taintSet = new Set(args.flatMap((word) => word.segs.flatMap((seg) => (seg.t === 'val' && seg.v.kind === 'unknown' ? seg.v.taint : []))));
    cmd.outputTaint = [...taintSet];
  }
};

const cat: Handler = (cmd) => {
  const opts = parseOpts(cmd.args);
  cmd.add(['read_only'], 'cat only reads');
  opts.operands.forEach((word) => cmd.path(word, 'read'));
  const fromStdin = opts.operands.length === 0 || opts.operands.some((word) => literal(word) === '-');
  if (fromStdin && cmd.stdin.kind === 'data') {
    cmd.outputTaint = cmd.stdin.taint;
    if (opts.operands.length === 0) cmd.outputText = cmd.stdin.text;
  }
  // Process substitutions carry their producer's taint into the output.
  for (const arg of opts.operands) for (const seg of arg.segs) if (
      seg.t === 'val' && seg.v.kind === 'procsub') cmd.outputTaint = [...cmd.outputTaint, ...seg.v.taint];
};

/** base64 -d, xxd -r, gunzip …: their output is code nobody can read in the command line. */
function decoder(isDecoding: (cmd: Cmd, flags: Set<string>) => boolean, shortWithValue = '', longWithValue: string[] = []): Handler {
  return (cmd) => {
    const opts = parseOpts(cmd.args, shortWithValue, longWithValue);
    cmd.add(['read_only'], `${cmd.prog} transforms data`);
    for (const out of [...(opts.values.get('o') ?? []), ...(opts.values.get('output') ?? [])]) cmd.path(out, 'write');
    const decoding = isDecoding(cmd, opts.flags);
    const writesOutput = cmd.prog === 'xxd' && opts.operands.length > 1;
    opts.operands.forEach((word, at) => cmd.path(word, writesOutput && at === opts.operands.length - 1 ? 'write' : 'read'));
    const inTaint = cmd.stdin.kind === 'data' ? cmd.stdin.taint : [];
    cmd.outputTaint = decoding ? [...inTaint, 'decoded'] : inTaint;
    if (/^(gzip|gunzip|bzip2|bunzip2|xz|unxz|zstd|unzstd|lz4|brotli)$/.test(cmd.prog) && !opts.flags.has('c') && !opts.flags.has('stdout') &&
        opts.operands.length > 0) {
      cmd.add(['mutating'], `${cmd.prog} replaces files in place`);
      opts.operands.forEach((word) => cmd.path(word, 'write'));
    }
  };
}

const rm: Handler = (cmd) => {
  const opts = parseOpts(cmd.args);
  const recursive = opts.flags.has('r') || opts.flags.has('R') || opts.flags.has('recursive');
  cmd.add(['destructive'], `${cmd.prog} deletes ${recursive ? 'directory trees' : 'files'}`);
  opts.operands.forEach((word) => cmd.path(word, 'write', 'deletes'));
  if (opts.operands.length === 0 && cmd.prog !== 'rm') cmd.add(['unknown'], `${cmd.prog} without operands`);
};

/** cp / install / ln: the last operand (or -t DIR) is written, the others read. */
function copier(verb: string, moves = false): Handler {
  return (cmd) => {
    const opts = parseOpts(cmd.args, cmd.prog === 'install' ? 'tmogS' : 'tS', ['target-directory', 'suffix', 'mode', 'owner', 'group']);
    cmd.add(['mutating'], `${cmd.prog} ${verb}`);
    const target = opts.values.get('t') ?? opts.values.get('target-directory');
    const dests = target ?? (opts.operands.length > 1 || cmd.prog === 'ln' ? opts.operands.slice(-1) : []);
    const srcs = target ? opts.operands : opts.operands.length > 1 ? opts.operands.slice(0, -1) : cmd.prog === 'ln' ? [] : opts.operands;
    for (const word of srcs) {
      if (cmd.prog === 'ln') {
        // A symlink pointing outside makes every later read through it a host read.
        cmd.path(word, opts.flags.has('s') || opts.flags.has('symbolic') ? 'read' : 'write', 'links to');
        const value = literal(word);
        if (value !== null && (value.startsWith('/') || value.startsWith('~') || value.includes('..'))) cmd.path(word, 'write', 'links to');
      } else cmd.path(word, moves ? 'write' : 'read', moves ? 'moves' : 'copies');
    }
    for (const arg of dests) cmd.path(arg, 'write', verb);
    // A copy of a file this line wrote (or downloaded) carries what it holds: `cp a.sh b.sh && sh b.sh`.
    if (cmd.prog !== 'ln' && srcs.length === 1 && dests.length === 1) {
      const from = cmd.path(srcs[0]!, 'read', 'copies').shown;
      const to = cmd.path(dests[0]!, 'write', verb).shown;
      for (const place of [to, posix.join(to, posix.basename(from))]) {
        const text = cmd.judge.written.get(from);
        if (text !== undefined) cmd.judge.written.set(place, text);
        if (cmd.judge.downloaded.has(from)) cmd.judge.downloaded.add(place);
      }
    }
    if (cmd.prog === 'cp' && opts.flags.has('s')) for (const file of srcs) cmd.path(file, 'write', 'links to');
  };
}

/**
 * ln: a hard link names an existing file (judged from the current directory, like cp's source); a
 * symbolic link's target is text the kernel resolves from the link's own folder, not from where
 * ln ran: `ln -s ../x sub/y` points at ./x, `ln -s ../../etc sub/y` at ../etc. With `-r` ln
 * computes that text from a target given relative to the current directory. Where the link lands
 * in a folder that may be the destination itself (`ln -s T DIR`), both places are judged.
 */
const ln: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'tS', ['target-directory', 'suffix']);
  cmd.add(['mutating'], 'ln links');
  const symbolic = opts.flags.has('s') || opts.flags.has('symbolic');
  const relative = opts.flags.has('r') || opts.flags.has('relative');
  const targetDir = opts.values.get('t') ?? opts.values.get('target-directory');
  const noDir = opts.flags.has('T') || opts.flags.has('no-target-directory');
  const operands = opts.operands;
  const dests = targetDir ? targetDir : operands.length > 1 ? operands.slice(-1) : [];
  const targets = targetDir || operands.length === 1 ? operands : operands.slice(0, -1);
  for (const dest of dests) cmd.path(dest, 'write', 'links');
  const cwd = cmd.judge.cwd;
  for (const word of targets) {
    const value = literal(word);
    if (!symbolic || relative || value === null || cwd === null || value.startsWith('/') || value.startsWith('~')) {
      // Hard links, -r, absolute or home targets, or what the policy cannot place: judged as given.
      cmd.path(word, symbolic ? 'read' : 'write', 'links to');
      if (value === null || value.startsWith('/') || value.startsWith('~') || (symbolic && value.includes('..') && (relative || cwd === null))) {
        cmd.path(word, 'write', 'links to');
      }
      continue;
    }
    // The folders the link may land in.
    const homes: (string | null)[] = [];
    const destWord = dests[0];
    const dest = destWord ? literal(destWord) : '.';
    if (dest === null) homes.push(null);
    else if (targetDir || dest.endsWith('/') || dest === '.' || dest === '..') homes.push(posix.resolve(cwd, dest));
    else {
      homes.push(posix.dirname(posix.resolve(cwd, dest)));
      if (!noDir) homes.push(posix.resolve(cwd, dest));
    }
    for (const home of homes) {
      if (home === null) cmd.add(['unknown'], `ln -s ${value}: the link's folder is computed, so where it points is unknown`);
      else cmd.path(litWord(posix.resolve(home, value)), 'write', `links (${value} from ${home}) to`);
    }
  }
};

const find: Handler = (cmd) => {
  const vals = cmd.vals;
  cmd.add(['read_only'], 'find lists files');
  let at = 0;
  // Leading options (-L -H -P -O3 -D x), then roots until the first expression token.
  while (at < cmd.args.length && /^-(L|H|P|O\d?|D)$/.test(vals[at] ?? '')) at += vals[at] === '-D' ? 2 : 1;
  const roots: Word[] = [];
  while (at < cmd.args.length && !/^[-!(),]/.test(vals[at] ?? 'x')) roots.push(cmd.args[at++]!);
  if (roots.length === 0) roots.push(litWord('.'));
  roots.forEach((word) => cmd.path(word, 'read'));
  cmd.outputsWorkspacePaths = true;
  for (; at < cmd.args.length; at++) {
    const value = vals[at];
    if (value === '-delete') {
      cmd.add(['destructive'], 'find -delete deletes what it matches');
      roots.forEach((word) => cmd.path(word, 'write', 'deletes under'));
    } else if (value === '-exec' || value === '-execdir' || value === '-ok' || value === '-okdir') {
      let end = at + 1;
      while (end < cmd.args.length && vals[end] !== ';' && vals[end] !== '+') end++;
      const inner = cmd.args.slice(at + 1, end).map((word) =>
          (literal(word) === '{}' ? { raw: '{}', segs: [{ t: 'val' as const, v: { kind: 'workspace' as const }, q: true }] } : word));
      if (value === '-ok' || value === '-okdir') cmd.add(['interactive'], `find ${value} asks on the terminal`);
      if (inner.length > 0) {
        if (roots.some((word) => cmd.path(word, 'read').cls !== 'inside')) cmd.add(['unknown'], `find ${value} runs a command on paths outside the workspace`);
        cmd.nested(inner);
      }
      at = end;
    } else if (value === '-fprint' || value === '-fprint0' || value === '-fprintf' || value === '-fls') {
      const arg = cmd.args[at + 1];
      if (arg) cmd.path(arg, 'write');
      at += value === '-fprintf' ? 2 : 1;
    } else if (value === '-newer' || value === '-samefile' || value === '-anewer' || value === '-cnewer' || value === '-files0-from' ||
        /^-newer[a-zA-Z]{2}$/.test(value ?? '')) {
      const file = cmd.args[at + 1];
      if (file) cmd.path(file, 'read');
      at++;
    }
  }
};

const tee: Handler = (cmd) => {
  const opts = parseOpts(cmd.args);
  cmd.add(['read_only'], 'tee copies its input');
  opts.operands.forEach((word) => cmd.path(word, 'write'));
  cmd.passesInput();
  if (cmd.stdin.kind === 'data') cmd.outputText = cmd.stdin.text;
};

/** dd if=FILE of=FILE: `of=` is written, `if=` read, whatever follows the `=`. */
const dd: Handler = (cmd) => {
  cmd.add(['read_only'], 'dd copies bytes');
  for (const word of cmd.args) {
    const start = literalPrefix(word);
    const operand = /^(if|of)=/.exec(start);
    if (operand) cmd.path(dropPrefix(word, 3), operand[1] === 'of' ? 'write' : 'read');
    else if (literal(word) === null) cmd.add(['unknown'], `dd operand ${word.raw} is unknown`);
  }
  cmd.passesInput();
};

/**
 * A mode that sets the setuid or setgid bit: octal with a 4, 2 or 6 (… 7) in the special digit,
 * also after `=`/`+` (`=4755`, `+6000`, `04755`), or symbolic with `s` (`u+s`, `g=rxs`, `a+rwxs`).
 */
export function setsSetuid(mode: string): boolean {
  if (/^[=+]?0*[2-7][0-7]{3}$/.test(mode)) return true;
  return /^[ugoa]*[-+=]/.test(mode) && mode.split(',').some((clause) => /^[ugoa]*[+=][rwxXt]*s/.test(clause));
}

const chmod: Handler = (cmd) => {
  const opts = parseOpts(cmd.args.filter((word) => !/^[-+=][rwxXstugo]+$/.test(literal(word) ?? '')), '', ['reference']);
  const modes = cmd.args.map((word) => literal(word) ?? '');
  const mode = modes.find((root) => /^[0-7]{3,4}$|^[ugoa]*[-+=][rwxXstugo,+=-]*$/.test(root)) ?? (literal(opts.operands[0] ?? litWord('')) ?? '');
  const operands = mode === literal(opts.operands[0] ?? litWord('')) ? opts.operands.slice(1) : opts.operands;
  cmd.add(['mutating'], `${cmd.prog} changes file modes`);
  const setuid = modes.find((value) => setsSetuid(value));
  if (cmd.prog === 'chmod' && setuid !== undefined) cmd.add(['privilege'], `chmod ${setuid} sets a setuid/setgid bit`);
  if (cmd.prog !== 'chmod') {
    const owner = literal(cmd.args.find((word) => !(literal(word) ?? '-').startsWith('-')) ?? litWord(''));
    if (owner !== null && /^(root|0|wheel|admin)?([:.](root|0|wheel|admin))?$/.test(owner) && owner !== '') cmd.add(['privilege'],
        `${cmd.prog} ${owner} hands files to root`);
    else cmd.add(['mutating'], `${cmd.prog} changes owners`);
  }
  operands.forEach((word) => cmd.path(word, 'write', 'changes'));
};

const TAR_RUNS = ['use-compress-program', 'I', 'to-command', 'rsh-command', 'rmt-command', 'info-script', 'new-volume-script', 'F'];

/**
 * tar: -f is the archive (written when creating), -C the directory, -T/-X lists read, -g a
 * snapshot written; --to-command, -I, --checkpoint-action=exec=… and friends run programs.
 */
const tar: Handler = (cmd) => {
  const first = cmd.vals[0] ?? '';
  // Old-style `tar xzf a.tgz` has its letters without a dash.
  const args = first && !first.startsWith('-') && /^[A-Za-z]+$/.test(first) ? [litWord('-' + first), ...cmd.args.slice(1)] : cmd.args;
  const opts = parseOpts(args, 'fCTXIbHKLNgVF', [
    'file', 'directory', 'files-from', 'exclude-from', 'use-compress-program', 'to-command', 'checkpoint-action', 'rsh-command', 'rmt-command',
    'info-script', 'new-volume-script', 'transform', 'xform', 'exclude', 'format', 'owner', 'group', 'mode', 'listed-incremental', 'index-file', 'volno-file',
  ]);
  const values = (...keys: string[]) => keys.flatMap((key) => opts.values.get(key) ?? []);
  const extract = opts.flags.has('x') || opts.flags.has('extract') || opts.flags.has('get');
  const create = opts.flags.has('c') || opts.flags.has('create') || opts.flags.has('r') || opts.flags.has('u') || opts.flags.has('append');
  for (const key of TAR_RUNS) for (const program of opts.values.get(key) ?? []) cmd.runs(program, `tar --${key}`);
  for (const action of values('checkpoint-action')) {
    const text = literalPrefix(action);
    if (text.startsWith('exec=')) cmd.runs(dropPrefix(action, 5), 'tar --checkpoint-action=exec');
    else if (literal(action) === null) cmd.add(['unknown'], 'tar --checkpoint-action is computed');
  }
  for (const archive of values('f', 'file')) if (!/^[^/]+:/.test(literal(archive) ?? '')) cmd.path(archive, create ? 'write' : 'read');
  for (const list of values('T', 'files-from', 'X', 'exclude-from')) cmd.path(list, 'read');
  for (const file of values('g', 'listed-incremental', 'index-file', 'volno-file')) cmd.path(file, 'write');
  const dirs = values('C', 'directory');
  if (extract) {
    cmd.add(['mutating'], 'tar extracts files');
    dirs.forEach((dir) => cmd.path(dir, 'write', 'extracts into'));
    if (opts.flags.has('P') || opts.flags.has('absolute-names')) cmd.add(['host_escape'], 'tar -P extracts absolute paths');
  } else if (create) {
    cmd.add(['mutating'], 'tar writes an archive');
    dirs.forEach((dir) => cmd.path(dir, 'read'));
    opts.operands.forEach((word) => cmd.path(word, 'read'));
  } else {
    cmd.add(['read_only'], 'tar lists an archive');
  }
};

const unzip: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'dxP', []);
  const listing = opts.flags.has('l') || opts.flags.has('t') || opts.flags.has('v') || opts.flags.has('Z') || opts.flags.has('p');
  cmd.add(listing ? ['read_only'] : ['mutating'], listing ? 'unzip lists an archive' : 'unzip extracts files');
  opts.operands.slice(0, 1).forEach((word) => cmd.path(word, 'read'));
  (opts.values.get('d') ?? []).forEach((word) => cmd.path(word, 'write', 'extracts into'));
  // -: keeps `../` in member names, so the archive decides where its files land.
  if (!listing && opts.flags.has(':')) cmd.add(['unknown'], 'unzip -: extracts names with ../ wherever they point');
};

/**
 * cpio -i extracts names as the archive gives them, absolute ones and `../` included, unless
 * --no-absolute-filenames; pax -r too. Where the files land is then the archive's choice, not the
 * command line's. -D/-p name a directory written, -F/-O/-I archives, --rsh-command a program.
 */
const cpio: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'DFOIEMHR', ['directory', 'file', 'pattern-file', 'rsh-command', 'message', 'format', 'owner']);
  const passThrough = opts.flags.has('p') || opts.flags.has('pass-through');
  const extract = opts.flags.has('i') || opts.flags.has('extract');
  const create = opts.flags.has('o') || opts.flags.has('create');
  cmd.add(['mutating'], extract ? 'cpio extracts files' : create ? 'cpio writes an archive' : 'cpio copies files');
  for (const dir of [...(opts.values.get('D') ?? []), ...(opts.values.get('directory') ?? [])]) cmd.path(dir, 'write', 'extracts into');
  for (const file of [...(opts.values.get('F') ?? []), ...(opts.values.get('file') ?? [])]) cmd.path(file, create ? 'write' : 'read');
  for (const file of opts.values.get('O') ?? []) cmd.path(file, 'write');
  for (const file of [...(opts.values.get('I') ?? []), ...(opts.values.get('E') ?? []), ...(opts.values.get('pattern-file') ?? [])]) {
    cmd.path(file, 'read');
  }
  for (const program of opts.values.get('rsh-command') ?? []) cmd.runs(program, 'cpio --rsh-command');
  if (extract && !opts.flags.has('no-absolute-filenames') && !opts.flags.has('t') && !opts.flags.has('list')) {
    cmd.add(['unknown'], 'cpio -i writes each file where the archive names it (absolute paths and ../ too)');
  }
  // -p DIR copies the listed files into DIR.
  opts.operands.forEach((word) => (passThrough ? cmd.path(word, 'write', 'copies into') : cmd.maybePath(word, 'read')));
};

const pax: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'fsxbBoptT', []);
  const read = opts.flags.has('r');
  const write = opts.flags.has('w');
  cmd.add(read || write ? ['mutating'] : ['read_only'], read || write ? 'pax extracts or writes archives' : 'pax lists an archive');
  for (const file of opts.values.get('f') ?? []) cmd.path(file, write && !read ? 'write' : 'read');
  if (read && !write) cmd.add(['unknown'], 'pax -r writes each file where the archive names it (absolute paths too)');
  opts.operands.forEach((word, at) => cmd.path(word, read && write && at === opts.operands.length - 1 ? 'write' : 'read'));
};

/** zip ARCHIVE FILES…: -TT/--unzip-command runs a command to test the archive; -O writes elsewhere. */
const zip: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'bnPtxiO', ['unzip-command', 'output-file', 'temp-path', 'logfile-path', 'password', 'suffixes', 'exclude', 'include']);
  cmd.add(['mutating'], 'zip writes an archive');
  // `-T` alone only tests the archive; `-TT cmd` tests it with cmd.
  const tests = [...(opts.values.get('unzip-command') ?? [])];
  cmd.args.forEach((word, at) => {
    if (literal(word) === '-TT' && cmd.args[at + 1]) tests.push(cmd.args[at + 1]!);
  });
  for (const test of tests) cmd.runs(test, 'zip -TT');
  for (const key of ['O', 'output-file', 'b', 'temp-path', 'logfile-path']) for (const word of opts.values.get(key) ?? []) cmd.path(word, 'write');
  const operands = opts.operands.filter((word) => !tests.includes(word));
  operands.forEach((word, at) => cmd.path(word, at === 0 ? 'write' : 'read'));
};

/** sort: -o writes, --compress-program runs a program on its temporary files, --files0-from reads. */
const sort: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'ktoST', [
    'key', 'field-separator', 'output', 'buffer-size', 'temporary-directory', 'files0-from', 'parallel', 'compress-program', 'random-source',
    'batch-size',
  ]);
  cmd.add(['read_only'], 'sort reads and prints');
  for (const key of ['o', 'output', 'T', 'temporary-directory']) for (const word of opts.values.get(key) ?? []) cmd.path(word, 'write');
  for (const key of ['files0-from', 'random-source']) for (const word of opts.values.get(key) ?? []) cmd.path(word, 'read');
  for (const program of opts.values.get('compress-program') ?? []) cmd.runs(program, 'sort --compress-program');
  opts.operands.forEach((word) => cmd.path(word, 'read'));
  cmd.passesInput();
};

/** uniq IN OUT, split IN PREFIX: the second operand is written; split --filter runs a command per piece. */
function inOut(verb: string, shortWithValue = '', writes: string[] = []): Handler {
  return (cmd) => {
    const opts = parseOpts(cmd.args, shortWithValue, ['filter', 'prefix', 'additional-suffix', 'suffix-format']);
    cmd.add(['read_only'], `${cmd.prog} reads`);
    for (const key of writes) for (const word of opts.values.get(key) ?? []) cmd.path(word, 'write', verb);
    for (const command of opts.values.get('filter') ?? []) cmd.runs(command, `${cmd.prog} --filter`);
    opts.operands.forEach((word, at) => cmd.path(word, at === 0 ? 'read' : 'write', verb));
    cmd.passesInput();
  };
}

const truncate: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'sr', ['size', 'reference']);
  cmd.add(['destructive'], 'truncate cuts files');
  (opts.values.get('r') ?? []).forEach((word) => cmd.path(word, 'read'));
  opts.operands.forEach((word) => cmd.path(word, 'write', 'truncates'));
};

const patch: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'pdioBrDFVYzg', [
    'directory', 'input', 'output', 'prefix', 'reject-file', 'strip', 'fuzz', 'backup-if-mismatch', 'suffix', 'basename-prefix', 'quoting-style',
  ]);
  cmd.add(['mutating'], 'patch edits files');
  for (const [key, ws] of opts.values) {
    if (['d', 'directory', 'o', 'output', 'r', 'reject-file', 'B', 'prefix'].includes(key)) ws.forEach((word) => cmd.path(word, 'write'));
    if (['i', 'input'].includes(key)) ws.forEach((word) => cmd.path(word, 'read'));
  }
  opts.operands.forEach((word, at) => cmd.path(word, at === 0 ? 'write' : 'read'));
};

const mktemp: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'p', ['tmpdir', 'suffix']);
  const dir = opts.values.get('p') ?? opts.values.get('tmpdir');
  const tmpl = opts.operands[0];
  cmd.add(['mutating'], 'mktemp creates a file');
  if (dir) dir.forEach((word) => cmd.path(word, 'write', 'creates in'));
  else if (tmpl && !opts.flags.has('t') && !opts.flags.has('tmpdir')) cmd.path(tmpl, 'write', 'creates');
  else cmd.add(['host_escape'], 'mktemp creates its file in /tmp, outside the workspace (use -p DIR)');
};

const ls: Handler = (cmd) => {
  reader('IwT', ['ignore', 'hide', 'width', 'tabsize', 'format', 'sort', 'time-style', 'color', 'quoting-style', 'indicator-style', 'block-size'])(cmd);
  cmd.outputsWorkspacePaths = cmd.findings.every((finding) => finding.categories.every((category) => category === 'read_only'));
};

/**
 * less: -o/-O FILE copy the input to FILE; -k reads a key file; a `+` command or a key file can
 * run shell commands (`!cmd`, `|` pipes), as can LESSOPEN (judged with the environment).
 */
const less: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'bhjkoOpPtTxyz#', ['log-file', 'LOG-FILE', 'lesskey-file', 'lesskey-src', 'tag-file', 'tag']);
  cmd.add(['read_only'], 'less only reads');
  for (const key of ['o', 'O', 'log-file', 'LOG-FILE']) for (const word of opts.values.get(key) ?? []) cmd.path(word, 'write');
  for (const key of ['k', 'lesskey-file', 'lesskey-src', 'T', 'tag-file']) for (const word of opts.values.get(key) ?? []) cmd.path(word, 'read');
  const files: Word[] = [];
  for (const word of opts.operands) {
    const text = literal(word);
    if (text === null || !text.startsWith('+')) {
      files.push(word);
      continue;
    }
    // `+!cmd` runs cmd; `+|Xcmd` pipes to cmd from mark X.
    const bang = text.indexOf('!');
    const pipe = text.indexOf('|');
    if (bang >= 0) cmd.runs(litWord(text.slice(bang + 1)), 'less +!');
    else if (pipe >= 0) cmd.runs(litWord(text.slice(pipe + 2)), 'less +|');
  }
  files.forEach((word) => cmd.path(word, 'read'));
  if (files.length === 0) cmd.passesInput();
};

const READERS: Record<string, Handler> = {
  cat,
  echo,
  printf: echo,
  ls,
  dir: ls,
  tac: filter(),
  nl: filter('bdfhilnsvw'),
  head: filter('nc', ['lines', 'bytes']),
  tail: filter('ncs', ['lines', 'bytes', 'pid', 'sleep-interval', 'max-unchanged-stats']),
  less,
  more: reader('n'),
  wc: filter('', ['files0-from']),
  file: reader('emfFP', ['magic-file', 'separator', 'files-from', 'exclude', 'parameter']),
  stat: reader('cf', ['format', 'printf']),
  du: reader('BdtX', ['block-size', 'max-depth', 'threshold', 'exclude-from', 'exclude', 'time-style', 'files0-from']),
  df: reader('BtxF', ['block-size', 'type', 'exclude-type', 'output']),
  tree: reader('LPIoH', ['filelimit', 'timefmt', 'sort', 'charset', 'fromfile'], 0, ['o']),
  md5sum: reader(),
  sha1sum: reader(),
  sha256sum: reader(),
  sha512sum: reader(),
  shasum: reader('a'),
  b2sum: reader(),
  cksum: reader(),
  sum: reader(),
  md5: reader(),
  strings: filter('nte', ['bytes', 'encoding', 'radix']),
  od: filter('AjNtwS'),
  hexdump: filter('ensfC'),
  hd: filter('ensf'),
  readlink: reader(),
  realpath: reader('', ['relative-to', 'relative-base']),
  diff: reader('CUFIxXSL', [
    'context', 'unified', 'ignore-matching-lines', 'exclude', 'exclude-from', 'starting-file', 'label', 'from-file', 'to-file', 'color', 'palette',
    'line-format', 'horizon-lines',
  ]),
  cmp: reader('in', ['ignore-initial', 'bytes']),
  comm: reader(),
  cut: filter('bcdf', ['bytes', 'characters', 'delimiter', 'fields', 'output-delimiter']),
  column: filter('cstoRNHWEl'),
  fold: filter('w'),
  fmt: filter('pw'),
  paste: filter('d'),
  join: reader('aejotv12'),
  rev: decoder(() => true),
  expand: filter('t'),
  unexpand: filter('t'),
  iconv: filter('fto', ['from-code', 'to-code', 'output'], 0, ['o', 'output']),
  base64: decoder((_c, flag) => flag.has('d') || flag.has('decode') || flag.has('D'), 'w', ['wrap']),
  base32: decoder((_c, flag) => flag.has('d') || flag.has('decode')),
  basenc: decoder((_c, flag) => flag.has('d') || flag.has('decode')),
  xxd: decoder((_c, flag) => flag.has('r') || flag.has('revert'), 'cglosn', ['cols', 'groupsize', 'len', 'seek', 'name', 'offset']),
  uudecode: decoder(() => true, 'o'),
  gunzip: decoder(() => true, 'S', ['suffix']),
  gzip: decoder((_c, flag) => flag.has('d') || flag.has('decompress')),
  zcat: decoder(() => true),
  bzcat: decoder(() => true),
  bunzip2: decoder(() => true),
  bzip2: decoder((_c, flag) => flag.has('d') || flag.has('decompress')),
  xz: decoder((_c, flag) => flag.has('d') || flag.has('decompress')),
  unxz: decoder(() => true),
  xzcat: decoder(() => true),
  zstd: decoder((_c, flag) => flag.has('d') || flag.has('decompress'), 'o'),
  unzstd: decoder(() => true, 'o'),
  zstdcat: decoder(() => true),
  tr: (cmd) => {
    cmd.add(['read_only'], 'tr transforms text');
    cmd.outputTaint = cmd.stdin.kind === 'data' ? [...cmd.stdin.taint, 'decoded'] : ['decoded'];
  },
  yq: reader('', ['arg', 'indent', 'output-format', 'input-format'], 1),
  grep: searcher('efmABCd', [
    'regexp', 'file', 'max-count', 'after-context', 'before-context', 'context', 'include', 'exclude', 'exclude-dir', 'exclude-from', 'label',
    'color', 'colour', 'devices', 'directories', 'binary-files',
  ]),
  egrep: searcher('efmABC', ['regexp', 'file', 'include', 'exclude', 'exclude-dir']),
  fgrep: searcher('efmABC', ['regexp', 'file', 'include', 'exclude', 'exclude-dir']),
  zgrep: searcher('efmABC', ['regexp', 'file']),
  rg: searcher('efgmABCtTMjE', [
    'regexp', 'file', 'glob', 'iglob', 'max-count', 'after-context', 'before-context', 'context', 'type', 'type-not', 'type-add', 'max-columns',
    'threads', 'encoding', 'pre', 'pre-glob', 'ignore-file', 'max-depth', 'sort', 'sortr', 'color', 'colors', 'replace', 'hostname-bin',
    'path-separator', 'max-filesize',
  ]),
  ag: searcher('GmABC', ['file-search-regex', 'ignore', 'max-count', 'after', 'before', 'context', 'depth']),
  ack: searcher('mABC', ['type', 'ignore-dir', 'max-count']),
  fd: searcher('etEdxXcjS', [
    'extension', 'type', 'exclude', 'max-depth', 'min-depth', 'exact-depth', 'exec', 'exec-batch', 'color', 'threads', 'size', 'changed-within',
    'changed-before', 'owner', 'max-results', 'base-directory', 'search-path', 'path-separator', 'ignore-file',
  ]),
  bat: reader('lHmrp', [
    'language', 'highlight-line', 'map-syntax', 'theme', 'style', 'line-range', 'paging', 'wrap', 'color', 'tabs', 'terminal-width', 'decorations',
    'italic-text', 'pager',
  ]),
  find,
  tee,
  dd,
  sort,
  uniq: inOut('writes', 'fsw'),
  split: inOut('writes pieces to', 'lnbaCtd'),
  csplit: inOut('writes pieces to', 'fbn', ['f', 'prefix']),
  look: reader('t', [], 1),
  sponge: writer(['mutating'], 'writes'),
  tokei: reader('etcsCo', ['exclude', 'types', 'columns', 'sort', 'output', 'input']),
  cloc: reader(),
  namei: reader(),
  lsattr: reader(),
  getfacl: reader(),
  pathchk: reader(),
  basename: (cmd) => cmd.add(['read_only'], 'basename only prints'),
  dirname: (cmd) => cmd.add(['read_only'], 'dirname only prints'),
};

const WRITERS: Record<string, Handler> = {
  rm,
  unlink: rm,
  shred: (cmd) => {
    rm(cmd);
    cmd.add(['destructive'], 'shred overwrites files');
  },
  srm: rm,
  wipe: rm,
  rmdir: writer(['mutating'], 'removes directories'),
  touch: writer(['mutating'], 'touches', 'dtr', ['date', 'reference', 'time']),
  mkdir: writer(['mutating'], 'creates directories', 'mZ', ['mode', 'context']),
  mkfifo: writer(['mutating'], 'creates', 'm', ['mode']),
  cp: copier('copies into'),
  mv: copier('moves into', true),
  install: (cmd) => {
    // install -m MODE / --mode=MODE / -mMODE: a setuid mode on the installed file.
    cmd.vals.forEach((value, i) => {
      const mode = value === '-m' || value === '--mode' ? cmd.vals[i + 1] : /^(?:-m|--mode=)(.+)$/.exec(value ?? '')?.[1];
      if (mode && setsSetuid(mode)) cmd.add(['privilege'], `install -m ${mode} sets a setuid/setgid bit`);
    });
    copier('installs into')(cmd);
  },
  ln,
  chmod,
  chown: chmod,
  chgrp: chmod,
  setfacl: writer(['mutating'], 'changes ACLs of', 'mMxX', ['modify', 'remove', 'set', 'set-file', 'modify-file', 'remove-file']),
  chattr: writer(['mutating'], 'changes attributes of', 'vpR', [], 1),
  truncate,
  fallocate: writer(['mutating'], 'allocates', 'lo', ['length', 'offset']),
  patch,
  dos2unix: writer(['mutating'], 'converts'),
  unix2dos: writer(['mutating'], 'converts'),
  tar,
  bsdtar: tar,
  gtar: tar,
  unzip,
  zip,
  cpio,
  pax,
  '7z': (cmd) => {
    cmd.add(['mutating'], '7z reads or writes archives');
    cmd.args.forEach((word) => cmd.maybePath(word, 'write'));
  },
  mktemp,
  ar: writer(['mutating'], 'writes', '', [], 1),
};

export const FILE_TOOLS: Record<string, Handler> = {
  ...READERS,
  ...WRITERS,
};
