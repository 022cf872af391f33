package main

import (
	"debug/elf"
	"fmt"
)

// checkStatic refuses what cannot run in an image without a libc: anything
// but a linux/amd64 ELF executable without a program interpreter. Without
// this check a dynamic binary fails only at run time, as "no such file or
// directory" for the missing loader.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", path, err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 || f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		return fmt.Errorf("%s: %v %v %v, want a linux/amd64 binary", path, f.Class, f.Machine, f.OSABI)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s: ELF type %v, want an executable", path, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (build it with CGO_ENABLED=0)", path)
		}
	}
	return nil
}
