// One turn on the page: the question, what the route did (searches, the
// agentic rounds), the answer as it streams, and its sources in the
// sources panel. Everything from the route is set as text.

import { renderMarkdown, safeURL } from './markdown.js';
import { num, t } from './strings.js';

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function ms(n) {
  return n >= 1000 ? t('unit.s', { n: num(n / 1000, 1) }) : t('unit.ms', { n: Math.round(n) });
}

function quote(text) {
  return t('activity.quote', { text });
}

function sourceCount(n) {
  return t('source.count', { n });
}

// Stages in the order a turn runs them; others follow alphabetically.
const STAGES = ['condense', 'model_decide', 'embed', 'retrieve', 'web_search', 'rerank', 'reassemble', 'model_rephrase',
  'model_research', 'extract', 'model_answer', 'grounding'];

export class TurnView {
  // n numbers the turn on the page; panel is the sources <aside>.
  constructor(n, question, conversation, panel) {
    this.n = n;
    this.text = '';
    this.sources = new Map();
    this.rounds = new Map();
    this.grounding = [];
    this.renderQueued = false;

    this.article = el('article', 'turn');
    this.article.id = `turn-${n}`;
    this.article.dataset.state = 'asking';
    const q = el('h2', 'question');
    q.id = `turn-${n}-q`;
    q.append(el('span', 'visually-hidden', t('turn.question')), document.createTextNode(question));
    this.article.setAttribute('aria-labelledby', q.id);
    this.activity = el('ol', 'activity');
    this.activity.setAttribute('aria-label', t('turn.activity'));
    this.answer = el('div', 'answer');
    this.answer.setAttribute('aria-live', 'polite');
    // Announced once complete, not re-read at every token.
    this.answer.setAttribute('aria-busy', 'true');
    this.answer.setAttribute('aria-label', t('turn.answer'));
    this.notice = el('p', 'notice');
    this.notice.hidden = true;
    this.error = el('p', 'error');
    this.error.setAttribute('role', 'alert');
    this.error.hidden = true;
    this.footer = el('div', 'turn-footer');
    this.article.append(q, this.activity, this.answer, this.notice, this.error, this.footer);
    conversation.append(this.article);

    this.panel = panel;
    this.sourcesSection = el('section', 'turn-sources');
    this.sourcesSection.id = `sources-${n}`;
    this.sourcesSection.dataset.turn = String(n);
    this.sourcesSection.setAttribute('aria-label', t('turn.sources', { n }));
    this.sourcesSection.append(el('p', 'for', t('turn.for', { question })));
    this.sourceList = el('ol', 'source-list');
    this.sourcesSection.append(this.sourceList);
    panel.append(this.sourcesSection);
    this.showSources();
  }

  // showSources shows this turn's sources in the panel, hiding others.
  showSources() {
    for (const s of this.panel.querySelectorAll('.turn-sources')) s.hidden = s !== this.sourcesSection;
    const empty = this.panel.querySelector('#sources-empty');
    if (empty) empty.hidden = this.sources.size > 0;
  }

  set state(s) {
    this.article.dataset.state = s;
    if (s !== 'streaming' && s !== 'asking') this.answer.setAttribute('aria-busy', 'false');
  }

  // event shows one event of the turn's stream.
  event(ev) {
    const d = ev.data || {};
    switch (ev.type) {
      case 'turn.started':
        this.state = 'streaming';
        this.mode = d.mode;
        break;
      case 'tool.call':
        this.toolCall(d);
        break;
      case 'retrieval':
        this.retrieval(d);
        break;
      case 'research':
        this.note(this.activity, 'research', t('activity.research',
          { queries: (d.queries || []).map(quote).join(', '), rephrased: quote(d.rephrased), found: d.found }));
        break;
      case 'round.started':
        this.round(d.round);
        break;
      case 'memory.saved':
        this.memorySaved(d);
        break;
      case 'finalized':
      case 'finalize.forced':
        this.finalized(ev.type, d);
        break;
      case 'delta':
        this.text += String(d.text || '');
        this.queueRender();
        break;
      case 'citation':
        this.cited(d);
        break;
      case 'grounding':
        this.grounding.push(d);
        break;
      case 'answer.replaced':
        this.replaced(d);
        break;
      case 'turn.completed':
        this.completed(d);
        break;
      case 'error':
        this.failed(d.code, d.message);
        break;
      default:
        break; // an event this page does not know yet
    }
  }

  replaced(d) {
    let reason = d.reason || t('turn.replacedReason');
    if (typeof d.grounded_ratio === 'number') reason = t('turn.replacedRatio', { reason, pct: Math.round(d.grounded_ratio * 100) });
    this.note(this.activity, 'replaced', t('turn.replaced', { reason }));
  }

  note(list, kind, text) {
    const li = el('li', kind, text);
    list.append(li);
    return li;
  }

  // activityList is where an event of round r goes: the round's
  // collapsed <details>, or the turn's own list.
  activityList(r) {
    return r ? this.round(r) : this.activity;
  }

