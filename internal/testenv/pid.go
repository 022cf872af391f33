package testenv

// Pid is the process' id, e.g. to read /proc/<pid>/status.
func (p *Process) Pid() int { return p.cmd.Process.Pid }
