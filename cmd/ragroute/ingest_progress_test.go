package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// Documents are read as the run writes, so until the last is read the
// progress line counts what was read so far and claims no total; then it
// says how many files and chunks were read and shows the total changed.
func TestIngestProgressClaimsATotalOnlyOnceEverythingIsRead(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false)
	p.Synced(knowledge.SyncProgress{Read: 100, Changed: 64, Written: 32})
	p.Read(12, 180)
	p.Synced(knowledge.SyncProgress{Read: 180, Changed: 96, Written: 96, Complete: true})
	p.done()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"embedded 32 of 64 changed chunks so far (100 chunks read;", "read 12 files, 180 chunks", "embedded 96/96 changed chunks"}
	if len(lines) != len(want) {
		t.Fatalf("progress %q, want %d lines", lines, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d %q, want it to start %q", i, lines[i], w)
		}
	}
}