  round(r) {
    let list = this.rounds.get(r);
    if (!list) {
      const li = el('li', 'round');
      const details = el('details');
      details.append(el('summary', '', t('activity.round', { n: r })));
      list = el('ol', 'round-activity');
      details.append(list);
      li.append(details);
      this.activity.append(li);
      this.rounds.set(r, list);
    }
    return list;
  }

  toolCall(d) {
    const li = this.note(this.activityList(d.round), 'tool', '');
    li.append(el('span', 'tool-name', d.name || t('activity.tool')));
    li.append(document.createTextNode(d.query ? ': ' + quote(d.query) : ''));
    if (d.status === 'rejected') {
      li.classList.add('rejected');
      li.append(document.createTextNode(t('activity.rejected', { reason: d.reason || '' })));
    }
  }

  retrieval(d) {
    const sources = Array.isArray(d.sources) ? d.sources : [];
    const bits = [t('activity.searched', { query: quote(d.query || '') })];
    if (d.intent) bits.push(t('activity.intent', { intent: d.intent }));
    if (d.cache_hit) bits.push(t('activity.cacheHit'));
    bits.push(sourceCount(sources.length));
    const li = this.note(this.activityList(d.round), 'retrieval', bits.join(' · '));
    if (d.round) {
      // A research round's fragments (F1…) are listed in its round only.
      const l = el('ul', 'found');
      for (const s of sources) l.append(el('li', '', `${s.marker} ${sourceLabel(s)}`));
      li.append(l);
      return;
    }
    for (const s of sources) this.addSource(s);
  }

  memorySaved(d) {
    const list = this.round(d.round);
    const li = this.note(list, 'saved', t('activity.saved'));
    const l = el('ul');
    for (const f of d.fragments || []) l.append(el('li', '', `${f.id} ${f.title || ''}${f.note ? ' — ' + f.note : ''}`));
    li.append(l);
    if ((d.open || []).length) li.append(el('p', 'hint', t('activity.open', { items: d.open.join('; ') })));
    if (d.next) li.append(el('p', 'hint', t('activity.next', { next: d.next })));
  }

  finalized(type, d) {
    const fragments = (d.fragments || []).join(', ') || t('activity.noFragments');
    let text = t('activity.finalized', { fragments });
    if (type === 'finalize.forced') {
      text = d.reason ? t('activity.forcedWhy', { fragments, reason: d.reason }) : t('activity.forced', { fragments });
    }
    this.note(d.round ? this.round(d.round) : this.activity, 'finalized', text);
  }

  addSource(s) {
    const marker = String(s.marker || '');
    const li = el('li', 'source');
    li.id = this.sourceId(marker);
    li.tabIndex = -1;
    const head = el('p', 'source-head');
    head.append(el('span', 'marker', marker));
    const check = el('span', 'cited-mark');
    const tick = el('span', '', '✔');
    tick.setAttribute('aria-hidden', 'true');
    check.append(tick, el('span', 'visually-hidden', t('source.cited')));
    check.hidden = true;
    head.append(check);
    head.append(el('span', 'source-title', sourceLabel(s)));
    li.append(head);
    const uri = String(s.source_uri || '');
    if (uri) {
      const href = safeURL(uri);
      const p = el('p', 'source-uri');
      if (href) {
        const a = el('a', '', uri);
        a.href = href;
        a.rel = 'noopener noreferrer';
        a.target = '_blank';
        p.append(a);
      } else {
        p.textContent = uri;
      }
      li.append(p);
    }
    const meta = [];
    if (s.kind) meta.push(s.kind);
    if (typeof s.score === 'number') meta.push(t('source.score', { score: num(s.score, 2) }));
    if (s.reassembled) meta.push(t('source.whole'));
    if (meta.length) li.append(el('p', 'hint', meta.join(' · ')));
    // Images by URL: loaded here, by the browser, never in the answer.
    for (const url of s.image_urls || []) {
      const src = safeURL(url);
      if (!src) continue;
      const img = el('img', 'source-image');
      img.alt = t('source.image', { marker, title: s.title || url });
      img.loading = 'lazy';
      img.referrerPolicy = 'no-referrer';
      // An image the browser cannot load leaves its address instead.
      img.addEventListener('error', () => {
        const p = el('p', 'hint image-missing', t('source.imageMissing'));
        const a = el('a', '', url);
        a.href = src;
        a.rel = 'noopener noreferrer';
        a.target = '_blank';
        p.append(a);
        img.replaceWith(p);
      }, { once: true });
      img.src = src;
      li.append(img);
    }
    const old = this.sources.get(marker);
    if (old) old.el.replaceWith(li);
    else this.sourceList.append(li);
    this.sources.set(marker, { el: li, check, cited: old?.cited });
    if (old?.cited) this.markCited(marker, old.cited === 'inferred');
    this.showSources();
  }

