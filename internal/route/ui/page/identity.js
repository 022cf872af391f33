// Who asks. Behind a trusted sign-in proxy (oauth2-proxy and the like) the
// page sends nothing: the proxy adds the identity headers. With a JWT
// route the user pastes a bearer token, kept in this tab's
// sessionStorage only (never localStorage, never a cookie). The page only
// ever sends what it is given; the route decides what it may see.

import { t } from './strings.js';

const TOKEN_KEY = 'ragroute.token';
// RFC 6750's b64token: what may follow "Bearer " in the header.
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
// The demo's loopback proxy (make demo) plays the sign-in proxy with
// identities the page may pick: it adds this meta element to the page it
// passes on and serves the list. A route does neither, so a real page
// never asks for the list.
const DEMO_META = 'meta[name="ragroute-demo-identities"]';
export const DEMO_HEADER = 'X-Ragroute-Demo-Identity';

export class Identity {
  constructor(storage) {
    this.storage = storage;
    this.demo = '';
  }

  get token() {
    try {
      return this.storage.getItem(TOKEN_KEY) || '';
    } catch {
      return ''; // storage disabled: no token
    }
  }

  // setToken keeps a token; it returns an error message for a value that
  // is not one.
  setToken(raw) {
    const token = String(raw).trim().replace(/^Bearer\s+/i, '');
    if (!token) return t('token.empty');
    if (!TOKEN.test(token)) return t('token.invalid');
    this.storage.setItem(TOKEN_KEY, token);
    return '';
  }

  forgetToken() {
    this.storage.removeItem(TOKEN_KEY);
  }

  // headers are the identity headers of one request, added to extra.
  headers(extra = {}) {
    const h = { ...extra };
    const token = this.token;
    if (token) h.Authorization = 'Bearer ' + token;
    if (this.demo) h[DEMO_HEADER] = this.demo;
    return h;
  }

  // demoIdentities returns the demo proxy's identities, or null when the
  // page is not behind it (a real route: nothing is fetched).
  async demoIdentities(signal) {
    if (!document.querySelector(DEMO_META)) return null;
    const resp = await fetch('ui/demo-identities.json', { signal, cache: 'no-store' });
    if (!resp.ok) return null;
    const body = await resp.json();
    if (!body || !Array.isArray(body.identities)) return null;
    const ids = body.identities.filter((x) => x && typeof x.id === 'string' && typeof x.label === 'string');
    return ids.length ? { notice: String(body.notice || ''), identities: ids } : null;
  }
}
