package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// readQuestionLines decodes each non-blank line of the JSONL question
// file at path into a T and hands it to each with its line number; an
// error names the file and the line. Every question needs an id and a
// text (idAndText reads them) and ids may not repeat.
func readQuestionLines[T any](path string, idAndText func(T) (string, string), each func(line int, v T) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("questions: %w", err)
	}
	defer f.Close()
	seen := map[string]bool{}
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; scanner.Scan(); line++ {
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		id, question := idAndText(v)
		if id == "" || question == "" {
			return fmt.Errorf("%s:%d: a question needs an id and text", path, line)
		}
		if seen[id] {
			return fmt.Errorf("%s:%d: question id %s repeats", path, line, id)
		}
		seen[id] = true
		if err := each(line, v); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if err := scanner.Err(); err != nil {
		return fmt.Errorf("questions: %s: %w", path, err)
	}
	return nil
}
