/** Files and text: readers, writers, deleters, find, sed, awk, archives, dd, chmod. */
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
  const r = reader(shortWithValue, longWithValue, skip, writes);
  return (c) => {
    r(c);
    c.passesInput();
  };
}

function writer(categories: ('mutating' | 'destructive')[], verb: string, shortWithValue = '', longWithValue: string[] = [], skip = 0): Handler {
  return (c) => {
    const o = parseOpts(c.args, shortWithValue, longWithValue);
    optionPaths(c, o.values);
    c.add(categories, `${verb} files`);
    o.operands.slice(skip).forEach((w) => c.path(w, 'write', verb));
  };
}

/** Patterns (grep, rg): the first operand is the pattern unless -e/-f gave it. */
function searcher(shortWithValue: string, longWithValue: string[]): Handler {
  return (c) => {
    const o = parseOpts(c.args, shortWithValue, longWithValue);
    c.add(['read_only'], `${c.prog} only reads`);
    for (const [k, ws] of o.values) if (['f', 'file', 'exclude-from', 'ignore-file'].includes(k)) ws.forEach((w) => c.path(w, 'read'));
    if (c.prog === 'rg' && (o.flags.has('pre') || o.values.has('pre') || o.values.has('hostname-bin'))) {
      c.add(['code_execution', 'unknown'], 'rg --pre runs another program on every file');
    }
    const patternGiven = o.values.has('e') || o.values.has('f') || o.values.has('regexp') || o.values.has('file');
    const files = patternGiven || c.prog === 'fd' ? o.operands : o.operands.slice(1);
    files.forEach((w) => c.path(w, 'read'));
    if (files.length === 0 && c.prog !== 'rg' && c.prog !== 'ag' && c.prog !== 'ack' && c.prog !== 'fd') c.passesInput();
    if (c.prog === 'fd' && (o.values.has('x') || o.values.has('exec') || o.values.has('X') || o.values.has('exec-batch'))) {
      c.add(['code_execution', 'unknown'], 'fd --exec runs another program');
    }
    if (o.flags.has('l') || o.flags.has('files-with-matches') || c.prog === 'fd' || o.flags.has('files')) c.outputsWorkspacePaths = true;
  };
}

const echo: Handler = (c) => {
  c.add(['read_only'], `${c.prog} only prints`);
  let args = c.args;
  // printf -v NAME sets a variable instead of printing.
  if (c.prog === 'printf' && c.vals[0] === '-v' && args[1]) {
    c.assignsUnknown([args[1]], 'printf -v');
    return;
  }
  let escapes = false;
  while (args.length > 0 && /^-[neE]+$/.test(literal(args[0]!) ?? '')) {
    if (literal(args[0]!)!.includes('e')) escapes = true;
    args = args.slice(1);
  }
  const vals = args.map((a) => literal(a));
  if (c.prog === 'printf') {
    const fmt = vals[0];
    if (fmt === null || fmt === undefined || /\\(x|[0-7]|u)|%b/.test(fmt)) {
      c.outputTaint = ['decoded'];
      return;
    }
    if (vals.every((v) => v !== null)) c.outputText = (fmt.includes('%') ? vals.join(' ') : fmt).replace(/\\n/g, '\n');
    return;
  }
  if (escapes && vals.some((v) => v !== null && /\\(x|0|u)/.test(v))) {
    c.outputTaint = ['decoded'];
    return;
  }
  if (vals.every((v) => v !== null)) c.outputText = vals.join(' ') + '\n';
  else {
    const t = new Set(args.flatMap((a) => a.segs.flatMap((s) => (s.t === 'val' && s.v.kind === 'unknown' ? s.v.taint : []))));
    c.outputTaint = [...t];
  }
};

