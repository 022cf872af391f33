// A small Markdown renderer for answers. It builds DOM nodes with
// createElement and text nodes only: model output and document text are
// never parsed as HTML, so a "<script>" in an answer is shown as text.
// It covers what answers use: paragraphs, headings, lists, quotes, code
// blocks, simple tables, inline code, bold/italic, http(s) links and the
// citation markers [S1]. Images are never rendered in an answer (the
// sources panel shows them): an image becomes a link.

import { t } from './strings.js';

const MAX_DEPTH = 4;

// safeURL returns an absolute http(s) URL, or "" for anything else
// (javascript:, data:, relative paths).
export function safeURL(raw) {
  try {
    const u = new URL(String(raw).trim());
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : '';
  } catch {
    return '';
  }
}

// renderMarkdown returns a DocumentFragment for text. opts.cite(marker)
// returns the element for a citation marker (or null to keep it as text).
export function renderMarkdown(text, opts = {}) {
  const out = document.createDocumentFragment();
  blocks(String(text).replace(/\r\n?/g, '\n').split('\n'), out, opts, 0);
  return out;
}

function el(tag, className) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  return e;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const ITEM = /^( {0,6})([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function blocks(lines, parent, opts, depth) {
  let para = [];
  const flush = () => {
    if (para.length) {
      const p = el('p');
      inline(para.join(' ').trim(), p, opts, 0);
      parent.append(p);
      para = [];
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m;
    if ((m = FENCE.exec(line))) {
      flush();
      const fence = m[1];
      const body = [];
      // An unclosed fence (the answer is still streaming) runs to the end.
      for (i++; i < lines.length; i++) {
        const close = lines[i].trim();
        if (close.startsWith(fence[0].repeat(fence.length)) && /^([`~])\1*$/.test(close)) break;
        body.push(lines[i]);
      }
      const pre = el('pre');
      const code = el('code');
      if (m[2]) code.dataset.lang = m[2];
      code.textContent = body.join('\n');
      pre.append(code);
      parent.append(pre);
    } else if (!line.trim()) {
      flush();
    } else if ((m = HEADING.exec(line))) {
      flush();
      // The page's own headings are h1/h2: an answer's start at h3.
      const h = el('h' + Math.min(6, m[1].length + 2));
      inline(m[2], h, opts, 0);
      parent.append(h);
    } else if (RULE.test(line) && !para.length) {
      parent.append(el('hr'));
    } else if (QUOTE.test(line) && depth < MAX_DEPTH) {
      flush();
      const quoted = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
        quoted.push(m[1]);
        i++;
      }
      i--;
      const q = el('blockquote');
      blocks(quoted, q, opts, depth + 1);
      parent.append(q);
    } else if ((m = ITEM.exec(line)) && depth < MAX_DEPTH && (!para.length || m[1] === '')) {
      flush();
      i = list(lines, i, parent, opts, depth);
    } else if (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      flush();
      i = table(lines, i, parent, opts);
    } else {
      para.push(line.trim());
    }
  }
  flush();
}

// list renders the list starting at lines[start]; it returns the index of
// its last line. Lines indented under an item belong to it (nested lists,
// continued text).
function list(lines, start, parent, opts, depth) {
  const first = ITEM.exec(lines[start]);
  const ordered = /\d/.test(first[2]);
  const indent = first[1].length;
  const l = el(ordered ? 'ol' : 'ul');
  if (ordered && parseInt(first[2], 10) !== 1) l.start = parseInt(first[2], 10);
  let item = null;
  let i = start;
  for (; i < lines.length; i++) {
    const line = lines[i];
    const m = ITEM.exec(line);
    if (m && m[1].length <= indent + 1 && /\d/.test(m[2]) === ordered) {
      if (item) finishItem(item, l, opts, depth);
      item = [m[3]];
      continue;
    }
    if (m && m[1].length <= indent + 1) break; // a list of the other kind
    if (!line.trim()) {
      // A blank line ends the list unless the next line continues it.
      const next = lines[i + 1];
      if (next === undefined) break;
      const nm = ITEM.exec(next);
      if ((nm && nm[1].length > indent + 1) || (!nm && /^\s{2,}\S/.test(next))) {
        item.push('');
        continue;
      }
      if (nm && nm[1].length <= indent + 1 && /\d/.test(nm[2]) === ordered) continue;
      break;
    }
    if (/^\s{2,}\S/.test(line) || (!ITEM.test(line) && !FENCE.test(line) && !HEADING.test(line) && !QUOTE.test(line))) {
      item.push(line.replace(/^\s{1,8}/, ''));
      continue;
    }
    break;
  }
  if (item) finishItem(item, l, opts, depth);
  parent.append(l);
  return i - 1;
}

function finishItem(itemLines, l, opts, depth) {
  const li = el('li');
  // A single-paragraph item stays inline (no <p> inside the <li>).
  if (itemLines.every((x) => !ITEM.test(x) && !FENCE.test(x) && x.trim() !== '')) {
    inline(itemLines.join(' ').trim(), li, opts, 0);
  } else {
    blocks(itemLines, li, opts, depth + 1);
  }
  l.append(li);
}

function cells(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|')) s = s.slice(0, -1);
  return s.split('|').map((c) => c.trim());
}

function table(lines, start, parent, opts) {
  const t = el('table');
  const head = el('thead');
  const hr = el('tr');
  for (const c of cells(lines[start])) {
    const th = el('th');
    th.scope = 'col';
    inline(c, th, opts, 0);
    hr.append(th);
  }
  head.append(hr);
  t.append(head);
  const body = el('tbody');
  let i = start + 2;
  for (; i < lines.length && lines[i].includes('|') && lines[i].trim(); i++) {
    const tr = el('tr');
    for (const c of cells(lines[i])) {
      const td = el('td');
      inline(c, td, opts, 0);
      tr.append(td);
    }
    body.append(tr);
  }
  t.append(body);
  const wrap = el('div', 'table-wrap');
  wrap.append(t);
  parent.append(wrap);
  return i - 1;
}

const MARKER = /^\[(S\d+)\]/;
const BARE_URL = /^https?:\/\/[^\s<>"'`\][()]+/;
const AUTOLINK = /^<(https?:\/\/[^\s<>]+)>/;

// inline appends text's inline Markdown to parent.
function inline(text, parent, opts, depth) {
  let plain = '';
  const flush = () => {
    if (plain) parent.append(document.createTextNode(plain));
    plain = '';
  };
  const emit = (node) => {
    flush();
    parent.append(node);
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const rest = text.slice(i);
    let m;
    if (c === '\\' && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1])) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      const run = /^`+/.exec(rest)[0];
      const end = text.indexOf(run, i + run.length);
      if (end > 0) {
        const code = el('code');
        code.textContent = text.slice(i + run.length, end).trim() || text.slice(i + run.length, end);
        emit(code);
        i = end + run.length;
        continue;
      }
      plain += run;
      i += run.length;
      continue;
    }
    if (c === '[' && (m = MARKER.exec(rest))) {
      const node = opts.cite ? opts.cite(m[1]) : null;
      if (node) emit(node);
      else plain += m[0];
      i += m[0].length;
      continue;
    }
    if ((c === '[' || (c === '!' && text[i + 1] === '[')) && depth < MAX_DEPTH) {
      const link = parseLink(text, c === '!' ? i + 1 : i);
      if (link) {
        const href = safeURL(link.url);
        if (c === '!') {
          // Never an <img> in the answer: the link names the image.
          const label = t('markdown.image', { label: link.label || t('markdown.untitled') });
          if (href) emit(anchor(href, label, 'image-link'));
          else plain += label;
        } else if (href) {
          const a = anchor(href, '');
          inline(link.label, a, { ...opts, cite: null }, depth + 1);
          emit(a);
        } else {
          flush();
          inline(link.label, parent, opts, depth + 1);
        }
        i = link.end;
        continue;
      }
    }
    if (c === '<' && (m = AUTOLINK.exec(rest)) && safeURL(m[1])) {
      emit(anchor(safeURL(m[1]), m[1]));
      i += m[0].length;
      continue;
    }
    if (c === 'h' && (i === 0 || /[\s(]/.test(text[i - 1])) && (m = BARE_URL.exec(rest))) {
      const url = m[0].replace(/[.,;:!?'"]+$/, '');
      if (safeURL(url)) {
        emit(anchor(safeURL(url), url));
        i += url.length;
        continue;
      }
    }
    if ((c === '*' || c === '_' || c === '~') && depth < MAX_DEPTH) {
      const span = emphasis(text, i);
      if (span) {
        const node = el(span.tag);
        if (span.inner) {
          const inner = el(span.inner);
          inline(span.text, inner, opts, depth + 1);
          node.append(inner);
        } else {
          inline(span.text, node, opts, depth + 1);
        }
        emit(node);
        i = span.end;
        continue;
      }
      const run = /^([*_~])\1*/.exec(rest)[0];
      plain += run;
      i += run.length;
      continue;
    }
    plain += c;
    i++;
  }
  flush();
}

function anchor(href, text, className) {
  const a = el('a', className);
  a.href = href;
  a.rel = 'noopener noreferrer nofollow';
  a.target = '_blank';
  if (text) a.textContent = text;
  return a;
}

// parseLink reads [label](url "title") at text[start] === '['.
function parseLink(text, start) {
  let level = 0;
  let close = -1;
  for (let j = start; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '[') level++;
    else if (text[j] === ']' && --level === 0) {
      close = j;
      break;
    }
  }
  if (close < 0 || text[close + 1] !== '(') return null;
  const m = /^\(\s*<?([^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/.exec(text.slice(close + 1));
  if (!m) return null;
  return { label: text.slice(start + 1, close), url: m[1], end: close + 1 + m[0].length };
}

// emphasis finds the span that a run of * _ or ~ at text[i] opens:
// 1 = em, 2 = strong (~~ = del), 3 = strong em. An underscore inside a
// word (snake_case) opens nothing.
function emphasis(text, i) {
  const ch = text[i];
  let n = 1;
  while (text[i + n] === ch) n++;
  if (ch === '~' ? n !== 2 : n > 3) return null;
  const after = text[i + n];
  if (after === undefined || /\s/.test(after)) return null;
  if (ch === '_' && i > 0 && /[\p{L}\p{N}]/u.test(text[i - 1])) return null;
  const delim = ch.repeat(n);
  for (let j = text.indexOf(delim, i + n + 1); j > 0; j = text.indexOf(delim, j + 1)) {
    if (/\s/.test(text[j - 1]) || text[j + n] === ch) continue;
    if (ch === '_' && /[\p{L}\p{N}]/u.test(text[j + n] || '')) continue;
    const inner = text.slice(i + n, j);
    if (ch === '~') return { tag: 'del', text: inner, end: j + n };
    if (n === 3) return { tag: 'strong', inner: 'em', text: inner, end: j + n };
    return { tag: n === 2 ? 'strong' : 'em', text: inner, end: j + n };
  }
  return null;
}
