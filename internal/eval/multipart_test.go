package eval

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestMultiPartQuestions checks test/eval/multipart.jsonl against the
// corpus with the evaluation's own gold resolution: every part's gold
// section is a real heading path of its file, a multi-part question has
// two or three parts from at least two files, and the set holds enough
// of both kinds.
func TestMultiPartQuestions(t *testing.T) {
	const corpus = "../../test/eval/corpus/argocd"
	questions, err := LoadMultiPart("../../test/eval/multipart.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	source := filepath.Base(corpus)
	docs, err := ReadCorpus(corpus, source)
	if err != nil {
		t.Fatal(err)
	}
	// NewGold fails on a gold file not in the corpus and on a
	// heading path no line of the file lies under.
	if _, err := NewGold(source, docs, PartQuestions(questions)); err != nil {
		t.Fatal(err)
	}
	multi, controls := 0, 0
	for _, q := range questions {
		if !slices.Contains([]string{"easy", "medium", "hard"}, q.Difficulty) {
			t.Errorf("%s: difficulty %q", q.ID, q.Difficulty)
		}
		files := map[string]bool{}
		for i, p := range q.Parts {
			files[p.GoldFile] = true
			if p.Part == "" || p.Answer == "" {
				t.Errorf("%s part %d: needs what it asks and an answer", q.ID, i+1)
			}
		}
		if !q.MultiPart() {
			controls++
			continue
		}
		multi++
		if len(q.Parts) > 3 {
			t.Errorf("%s: %d parts, want 2 or 3", q.ID, len(q.Parts))
		}
		if len(files) < 2 {
			t.Errorf("%s: every part is in %v, want at least two files", q.ID, q.Parts[0].GoldFile)
		}
	}
	if multi < 24 || controls < 6 {
		t.Errorf("%d multi-part questions and %d single-part controls, want at least 24 and 6", multi, controls)
	}
}

// TestLoadMultiPartSingleShape reads dev.jsonl's shape as one part per
// answerable question.
func TestLoadMultiPartSingleShape(t *testing.T) {
	questions, err := LoadMultiPart("../../test/eval/dev.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	all, err := LoadQuestions("../../test/eval/dev.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	answerable := 0
	for _, q := range all {
		if q.Answerable() {
			answerable++
		}
	}
	if len(questions) != answerable {
		t.Fatalf("%d questions, want the %d answerable ones", len(questions), answerable)
	}
	for _, q := range questions {
		if len(q.Parts) != 1 || q.MultiPart() {
			t.Fatalf("%s: %d parts, want 1", q.ID, len(q.Parts))
		}
	}
}
