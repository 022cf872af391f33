// Command benchjson passes `go test -bench` output through and, given a
// path, also writes every benchmark's figures there as JSON, so `make bench`
// prints a table for people and leaves numbers for tools (BENCH_JSON=path).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Result is one benchmark's line.
type Result struct {
	Package    string             `json:"package"`
	Name       string             `json:"name"`
	Iterations int64              `json:"iterations"`
	Metrics    map[string]float64 `json:"metrics"`
}

func main() {
	results, err := copyAndParse(os.Stdin, os.Stdout)
	if err == nil && len(os.Args) > 1 && os.Args[1] != "" {
		err = write(os.Args[1], results)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchjson:", err)
		os.Exit(1)
	}
}

// copyAndParse echoes in to out and collects the benchmark lines.
func copyAndParse(in io.Reader, out io.Writer) ([]Result, error) {
	var results []Result
	pkg := ""
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if _, err := fmt.Fprintln(out, line); err != nil {
			return nil, err
		}
		if rest, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(rest)
			continue
		}
		if r, ok := parseLine(line); ok {
			r.Package = pkg
			results = append(results, r)
		}
	}
	return results, scanner.Err()
}

// parseLine reads "BenchmarkName-P  N  v1 unit1  v2 unit2 ...".
func parseLine(line string) (Result, bool) {
	fields := strings.Fields(line)
	if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") || len(fields)%2 != 0 {
		return Result{}, false
	}
	n, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return Result{}, false
	}
	name := fields[0]
	if i := strings.LastIndex(name, "-"); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i] // the GOMAXPROCS suffix
		}
	}
	r := Result{Name: name, Iterations: n, Metrics: map[string]float64{}}
	for i := 2; i+1 < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return Result{}, false
		}
		r.Metrics[fields[i+1]] = v
	}
	return r, true
}

func write(path string, results []Result) error {
	data, err := json.MarshalIndent(map[string]any{"benchmarks": results}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
