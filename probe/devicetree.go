package probe

// parseModel parses proc/device-tree/model, a NUL-terminated string such as
// "Raspberry Pi 4 Model B Rev 1.4".
func parseModel(b []byte) string {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	return string(trimSpace(b))
}
