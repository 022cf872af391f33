package serving

// closers releases what a route opened, last first.
type closers []func()

func (c *closers) add(release func()) { *c = append(*c, release) }

func (c closers) close() {
	for i := len(c) - 1; i >= 0; i-- {
		c[i]()
	}
}
