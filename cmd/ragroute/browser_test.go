package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/ui"
	"github.com/ragroute/ragroute/internal/testenv"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "copy the browser test's screenshot of an answer to docs/ui-answer.png")

// TestBrowserPage loads the route's page from a real `ragroute serve` in
// headless Chromium, through loopback sign-in proxies that play
// oauth2-proxy for each user, and asks as a user would: with the
// keyboard, watching the answer stream.
func TestBrowserPage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	started := time.Now()
	images := imageServer(t)
	cfg, models := pageRoute(ctx, t, images.URL, 60*time.Millisecond)
	route, _, stop := serveOnLoopback(ctx, t, cfg)
	defer stop()
	waitOK(t, route+"/readyz")
	alice := signInProxy(t, route, always(proxyUser{"alice", "staff"}), nil)
	bob := signInProxy(t, route, always(proxyUser{"bob", "ops"}), nil)
	cutter := &streamCutter{routeURL: route, user: proxyUser{"alice", "staff"}, cutAfter: 3}
	aliceCut := signInProxy(t, route, always(cutter.user), cutter.wrap)
	demo := signInProxy(t, route, demoUser, demoIdentities)
	verdicts := &verdictRecorder{}
	aliceRates := signInProxy(t, route, always(proxyUser{"alice", "staff"}), verdicts.wrap)
	aliceRefused := signInProxy(t, route, always(proxyUser{"alice", "staff"}), refuseTurns)
	browser := startBrowser(t, "en-US,en")
	t.Logf("set-up (Milvus Lite, ingestion, serve, Chromium): %.1f s", time.Since(started).Seconds())

	t.Run("the page is served under its CSP", func(t *testing.T) {
		client := &http.Client{Timeout: 10 * time.Second}
		resp, err := client.Get(alice + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Content-Security-Policy"); got != ui.ContentSecurityPolicy || !strings.Contains(got, "script-src 'self';") {
			t.Errorf("Content-Security-Policy %q, want %q", got, ui.ContentSecurityPolicy)
		}
	})

	t.Run("a cited answer streams with its sources", func(t *testing.T) {
		tb := newTab(browser, t)
		tb.load(alice)
		// The page, its script and style are small.
		weight := evalJS[float64](tb, `(() => {
			const own = performance.getEntriesByType("resource").filter((e) => new URL(e.name).pathname.startsWith("/ui/"));
			return performance.getEntriesByType("navigation")[0].decodedBodySize + own.reduce((s, e) => s + e.decodedBodySize, 0);
		})()`)
		if weight <= 0 || weight >= 100*1024 {
			t.Errorf("page weight %.0f bytes, want > 0 and < 100 KB", weight)
		}
		t.Logf("page weight: %.0f bytes", weight)
		// Keyboard only: Tab reaches the question, its focus is visible.
		for range 12 {
			if evalJS[string](tb, `document.activeElement.id`) == "q" {
				break
			}
			tb.do("press Tab", 5*time.Second, chromedp.KeyEvent("\t"))
		}
		if focus := evalJS[string](tb, `document.activeElement.id + " " + getComputedStyle(document.activeElement).outlineStyle`); focus != "q solid" {
			t.Errorf("after tabbing, focus is %q, want the question with a visible outline", focus)
		}
		tb.do("ask", 10*time.Second, chromedp.KeyEvent("How do I calibrate a widget?"), chromedp.KeyEvent("\r"))

		// The answer grows while the turn runs.
		var partial []string
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			s := evalJS[[]string](tb, `[document.querySelector("#turn-1")?.dataset.state ?? "", document.querySelector("#turn-1 .answer")?.textContent ?? ""]`)
			if s[0] == "done" || s[0] == "error" {
				break
			}
			if s[1] != "" && (len(partial) == 0 || partial[len(partial)-1] != s[1]) {
				partial = append(partial, s[1])
			}
			time.Sleep(20 * time.Millisecond)
		}
		tb.wantDone(1, 5*time.Second)
		answer := evalJS[string](tb, `document.querySelector("#turn-1 .answer").textContent`)
		if len(partial) < 2 || !strings.HasPrefix(answer, partial[0]) || len(partial[0]) >= len(answer) {
			t.Errorf("the answer did not stream: seen %q before the final %q", partial, answer)
		}
		t.Logf("%d partial answers seen before the turn completed", len(partial))

		// Markdown as elements, markers linked to the sources.
		structure := evalJS[map[string]int](tb, `(() => {
			const a = document.querySelector("#turn-1 .answer");
			const n = (s) => a.querySelectorAll(s).length;
			return {strong: n("strong"), em: n("em"), ol: n("ol > li"), code: n("code"), cite: n("a.cite[href^='#src-1-S']"), img: n("img")};
		})()`)
		if structure["strong"] < 2 || structure["em"] != 1 || structure["ol"] != 3 || structure["code"] != 1 || structure["cite"] != 2 || structure["img"] != 0 {
			t.Errorf("answer markup %v: want bold, italic, a 3-item list, inline code, 2 citation links, no image", structure)
		}
		// The sources: alice's documents only, the cited one marked, its
		// image loaded in the panel and nowhere else.
		sources := evalJS[[]string](tb, `[...document.querySelectorAll("#sources-1 .source")].map((s) =>
			(s.classList.contains("cited") ? "✔ " : "") + s.querySelector(".source-title").textContent)`)
		if !slices.Contains(sources, "✔ Widgets › Widget calibration") {
			t.Errorf("sources %q: want ✔ Widgets › Widget calibration", sources)
		}
		for _, s := range sources {
			if strings.Contains(s, "Rack") || strings.Contains(s, "Pager") {
				t.Errorf("alice sees %q, a document only ops may read", s)
			}
		}
		imgs := evalJS[[]string](tb, `[...document.querySelectorAll("img")].map((i) =>
			(i.closest("#sources") ? "panel " : "elsewhere ") + i.src + " " + (i.complete && i.naturalWidth > 0))`)
		if want := "panel " + images.URL + "/img/calibration-panel.png true"; len(imgs) != 1 || imgs[0] != want {
			t.Errorf("images %q, want one, loaded, in the sources panel: %q", imgs, want)
		}
		timings := evalJS[string](tb, `document.querySelector("#turn-1 .timings").textContent`)
		for _, want := range []string{"took", "embed", "retrieve", "model answer", "total"} {
			if !strings.Contains(timings, want) {
				t.Errorf("timings %q lack %q", timings, want)
			}
		}
		out := outputDir(t)
		// The screenshot shows the turn's details open, no focus ring.
		evalJS[chromedp.Void](tb, `document.querySelector("#turn-1 .timings").open = true; document.activeElement.blur()`)
		shot := screenshot(tb, filepath.Join(out, "ui-answer.png"))
		if *updateScreenshot {
			if err := os.WriteFile(filepath.Join("..", "..", "docs", "ui-answer.png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}

		// A marker takes the keyboard to its source.
		tb.do("follow a citation", 5*time.Second, chromedp.Focus(chromedp.CSS("#turn-1 a.cite")), chromedp.KeyEvent("\r"))
		if focused := evalJS[string](tb, `document.activeElement.id`); !strings.HasPrefix(focused, "src-1-S") {
			t.Errorf("a citation moved focus to %q, want its source", focused)
		}

		// A follow-up carries the conversation; New conversation drops it.
		tb.ask("And how often should I do that?")
		tb.wantDone(2, 15*time.Second)
		asked := answerRequests(models)
		if got := transcript(asked[len(asked)-1]); len(got) != 3 || !strings.Contains(got[0], "calibrate a widget") ||
			!strings.Contains(got[1], "Calibration") || !strings.Contains(got[2], "how often") {
			t.Errorf("the follow-up reached the model as %q, want the first question, its answer and the follow-up", got)
		}
		if got := evalJS[[]string](tb, `[String(document.querySelectorAll("#turn-2 a.cite").length), document.querySelector("#turn-2 .answer").textContent]`); got[0] != "1" || !strings.Contains(got[1], "not [S9]") {
			t.Errorf("follow-up: %s citation links in %q, want 1 and the unknown [S9] as text", got[0], got[1])
		}

		// A phone's width: nothing overflows, the form is usable.
		tb.do("narrow the viewport", 5*time.Second, chromedp.EmulateViewport(375, 812))
		if wide := evalJS[bool](tb, `document.documentElement.scrollWidth > window.innerWidth`); wide {
			t.Errorf("at 375 px the page scrolls sideways (%v px)", evalJS[float64](tb, `document.documentElement.scrollWidth`))
		}
		screenshot(tb, filepath.Join(out, "ui-answer-375.png"))
		tb.do("widen the viewport", 5*time.Second, chromedp.EmulateViewport(1280, 900))
		tb.noConsoleErrors(nil)
	})

	t.Run("thumbs under an answer rate it, with a comment", func(t *testing.T) {
		tb := newTab(browser, t)
		tb.load(aliceRates)
		tb.ask("How do I calibrate a widget?")
		tb.wantDone(1, 20*time.Second)
		tb.waitFor("the thumbs appear under the answer", `!!document.querySelector("#turn-1 .feedback .thumb.down")`, 5*time.Second)
		// One key press rates.
		tb.do("rate the answer down", 5*time.Second, chromedp.Focus(chromedp.CSS("#turn-1 .thumb.down")), chromedp.KeyEvent("\r"))
		tb.waitFor("the rating is sent", `document.querySelector("#turn-1 .feedback-state").textContent.startsWith("Thanks for rating")`, 5*time.Second)
		if pressed := evalJS[[]string](tb, `[...document.querySelectorAll("#turn-1 .thumb")].map((b) => b.getAttribute("aria-pressed"))`); !slices.Equal(pressed, []string{"false", "true"}) {
			t.Errorf("thumbs pressed %q, want down only", pressed)
		}
		// Then a comment, the expected source and "made up" go with it.
		tb.do("comment", 10*time.Second,
			chromedp.Focus(chromedp.ID("fb-1-comment")), chromedp.KeyEvent("The steps are for gadgets."),
			chromedp.Focus(chromedp.ID("fb-1-source")), chromedp.KeyEvent("staff/widgets.md"),
			chromedp.Focus(chromedp.ID("fb-1-invented")), chromedp.KeyEvent(" "),
			chromedp.Focus(chromedp.CSS("#turn-1 .feedback-more button")), chromedp.KeyEvent("\r"))
		tb.waitFor("the comment is sent", `document.querySelector("#turn-1 .feedback-state").textContent.startsWith("Thanks: your comment")`, 5*time.Second)
		evalJS[chromedp.Void](tb, `document.activeElement.blur()`)
		screenshot(tb, filepath.Join(outputDir(t), "ui-feedback.png"))
		want := []string{`{"rating":"down"}`, `{"rating":"down","comment":"The steps are for gadgets.","expected_source":"staff/widgets.md","invented":true}`}
		if got := verdicts.bodies(); !slices.Equal(got, want) {
			t.Errorf("the page sent %q, want %q", got, want)
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(route + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(metrics), `ragroute_feedback_total{rating="down",route="support"} 2`) {
			t.Errorf("the route did not count both verdicts: %s", grepLines(string(metrics), "ragroute_feedback_total"))
		}
		tb.noConsoleErrors(nil)
	})

	t.Run("not found shows the platform's wording", func(t *testing.T) {
		tb := newTab(browser, t)
		tb.load(alice)
		tb.ask("Who do I escalate a pager alert to?")
		tb.wantDone(1, 20*time.Second)
		got := evalJS[[]string](tb, `[document.querySelector("#turn-1 .answer").textContent,
			String(document.querySelector("#turn-1").classList.contains("not-found")),
			String(document.querySelectorAll("#sources-1 .source").length)]`)
		if got[0] != notFoundWording || got[1] != "true" || got[2] != "0" {
			t.Errorf("not-found turn shows %q (not-found %s, %s sources), want %q and no sources", got[0], got[1], got[2], notFoundWording)
		}
		tb.noConsoleErrors(nil)
	})

	t.Run("fragment and answer HTML stays text", func(t *testing.T) {
		tb := newTab(browser, t)
		tb.load(alice)
		tb.ask("How do I calibrate a widget?")
		tb.turnDone(1, 20*time.Second)
		tb.do("start a new conversation", 5*time.Second, chromedp.Focus(chromedp.ID("new")), chromedp.KeyEvent("\r"))
		if n := evalJS[int](tb, `document.querySelectorAll(".turn, .turn-sources").length`); n != 0 {
			t.Errorf("New conversation left %d turns or source lists", n)
		}
		tb.ask("How do I set up a gadget?")
		tb.wantDone(2, 20*time.Second)
		asked := answerRequests(models)
		if got := transcript(asked[len(asked)-1]); len(got) != 1 {
			t.Errorf("after New conversation the model got %q, want the new question alone", got)
		}
		got := evalJS[map[string]string](tb, `({
			xss: String(window.__ragrouteXSS),
			answer: document.querySelector("#turn-2 .answer").textContent,
			sources: document.querySelector("#sources-2").textContent,
			scripts: String(document.scripts.length),
			stray: String(document.querySelectorAll("img[src='x'], img:not(.source-image), #conversation script, #sources script").length),
		})`)
		if got["xss"] != "undefined" {
			t.Errorf("a payload ran: window.__ragrouteXSS = %s", got["xss"])
		}
		// The route's link guard replaces the tags that load something
		// (docs/security.md, finding 3); what HTML is left is text.
		if !strings.Contains(got["answer"], "[image removed]") || !strings.Contains(got["answer"], "</script> stays text") {
			t.Errorf("the answer's HTML is not replaced or shown as text: %q", got["answer"])
		}
		if !strings.Contains(got["sources"], `<script>window.__ragrouteXSS = "title"</script>`) || !strings.Contains(got["sources"], "onerror=") {
			t.Errorf("the fragment's HTML is not shown as text in the sources: %q", got["sources"])
		}
		if got["scripts"] != "1" || got["stray"] != "0" {
			t.Errorf("%s scripts and %s stray elements, want the page's own script only", got["scripts"], got["stray"])
		}
		tb.noConsoleErrors(nil)
	})

	t.Run("another user sees only their own sources", func(t *testing.T) {
		tb := newTab(browser, t)
		tb.load(bob)
		tb.ask("How do I calibrate a widget?")
		tb.wantDone(1, 20*time.Second)
		sources := evalJS[[]string](tb, `[...document.querySelectorAll("#sources-1 .source .source-title")].map((s) => s.textContent)`)
		if !slices.Contains(sources, "Rack widgets › Rack widget calibration") {
			t.Errorf("bob's sources %q: want his Rack widgets › Rack widget calibration", sources)
		}
		for _, s := range sources {
			if !strings.HasPrefix(s, "Rack widgets") && !strings.HasPrefix(s, "Pager") {
				t.Errorf("bob sees %q, a document only staff may read", s)
			}
		}
		// His document's image is missing: its address stands in for it.
		if got := evalJS[[]string](tb, `[String(document.querySelectorAll("img").length), document.querySelector("#sources-1 .image-missing")?.textContent ?? ""]`); got[0] != "0" ||
			got[1] != "Image not available: "+images.URL+"/img/missing-torque-key.png" {
			t.Errorf("bob's page shows %s images and %q, want none and the missing image's address", got[0], got[1])
		}
		tb.noConsoleErrors(func(m chromedp.ConsoleMessage) bool {
			return m.Source == "network" && strings.Contains(m.Text, "404") && strings.HasSuffix(m.URL, "/img/missing-torque-key.png")
		})
	})

	t.Run("a dropped stream resumes without loss or repeats", func(t *testing.T) {
		tb := newTab(browser, t)
		tb.load(aliceCut)
		tb.ask("Tell me about widgets in detail")
		tb.wantDone(1, 25*time.Second)
		// A clean end delivers every event before it; a cut connection
		// may lose the last ones it carried (the browser drops what the
		// page had not read yet), so the page resumes after the last
		// event it got.
		sent, resumes := cutter.report()
		if len(sent) != 2 || len(resumes) != 2 || resumes[0] != sent[0] || eventID(resumes[1]) < eventID(sent[0]) || eventID(resumes[1]) > eventID(sent[1]) {
			t.Errorf("the streams were cut after events %q and resumed with Last-Event-ID %q, want each resume to start after what the page got", sent, resumes)
		}
		answer := evalJS[string](tb, `document.querySelector("#turn-1 .answer").textContent`)
		want := strings.NewReplacer("{S}", "[S1]").Replace(resumeAnswer)
		if marker := evalJS[string](tb, `document.querySelector("#turn-1 a.cite")?.dataset.marker ?? ""`); marker != "" {
			want = strings.NewReplacer("{S}", "["+marker+"]").Replace(resumeAnswer)
		}
		if answer != want {
			t.Errorf("the resumed answer reads\n%q\nwant\n%q", answer, want)
		}
		// The connection cut mid-stream is the browser's only complaint.
		tb.noConsoleErrors(func(m chromedp.ConsoleMessage) bool {
			return m.Source == "network" && strings.Contains(m.Text, "ERR_INCOMPLETE_CHUNKED_ENCODING") && eventsPath.MatchString(pathOf(m.URL))
		})
	})

	t.Run("demo identities are offered only by the demo's proxy", func(t *testing.T) {
		tb := newTab(browser, t)
		tb.do("load the route's own page", 15*time.Second, chromedp.Navigate(alice+"/"), chromedp.WaitVisible(chromedp.ID("q")))
		if hidden := evalJS[bool](tb, `document.querySelector("#demo").hidden`); !hidden {
			t.Error("the route's own page offers demo identities")
		}
		tb.do("load the demo's page", 15*time.Second, chromedp.Navigate(demo+"/"), chromedp.WaitVisible(chromedp.ID("demo-identity")))
		label := evalJS[string](tb, `document.querySelector("label[for=demo-identity]").textContent`)
		if !strings.Contains(label, "Demo only") {
			t.Errorf("the identity picker is labelled %q, want it marked demo-only", label)
		}
		tb.do("pick bob", 5*time.Second, chromedp.SetValue(chromedp.ID("demo-identity"), "bob"),
			chromedp.Evaluate[chromedp.Void](`document.querySelector("#demo-identity").dispatchEvent(new Event("change"))`))
		tb.ask("How do I calibrate a widget?")
		tb.wantDone(1, 20*time.Second)
		if first := evalJS[string](tb, `document.querySelector("#sources-1 .source-title")?.textContent ?? ""`); !strings.HasPrefix(first, "Rack widgets") {
			t.Errorf("asked as bob, the first source is %q, want his Rack widgets", first)
		}
		tb.noConsoleErrors(nil)
	})

	t.Run("a JWT route takes a pasted token", func(t *testing.T) {
		jwtRoute, token := serveJWTRoute(ctx, t, cfg)
		tb := newTab(browser, t)
		tb.load(jwtRoute)
		tb.ask("How do I calibrate a widget?")
		if state := tb.turnDone(1, 10*time.Second); state != "error" {
			t.Fatalf("without a token the turn ended %s, want error", state)
		}
		got := evalJS[[]string](tb, `[document.querySelector("#turn-1 .error").textContent, String(document.querySelector("#signin").open), document.activeElement.id]`)
		if !strings.Contains(got[0], "unauthenticated") || got[1] != "true" || got[2] != "token" {
			t.Errorf("without a token: %q, sign-in open %s, focus on %q; want the code, the token field open and focused", got[0], got[1], got[2])
		}
		tb.do("paste the token", 10*time.Second, chromedp.SetValue(chromedp.ID("token"), token), chromedp.Focus(chromedp.ID("token")),
			chromedp.KeyEvent("\r"))
		tb.ask("How do I calibrate a widget?")
		if state := tb.turnDone(2, 20*time.Second); state != "done" {
			t.Fatalf("with the token the turn ended %s\n%s", state, tb.dump())
		}
		kept := evalJS[[]string](tb, `[sessionStorage.getItem("ragroute.token") ?? "", String(localStorage.length), document.cookie]`)
		if kept[0] != token || kept[1] != "0" || kept[2] != "" {
			t.Errorf("the token is kept as session %t, %s localStorage items, cookies %q; want sessionStorage only", kept[0] == token, kept[1], kept[2])
		}
		// The refused first ask is the browser's only complaint.
		tb.noConsoleErrors(func(m chromedp.ConsoleMessage) bool {
			return m.Source == "network" && strings.Contains(m.Text, "401") && strings.HasSuffix(m.URL, "/v1/turns")
		})
	})

	t.Run("agentic research rounds are collapsed", func(t *testing.T) {
		agentic := cfg
		agentic.Mode = "agentic"
		agentic.Model.SearchPolicy = "always"
		// A model that calls no tool: the harness searches the question
		// itself, then finalizes for it.
		researcher := testenv.StartModelServer(512)
		t.Cleanup(researcher.Close)
		researcher.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
			if len(req.Tools) > 0 {
				return testenv.ChatReply{Content: "I have read enough."}
			}
			return pageModel(req)
		}
		agentic.Model.BaseURL = researcher.BaseURL()
		base, _, stopAgentic := serveOnLoopback(ctx, t, agentic)
		t.Cleanup(stopAgentic)
		waitOK(t, base+"/readyz")
		page := signInProxy(t, base, always(proxyUser{"alice", "staff"}), nil)
		tb := newTab(browser, t)
		tb.load(page)
		tb.ask("How do I calibrate a widget?")
		tb.wantDone(1, 20*time.Second)
		got := evalJS[map[string]string](tb, `(() => {
			const r = document.querySelector("#turn-1 .activity details");
			return {summary: r?.querySelector("summary").textContent ?? "", open: String(r?.open),
				inside: r?.textContent ?? "", details: document.querySelector("#turn-1 .timings summary").textContent,
				sources: [...document.querySelectorAll("#sources-1 .source-title")].map((s) => s.textContent).join("; ")};
		})()`)
		if got["summary"] != "Research round 1" || got["open"] != "false" || !strings.Contains(got["inside"], "widget") {
			t.Errorf("research round shown as %q (open %s) holding %q, want a collapsed round 1 with its search", got["summary"], got["open"], got["inside"])
		}
		if !strings.Contains(got["details"], "1 research round") || got["sources"] != "Widgets › Widget calibration" {
			t.Errorf("details %q, sources %q: want 1 research round and the answer's source only", got["details"], got["sources"])
		}
		tb.noConsoleErrors(nil)
	})

	t.Run("the Markdown renderer builds only safe elements", func(t *testing.T) {
		tb := newTab(browser, t)
		tb.load(alice)
		for _, c := range markdownCases {
			got := evalJS[string](tb, fmt.Sprintf(`import(new URL("ui/markdown.js", document.baseURI).href).then(({renderMarkdown}) => {
				const d = document.createElement("div");
				d.append(renderMarkdown(%s, {cite: (m) => Object.assign(document.createElement("a"), {className: "cite", textContent: m})}));
				return d.innerHTML;
			})`, jsString(c.in)))
			if got != c.want {
				t.Errorf("render %q:\n got %s\nwant %s", c.in, got, c.want)
			}
		}
		if xss := evalJS[string](tb, `String(window.__ragrouteXSS)`); xss != "undefined" {
			t.Errorf("a payload ran: %s", xss)
		}
		tb.noConsoleErrors(nil)
	})

	t.Run("a Russian browser gets the page's words in Russian, the route's as sent", func(t *testing.T) {
		tb := newTab(startBrowser(t, "ru-RU,ru"), t)
		tb.load(alice)
		tb.ask("How do I calibrate a widget?")
		tb.wantDone(1, 20*time.Second)
		tb.waitFor("the thumbs appear under the answer", `!!document.querySelector("#turn-1 .feedback .thumb.up")`, 5*time.Second)
		got := evalJS[map[string]string](tb, `({
			lang: document.documentElement.lang,
			status: document.querySelector("#status").textContent,
			answer: document.querySelector("#turn-1 .answer").textContent,
			details: document.querySelector("#turn-1 .timings summary").textContent,
			cited: document.querySelector("#sources-1 .source.cited .cited-mark")?.textContent ?? "",
			for: document.querySelector("#sources-1 .for").textContent,
			show: document.querySelector("#turn-1 .show-sources").textContent,
			ask: document.querySelector("#turn-1 .feedback-ask").textContent,
			thumbs: [...document.querySelectorAll("#turn-1 .thumb")].map((b) => b.getAttribute("aria-label")).join(" / "),
		})`)
		want := map[string]string{"lang": "ru", "status": "Ответ готов.", "cited": "✔есть ссылка",
			"for": "К вопросу: How do I calibrate a widget?", "ask": "Ответ помог?", "thumbs": "Полезно / Не помогло"}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: %q, want %q", k, got[k], w)
			}
		}
		// The model's answer is shown as it came, in English.
		if !strings.HasPrefix(got["answer"], "To calibrate a widget, open its Calibration panel") {
			t.Errorf("answer %q, want the model's own words", got["answer"])
		}
		if !regexp.MustCompile(`^Подробности: заняло (\d+,\d с|\d+ мс) · \d+ источник(а|ов)? · .*подтверждено \d+% предложений`).MatchString(got["details"]) {
			t.Errorf("details %q, want them in Russian: the time it took, the count of sources, the grounded share", got["details"])
		}
		if !regexp.MustCompile(`^Показать источники \(\d+\)$`).MatchString(got["show"]) {
			t.Errorf("the sources button reads %q, want Показать источники (N)", got["show"])
		}
		tb.do("rate the answer up", 5*time.Second, chromedp.Focus(chromedp.CSS("#turn-1 .thumb.up")), chromedp.KeyEvent("\r"))
		tb.waitFor("the rating is thanked in Russian", `document.querySelector("#turn-1 .feedback-state").textContent === "Спасибо за оценку. Можете добавить комментарий."`, 5*time.Second)

		// The platform's not-found wording is the route's: not translated.
		tb.ask("Who do I escalate a pager alert to?")
		tb.wantDone(2, 20*time.Second)
		nf := evalJS[[]string](tb, `[document.querySelector("#turn-2 .answer").textContent, document.querySelector("#turn-2 .notice").textContent]`)
		if nf[0] != notFoundWording || !strings.HasPrefix(nf[1], "В доступной вам документации этого нет") {
			t.Errorf("not found: answer %q and notice %q, want the route's wording as sent and the page's note in Russian", nf[0], nf[1])
		}
		screenshot(tb, filepath.Join(outputDir(t), "ui-answer-ru.png"))
		tb.noConsoleErrors(nil)

		// A refusal's code and message are the API's, the page's frame
		// around them Russian.
		tb.load(aliceRefused)
		tb.ask("How do I calibrate a widget?")
		if state := tb.turnDone(1, 10*time.Second); state != "error" {
			t.Fatalf("a refused turn ended %s, want error", state)
		}
		refused := evalJS[[]string](tb, `[document.querySelector("#turn-1 .error").textContent, document.querySelector("#status").textContent]`)
		if want := "Ошибка (rate_limited): " + refusalMessage + " Повторите через 3 с."; refused[0] != want || refused[1] != "Отказано: rate_limited." {
			t.Errorf("refused: %q, status %q; want %q and Отказано: rate_limited.", refused[0], refused[1], want)
		}
		tb.noConsoleErrors(func(m chromedp.ConsoleMessage) bool {
			return m.Source == "network" && strings.Contains(m.Text, "429") && strings.HasSuffix(m.URL, "/v1/turns")
		})
	})
	t.Logf("whole test: %.1f s", time.Since(started).Seconds())
}

