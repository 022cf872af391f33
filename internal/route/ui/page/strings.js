// The page's own words, in English and Russian: one table, one entry per
// string. The language is the browser's: the first of navigator.languages
// (then navigator.language) whose primary subtag is one of the table's;
// anything else gets English. Only the page's words are translated: what
// the route sends (the answer, the not-found wording, an error's message
// and code, titles of sources) is shown as it came.
//
// An entry is a string, or for a count an object of plural forms by
// Intl.PluralRules category; {name} in it is filled from t()'s values.
// index.html names its entries with data-i18n (text), data-i18n-placeholder,
// data-i18n-aria-label and data-i18n-title; localize() fills them in.

export const STRINGS = {
  en: {
    'page.title': 'Ask the docs · ragroute',
    'page.heading': 'Ask the docs',
    'page.skip': 'Skip to the question',
    'demo.only': 'Demo only',
    'demo.askAs': ': ask as',
    'token.summary': 'Sign-in token',
    'token.hint': 'Only for routes that verify a JWT. Behind a sign-in proxy, leave it empty. ' +
      'The token stays in this tab’s session storage and is sent only to this route.',
    'token.label': 'Bearer token',
    'token.use': 'Use token',
    'token.forget': 'Forget token',
    'token.set': 'A token is set for this tab.',
    'token.none': 'No token set.',
    'token.empty': 'Paste a token first.',
    'token.invalid': 'That is not a bearer token (it holds spaces or other characters a token cannot).',
    'token.needed': 'The route needs a verified identity: paste a token (JWT routes) or sign in through your proxy.',
    'ask.conversation': 'Conversation',
    'ask.label': 'Your question',
    'ask.placeholder': 'Ask a question',
    'ask.hint': 'Enter asks, Shift+Enter starts a new line. Follow-up questions keep the conversation.',
    'ask.send': 'Ask',
    'ask.stop': 'Stop',
    'ask.new': 'New conversation',
    'sources.heading': 'Sources',
    'sources.empty': 'The documents an answer is drawn from appear here; ✔ marks those it cites.',
    'status.new': 'New conversation: earlier questions are forgotten.',
    'status.asking': 'Asking…',
    'status.answering': 'Answering…',
    'status.answered': 'Answered.',
    'status.failed': 'The turn failed.',
    'status.stopped': 'Stopped.',
    'status.pageFailed': 'The page failed.',
    'status.refused': 'Refused: {code}.',
    'status.reconnect': 'Connection lost; resuming after event {id} (attempt {attempt})…',
    'error.unreachable': 'The route could not be reached.',
    'error.noTurn': 'The route answered without a turn to stream.',
    'error.refused': 'request refused',
    'error.streamLost': 'The answer stream broke off and could not be resumed.',
    'error.retry': '{message} Try again in {seconds} s.',
    'turn.question': 'Question: ',
    'turn.activity': 'What the route did',
    'turn.answer': 'Answer',
    'turn.sources': 'Sources for question {n}',
    'turn.for': 'For: {question}',
    'turn.notFound': 'Not found in the documentation you may read: the answer above is the route’s own wording, not a guess.',
    'turn.error': 'Error ({code}): {message}',
    'turn.errorCode': 'unknown',
    'turn.errorMessage': 'the turn failed',
    'turn.stopped': 'Stopped: the rest of this answer was not shown.',
    'turn.replaced': 'The model’s answer was not shown ({reason}): quotes from the sources follow.',
    'turn.replacedReason': 'too little of it grounded',
    'turn.replacedRatio': '{reason}, {pct}% of its sentences grounded',
    'activity.quote': '“{text}”',
    'activity.research': 'Nothing found for {queries}; searched again as {rephrased}: {found} found',
    'activity.round': 'Research round {n}',
    'activity.tool': 'tool',
    'activity.rejected': ' — rejected: {reason}',
    'activity.searched': 'Searched {query}',
    'activity.intent': '{intent} question',
    'activity.cacheHit': 'cache hit',
    'activity.saved': 'Saved for the next round:',
    'activity.open': 'Still open: {items}',
    'activity.next': 'Next: {next}',
    'activity.finalized': 'Research finalized: {fragments}',
    'activity.forced': 'Research ended by the harness: {fragments}',
    'activity.forcedWhy': 'Research ended by the harness ({reason}): {fragments}',
    'activity.noFragments': 'no fragments',
    'source.count': { one: '{n} source', other: '{n} sources' },
    'source.cited': 'cited',
    'source.citedInferred': 'cited (inferred)',
    'source.citedTitle': 'cited in the answer',
    'source.inferredTitle': 'supports the answer (citation inferred)',
    'source.score': 'score {score}',
    'source.whole': 'whole section',
    'source.image': 'Image in {marker}: {title}',
    'source.imageMissing': 'Image not available: ',
    'source.link': 'source {marker}',
    'source.untitled': 'untitled',
    'source.show': 'Show its sources ({n})',
    'details.summary': 'Details: {items}',
    'details.took': 'took {time}',
    'details.grounded': '{pct}% of sentences grounded',
    'details.rounds': { one: '{n} research round', other: '{n} research rounds' },
    'details.withheld': { one: '{n} unsupported sentence withheld', other: '{n} unsupported sentences withheld' },
    'details.linksRemoved': { one: '{n} link removed', other: '{n} links removed' },
    'details.tokens': 'tokens',
    'details.tokensInOut': '{in} in, {out} out',
    'details.unsupported': 'Sentences the sources do not support:',
    'details.withheldMark': '(withheld) ',
    'unit.ms': '{n} ms',
    'unit.s': '{n} s',
    'feedback.group': 'Rate answer {n}',
    'feedback.ask': 'Was this answer helpful?',
    'feedback.up': 'Helpful',
    'feedback.down': 'Not helpful',
    'feedback.comment': 'Comment (optional; the route’s admins can read it)',
    'feedback.source': 'Where is the answer? A document, if you know it (optional)',
    'feedback.invented': ' The answer was made up',
    'feedback.send': 'Send',
    'feedback.sending': 'Sending…',
    'feedback.notSent': 'Not sent ({code}): {message}',
    'feedback.errorCode': 'error',
    'feedback.thanksComment': 'Thanks: your comment was sent.',
    'feedback.thanks': 'Thanks for rating. Add a comment if you like.',
    'markdown.image': 'image: {label}',
    'markdown.untitled': 'untitled',
  },
  ru: {
    'page.title': 'Вопросы по документации · ragroute',
    'page.heading': 'Вопросы по документации',
    'page.skip': 'Перейти к вопросу',
    'demo.only': 'Только для демо',
    'demo.askAs': ': спрашивать от имени',
    'token.summary': 'Токен для входа',
    'token.hint': 'Нужен только маршрутам, которые проверяют JWT. За прокси входа оставьте поле пустым. ' +
      'Токен хранится в сессионном хранилище этой вкладки и отправляется только этому маршруту.',
    'token.label': 'Bearer-токен',
    'token.use': 'Использовать токен',
    'token.forget': 'Забыть токен',
    'token.set': 'Для этой вкладки задан токен.',
    'token.none': 'Токен не задан.',
    'token.empty': 'Сначала вставьте токен.',
    'token.invalid': 'Это не bearer-токен: в нём пробелы или другие недопустимые символы.',
    'token.needed': 'Маршруту нужна подтверждённая личность: вставьте токен (для маршрутов с JWT) или войдите через прокси.',
    'ask.conversation': 'Диалог',
    'ask.label': 'Ваш вопрос',
    'ask.placeholder': 'Задайте вопрос',
    'ask.hint': 'Enter — отправить, Shift+Enter — новая строка. Уточняющие вопросы продолжают диалог.',
    'ask.send': 'Спросить',
    'ask.stop': 'Остановить',
    'ask.new': 'Новый диалог',
    'sources.heading': 'Источники',
    'sources.empty': 'Здесь появятся документы, на которых основан ответ; ✔ отмечает те, на которые он ссылается.',
    'status.new': 'Новый диалог: прежние вопросы забыты.',
    'status.asking': 'Отправляем вопрос…',
    'status.answering': 'Готовим ответ…',
    'status.answered': 'Ответ готов.',
    'status.failed': 'Не удалось получить ответ.',
    'status.stopped': 'Остановлено.',
    'status.pageFailed': 'Ошибка на странице.',
    'status.refused': 'Отказано: {code}.',
    'status.reconnect': 'Связь прервалась; продолжаем после события {id} (попытка {attempt})…',
    'error.unreachable': 'Маршрут недоступен.',
    'error.noTurn': 'Маршрут ответил, но не вернул поток ответа.',
    'error.refused': 'запрос отклонён',
    'error.streamLost': 'Поток ответа оборвался, и возобновить его не удалось.',
    'error.retry': '{message} Повторите через {seconds} с.',
    'turn.question': 'Вопрос: ',
    'turn.activity': 'Что сделал маршрут',
    'turn.answer': 'Ответ',
    'turn.sources': 'Источники к вопросу {n}',
    'turn.for': 'К вопросу: {question}',
    'turn.notFound': 'В доступной вам документации этого нет: ответ выше — формулировка маршрута, а не догадка.',
    'turn.error': 'Ошибка ({code}): {message}',
    'turn.errorCode': 'неизвестно',
    'turn.errorMessage': 'не удалось получить ответ',
    'turn.stopped': 'Остановлено: остаток ответа не показан.',
    'turn.replaced': 'Ответ модели не показан ({reason}): ниже — цитаты из источников.',
    'turn.replacedReason': 'источники подтверждают слишком малую его часть',
    'turn.replacedRatio': '{reason}; подтверждено {pct}% предложений',
    'activity.quote': '«{text}»',
    'activity.research': 'Ничего не найдено: {queries}; повторный поиск по {rephrased}: найдено {found}',
    'activity.round': 'Раунд поиска {n}',
    'activity.tool': 'инструмент',
    'activity.rejected': ' — отклонено: {reason}',
    'activity.searched': 'Поиск {query}',
    'activity.intent': 'тип вопроса: {intent}',
    'activity.cacheHit': 'из кэша',
    'activity.saved': 'Сохранено для следующего раунда:',
    'activity.open': 'Ещё не выяснено: {items}',
    'activity.next': 'Дальше: {next}',
    'activity.finalized': 'Поиск завершён: {fragments}',
    'activity.forced': 'Поиск остановлен системой: {fragments}',
    'activity.forcedWhy': 'Поиск остановлен системой ({reason}): {fragments}',
    'activity.noFragments': 'без фрагментов',
    'source.count': { one: '{n} источник', few: '{n} источника', many: '{n} источников', other: '{n} источника' },
    'source.cited': 'есть ссылка',
    'source.citedInferred': 'есть ссылка (выведена)',
    'source.citedTitle': 'ответ ссылается на этот источник',
    'source.inferredTitle': 'подтверждает ответ (ссылка выведена автоматически)',
    'source.score': 'оценка {score}',
    'source.whole': 'весь раздел',
    'source.image': 'Изображение в {marker}: {title}',
    'source.imageMissing': 'Изображение недоступно: ',
    'source.link': 'источник {marker}',
    'source.untitled': 'без названия',
    'source.show': 'Показать источники ({n})',
    'details.summary': 'Подробности: {items}',
    'details.took': 'заняло {time}',
    'details.grounded': 'подтверждено {pct}% предложений',
    'details.rounds': { one: '{n} раунд поиска', few: '{n} раунда поиска', many: '{n} раундов поиска', other: '{n} раунда поиска' },
    'details.withheld': {
      one: 'скрыто {n} неподтверждённое предложение',
      few: 'скрыто {n} неподтверждённых предложения',
      many: 'скрыто {n} неподтверждённых предложений',
      other: 'скрыто {n} неподтверждённого предложения',
    },
    'details.linksRemoved': { one: 'удалена {n} ссылка', few: 'удалено {n} ссылки', many: 'удалено {n} ссылок', other: 'удалено {n} ссылки' },
    'details.tokens': 'токены',
    'details.tokensInOut': '{in} на входе, {out} на выходе',
    'details.unsupported': 'Предложения, которые источники не подтверждают:',
    'details.withheldMark': '(скрыто) ',
    'unit.ms': '{n} мс',
    'unit.s': '{n} с',
    'feedback.group': 'Оценка ответа {n}',
    'feedback.ask': 'Ответ помог?',
    'feedback.up': 'Полезно',
    'feedback.down': 'Не помогло',
    'feedback.comment': 'Комментарий (необязательно; его прочитают администраторы маршрута)',
    'feedback.source': 'Где искать ответ? Документ, если знаете (необязательно)',
    'feedback.invented': ' Ответ выдуман',
    'feedback.send': 'Отправить',
    'feedback.sending': 'Отправляем…',
    'feedback.notSent': 'Не отправлено ({code}): {message}',
    'feedback.errorCode': 'ошибка',
    'feedback.thanksComment': 'Спасибо: комментарий отправлен.',
    'feedback.thanks': 'Спасибо за оценку. Можете добавить комментарий.',
    'markdown.image': 'изображение: {label}',
    'markdown.untitled': 'без названия',
  },
};

