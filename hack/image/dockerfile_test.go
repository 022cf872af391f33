package main

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// finalStage is what the Dockerfile's last stage says about the image.
type finalStage struct {
	user, workdir string
	entrypoint    []string
	labels        map[string]string
}

// parseFinalStage reads the instructions of the last FROM stage that the
// image tool must match. It knows just enough of the Dockerfile syntax for
// ours: comments, backslash continuations, ARG defaults, ${VAR}, LABEL pairs
// with double quotes, ENTRYPOINT in exec form.
func parseFinalStage(t *testing.T, path string, buildArgs map[string]string) finalStage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	var cont string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		if strings.HasSuffix(l, `\`) {
			cont += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		lines = append(lines, cont+l)
		cont = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var st finalStage
	// ARGs before the first FROM are not seen inside a stage, as in Docker.
	args := map[string]string{}
	expand := func(s string) string { return os.Expand(s, func(k string) string { return args[k] }) }
	for _, l := range lines {
		instr, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(instr) {
		case "FROM":
			st = finalStage{labels: map[string]string{}}
			args = map[string]string{}
		case "ARG":
			k, v, _ := strings.Cut(rest, "=")
			if bv, ok := buildArgs[k]; ok {
				v = bv
			}
			args[k] = v
		case "USER":
			st.user = expand(rest)
		case "WORKDIR":
			st.workdir = expand(rest)
		case "ENTRYPOINT":
			st.entrypoint = nil
			if err := json.Unmarshal([]byte(rest), &st.entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT %s: want the exec (JSON) form: %v", rest, err)
			}
		case "LABEL":
			for _, pair := range splitLabelPairs(t, rest) {
				k, v, ok := strings.Cut(pair, "=")
				if !ok {
					t.Fatalf("LABEL %s: want key=value", rest)
				}
				if uq, err := strconv.Unquote(v); err == nil {
					v = uq
				}
				st.labels[k] = expand(v)
			}
		}
	}
	return st
}

// splitLabelPairs splits `a="x y" b=z` on spaces outside double quotes.
func splitLabelPairs(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if quoted {
		t.Fatalf("LABEL %s: unbalanced quotes", s)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

func TestImageMatchesDockerfile(t *testing.T) {
	const version = "1.2.3"
	want := parseFinalStage(t, "../../Dockerfile", map[string]string{"VERSION": version})
	// As make image runs it: the binary named ragroute, the name's tag the version.
	b, _ := buildCLI(t, "--name", "ragroute/ragroute:"+version, "--label", "org.opencontainers.image.version="+version)
	got := readLayout(t, b).config.Config
	if got.User != want.user {
		t.Errorf("User %q, Dockerfile %q", got.User, want.user)
	}
	if got.WorkingDir != want.workdir {
		t.Errorf("WorkingDir %q, Dockerfile %q", got.WorkingDir, want.workdir)
	}
	if !reflect.DeepEqual(got.Entrypoint, want.entrypoint) {
		t.Errorf("Entrypoint %q, Dockerfile %q", got.Entrypoint, want.entrypoint)
	}
	if len(want.labels) == 0 || !reflect.DeepEqual(got.Labels, want.labels) {
		t.Errorf("Labels %v, Dockerfile %v", got.Labels, want.labels)
	}
	if want.user == "" || want.workdir == "" || len(want.entrypoint) == 0 {
		t.Errorf("the Dockerfile's last stage lacks USER, WORKDIR or ENTRYPOINT: %+v", want)
	}
}

func TestParseFinalStageSeesDrift(t *testing.T) {
	p := t.TempDir() + "/Dockerfile"
	df := "FROM a AS b\nUSER 1\nFROM c\nARG V=dev\n# c\nLABEL x=\"a b\" \\\n  y=${V}\nUSER 2:2\nENTRYPOINT [\"/other\"]\n"
	if err := os.WriteFile(p, []byte(df), 0o644); err != nil {
		t.Fatal(err)
	}
	got := parseFinalStage(t, p, nil)
	want := finalStage{user: "2:2", entrypoint: []string{"/other"}, labels: map[string]string{"x": "a b", "y": "dev"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
}