// TestBrowserPageLanguage opens the page in headless Chromium with each
// list of browser languages: the first language the page has words for
// (English, Russian) is the page's, and a list with none of them gets
// English. The page is served alone (ui.Handler): nothing is asked.
func TestBrowserPageLanguage(t *testing.T) {
	testenv.Integration(t, "Chromium (hack/chromium.sh)")
	page := httptest.NewServer(ui.Handler(true))
	defer page.Close()
	english := map[string]string{"lang": "en", "title": "Ask the docs · ragroute", "heading": "Ask the docs",
		"placeholder": "Ask a question", "label": "Your question", "send": "Ask", "new": "New conversation",
		"sources": "Sources", "conversation": "Conversation", "token": "No token set.", "untranslated": ""}
	russian := map[string]string{"lang": "ru", "title": "Вопросы по документации · ragroute", "heading": "Вопросы по документации",
		"placeholder": "Задайте вопрос", "label": "Ваш вопрос", "send": "Спросить", "new": "Новый диалог",
		"sources": "Источники", "conversation": "Диалог", "token": "Токен не задан.", "untranslated": ""}
	for _, c := range []struct {
		languages string
		want      map[string]string
	}{
		{"ru-RU,ru", russian},
		{"en-US,en", english},
		{"de-DE,de", english},    // no words for German: English
		{"de-DE,ru-RU", russian}, // the first the page has words for
	} {
		t.Run(c.languages, func(t *testing.T) {
			tb := newTab(startBrowser(t, c.languages), t)
			tb.load(page.URL)
			if got := evalJS[string](tb, `navigator.languages.join(",")`); got != c.languages {
				t.Fatalf("the browser's languages are %q, want %q: the flag no longer sets them", got, c.languages)
			}
			got := evalJS[map[string]string](tb, `(() => {
				const text = (s) => document.querySelector(s).textContent;
				// An element left empty or showing its key was not filled in.
				const untranslated = [...document.querySelectorAll("[data-i18n], [data-i18n-placeholder], [data-i18n-aria-label]")].filter((e) =>
					[e.dataset.i18n === undefined ? null : e.textContent, e.dataset.i18nPlaceholder === undefined ? null : e.placeholder,
					 e.dataset.i18nAriaLabel === undefined ? null : e.getAttribute("aria-label")].some((v) => v !== null && (!v.trim() || /^[a-z]+\.[A-Za-z]+$/.test(v))));
				return {lang: document.documentElement.lang, title: document.title, heading: text("h1"), placeholder: document.querySelector("#q").placeholder,
					label: text("label[for=q]"), send: text("#send"), new: text("#new"), sources: text("#sources-h"),
					conversation: document.querySelector("#conversation").getAttribute("aria-label"), token: text("#token-state"),
					untranslated: untranslated.map((e) => e.outerHTML).join(" ")};
			})()`)
			for k, w := range c.want {
				if got[k] != w {
					t.Errorf("%s: %q, want %q", k, got[k], w)
				}
			}
			tb.noConsoleErrors(nil)
		})
	}

	t.Run("the string table", func(t *testing.T) {
		tb := newTab(startBrowser(t, "en-US,en"), t)
		tb.load(page.URL)
		// Every language has every entry, a count every plural form its
		// language has, and the choice takes the first list entry whose
		// primary subtag the table has.
		var lists [][]string
		for _, c := range languageCases {
			lists = append(lists, c.tags)
		}
		listsJS, _ := json.Marshal(lists)
		got := evalJS[map[string]string](tb, fmt.Sprintf(`import(new URL("ui/strings.js", document.baseURI).href).then(({STRINGS, pickLanguage}) => {
			const problems = [];
			const keys = (l) => Object.keys(STRINGS[l]).sort().join();
			for (const [l, table] of Object.entries(STRINGS)) {
				if (keys(l) !== keys("en")) problems.push(l + ": not the keys English has");
				const forms = new Intl.PluralRules(l).resolvedOptions().pluralCategories;
				for (const [k, v] of Object.entries(table)) {
					if (typeof v === "object") problems.push(...forms.filter((f) => typeof v[f] !== "string").map((f) => l + " " + k + ": no " + f + " form"));
					else if (typeof v !== "string" || !v.trim()) problems.push(l + " " + k + ": empty");
				}
			}
			const picked = Object.fromEntries(%s.map((c) => [c.join(","), pickLanguage(c)]));
			return {problems: problems.join("; "), ...picked};
		})`, listsJS))
		if got["problems"] != "" {
			t.Errorf("strings.js: %s", got["problems"])
		}
		for _, c := range languageCases {
			if l := got[strings.Join(c.tags, ",")]; l != c.want {
				t.Errorf("languages %q pick %q, want %q", c.tags, l, c.want)
			}
		}
		tb.noConsoleErrors(nil)
	})
}