const cat: Handler = (c) => {
  const o = parseOpts(c.args);
  c.add(['read_only'], 'cat only reads');
  o.operands.forEach((w) => c.path(w, 'read'));
  const fromStdin = o.operands.length === 0 || o.operands.some((w) => literal(w) === '-');
  if (fromStdin && c.stdin.kind === 'data') {
    c.outputTaint = c.stdin.taint;
    if (o.operands.length === 0) c.outputText = c.stdin.text;
  }
  // Process substitutions carry their producer's taint into the output.
  for (const w of o.operands) for (const s of w.segs) if (s.t === 'val' && s.v.kind === 'procsub') c.outputTaint = [...c.outputTaint, ...s.v.taint];
};

/** base64 -d, xxd -r, gunzip …: their output is code nobody can read in the command line. */
function decoder(isDecoding: (c: Cmd, flags: Set<string>) => boolean, shortWithValue = '', longWithValue: string[] = []): Handler {
  return (c) => {
    const o = parseOpts(c.args, shortWithValue, longWithValue);
    c.add(['read_only'], `${c.prog} transforms data`);
    for (const out of [...(o.values.get('o') ?? []), ...(o.values.get('output') ?? [])]) c.path(out, 'write');
    const decoding = isDecoding(c, o.flags);
    const writesOutput = c.prog === 'xxd' && o.operands.length > 1;
    o.operands.forEach((w, i) => c.path(w, writesOutput && i === o.operands.length - 1 ? 'write' : 'read'));
    const inTaint = c.stdin.kind === 'data' ? c.stdin.taint : [];
    c.outputTaint = decoding ? [...inTaint, 'decoded'] : inTaint;
    if (/^(gzip|gunzip|bzip2|bunzip2|xz|unxz|zstd|unzstd|lz4|brotli)$/.test(c.prog) && !o.flags.has('c') && !o.flags.has('stdout') && o.operands.length > 0) {
      c.add(['mutating'], `${c.prog} replaces files in place`);
      o.operands.forEach((w) => c.path(w, 'write'));
    }
  };
}

const rm: Handler = (c) => {
  const o = parseOpts(c.args);
  const recursive = o.flags.has('r') || o.flags.has('R') || o.flags.has('recursive');
  c.add(['destructive'], `${c.prog} deletes ${recursive ? 'directory trees' : 'files'}`);
  o.operands.forEach((w) => c.path(w, 'write', 'deletes'));
  if (o.operands.length === 0 && c.prog !== 'rm') c.add(['unknown'], `${c.prog} without operands`);
};

/** cp / install / ln: the last operand (or -t DIR) is written, the others read. */
function copier(verb: string, moves = false): Handler {
  return (c) => {
    const o = parseOpts(c.args, c.prog === 'install' ? 'tmogS' : 'tS', ['target-directory', 'suffix', 'mode', 'owner', 'group']);
    c.add(['mutating'], `${c.prog} ${verb}`);
    const target = o.values.get('t') ?? o.values.get('target-directory');
    const dests = target ?? (o.operands.length > 1 || c.prog === 'ln' ? o.operands.slice(-1) : []);
    const srcs = target ? o.operands : o.operands.length > 1 ? o.operands.slice(0, -1) : c.prog === 'ln' ? [] : o.operands;
    for (const w of srcs) {
      if (c.prog === 'ln') {
        // A symlink pointing outside makes every later read through it a host read.
        c.path(w, o.flags.has('s') || o.flags.has('symbolic') ? 'read' : 'write', 'links to');
        const v = literal(w);
        if (v !== null && (v.startsWith('/') || v.startsWith('~') || v.includes('..'))) c.path(w, 'write', 'links to');
      } else c.path(w, moves ? 'write' : 'read', moves ? 'moves' : 'copies');
    }
    for (const w of dests) c.path(w, 'write', verb);
    if (c.prog === 'cp' && o.flags.has('s')) for (const w of srcs) c.path(w, 'write', 'links to');
  };
}

