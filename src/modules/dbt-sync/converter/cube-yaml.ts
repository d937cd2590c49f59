/**
 * Writes cubes as the YAML files of a Cube data model. The project declares no YAML library, so
 * this is a small block-style writer for JSON values, strict about strings:
 *
 * - Every string is double-quoted, with YAML escapes for `"`, `\`, control characters, line and
 *   paragraph separators, the byte-order mark and lone surrogates. A description with `:`, `#`,
 *   quotes or newlines stays one valid scalar.
 * - `{` and `}` are always escaped (`\x7B`, `\x7D`): Cube renders a YAML file with Jinja first
 *   when its text holds `{{`, `}}`, `{%` or `%}` (and this service refuses Jinja), so no generated
 *   file may.
 * - Cube reads each string value of a YAML model as a Python f-string (YamlCompiler: `f"..."`), so
 *   `{x}` would be an expression and `\n` an escape. {@link cubeString} escapes the four characters
 *   that change meaning there (`\`, `{`, `}`, CR) as `\xHH`, which Cube turns back into the same
 *   characters; every other string reaches Cube as written. Keys are not read that way.
 */

export type YamlValue = string | number | boolean | null | YamlValue[] | { [key: string]: YamlValue };

/** A string as Cube's YAML compiler must see it to read back exactly `text`. */
export function cubeString(text: string): string {
  return text.replace(/[\\{}\r]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

const NAMED_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\t': '\\t',
  '\r': '\\r',
  '{': '\\x7B',
  '}': '\\x7D',
};

/** Any character {@link yamlString} writes otherwise than as itself (surrogates: checked one by one). */
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\{}\u0000-\u001f\u007f-\u009f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]/;

const hex = (code: number, width: number) => code.toString(16).toUpperCase().padStart(width, '0');

/**
 * A YAML double-quoted scalar. Characters YAML does not allow raw (C0 and C1 controls, DEL) and
 * those some readers treat as line breaks or strip (U+2028, U+2029, U+FEFF), plus non-characters
 * and lone surrogates, are written as escapes.
 */
export function yamlString(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  // One code unit at a time, so a lone surrogate is seen; a valid pair is kept as it is.
  let out = '"';
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    const code = text.charCodeAt(i);
    const named = NAMED_ESCAPES[ch];
    if (named !== undefined) out += named;
    else if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) out += `\\x${hex(code, 2)}`;
    else if (
      code >= 0xd800 &&
      code <= 0xdbff &&
      i + 1 < text.length &&
      isLowSurrogate(text.charCodeAt(i + 1))
    ) {
      out += ch + text[i + 1];
      i += 1;
    } else if (
      (code >= 0xd800 && code <= 0xdfff) ||
      code === 0x2028 ||
      code === 0x2029 ||
      code === 0xfeff ||
      code === 0xfffe ||
      code === 0xffff
    ) {
      out += `\\u${hex(code, 4)}`;
    } else out += ch;
  }
  return `${out}"`;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Keys this writer leaves plain: identifiers YAML cannot read as anything but a string. */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const YAML_WORDS = /^(?:true|false|null|yes|no|on|off|y|n)$/i;

function yamlKey(key: string): string {
  return PLAIN_KEY.test(key) && !YAML_WORDS.test(key) ? key : yamlString(key);
}

function scalar(value: string | number | boolean | null, where: string): string {
  if (typeof value === 'string') return yamlString(cubeString(value));
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${where}: ${value} has no JSON form`);
    return String(value);
  }
  return String(value);
}

type Mapping = { [key: string]: YamlValue };

/** Appends a sequence's lines at `indent` spaces; a nested sequence starts on a line of its own. */
function writeSequence(sequence: YamlValue[], indent: number, lines: string[], where: string): void {
  const pad = ' '.repeat(indent);
  sequence.forEach((item, i) => {
    const itemWhere = `${where}[${i}]`;
    if (!isCollection(item) || isEmpty(item)) lines.push(`${pad}- ${inline(item, itemWhere)}`);
    else if (Array.isArray(item)) {
      lines.push(`${pad}-`);
      writeSequence(item, indent + 2, lines, itemWhere);
    } else writeMapping(item, indent + 2, lines, itemWhere, true);
  });
}

/** Appends a mapping's lines at `indent` spaces; as a sequence item, its first line takes the dash. */
function writeMapping(mapping: Mapping, indent: number, lines: string[], where: string, dash = false): void {
  const pad = ' '.repeat(indent);
  let prefix = dash ? `${' '.repeat(indent - 2)}- ` : pad;
  for (const [key, item] of Object.entries(mapping)) {
    const itemWhere = `${where}.${key}`;
    if (!isCollection(item) || isEmpty(item))
      lines.push(`${prefix}${yamlKey(key)}: ${inline(item, itemWhere)}`);
    else {
      lines.push(`${prefix}${yamlKey(key)}:`);
      if (Array.isArray(item)) writeSequence(item, indent + 2, lines, itemWhere);
      else writeMapping(item, indent + 2, lines, itemWhere);
    }
    prefix = pad;
  }
}

function isCollection(value: YamlValue): value is YamlValue[] | Mapping {
  return typeof value === 'object' && value !== null;
}

function isEmpty(value: YamlValue[] | Mapping): boolean {
  return Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0;
}

/** A scalar, or an empty collection, on the line of its key or dash. */
function inline(value: YamlValue, where: string): string {
  if (Array.isArray(value)) return '[]';
  if (isCollection(value)) return '{}';
  if (value === undefined) throw new TypeError(`${where}: undefined has no JSON form`);
  return scalar(value, where);
}

/** A YAML document of one mapping, after `# ` comment lines. */
export function renderYaml(document: Mapping, comments: string[] = []): string {
  const lines = comments.map((c) => `# ${c}`);
  writeMapping(document, 0, lines, '$');
  return `${lines.join('\n')}\n`;
}
