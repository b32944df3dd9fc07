/**
 * What a sed script does besides editing text: `e COMMAND` and the `e` flag of `s` run shell
 * commands, `w`/`W` and the `w` flag write files, `r`/`R` read them. A small reader of GNU
 * sed's syntax (addresses, any `s` delimiter, `{}` blocks, `;` and newlines), so that
 * `s|x|y|e`, `$e`, `1,3e cmd` or `/re/I w out` cannot slip past a pattern match.
 */

export interface SedEffects {
  /** Commands run by `e COMMAND`. */
  runs: string[];
  /** `e` alone or the `s///e` flag: the pattern space (the input) runs as a command. */
  runsInput: boolean;
  writes: string[];
  reads: string[];
  /** The script has something this reader does not understand. */
  unreadable: boolean;
}

export function sedEffects(script: string): SedEffects {
  const effects: SedEffects = { runs: [], runsInput: false, writes: [], reads: [], unreadable: false };
  let at = 0;
  const peek = () => script[at] ?? '';
  const skipBlanks = () => {
    while (at < script.length && /[ \t]/.test(script[at]!)) at++;
  };
  /** The rest of the line (file names and commands run to the newline). */
  const restOfLine = () => {
    const end = script.indexOf('\n', at);
    const text = script.slice(at, end < 0 ? script.length : end);
    at = end < 0 ? script.length : end + 1;
    return text;
  };
  /** Skips a delimited part (regex or replacement) ending at an unescaped `delimiter`. */
  const delimited = (delimiter: string): boolean => {
    while (at < script.length) {
      const ch = script[at++]!;
      if (ch === '\\') at++;
      else if (ch === delimiter) return true;
      else if (ch === '\n' && delimiter !== '\n') return false;
    }
    return false;
  };
  const address = (): boolean => {
    const ch = peek();
    if (/\d/.test(ch)) {
      while (/[\d~]/.test(peek())) at++;
    } else if (ch === '$') at++;
    else if (ch === '/' || ch === '\\') {
      at++;
      const delimiter = ch === '/' ? '/' : script[at++];
      if (delimiter === undefined || !delimited(delimiter)) return false;
      while (/[IM]/.test(peek())) at++;
    } else if (ch === '+' || ch === '~') {
      at++;
      while (/\d/.test(peek())) at++;
    }
    return true;
  };

  while (at < script.length) {
    while (at < script.length && /[\s;]/.test(script[at]!)) at++;
    if (at >= script.length) break;
    if (peek() === '#') {
      restOfLine();
      continue;
    }
    if (!address()) return { ...effects, unreadable: true };
    skipBlanks();
    if (peek() === ',') {
      at++;
      skipBlanks();
      if (!address()) return { ...effects, unreadable: true };
    }
    skipBlanks();
    while (peek() === '!') {
      at++;
      skipBlanks();
    }
    const command = script[at++];
    switch (command) {
      case '{':
      case '}':
      case '=':
      case 'd':
      case 'D':
      case 'g':
      case 'G':
      case 'h':
      case 'H':
      case 'n':
      case 'N':
      case 'p':
      case 'P':
      case 'x':
      case 'z':
      case 'F':
        break;
      case 'l':
      case 'L':
      case 'q':
      case 'Q':
        skipBlanks();
        while (/\d/.test(peek())) at++;
        break;
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        while (at < script.length && !/[;\n]/.test(script[at]!)) at++;
        break;
      case 'a':
      case 'i':
      case 'c':
        // Text to the end of the line, continued while a line ends in a backslash.
        while (at < script.length) {
          const line = restOfLine();
          if (!line.endsWith('\\')) break;
        }
        break;
      case 'r':
      case 'R':
        skipBlanks();
        effects.reads.push(restOfLine().trim());
        break;
      case 'w':
      case 'W':
        skipBlanks();
        effects.writes.push(restOfLine().trim());
        break;
      case 'e': {
        skipBlanks();
        const text = restOfLine().trim();
        if (text === '') effects.runsInput = true;
        else effects.runs.push(text);
        break;
      }
      case 's': {
        const delimiter = script[at++];
        if (delimiter === undefined || delimiter === '\n' || delimiter === '\\' || !delimited(delimiter) ||
            !delimited(delimiter)) return { ...effects, unreadable: true };
        while (/[gpiImMe\d]/.test(peek()) || peek() === 'w') {
          const flag = script[at++]!;
          if (flag === 'e') effects.runsInput = true;
          if (flag === 'w') {
            skipBlanks();
            effects.writes.push(restOfLine().trim());
            break;
          }
        }
        break;
      }
      case 'y': {
        const delimiter = script[at++];
        if (delimiter === undefined || !delimited(delimiter) || !delimited(delimiter)) return { ...effects, unreadable: true };
        break;
      }
      default:
        return { ...effects, unreadable: true };
    }
  }
  return effects;
}
