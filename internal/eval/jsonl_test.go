package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A question file's mistakes are refused with the file and the line, by
// both loaders alike.
func TestQuestionFilesNameTheBadLine(t *testing.T) {
	for name, c := range map[string]struct{ file, want string }{
		"not JSON":      {`{"id":"a","question":"q"}` + "\n" + `{"id":`, "q.jsonl:2: "},
		"no text":       {`{"id":"a"}`, "q.jsonl:1: a question needs an id and text"},
		"id repeats":    {`{"id":"a","question":"q"}` + "\n\n" + `{"id":"a","question":"r"}`, "q.jsonl:3: question id a repeats"},
		"gold, no path": {`{"id":"a","question":"q","gold_file":"x.md"}`, "q.jsonl:1: "},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "q.jsonl")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			for loader, load := range map[string]func(string) error{
				"LoadQuestions": func(p string) error { _, err := LoadQuestions(p); return err },
				"LoadMultiPart": func(p string) error { _, err := LoadMultiPart(p); return err },
			} {
				if err := load(path); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v; want an error with %q", loader, err, c.want)
				}
			}
		})
	}
}

// Several question files read as one set, in order (dev.jsonl and
// dev-unanswerable.jsonl); a question id in two files is refused naming
// both.
func TestQuestionFilesReadTogether(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dev := write("dev.jsonl", `{"id":"q1","question":"How?","gold_file":"a.md","gold_heading_path":["A"]}`)
	unanswerable := write("unanswerable.jsonl", `{"id":"u1","question":"Mileage?"}`)
	qs, err := LoadQuestions(dev, unanswerable)
	if err != nil || len(qs) != 2 || qs[0].ID != "q1" || qs[1].ID != "u1" || qs[1].Answerable() {
		t.Fatalf("LoadQuestions = %+v, %v", qs, err)
	}
	again := write("again.jsonl", `{"id":"q1","question":"Again?"}`)
	if _, err := LoadQuestions(dev, again); err == nil || !strings.Contains(err.Error(), "question q1 is in "+dev+" and in "+again) {
		t.Errorf("an id in two files: %v", err)
	}
}
