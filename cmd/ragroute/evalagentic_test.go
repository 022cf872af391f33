package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestEvalAgenticFlags: without a store, an embedder and a chat model the
// command says what it needs; its help names the multi-part default.
func TestEvalAgenticFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"eval-agentic", "--chat-model", "m"}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2; stderr %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "--chat-base-url") {
		t.Fatalf("stderr %q does not name the missing flags", stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"eval-agentic", "-h"}, &stdout, &stderr); code != 2 {
		t.Fatalf("-h: exit %d", code)
	}
	if !strings.Contains(stderr.String(), "test/eval/multipart.jsonl") {
		t.Fatalf("help does not name the multi-part default:\n%s", stderr.String())
	}
}
