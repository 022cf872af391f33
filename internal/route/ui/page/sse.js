// Reads a turn's Server-Sent Events with fetch (EventSource cannot send an
// Authorization header) and resumes a dropped stream with Last-Event-ID:
// the route replays every event after it, so no event is lost or shown
// twice.

import { t } from './strings.js';

// APIError is a refusal in OpenAI's shape, {"error":{"message","code"}}.
export class APIError extends Error {
  constructor(status, code, message, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

// readAPIError turns a non-2xx response into an APIError.
export async function readAPIError(resp) {
  let code = 'http_' + resp.status;
  let message = resp.statusText || t('error.refused');
  try {
    const body = await resp.json();
    if (body && body.error) {
      code = String(body.error.code || body.error.type || code);
      message = String(body.error.message || message);
    }
  } catch {
    // not JSON: keep the status
  }
  return new APIError(resp.status, code, message, resp.headers.get('Retry-After'));
}

const FINAL = new Set(['turn.completed', 'error']);
const MAX_FAILURES = 6;

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });
}

// streamEvents reads url until the turn's last event (turn.completed or
// error), calling onEvent({id, type, data}) for each. opts.headers() gives
// the identity headers of each (re)connection; opts.onReconnect(lastId,
// attempt) is told before each resume. It rejects with an APIError when
// the route refuses the stream or it cannot be resumed.
export async function streamEvents(url, opts) {
  let lastId = 0;
  let failures = 0;
  for (;;) {
    const headers = { ...opts.headers(), Accept: 'text/event-stream' };
    if (lastId > 0) headers['Last-Event-ID'] = String(lastId);
    let progressed = false;
    let resp = null;
    try {
      resp = await fetch(url, { headers, signal: opts.signal, cache: 'no-store', credentials: 'same-origin' });
    } catch (e) {
      if (opts.signal?.aborted) throw e;
    }
    if (resp && !resp.ok) {
      const err = await readAPIError(resp);
      // 5xx and 429 may pass (a replica restarting, the turn log back);
      // 401, 404 and the like will not.
      if (resp.status < 500 && resp.status !== 429) throw err;
      resp = null;
    }
    if (resp) {
      // Only reading may fail and be resumed; an error of onEvent is the
      // page's own and propagates.
      const it = frames(resp.body, opts.signal);
      try {
        for (;;) {
          let next;
          try {
            next = await it.next();
          } catch (e) {
            if (opts.signal?.aborted) throw e;
            break;
          }
          if (next.done) break;
          const frame = next.value;
          if (frame.id !== '') {
            const id = Number(frame.id);
            if (!Number.isSafeInteger(id) || id <= lastId) continue; // replayed twice: already shown
            lastId = id;
          }
          let data = {};
          try {
            data = frame.data ? JSON.parse(frame.data) : {};
          } catch {
            continue;
          }
          // An error without an id is the stream's, not the turn's (the
          // turn log was unavailable): resume from the last id.
          if (frame.event === 'error' && frame.id === '' && data.retryable) break;
          progressed = true;
          opts.onEvent({ id: lastId, type: frame.event, data });
          if (FINAL.has(frame.event)) return;
        }
      } finally {
        await it.return();
      }
    }
    failures = progressed ? 1 : failures + 1;
    if (failures > MAX_FAILURES) {
      throw new APIError(0, 'stream_lost', t('error.streamLost'));
    }
    opts.onReconnect?.(lastId, failures);
    await sleep(Math.min(250 * 2 ** (failures - 1), 4000), opts.signal);
  }
}

// frames yields the SSE frames of body as {id, event, data}.
async function* frames(body, signal) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      // Keep a trailing \r: it may be the first half of \r\n.
      const keep = buf.endsWith('\r') ? '\r' : '';
      buf = buf.slice(0, buf.length - keep.length).replace(/\r\n|\r/g, '\n') + keep;
      let end;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const frame = parse(block);
        if (frame) yield frame;
      }
      if (signal?.aborted) return;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

// parse reads one frame; comments (": keep-alive") and frames without
// data are skipped.
function parse(block) {
  let id = '';
  let event = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (!line || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (!data.length) return null;
  return { id, event, data: data.join('\n') };
}