// pickLanguage is the table's language for a browser's list of language
// tags (BCP 47, "ru-RU"; "ru_RU" is read the same): the first whose
// primary subtag the table has, else English.
export function pickLanguage(tags) {
  for (const tag of tags) {
    const primary = String(tag ?? '').split(/[-_]/)[0].toLowerCase();
    if (Object.hasOwn(STRINGS, primary)) return primary;
  }
  return 'en';
}

export const lang = pickLanguage([...(navigator.languages || []), navigator.language]);
const table = STRINGS[lang];
const plurals = new Intl.PluralRules(lang);

// t is the entry key in the page's language with {name} filled from
// values; a count's entry picks its plural form by values.n.
export function t(key, values = {}) {
  let s = table[key] ?? STRINGS.en[key];
  if (s === undefined) return key;
  if (typeof s === 'object') s = s[plurals.select(Number(values.n))] ?? s.other;
  return s.replace(/\{(\w+)\}/g, (m, name) => (Object.hasOwn(values, name) ? String(values[name]) : m));
}

// num is x with digits decimals, as the page's language writes it.
export function num(x, digits) {
  return x.toLocaleString(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: false });
}

// localize sets the document's language and fills in its static strings.
export function localize(doc) {
  doc.documentElement.lang = lang;
  for (const e of doc.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  for (const attr of ['placeholder', 'aria-label', 'title']) {
    for (const e of doc.querySelectorAll(`[data-i18n-${attr}]`)) e.setAttribute(attr, t(e.getAttribute(`data-i18n-${attr}`)));
  }
}
