package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ReadJSONLines hands each non-blank line of the JSONL file at path to
// each with its line number (lines up to 16 MiB: a labelled turn carries
// its fragments); an error names the file and the line.
func ReadJSONLines(path string, each func(line int, raw []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; scanner.Scan(); line++ {
		raw := bytes.TrimSpace(scanner.Bytes())
		if len(raw) == 0 {
			continue
		}
		if err := each(line, raw); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if err := scanner.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readQuestionLines decodes each non-blank line of the JSONL question
// file at path into a T and hands it to each with its line number; an
// error names the file and the line. Every question needs an id and a
// text (idAndText reads them) and ids may not repeat.
func readQuestionLines[T any](path string, idAndText func(T) (string, string), each func(line int, v T) error) error {
	seen := map[string]bool{}
	err := ReadJSONLines(path, func(line int, raw []byte) error {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		id, question := idAndText(v)
		if id == "" || question == "" {
			return errors.New("a question needs an id and text")
		}
		if seen[id] {
			return fmt.Errorf("question id %s repeats", id)
		}
		seen[id] = true
		return each(line, v)
	})
	if err != nil {
		return fmt.Errorf("questions: %w", err)
	}
	return nil
}
