// Command image writes a single-platform (linux/amd64) OCI image layout
// tarball from one static binary, without a container engine or a base
// image to pull. The image holds what gcr.io/distroless/static:nonroot holds
// and ragroute's pods need: passwd and group entries for root and nonroot
// (65532), /home/nonroot, /tmp (1777), CA certificates and the binary; it runs
// as 65532:65532 in /.
//
// The output depends only on the inputs (binary, CA bundle, flags and
// SOURCE_DATE_EPOCH, default 0), so the same inputs give the same digest.
// index.json names the image with io.containerd.image.name, which
// `ctr -n k8s.io images import` registers as is, so the kubelet finds it.
//
//	go run . --binary ../../bin/image/ragroute --name ragroute/ragroute:0.1.0 --out ../../bin/image/ragroute.tar
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	binary := fs.String("binary", "", "static linux/amd64 binary to put in the image (required)")
	entrypoint := fs.String("entrypoint", "", "absolute path of the binary in the image, and the entrypoint (default /<binary's base name>)")
	ref := fs.String("name", "", "image name, e.g. ragroute/ragroute:0.1.0; registered as docker.io/ragroute/ragroute:0.1.0 (required)")
	out := fs.String("out", "", "OCI image layout tarball to write (required)")
	caCerts := fs.String("ca-certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to put at /etc/ssl/certs/ca-certificates.crt")
	labels := labelFlag{}
	fs.Var(labels, "label", "image label `key=value` (repeatable); overrides the defaults (title, version from --name, source, licenses)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" || *ref == "" || *out == "" {
		return fmt.Errorf("--binary, --name and --out are required")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *entrypoint == "" {
		*entrypoint = "/" + filepath.Base(*binary)
	}
	created, err := sourceDateEpoch(getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	name, err := normalizeName(*ref)
	if err != nil {
		return err
	}
	if err := checkStatic(*binary); err != nil {
		return err
	}
	bin, err := os.ReadFile(*binary)
	if err != nil {
		return fmt.Errorf("reading the binary: %w", err)
	}
	certs, err := os.ReadFile(*caCerts)
	if err != nil {
		return fmt.Errorf("reading the CA bundle: %w", err)
	}
	s := spec{
		binary:     bin,
		entrypoint: path.Clean(*entrypoint),
		name:       name,
		labels:     defaultLabels(name),
		caCerts:    certs,
		created:    created,
	}
	for k, v := range labels {
		s.labels[k] = v
	}
	digest, err := writeImageFile(*out, s)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s %s\n", *out, name.full, digest)
	return nil
}

// sourceDateEpoch is the time every timestamp in the image gets: the
// reproducible-builds convention, epoch 0 when unset.
func sourceDateEpoch(v string) (time.Time, error) {
	if v == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", v)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// writeImageFile writes the image to path through a temporary file, so a
// failed run leaves no half tarball that a later import would take.
func writeImageFile(out string, s spec) (string, error) {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("creating the output folder: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(out), ".image-*.tar")
	if err != nil {
		return "", fmt.Errorf("creating the output: %w", err)
	}
	defer os.Remove(f.Name())
	digest, err := writeImage(f, s)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the output: %w", cerr)
	}
	if err != nil {
		return "", err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return "", fmt.Errorf("output mode: %w", err)
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return "", fmt.Errorf("moving the output into place: %w", err)
	}
	return digest, nil
}
