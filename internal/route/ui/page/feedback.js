// Thumbs up and down under an answer, with an optional comment: one
// click rates (POST v1/turns/{id}/feedback); the comment, the source the
// user expected and "made up" send the rating again with them (the last
// verdict on a turn is the one kept).

import { t } from './strings.js';

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

// The route's bounds (docs/route.md); counted in bytes there.
const MAX_COMMENT = 2000;
const MAX_SOURCE = 512;

// FeedbackView is the rating of turn n; send(body) posts a verdict and
// resolves, or rejects with an APIError.
export class FeedbackView {
  constructor(n, send) {
    this.send = send;
    this.rating = '';
    this.root = el('div', 'feedback');
    this.root.setAttribute('role', 'group');
    this.root.setAttribute('aria-label', t('feedback.group', { n }));
    this.root.append(el('span', 'feedback-ask', t('feedback.ask')));
    this.up = this.thumb('up', t('feedback.up'));
    this.down = this.thumb('down', t('feedback.down'));

    this.more = el('form', 'feedback-more');
    this.more.hidden = true;
    const id = (name) => `fb-${n}-${name}`;
    const commentLabel = el('label', '', t('feedback.comment'));
    commentLabel.htmlFor = id('comment');
    this.comment = el('textarea');
    this.comment.id = id('comment');
    this.comment.rows = 2;
    this.comment.maxLength = MAX_COMMENT;
    this.downOnly = el('div', 'feedback-down');
    const sourceLabel = el('label', '', t('feedback.source'));
    sourceLabel.htmlFor = id('source');
    this.source = el('input');
    this.source.id = id('source');
    this.source.maxLength = MAX_SOURCE;
    this.source.spellcheck = false;
    const invented = el('label', 'check');
    this.invented = el('input');
    this.invented.type = 'checkbox';
    this.invented.id = id('invented');
    invented.append(this.invented, document.createTextNode(t('feedback.invented')));
    this.downOnly.append(sourceLabel, this.source, invented);
    const submit = el('button', '', t('feedback.send'));
    submit.type = 'submit';
    this.more.append(commentLabel, this.comment, this.downOnly, submit);
    this.more.addEventListener('submit', (e) => {
      e.preventDefault();
      this.rate(this.rating, true);
    });
    this.state = el('p', 'hint feedback-state');
    this.state.setAttribute('role', 'status');
    this.root.append(this.more, this.state);
  }

  thumb(rating, label) {
    const b = el('button', 'thumb ' + rating);
    const icon = el('span', 'thumb-icon');
    icon.setAttribute('aria-hidden', 'true');
    b.append(icon);
    b.type = 'button';
    b.setAttribute('aria-label', label);
    b.title = label;
    b.setAttribute('aria-pressed', 'false');
    b.addEventListener('click', () => this.rate(rating, false));
    this.root.append(b);
    return b;
  }

  // rate sends the rating, with the form's details when withDetails.
  async rate(rating, withDetails) {
    const body = { rating };
    if (withDetails) {
      const comment = this.comment.value.trim();
      if (comment) body.comment = comment;
      if (rating === 'down') {
        const source = this.source.value.trim();
        if (source) body.expected_source = source;
        if (this.invented.checked) body.invented = true;
      }
    }
    this.state.textContent = t('feedback.sending');
    try {
      await this.send(body);
    } catch (e) {
      this.state.textContent = t('feedback.notSent', { code: e.code || t('feedback.errorCode'), message: e.message });
      return;
    }
    this.rating = rating;
    this.up.setAttribute('aria-pressed', String(rating === 'up'));
    this.down.setAttribute('aria-pressed', String(rating === 'down'));
    this.downOnly.hidden = rating !== 'down';
    this.more.hidden = false;
    this.state.textContent = t(withDetails ? 'feedback.thanksComment' : 'feedback.thanks');
  }
}
