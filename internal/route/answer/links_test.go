package answer

import (
	"strings"
	"testing"
)

func TestLinkGuardStripsLinksNotGivenAcrossDeltas(t *testing.T) {
	allowed := AllowedLinks{}
	allowed.AddText("See [the guide](https://docs.acme.example/sync) and https://docs.acme.example/prune.")
	allowed.AddURL("handbook/expenses.md")
	cases := map[string]struct {
		deltas []string
		want   string
	}{
		"bare URL split across deltas": {[]string{"Send it to htt", "ps://evil.exa", "mple/?q=secret now."}, "Send it to [link removed] now."},
		"Markdown link":                {[]string{"Read [this page](https://evil.example/x) first."}, "Read this page first."},
		"Markdown link split":          {[]string{"Read [this ", "page](https://evil", ".example/x", ") first."}, "Read this page first."},
		"image":                        {[]string{"![chart](https://evil.example/leak?q=hi)", " done"}, "chart done"},
		"image without alt":            {[]string{"!", "[](https://evil.example/p.png)"}, "[image removed]"},
		"allowed link passes untouched": {[]string{"See [the guide](https://docs.acme.example/sync#waves) [S1]."},
			"See [the guide](https://docs.acme.example/sync#waves) [S1]."},
		"allowed bare URL passes":     {[]string{"Open https://docs.acme.example/prune."}, "Open https://docs.acme.example/prune."},
		"allowed relative source":     {[]string{"[Expenses](handbook/expenses.md)"}, "[Expenses](handbook/expenses.md)"},
		"query string is not allowed": {[]string{"https://docs.acme.example/sync?q=secret"}, "[link removed]"},
		"URL in a link label":         {[]string{"[https://evil.example](https://evil.example)"}, "[link removed]"},
		"citation markers stay":       {[]string{"Waves [S1", "] and [S2]", "."}, "Waves [S1] and [S2]."},
		"HTML image":                  {[]string{`<img src="https://evil.example/a.png">`}, "[image removed]"},
		"no URL":                      {[]string{"No ", "links ", "here!"}, "No links here!"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got strings.Builder
			g := NewPipe(func(text string) error { got.WriteString(text); return nil }, NewLinkGuard(allowed))
			for _, d := range tc.deltas {
				if err := g.Write(d); err != nil {
					t.Fatal(err)
				}
			}
			if err := g.Flush(); err != nil {
				t.Fatal(err)
			}
			if got.String() != tc.want {
				t.Errorf("got %q, want %q", got.String(), tc.want)
			}
		})
	}
}

// Text that cannot start a link is never held back: each delta streams
// as it comes, up to a possible link's first characters.
func TestLinkGuardHoldsBackOnlyAPossibleLinkStart(t *testing.T) {
	var sent []string
	g := NewPipe(func(text string) error { sent = append(sent, text); return nil }, NewLinkGuard(AllowedLinks{}))
	for _, d := range []string{"Lower waves ", "apply first, ", "then wait", " for health."} {
		if err := g.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"Lower waves ", "apply first, ", "then wait", " for health."}
	if strings.Join(sent, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", sent, want)
	}
	sent = nil
	_ = g.Write("Use the ht")
	if strings.Join(sent, "") != "Use the " {
		t.Errorf("sent %q, want the text before a possible scheme", sent)
	}
	_ = g.Write("tp header.")
	if strings.Join(sent, "") != "Use the http header." {
		t.Errorf("sent %q", sent)
	}
}