// languageCases: which language the page picks for a browser's list.
var languageCases = []struct {
	tags []string
	want string
}{
	{[]string{"ru-RU", "ru"}, "ru"},
	{[]string{"ru"}, "ru"},
	{[]string{"RU"}, "ru"},
	{[]string{"ru_RU"}, "ru"},
	{[]string{"en-GB", "ru"}, "en"},
	{[]string{"de-DE", "de", "ru"}, "ru"},
	{[]string{"uk-UA", "be"}, "en"},
	{[]string{"rue"}, "en"}, // Rusyn is not Russian
	{[]string{"x-ru"}, "en"},
	{[]string{}, "en"},
}

// markdownCases: what answers use renders as elements; everything else
// (HTML, unsafe links, images) stays text or becomes a plain link.
var markdownCases = []struct{ in, want string }{
	{"**bold** and *it* and `x<y>`", "<p><strong>bold</strong> and <em>it</em> and <code>x&lt;y&gt;</code></p>"},
	{"see [S2].", `<p>see <a class="cite">S2</a>.</p>`},
	{"- a\n- b\n\n1. c", "<ul><li>a</li><li>b</li></ul><ol><li>c</li></ol>"},
	{"```sh\nrm -rf <dir>\n```", `<pre><code data-lang="sh">rm -rf &lt;dir&gt;</code></pre>`},
	{"[docs](https://docs.example/a?b=1)", `<p><a href="https://docs.example/a?b=1" rel="noopener noreferrer nofollow" target="_blank">docs</a></p>`},
	{"[click](javascript:alert(1))", "<p>click</p>"},
	{"![shot](https://img.example/x.png)", `<p><a class="image-link" href="https://img.example/x.png" rel="noopener noreferrer nofollow" target="_blank">image: shot</a></p>`},
	{`<img src=x onerror="window.__ragrouteXSS=1"><script>window.__ragrouteXSS=2</script>`,
		`<p>&lt;img src=x onerror="window.__ragrouteXSS=1"&gt;&lt;script&gt;window.__ragrouteXSS=2&lt;/script&gt;</p>`},
	{"> From **Widgets** [S1]:\n> quoted", `<blockquote><p>From <strong>Widgets</strong> <a class="cite">S1</a>: quoted</p></blockquote>`},
	{"snake_case_name stays", "<p>snake_case_name stays</p>"},
	{"# Title", "<h3>Title</h3>"},
}

