package podconfig

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func validConfig() RouteConfig {
	return RouteConfig{
		Version: RouteVersion,
		Route:   RouteRef{Name: "support", Namespace: "acme"},
		Server:  Server{Port: 8080},
		Store: Store{
			Milvus:    Milvus{URI: "http://milvus:19530", Database: "default", Collection: "docs"},
			Embedding: Embedding{BaseURL: "http://e/v1", Model: "m", Dimensions: 384, MaxInputTokens: 256},
		},
		Model:  ChatModel{BaseURL: "http://llm/v1", Name: "llm", SearchPolicy: "modelDecides"},
		Mode:   ModeSingleRound,
		Window: Window{ContextTokens: 8192, AnswerReserveTokens: 1024},
		Auth: Auth{TrustedProxy: &TrustedProxy{UserHeader: "X-User", GroupsHeader: "X-Groups",
			SecretHeader: "X-Ragroute-Proxy-Secret", SecretEnv: EnvProxySecret}},
	}
}

func TestRoundTripIsStable(t *testing.T) {
	c := validConfig()
	c.Prompt.Styles = map[string]string{"screen": "b", "concept": "a"}
	first, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseRoute(bytes.NewReader(first))
	if err != nil {
		t.Fatalf("parse own output: %v", err)
	}
	second, err := Marshal(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) || Hash(first) != Hash(second) {
		t.Fatalf("marshal is not stable:\n%s\n---\n%s", first, second)
	}
}

func TestParseRefusesWhatItDoesNotUnderstand(t *testing.T) {
	good, _ := Marshal(validConfig())
	cases := map[string]struct {
		data string
		want string
	}{
		"unknown field":   {strings.Replace(string(good), `"mode"`, `"moed"`, 1), "unknown field"},
		"future version":  {strings.Replace(string(good), `"version": 1`, `"version": 2`, 1), "version 2 is not supported"},
		"reserve too big": {strings.Replace(string(good), `"answerReserveTokens": 1024`, `"answerReserveTokens": 9000`, 1), "answerReserveTokens (9000)"},
		"no auth":         {noAuth(t), "exactly one of jwt or trustedProxy"},
		"proxy without a secret": {strings.Replace(string(good), `"secretEnv": "RAGROUTE_PROXY_SECRET"`, `"secretEnv": ""`, 1),
			"needs exactly one of secretEnv (a shared proxy secret) or insecureAllowAnyCaller"},
		"proxy with a secret and any caller": {strings.Replace(string(good), `"secretEnv": "RAGROUTE_PROXY_SECRET"`,
			`"secretEnv": "RAGROUTE_PROXY_SECRET", "insecureAllowAnyCaller": true`, 1), "needs exactly one of secretEnv"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseRoute(strings.NewReader(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseRoute() error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func noAuth(t *testing.T) string {
	t.Helper()
	c := validConfig()
	c.Auth = Auth{}
	data, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestIngestConfigIsDecodedStrictly(t *testing.T) {
	good := IngestConfig{
		Version: IngestVersion, Store: "docs",
		Milvus:    Milvus{URI: "http://milvus:19530", Collection: "docs"},
		Embedding: Embedding{BaseURL: "http://e/v1", Model: "m", Dimensions: 384},
		Sources:   []Source{{Name: "handbook", Git: &GitSource{URL: "https://git.example/h.git", Ref: "main"}}},
	}
	data, err := Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseIngest(bytes.NewReader(data)); err != nil {
		t.Fatalf("parse own output: %v", err)
	}
	cases := map[string]struct{ data, want string }{
		"unknown field": {strings.Replace(string(data), `"store"`, `"stroe"`, 1), "unknown field"},
		"both kinds":    {strings.Replace(string(data), `"name": "handbook",`, `"name": "handbook", "path": "/sources/h",`, 1), "exactly one of path or git"},
		"no sources":    {strings.Replace(string(data), `"sources": [`, `"sources": [], "x": [`, 1), "unknown field"},
		"a path outside its root": {strings.Replace(string(data), `"sources": [`,
			`"sources": [{"name": "wiki", "root": "/sources/wiki", "path": "/sources/wikipedia"},`, 1), `sources[0].path "/sources/wikipedia" is not inside its root`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseIngest(strings.NewReader(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseIngest() error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestDurationsAreReadableAndChecked(t *testing.T) {
	c := validConfig()
	c.Cache.TTL = Duration(90 * time.Second)
	data, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"ttl": "1m30s"`) {
		t.Fatalf("ttl not written as a duration string:\n%s", data)
	}
	bad := strings.Replace(string(data), `"ttl": "1m30s"`, `"ttl": "ninety"`, 1)
	if _, err := ParseRoute(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "ninety") {
		t.Fatalf("ParseRoute() error = %v, want it to name the bad duration", err)
	}
}
