package retrieve

// WaitCopies waits for c's compact copies started in the background, for
// the external tests (package retrieve_test), which cannot reach them.
func WaitCopies(c *Collection) {
	c.half.wait()
	c.bytes.wait()
}
