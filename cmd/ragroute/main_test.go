package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	cases := []struct {
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{nil, 2, "", "Usage: ragroute <command>"},
		{[]string{"serv"}, 2, "", `unknown command "serv"`},
		{[]string{"help"}, 0, "manager", ""},
		{[]string{"version"}, 0, "dev", ""},
		{[]string{"manager", "--no-such-flag"}, 2, "", "flag provided but not defined: -no-such-flag"},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.wantStdout) || !strings.Contains(stderr.String(), tc.wantStderr) {
			t.Errorf("run(%q) = %d, stdout %q, stderr %q", tc.args, code, stdout.String(), stderr.String())
		}
	}
}
