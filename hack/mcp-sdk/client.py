"""Drives a ragroute route's /mcp with the official MCP Python SDK, as an
agent developer would: the tool list, search_knowledge and ask as two
identities (ann, staff, never reads the on-call runbook that sam, of
group sre, finds), progress while ask streams, tool errors with fixed
messages, the turn limits and 401 without an identity. Run by
cmd/ragroute/mcp_sdk_test.go against `ragroute serve` on loopback; exits
non-zero naming the first check that failed."""

import asyncio
import os
import sys

import httpx2
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client

url = sys.argv[1]
secret = os.environ["PROXY_SECRET"]


def check(ok, what):
    if not ok:
        print("FAIL: " + what)
        sys.exit(1)
    print("ok: " + what.split(":")[0])


def headers(user, groups):
    return {"X-User": user, "X-Groups": groups, "X-Proxy-Secret": secret}


async def as_caller(user, groups, calls):
    async with httpx2.AsyncClient(headers=headers(user, groups), timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await calls(session)


def sources(result):
    return [f["source"] for f in result.structured_content["fragments"]]


async def main():
    async def tools(session):
        return sorted(t.name for t in (await session.list_tools()).tools)

    names = await as_caller("ann", "staff", tools)
    check(names == ["ask", "search_knowledge"], "list_tools: %r" % names)

    query = {"query": "page acknowledge incident on-call"}

    async def search(session):
        return await session.call_tool("search_knowledge", query)

    ann = await as_caller("ann", "staff", search)
    sam = await as_caller("sam", "staff,sre", search)
    check(not ann.is_error and ann.structured_content["fragments"], "search_knowledge as ann: %r" % ann)
    check("docs/frontmatter-acl.md" not in sources(ann), "ann never reads the runbook: %r" % sources(ann))
    check("docs/frontmatter-acl.md" in sources(sam), "sam, of sre, reads the runbook: %r" % sources(sam))
    first = ann.structured_content["fragments"][0]
    check(first["citation"] == "S1" and first["text"] and first["title_path"] and first["score"] > 0,
          "fragment fields: %r" % first)

    nobody = await as_caller("nobody", "visitors", search)
    check(nobody.structured_content["not_found"] and nobody.content[0].text.startswith("Not found"),
          "not found for a caller who may read nothing: %r" % nobody)

    progress = []

    async def on_progress(done, total, message):
        progress.append(message or "")

    async def ask(session):
        return await session.call_tool("ask", {"question": "What does prune last do?"}, progress_callback=on_progress)

    answer = await as_caller("ann", "staff", ask)
    out = answer.structured_content
    check(not answer.is_error and "Prune last" in out["answer"] and out["citations"] and not out["not_found"],
          "ask: %r" % out)
    check("".join(progress) == out["answer"], "progress notifications carry the answer: %r" % progress)

    async def errors(session):
        try:
            await session.call_tool("delete_everything", {})
            unknown = None
        except MCPError as e:
            unknown = e.error.message
        wrong = await session.call_tool("search_knowledge", {"query": 5})
        big = await session.call_tool("ask", {"question": "why " * 20000})
        return unknown, wrong, big

    unknown, wrong, big = await as_caller("ann", "staff", errors)
    check(unknown == 'unknown tool "delete_everything"', "unknown tool: %r" % unknown)
    check(wrong.is_error and wrong.content[0].text.startswith("bad_arguments: the arguments do not fit search_knowledge"),
          "wrong argument type: %r" % wrong.content)
    check(big.is_error and big.content[0].text.startswith("bad_question: question must be 1 to"),
          "oversized question: %r" % big.content)

    async def flood(session):
        return [await session.call_tool("search_knowledge", {"query": "prune %d" % i}) for i in range(6)]

    results = await as_caller("rita", "staff", flood)
    refused = [r.content[0].text for r in results if r.is_error]
    check(refused and refused[0].startswith("rate_limited: over 5 turns per minute"), "turn limits: %r" % refused)

    async with httpx2.AsyncClient() as http:
        resp = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                               headers={"Accept": "application/json, text/event-stream"})
    check(resp.status_code == 401, "no identity: %d" % resp.status_code)


asyncio.run(main())
