package routeconfig

import (
	"bytes"
	"strings"
	"testing"
)

func validConfig() Config {
	return Config{
		Version: Version,
		Route:   Route{Name: "support", Namespace: "acme"},
		Server:  Server{Port: 8080},
		Store: Store{
			Milvus:    Milvus{URI: "http://milvus:19530", Database: "default", Collection: "docs"},
			Embedding: Embedding{BaseURL: "http://e/v1", Model: "m", Dimensions: 384, MaxInputTokens: 256},
		},
		Model:  ChatModel{BaseURL: "http://llm/v1", Name: "llm", SearchPolicy: "modelDecides"},
		Window: Window{ContextTokens: 8192, AnswerReserveTokens: 1024},
		Auth:   Auth{TrustedProxy: &TrustedProxy{UserHeader: "X-User", GroupsHeader: "X-Groups"}},
	}
}

func TestRoundTripIsStable(t *testing.T) {
	c := validConfig()
	c.Prompt.Styles = map[string]string{"screen": "b", "concept": "a"}
	first, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := Parse(bytes.NewReader(first))
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
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse() error = %v, want it to mention %q", err, tc.want)
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
