// JSON.parse that keeps integers beyond 2^53 exact. Shopify's ids (orders, lines, customers) are
// 64-bit integers sent as JSON numbers: JSON.parse turns 820982911946154508 into
// 820982911946154500, a different order. Node 20 has no reviver source access, so the text is
// rewritten first: every integer literal outside a string with more than 15 digits becomes a
// JSON string of its digits. Smaller numbers, and every number inside strings, are untouched.

const SAFE_DIGITS = 15;

/** Parses `text` as JSON, giving integers longer than 15 digits as strings of their digits. */
export function parseLosslessJson(text: string): unknown {
  return JSON.parse(quoteLongIntegers(text));
}

function quoteLongIntegers(text: string): string {
  let out = '';
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote, past escaped characters.
      i++;
      while (i < text.length && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      i++;
      while (i < text.length && isNumberChar(text.charCodeAt(i))) i++;
      const literal = text.slice(start, i);
      if (/^-?\d+$/.test(literal) && literal.replace('-', '').length > SAFE_DIGITS) {
        out += `${text.slice(from, start)}"${literal}"`;
        from = i;
      }
    } else i++;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Digits, sign, decimal point and exponent: the rest of a number literal. */
const isNumberChar = (c: number) =>
  (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
