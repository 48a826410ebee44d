package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// TempFile writes content to a file called name in a directory of the
// test, readable by its owner only, and returns its path.
func TempFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
