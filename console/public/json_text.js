// Working on JSON as text. JSON.parse turns 12345678901234567890 into
// 12345678901234567000 and 1.10 into 1.1; a payload must be shown as it was sent, so
// these functions cut and indent the text itself and never touch a number or string.
// They expect text that JSON.parse has already accepted.

const WHITESPACE = ' \t\n\r';

function skipWhitespace(s, i) {
  while (i < s.length && WHITESPACE.includes(s[i])) i++;
  return i;
}

function skipString(s, i) {
  for (i++; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i + 1;
  }
  throw new SyntaxError('unterminated string');
}

function skipValue(s, i) {
  const c = s[i];
  if (c === '"') return skipString(s, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    while (i < s.length) {
      const d = s[i];
      if (d === '"') {
        i = skipString(s, i);
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    throw new SyntaxError('unterminated value');
  }
  while (i < s.length && !',}]'.includes(s[i]) && !WHITESPACE.includes(s[i])) i++;
  return i;
}

// The text of member `name` of the top-level object in `text`, or null.
export function rawMember(text, name) {
  let i = skipWhitespace(text, 0);
  if (text[i] !== '{') return null;
  i++;
  for (;;) {
    i = skipWhitespace(text, i);
    if (text[i] !== '"') return null;
    const keyStart = i;
    i = skipString(text, i);
    const key = JSON.parse(text.slice(keyStart, i));
    i = skipWhitespace(text, i);
    if (text[i] !== ':') return null;
    i = skipWhitespace(text, i + 1);
    const valueStart = i;
    i = skipValue(text, i);
    if (key === name) return text.slice(valueStart, i);
    i = skipWhitespace(text, i);
    if (text[i] !== ',') return null;
    i++;
  }
}

// The texts of the elements of the top-level array in `text`, or null when it is not one.
export function rawItems(text) {
  let i = skipWhitespace(text, 0);
  if (text[i] !== '[') return null;
  const items = [];
  i = skipWhitespace(text, i + 1);
  if (text[i] === ']') return items;
  for (;;) {
    const start = i;
    i = skipValue(text, i);
    items.push(text.slice(start, i));
    i = skipWhitespace(text, i);
    if (text[i] === ']') return items;
    if (text[i] !== ',') return null;
    i = skipWhitespace(text, i + 1);
  }
}

// Re-indents JSON text: only whitespace between tokens changes.
export function indent(text, unit = '  ') {
  let out = '';
  let depth = 0;
  let i = 0;
  const newline = () => `\n${unit.repeat(depth)}`;
  while (i < text.length) {
    const c = text[i];
    if (WHITESPACE.includes(c)) {
      i++;
    } else if (c === '"') {
      const end = skipString(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (c === '{' || c === '[') {
      const next = skipWhitespace(text, i + 1);
      if (text[next] === '}' || text[next] === ']') {
        out += c + text[next];
        i = next + 1;
      } else {
        depth++;
        out += c + newline();
        i++;
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += newline() + c;
      i++;
    } else if (c === ',') {
      out += `,${newline()}`;
      i++;
    } else if (c === ':') {
      out += ': ';
      i++;
    } else {
      const end = skipValue(text, i);
      out += text.slice(i, end);
      i = end;
    }
  }
  return out;
}
