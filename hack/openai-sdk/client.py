"""Drives a ragroute route with the official OpenAI Python SDK, as an app
developer would: model discovery, chat with content parts (streamed and
not), usage, raw headers, and the SDK's error classes for 400, 401 and 429.
Run by cmd/ragroute/openai_sdk_test.go against `ragroute serve` on
loopback; exits non-zero naming the first check that failed."""

import os
import sys

import openai

base = sys.argv[1]
model = sys.argv[2]
secret = os.environ["PROXY_SECRET"]


def client(user, with_secret=True):
    headers = {"X-User": user, "X-Groups": "staff"}
    if with_secret:
        headers["X-Proxy-Secret"] = secret
    return openai.OpenAI(base_url=base, api_key="unused", default_headers=headers, max_retries=0, timeout=60)


def check(ok, what):
    if not ok:
        print("FAIL: " + what)
        sys.exit(1)
    print("ok: " + what.split(":")[0])


ann = client("ann")
question = [{"role": "user", "content": [{"type": "text", "text": "What does prune last do?"}]}]

ids = [m.id for m in ann.models.list()]
check(ids == [model], "models.list: %r" % ids)

done = ann.chat.completions.create(model=model, messages=question)
extension = done.model_extra.get("ragroute") or {}
check("Prune last" in done.choices[0].message.content, "non-streamed answer: %r" % done.choices[0].message.content)
check(len(extension.get("citations", [])) == 1, "ragroute extension citations: %r" % extension)
check(done.usage is not None and done.usage.completion_tokens > 0, "non-streamed usage: %r" % done.usage)

text, usage = "", None
for chunk in ann.chat.completions.create(model=model, messages=question, stream=True, stream_options={"include_usage": True}):
    if chunk.choices and chunk.choices[0].delta.content:
        text += chunk.choices[0].delta.content
    if chunk.usage is not None:
        usage = chunk.usage
check("Prune last" in text, "streamed answer: %r" % text)
check(usage is not None and usage.completion_tokens > 0, "streamed usage with include_usage: %r" % usage)

raw = ann.chat.completions.with_raw_response.create(model=model, messages=question)
parsed = raw.parse()
check(raw.headers.get("x-request-id") == parsed.model_extra["ragroute"]["turn_id"],
      "x-request-id is the turn id: %r" % raw.headers.get("x-request-id"))

try:
    ann.chat.completions.create(model=model, messages=question, n=2)
    check(False, "n=2: no error")
except openai.BadRequestError as e:
    check(e.status_code == 400 and e.body.get("param") == "n", "400 BadRequestError naming n: %r" % e.body)

try:
    client("ann", with_secret=False).chat.completions.create(model=model, messages=question)
    check(False, "no proxy secret: no error")
except openai.AuthenticationError as e:
    check(e.status_code == 401 and e.body.get("type") == "authentication_error", "401 AuthenticationError: %r" % e.body)

flood = client("flood")
try:
    for _ in range(10):
        flood.chat.completions.create(model=model, messages=question)
    check(False, "10 turns at once: no rate limit")
except openai.RateLimitError as e:
    check(e.status_code == 429 and e.response.headers.get("retry-after"), "429 RateLimitError with Retry-After: %r" % e.body)
