// Command probe is the test bed node's probe image: it prints the ids it
// runs as, then each file it is given, and exits 1 when one cannot be
// read. Tests run it with a builder's pod spec to see what the
// processes of that pod can read on a real kubelet.
package main

import (
	"fmt"
	"os"
)

func main() {
	groups, _ := os.Getgroups()
	fmt.Printf("uid %d gid %d groups %v\n", os.Getuid(), os.Getgid(), groups)
	failed := false
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Printf("%s: %v\n", path, err)
			failed = true
			continue
		}
		fmt.Printf("%s: %q\n", path, data)
	}
	if failed {
		os.Exit(1)
	}
}