const find: Handler = (c) => {
  const vals = c.vals;
  c.add(['read_only'], 'find lists files');
  let i = 0;
  // Leading options (-L -H -P -O3 -D x), then roots until the first expression token.
  while (i < c.args.length && /^-(L|H|P|O\d?|D)$/.test(vals[i] ?? '')) i += vals[i] === '-D' ? 2 : 1;
  const roots: Word[] = [];
  while (i < c.args.length && !/^[-!(),]/.test(vals[i] ?? 'x')) roots.push(c.args[i++]!);
  if (roots.length === 0) roots.push(litWord('.'));
  roots.forEach((w) => c.path(w, 'read'));
  c.outputsWorkspacePaths = true;
  for (; i < c.args.length; i++) {
    const t = vals[i];
    if (t === '-delete') {
      c.add(['destructive'], 'find -delete deletes what it matches');
      roots.forEach((w) => c.path(w, 'write', 'deletes under'));
    } else if (t === '-exec' || t === '-execdir' || t === '-ok' || t === '-okdir') {
      let j = i + 1;
      while (j < c.args.length && vals[j] !== ';' && vals[j] !== '+') j++;
      const inner = c.args.slice(i + 1, j).map((w) => (literal(w) === '{}' ? { raw: '{}', segs: [{ t: 'val' as const, v: { kind: 'workspace' as const }, q: true }] } : w));
      if (t === '-ok' || t === '-okdir') c.add(['interactive'], `find ${t} asks on the terminal`);
      if (inner.length > 0) {
        if (roots.some((r) => c.path(r, 'read').cls !== 'inside')) c.add(['unknown'], `find ${t} runs a command on paths outside the workspace`);
        c.nested(inner);
      }
      i = j;
    } else if (t === '-fprint' || t === '-fprint0' || t === '-fprintf' || t === '-fls') {
      const w = c.args[i + 1];
      if (w) c.path(w, 'write');
      i += t === '-fprintf' ? 2 : 1;
    } else if (t === '-newer' || t === '-samefile' || t === '-anewer' || t === '-cnewer' || t === '-files0-from' || /^-newer[a-zA-Z]{2}$/.test(t ?? '')) {
      const w = c.args[i + 1];
      if (w) c.path(w, 'read');
      i++;
    }
  }
};

