// Command whoami is the image's binary in the containerd test: it reports
// what the container gives it (user, folder, a writable /tmp, the CA bundle),
// which a real ragroute cannot.
package main

import (
	"fmt"
	"os"
	"os/user"
	"strings"
)

func main() {
	wd, err := os.Getwd()
	if err != nil {
		wd = "error: " + err.Error()
	}
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username + " home=" + u.HomeDir
	}
	tmp := "writable"
	if f, err := os.CreateTemp("/tmp", "whoami-"); err != nil {
		tmp = "error"
	} else {
		f.Close()
	}
	certs := "missing"
	if b, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil && strings.Contains(string(b), "BEGIN CERTIFICATE") {
		certs = "ok"
	}
	fmt.Printf("uid=%d gid=%d user=%s cwd=%s tmp=%s certs=%s args=%q\n",
		os.Getuid(), os.Getgid(), name, wd, tmp, certs, os.Args[1:])
}
