package scalecorpus

import (
	"context"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/testenv"
)

const sampleDoc = `---
title: Sync waves
acl: [public]
---
# Sync waves and hooks

Argo CD applies the resources of an application in sync waves. Lower waves
are applied first, and a wave starts only when the previous one is healthy.
Set the wave of a resource with the annotation shown below, then sync the
application again and watch the order in which the resources become ready.

` + "```yaml" + `
metadata:
  annotations:
    argocd.argoproj.io/sync-wave: "5"
` + "```" + `

## Hooks

A hook runs before or after the sync, in its own phase, and may delete
itself when it succeeds; hooks of the same phase run in the order of their
waves, the lowest first, each one only after the previous one has finished.
`

// A copy is the same every run, differs from every other copy, and keeps
// the document's structure: front matter, code and line count; copy 0 is
// the original.
func TestPerturbIsDeterministicAndKeepsStructure(t *testing.T) {
	if perturb(sampleDoc, 0) != sampleDoc {
		t.Fatal("copy 0 is not the original")
	}
	one, again, two := perturb(sampleDoc, 1), perturb(sampleDoc, 1), perturb(sampleDoc, 2)
	if one != again {
		t.Fatal("the same seed gave two different copies")
	}
	if one == sampleDoc || one == two {
		t.Fatal("copies 1 and 2 are not distinct from the original and each other")
	}
	for _, copyDoc := range []string{one, two} {
		if got, want := strings.Count(copyDoc, "\n"), strings.Count(sampleDoc, "\n"); got != want {
			t.Errorf("a copy has %d lines, the original %d", got, want)
		}
		for _, kept := range []string{"---\ntitle: Sync waves\nacl: [public]\n---\n", "    argocd.argoproj.io/sync-wave: \"5\"\n", "Argo CD", "# Sync"} {
			if !strings.Contains(copyDoc, kept) {
				t.Errorf("a copy lost %q:\n%s", kept, copyDoc)
			}
		}
	}
}

// About a fifth of the prose words change (substitutions and swaps), so
// a copy's BM25 terms and its vector differ from the original's while it
// stays about the same subject.
func TestPerturbChangesSomeWordsNotAll(t *testing.T) {
	orig, copyDoc := strings.Fields(sampleDoc), strings.Fields(perturb(sampleDoc, 3))
	if len(orig) != len(copyDoc) {
		t.Fatalf("%d words became %d", len(orig), len(copyDoc))
	}
	changed := 0
	for i := range orig {
		if orig[i] != copyDoc[i] {
			changed++
		}
	}
	if share := float64(changed) / float64(len(orig)); share < 0.08 || share > 0.45 {
		t.Errorf("%.0f%% of words changed, want about a fifth to a third", 100*share)
	}
	e := &testenv.HashEmbedder{Dim: 384}
	vectors, _ := e.Embed(context.Background(), []string{sampleDoc, perturb(sampleDoc, 3), perturb(sampleDoc, 4)})
	for _, pair := range [][2]int{{0, 1}, {1, 2}} {
		if c := cosine(vectors[pair[0]], vectors[pair[1]]); c < 0.6 || c > 0.995 {
			t.Errorf("cosine of documents %v is %.3f, want related but distinct", pair, c)
		}
	}
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i] * b[i])
	}
	return dot // both normalized
}