const tee: Handler = (c) => {
  const o = parseOpts(c.args);
  c.add(['read_only'], 'tee copies its input');
  o.operands.forEach((w) => c.path(w, 'write'));
  c.passesInput();
  if (c.stdin.kind === 'data') c.outputText = c.stdin.text;
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

const chmod: Handler = (c) => {
  const o = parseOpts(c.args.filter((w) => !/^[-+=][rwxXstugo]+$/.test(literal(w) ?? '')), '', ['reference']);
  const modes = c.args.map((w) => literal(w) ?? '');
  const mode = modes.find((m) => /^[0-7]{3,4}$|^[ugoa]*[-+=][rwxXstugo,+=-]*$/.test(m)) ?? (literal(o.operands[0] ?? litWord('')) ?? '');
  const operands = mode === literal(o.operands[0] ?? litWord('')) ? o.operands.slice(1) : o.operands;
  c.add(['mutating'], `${c.prog} changes file modes`);
  if (c.prog === 'chmod' && (/^[0-7]*[2-7][0-7]{3}$/.test(mode) || /[-+=][rwxX]*s/.test(mode))) c.add(['privilege'], `chmod ${mode} sets a setuid/setgid bit`);
  if (c.prog !== 'chmod') {
    const owner = literal(c.args.find((w) => !(literal(w) ?? '-').startsWith('-')) ?? litWord(''));
    if (owner !== null && /^(root|0|wheel|admin)?([:.](root|0|wheel|admin))?$/.test(owner) && owner !== '') c.add(['privilege'], `${c.prog} ${owner} hands files to root`);
    else c.add(['mutating'], `${c.prog} changes owners`);
  }
  operands.forEach((w) => c.path(w, 'write', 'changes'));
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

const unzip: Handler = (c) => {
  const o = parseOpts(c.args, 'dxP', []);
  const listing = o.flags.has('l') || o.flags.has('t') || o.flags.has('v') || o.flags.has('Z') || o.flags.has('p');
  c.add(listing ? ['read_only'] : ['mutating'], listing ? 'unzip lists an archive' : 'unzip extracts files');
  o.operands.slice(0, 1).forEach((w) => c.path(w, 'read'));
  (o.values.get('d') ?? []).forEach((w) => c.path(w, 'write', 'extracts into'));
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
  const opts = parseOpts(cmd.args, 'ktoST', ['key', 'field-separator', 'output', 'buffer-size', 'temporary-directory', 'files0-from', 'parallel', 'compress-program', 'random-source', 'batch-size']);
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
    for (const filter of opts.values.get('filter') ?? []) cmd.runs(filter, `${cmd.prog} --filter`);
    opts.operands.forEach((word, at) => cmd.path(word, at === 0 ? 'read' : 'write', verb));
    cmd.passesInput();
  };
}

const truncate: Handler = (c) => {
  const o = parseOpts(c.args, 'sr', ['size', 'reference']);
  c.add(['destructive'], 'truncate cuts files');
  (o.values.get('r') ?? []).forEach((w) => c.path(w, 'read'));
  o.operands.forEach((w) => c.path(w, 'write', 'truncates'));
};

const patch: Handler = (c) => {
  const o = parseOpts(c.args, 'pdioBrDFVYzg', ['directory', 'input', 'output', 'prefix', 'reject-file', 'strip', 'fuzz', 'backup-if-mismatch', 'suffix', 'basename-prefix', 'quoting-style']);
  c.add(['mutating'], 'patch edits files');
  for (const [k, ws] of o.values) {
    if (['d', 'directory', 'o', 'output', 'r', 'reject-file', 'B', 'prefix'].includes(k)) ws.forEach((w) => c.path(w, 'write'));
    if (['i', 'input'].includes(k)) ws.forEach((w) => c.path(w, 'read'));
  }
  o.operands.forEach((w, i) => c.path(w, i === 0 ? 'write' : 'read'));
};

const mktemp: Handler = (c) => {
  const o = parseOpts(c.args, 'p', ['tmpdir', 'suffix']);
  const dir = o.values.get('p') ?? o.values.get('tmpdir');
  const tmpl = o.operands[0];
  c.add(['mutating'], 'mktemp creates a file');
  if (dir) dir.forEach((w) => c.path(w, 'write', 'creates in'));
  else if (tmpl && !o.flags.has('t') && !o.flags.has('tmpdir')) c.path(tmpl, 'write', 'creates');
  else c.add(['host_escape'], 'mktemp creates its file in /tmp, outside the workspace (use -p DIR)');
};

const ls: Handler = (c) => {
  reader('IwT', ['ignore', 'hide', 'width', 'tabsize', 'format', 'sort', 'time-style', 'color', 'quoting-style', 'indicator-style', 'block-size'])(c);
  c.outputsWorkspacePaths = c.findings.every((f) => f.categories.every((x) => x === 'read_only'));
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
  diff: reader('CUFIxXSL', ['context', 'unified', 'ignore-matching-lines', 'exclude', 'exclude-from', 'starting-file', 'label', 'from-file', 'to-file', 'color', 'palette', 'line-format', 'horizon-lines']),
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
  base64: decoder((_c, f) => f.has('d') || f.has('decode') || f.has('D'), 'w', ['wrap']),
  base32: decoder((_c, f) => f.has('d') || f.has('decode')),
  basenc: decoder((_c, f) => f.has('d') || f.has('decode')),
  xxd: decoder((_c, f) => f.has('r') || f.has('revert'), 'cglosn', ['cols', 'groupsize', 'len', 'seek', 'name', 'offset']),
  uudecode: decoder(() => true, 'o'),
  gunzip: decoder(() => true, 'S', ['suffix']),
  gzip: decoder((_c, f) => f.has('d') || f.has('decompress')),
  zcat: decoder(() => true),
  bzcat: decoder(() => true),
  bunzip2: decoder(() => true),
  bzip2: decoder((_c, f) => f.has('d') || f.has('decompress')),
  xz: decoder((_c, f) => f.has('d') || f.has('decompress')),
  unxz: decoder(() => true),
  xzcat: decoder(() => true),
  zstd: decoder((_c, f) => f.has('d') || f.has('decompress'), 'o'),
  unzstd: decoder(() => true, 'o'),
  zstdcat: decoder(() => true),
  tr: (c) => {
    c.add(['read_only'], 'tr transforms text');
    c.outputTaint = c.stdin.kind === 'data' ? [...c.stdin.taint, 'decoded'] : ['decoded'];
  },
  yq: reader('', ['arg', 'indent', 'output-format', 'input-format'], 1),
  grep: searcher('efmABCd', ['regexp', 'file', 'max-count', 'after-context', 'before-context', 'context', 'include', 'exclude', 'exclude-dir', 'exclude-from', 'label', 'color', 'colour', 'devices', 'directories', 'binary-files']),
  egrep: searcher('efmABC', ['regexp', 'file', 'include', 'exclude', 'exclude-dir']),
  fgrep: searcher('efmABC', ['regexp', 'file', 'include', 'exclude', 'exclude-dir']),
  zgrep: searcher('efmABC', ['regexp', 'file']),
  rg: searcher('efgmABCtTMjE', ['regexp', 'file', 'glob', 'iglob', 'max-count', 'after-context', 'before-context', 'context', 'type', 'type-not', 'type-add', 'max-columns', 'threads', 'encoding', 'pre', 'pre-glob', 'ignore-file', 'max-depth', 'sort', 'sortr', 'color', 'colors', 'replace', 'hostname-bin', 'path-separator', 'max-filesize']),
  ag: searcher('GmABC', ['file-search-regex', 'ignore', 'max-count', 'after', 'before', 'context', 'depth']),
  ack: searcher('mABC', ['type', 'ignore-dir', 'max-count']),
  fd: searcher('etEdxXcjS', ['extension', 'type', 'exclude', 'max-depth', 'min-depth', 'exact-depth', 'exec', 'exec-batch', 'color', 'threads', 'size', 'changed-within', 'changed-before', 'owner', 'max-results', 'base-directory', 'search-path', 'path-separator', 'ignore-file']),
  bat: reader('lHmrp', ['language', 'highlight-line', 'map-syntax', 'theme', 'style', 'line-range', 'paging', 'wrap', 'color', 'tabs', 'terminal-width', 'decorations', 'italic-text', 'pager']),
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
  basename: (c) => c.add(['read_only'], 'basename only prints'),
  dirname: (c) => c.add(['read_only'], 'dirname only prints'),
};

const WRITERS: Record<string, Handler> = {
  rm,
  unlink: rm,
  shred: (c) => {
    rm(c);
    c.add(['destructive'], 'shred overwrites files');
  },
  srm: rm,
  wipe: rm,
  rmdir: writer(['mutating'], 'removes directories'),
  touch: writer(['mutating'], 'touches', 'dtr', ['date', 'reference', 'time']),
  mkdir: writer(['mutating'], 'creates directories', 'mZ', ['mode', 'context']),
  mkfifo: writer(['mutating'], 'creates', 'm', ['mode']),
  cp: copier('copies into'),
  mv: copier('moves into', true),
  install: copier('installs into'),
  ln: copier('links'),
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
  '7z': (c) => {
    c.add(['mutating'], '7z reads or writes archives');
    c.args.forEach((w) => c.maybePath(w, 'write'));
  },
  mktemp,
  ar: writer(['mutating'], 'writes', '', [], 1),
};

export const FILE_TOOLS: Record<string, Handler> = {
  ...READERS,
  ...WRITERS,
};