  sourceId(marker) {
    return `src-${this.n}-${marker}`;
  }

  cited(d) {
    this.markCited(String(d.marker || ''), !!d.inferred);
  }

  markCited(marker, inferred) {
    const s = this.sources.get(marker);
    if (!s) return;
    if (s.cited === 'cited') return; // an explicit citation outranks an inferred one
    s.cited = inferred ? 'inferred' : 'cited';
    s.check.hidden = false;
    s.check.title = t(inferred ? 'source.inferredTitle' : 'source.citedTitle');
    s.check.lastChild.textContent = t(inferred ? 'source.citedInferred' : 'source.cited');
    s.el.classList.add('cited');
    s.el.classList.toggle('inferred', inferred);
  }

  // cite is the link a marker [S1] becomes in the answer; a marker of no
  // source this turn (a model may invent one) stays text.
  cite(marker) {
    if (!this.sources.has(marker)) return null;
    const a = el('a', 'cite', `[${marker}]`);
    a.href = '#' + this.sourceId(marker);
    a.dataset.turn = String(this.n);
    a.dataset.marker = marker;
    a.setAttribute('aria-label', t('source.link', { marker }));
    return a;
  }

  queueRender() {
    if (this.renderQueued) return;
    this.renderQueued = true;
    requestAnimationFrame(() => this.render());
  }

  render() {
    this.renderQueued = false;
    this.answer.replaceChildren(renderMarkdown(this.text, { cite: (m) => this.cite(m) }));
  }

  completed(d) {
    this.render();
    this.state = 'done';
    if (d.not_found) {
      this.article.classList.add('not-found');
      this.notice.textContent = t('turn.notFound');
      this.notice.hidden = false;
    }
    const details = el('details', 'timings');
    const summary = [];
    const timings = d.timings_ms || {};
    if (typeof timings.total === 'number') summary.push(t('details.took', { time: ms(timings.total) }));
    summary.push(sourceCount(this.sources.size));
    if (d.cache_hit) summary.push(t('activity.cacheHit'));
    if (typeof d.grounded_ratio === 'number') summary.push(t('details.grounded', { pct: Math.round(d.grounded_ratio * 100) }));
    if (d.rounds) summary.push(t('details.rounds', { n: d.rounds }));
    if (d.withheld_sentences) summary.push(t('details.withheld', { n: d.withheld_sentences }));
    if (d.links_removed) summary.push(t('details.linksRemoved', { n: d.links_removed }));
    details.append(el('summary', '', t('details.summary', { items: summary.join(' · ') })));
    const dl = el('dl', 'stages');
    // The stages are the route's names (timings_ms), shown as sent.
    const keys = Object.keys(timings).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    for (const k of keys) {
      dl.append(el('dt', '', k.replace(/_/g, ' ')), el('dd', '', ms(Number(timings[k]) || 0)));
    }
    if (d.usage) {
      dl.append(el('dt', '', t('details.tokens')),
        el('dd', '', t('details.tokensInOut', { in: d.usage.prompt_tokens || 0, out: d.usage.completion_tokens || 0 })));
    }
    details.append(dl);
    const unsupported = this.grounding.filter((g) => g.status === 'unsupported');
    if (unsupported.length) {
      details.append(el('p', 'hint', t('details.unsupported')));
      const l = el('ul', 'unsupported');
      for (const g of unsupported) l.append(el('li', '', (g.withheld ? t('details.withheldMark') : '') + (g.sentence || '')));
      details.append(l);
    }
    this.footer.append(details);
    if (this.sources.size) {
      const b = el('button', 'show-sources', t('source.show', { n: this.sources.size }));
      b.type = 'button';
      b.addEventListener('click', () => {
        this.showSources();
        this.panel.querySelector('h2').scrollIntoView({ block: 'nearest' });
        this.sourceList.querySelector('.source')?.focus();
      });
      this.footer.append(b);
    }
  }

  failed(code, message) {
    this.render();
    this.state = 'error';
    this.error.textContent = t('turn.error', { code: code || t('turn.errorCode'), message: message || t('turn.errorMessage') });
    this.error.hidden = false;
  }

  stopped() {
    this.render();
    this.state = 'stopped';
    this.notice.textContent = t('turn.stopped');
    this.notice.hidden = false;
  }

  status(text) {
    this.footer.querySelector('.reconnect')?.remove();
    if (text) this.footer.append(el('p', 'hint reconnect', text));
  }
}

// rank orders stages: the known ones as they run, then agentic rounds,
// then unknown ones, the total last.
function rank(stage) {
  if (stage === 'total') return 1000;
  if (stage.startsWith('round_')) return 500;
  const i = STAGES.indexOf(stage);
  return i < 0 ? 600 : i;
}

function sourceLabel(s) {
  const path = Array.isArray(s.heading_path) ? s.heading_path.filter((h) => h && h !== s.title) : [];
  return [s.title || s.source_uri || t('source.untitled'), ...path].join(' › ');
}
