// The route's page: asks through the route's own API (POST v1/turns, then
// the turn's event stream) with the identity the page was given, and
// shows each turn as it arrives. The conversation is kept in memory, so
// follow-up questions carry it; "New conversation" forgets it.

import { Identity } from './identity.js';
import { APIError, readAPIError, streamEvents } from './sse.js';
import { FeedbackView } from './feedback.js';
import { TurnView } from './turn.js';
import { localize, t } from './strings.js';

// The route accepts at most 64 messages a turn (docs/route.md).
const MAX_HISTORY = 62;

const $ = (id) => document.getElementById(id);

// api resolves an API path against the page's own address, so a route
// published under a path prefix by its proxy still reaches its API.
function api(path) {
  return new URL(path.replace(/^\//, ''), document.baseURI).href;
}

function conversationID() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

class Page {
  constructor() {
    this.identity = new Identity(window.sessionStorage);
    this.history = [];
    this.conversation = conversationID();
    this.turns = 0;
    this.views = new Map();
    this.running = null; // the AbortController of the turn in flight
    this.form = $('ask');
    this.q = $('q');
    this.status = $('status');
    this.wire();
    this.showTokenState();
    this.loadDemo();
  }

  wire() {
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.ask();
    });
    this.q.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.ask();
      }
    });
    $('stop').addEventListener('click', () => this.running?.abort());
    $('new').addEventListener('click', () => this.newConversation());
    $('token-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const problem = this.identity.setToken($('token').value);
      $('token').value = '';
      this.showTokenState(problem);
    });
    $('token-forget').addEventListener('click', () => {
      this.identity.forgetToken();
      this.showTokenState();
    });
    // A citation marker shows its turn's sources and moves focus there.
    $('conversation').addEventListener('click', (e) => {
      const a = e.target.closest('a.cite');
      if (!a) return;
      e.preventDefault();
      const view = this.views.get(Number(a.dataset.turn));
      const target = view && document.getElementById(view.sourceId(a.dataset.marker));
      if (!target) return;
      view.showSources();
      target.scrollIntoView({ block: 'nearest' });
      target.focus();
    });
  }

  showTokenState(problem = '') {
    const state = $('token-state');
    state.textContent = problem || t(this.identity.token ? 'token.set' : 'token.none');
    state.classList.toggle('problem', !!problem);
  }

  async loadDemo() {
    let demo = null;
    try {
      demo = await this.identity.demoIdentities();
    } catch {
      demo = null;
    }
    if (!demo) return;
    const select = $('demo-identity');
    for (const id of demo.identities) {
      const o = document.createElement('option');
      o.value = id.id;
      o.textContent = id.label;
      select.append(o);
    }
    $('demo-note').textContent = demo.notice;
    this.identity.demo = select.value;
    select.addEventListener('change', () => {
      this.identity.demo = select.value;
    });
    $('demo').hidden = false;
  }

  setBusy(busy) {
    $('send').disabled = busy;
    $('stop').hidden = !busy;
    this.form.setAttribute('aria-busy', String(busy));
  }

  newConversation() {
    this.running?.abort();
    this.history = [];
    this.conversation = conversationID();
    this.views.clear();
    $('conversation').replaceChildren();
    for (const s of document.querySelectorAll('.turn-sources')) s.remove();
    $('sources-empty').hidden = false;
    this.status.textContent = t('status.new');
    this.q.focus();
  }

  async ask() {
    const question = this.q.value.trim();
    if (!question || this.running) return;
    const controller = new AbortController();
    this.running = controller;
    this.setBusy(true);
    this.q.value = '';
    const n = ++this.turns;
    const view = new TurnView(n, question, $('conversation'), $('sources'));
    this.views.set(n, view);
    view.article.scrollIntoView({ block: 'nearest' });
    this.status.textContent = t('status.asking');
    const messages = [...this.history, { role: 'user', content: question }];
    let completed = false;
    try {
      const turn = await this.submit(messages, controller.signal);
      this.status.textContent = t('status.answering');
      await streamEvents(api(turn.stream_url), {
        signal: controller.signal,
        headers: () => this.identity.headers(),
        onEvent: (ev) => {
          view.status('');
          view.event(ev);
          if (ev.type === 'turn.completed') completed = true;
        },
        onReconnect: (lastId, attempt) => view.status(t('status.reconnect', { id: lastId, attempt })),
      });
      this.status.textContent = t(completed ? 'status.answered' : 'status.failed');
      if (completed && document.body.dataset.feedback !== 'off') {
        view.footer.before(new FeedbackView(n, (body) => this.rate(turn.turn_id, body)).root);
      }
    } catch (e) {
      if (controller.signal.aborted) {
        view.stopped();
        this.status.textContent = t('status.stopped');
      } else if (e instanceof APIError) {
        this.refused(view, e);
      } else {
        // A bug of the page: shown, and left uncaught for the console.
        view.failed('page_error', String(e));
        this.status.textContent = t('status.pageFailed');
        throw e;
      }
    } finally {
      if (this.running === controller) this.running = null;
      this.setBusy(false);
    }
    // Only a finished exchange joins the history, so it stays a
    // user/assistant alternation the route accepts.
    if (completed && this.views.has(n)) {
      this.history.push({ role: 'user', content: question }, { role: 'assistant', content: view.text });
      while (this.history.length > MAX_HISTORY) this.history.splice(0, 2);
    }
  }

  // submit posts the turn; it rejects with an APIError when the route
  // refuses it or cannot be reached.
  async submit(messages, signal) {
    let resp;
    try {
      resp = await fetch(api('v1/turns'), {
        method: 'POST',
        headers: this.identity.headers({ 'Content-Type': 'application/json' }),
        body: JSON.stringify({ messages, conversation_id: this.conversation }),
        signal,
        credentials: 'same-origin',
      });
    } catch (e) {
      if (signal.aborted) throw e;
      throw new APIError(0, 'network', t('error.unreachable'));
    }
    if (!resp.ok) throw await readAPIError(resp);
    const turn = await resp.json().catch(() => null);
    if (!turn || typeof turn.stream_url !== 'string' || !turn.stream_url.startsWith('/v1/turns/')) {
      throw new APIError(resp.status, 'bad_response', t('error.noTurn'));
    }
    return turn;
  }

  // rate posts a verdict on the turn; it rejects with an APIError when
  // the route refuses it or cannot be reached.
  async rate(turnID, verdict) {
    let resp;
    try {
      resp = await fetch(api(`v1/turns/${encodeURIComponent(turnID)}/feedback`), {
        method: 'POST',
        headers: this.identity.headers({ 'Content-Type': 'application/json' }),
        body: JSON.stringify(verdict),
        credentials: 'same-origin',
      });
    } catch {
      throw new APIError(0, 'network', t('error.unreachable'));
    }
    if (!resp.ok) throw await readAPIError(resp);
  }

  refused(view, e) {
    const message = e.retryAfter ? t('error.retry', { message: e.message, seconds: e.retryAfter }) : e.message;
    view.failed(e.code, message);
    this.status.textContent = t('status.refused', { code: e.code });
    if (e.status === 401) {
      // No identity reached the route: a JWT route wants a token.
      const signin = $('signin');
      signin.open = true;
      this.showTokenState(t('token.needed'));
      $('token').focus();
    }
  }
}

function start() {
  localize(document);
  new Page();
}

if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', start);
} else {
  start();
}
