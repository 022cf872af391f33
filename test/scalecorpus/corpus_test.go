package scalecorpus

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The two sources every corpus is split into: a route's user that is
// "public" (and not in group:ops) reads half of it.
const (
	publicSource = "public"
	opsSource    = "ops"
)

// corpus is one size: the folders it is made of, each copied some times.
type corpus struct {
	Name string
	// Multiple is how many copies of the Argo CD corpus it holds (0 when
	// it holds other documents): the goals compare multiples.
	Multiple int
	Parts    []part
}

// part is a folder of Markdown written Copies times, copy 0 as it is and
// copy k perturbed with seed k; Every > 1 keeps every Every-th document
// only (in path order).
type part struct {
	Name, Dir string
	Copies    int
	Every     int
}

// write puts the corpus under dir as the two source folders, dir/public
// and dir/ops, alternating documents between them in path order, and
// returns how many documents it wrote. A corpus' SOURCE.md (its license
// notice, not documentation) is left out, as the evaluations leave it.
func (c corpus) write(dir string) (int, error) {
	written := 0
	for _, p := range c.Parts {
		docs, err := markdownFiles(p.Dir)
		if err != nil {
			return written, err
		}
		if p.Every > 1 {
			var kept []string
			for i := 0; i < len(docs); i += p.Every {
				kept = append(kept, docs[i])
			}
			docs = kept
		}
		if len(docs) == 0 {
			return written, fmt.Errorf("corpus %s: no Markdown in %s", c.Name, p.Dir)
		}
		for k := range p.Copies {
			for i, rel := range docs {
				data, err := os.ReadFile(filepath.Join(p.Dir, rel))
				if err != nil {
					return written, err
				}
				source := publicSource
				if i%2 == 1 {
					source = opsSource
				}
				target := filepath.Join(dir, source, p.Name, fmt.Sprintf("copy-%02d", k), rel)
				if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
					return written, err
				}
				if err := os.WriteFile(target, []byte(perturb(string(data), uint64(k))), 0o644); err != nil {
					return written, err
				}
				written++
			}
		}
	}
	return written, nil
}

// markdownFiles are the .md files under dir, relative to it, in lexical
// order, without the root's SOURCE.md.
func markdownFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".md") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err == nil && rel != "SOURCE.md" {
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read corpus %s: %w", dir, err)
	}
	return out, nil
}

// corpora are the sizes a run measures: the Argo CD corpus at each
// multiple, then, when otel names the OpenTelemetry docs, those and both
// together.
func corpora(argocd string, multiples []int, otel string) []corpus {
	var out []corpus
	for _, m := range multiples {
		out = append(out, corpus{Name: fmt.Sprintf("argocd %d×", m), Multiple: m, Parts: []part{{Name: "argocd", Dir: argocd, Copies: m}}})
	}
	if otel != "" {
		out = append(out,
			corpus{Name: "opentelemetry", Parts: []part{{Name: "opentelemetry", Dir: otel, Copies: 1}}},
			corpus{Name: "argocd + opentelemetry", Parts: []part{{Name: "argocd", Dir: argocd, Copies: 1}, {Name: "opentelemetry", Dir: otel, Copies: 1}}})
	}
	return out
}