// verdictRecorder keeps the bodies of the feedback the page posts
// through a sign-in proxy.
type verdictRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (v *verdictRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/feedback") {
			body, _ := io.ReadAll(r.Body)
			v.mu.Lock()
			v.seen = append(v.seen, string(body))
			v.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

func (v *verdictRecorder) bodies() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.seen)
}

// grepLines are the lines of text that contain s.
func grepLines(text, s string) []string {
	var out []string
	for line := range strings.Lines(text) {
		if strings.Contains(line, s) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// eventID reads an SSE event id; -1 when s is none.
func eventID(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// pathOf is the path of a URL ("" if it is not one).
func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Path
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// outputDir is where the test leaves its screenshots:
// $RAGROUTE_TEST_OUTPUT, or a temporary folder.
func outputDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("RAGROUTE_TEST_OUTPUT"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// screenshot saves the visible page to path and returns it.
func screenshot(tb *tab, path string) []byte {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", path)
	return shot
}

// serveJWTRoute serves the page's route with JWT sign-in (keys from a
// loopback identity provider) and returns its URL and a valid token for
// carol of group staff.
func serveJWTRoute(ctx context.Context, t *testing.T, cfg podconfig.RouteConfig) (string, string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keys := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}}
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(keys)
	}))
	t.Cleanup(idp.Close)
	cfg.Auth = podconfig.Auth{JWT: &podconfig.JWT{Issuer: idp.URL, Audience: "ragroute", JWKSURL: idp.URL + "/keys",
		UserClaim: "sub", GroupsClaim: "groups"}}
	claims := jwt.MapClaims{"iss": idp.URL, "aud": "ragroute", "sub": "carol", "groups": []string{"staff"},
		"iat": time.Now().Unix(), "exp": time.Now().Add(10 * time.Minute).Unix()}
	unsigned := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	unsigned.Header["kid"] = "k1"
	token, err := unsigned.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	base, _, stop := serveOnLoopback(ctx, t, cfg)
	t.Cleanup(stop)
	waitOK(t, base+"/readyz")
	// The route fetches the keys in the background: wait until a token
	// is accepted, so the page's first authenticated ask is not early.
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/search", strings.NewReader(`{"query":"widget"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the JWT route never accepted the token: %v %v", resp, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return base, token
}
